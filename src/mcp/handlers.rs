//! The tool bodies of the MCP server: synchronous, run off the async runtime
//! (`spawn_blocking`), each returning the tool's JSON or a [`ToolFailure`].

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use aic_stages::content_hash::ContentHash;
use aic_stages::fit::assembler::PromptFormat;
use aic_stages::fit::model::ModelProfile;
use aic_stages::fit::tokens::TokenCount;
use aic_stages::spec::{DEFAULT_SPEC_BUDGET, compile_request_from_value};
use aic_storage::Store;
use serde_json::{Value, json};

use crate::config::load_config;
use crate::error::CompileError;
use crate::history::compilations::{CompileOrigin, record};
use crate::history::conversations::{
    self as session, TOOL_OUTPUT_TYPES, TRIGGER_SOURCES, is_weak_intent, session_input, step_of,
};
use crate::history::diagnostics;
use crate::host::Host;
use crate::pipeline::spec::compile_spec as run_compile_spec;
use crate::pipeline::{
    Compilation, CompilationRequest, SessionInput, SizeLimit, SizeScope, compile as run_compile,
};
use crate::root::resolve_root;

use super::tools::{
    ChatSummaryArgs, CompileArgs, CompileSpecArgs, InspectArgs, MAX_ID_CHARS, MAX_INTENT_CHARS,
    MAX_RESULT_SIZE_CHARS, ModelTestArgs, QualityArgs, StatusArgs,
};

/// How long a model-test probe stays valid, in milliseconds.
const PROBE_TTL_MS: u64 = 120_000;

/// Why a tool call failed.
#[derive(Debug)]
pub enum ToolFailure {
    /// Bad input, a missing repository, a budget problem: a tool result with
    /// `isError`, which the model reads and can act on.
    Tool(String),
    /// The same with a structured body (e.g. `aic_compile_spec`'s
    /// `validation-error`).
    ToolStructured(Value),
    /// The compile was cancelled (timeout or `notifications/cancelled`).
    Cancelled,
    /// A bug or an environment failure: JSON-RPC −32603 with this (sanitised)
    /// message.
    Internal(String),
}

/// A tool's result.
pub type ToolResult = Result<Value, ToolFailure>;

/// What the server knows of the connection, for the handlers.
#[derive(Clone, Debug, Default)]
pub struct Connection {
    /// The MCP connection's session id (UUIDv7): `compilation_log.session_id`,
    /// and the effective agentic session when a compile sends `stepIndex` but no
    /// `conversationId`.
    pub session_id: String,
    /// The editor, from the client's name or the environment.
    pub editor_id: String,
}

fn failure_of(error: CompileError) -> ToolFailure {
    match error {
        CompileError::Cancelled => ToolFailure::Cancelled,
        CompileError::Internal { message } => ToolFailure::Internal(message),
        other => {
            let mut text = other.to_string();
            if let Some(hint) = other.hint() {
                text.push_str("\nhint: ");
                text.push_str(&hint);
            }
            ToolFailure::Tool(text)
        }
    }
}

fn store(host: &Host) -> Result<Arc<Store>, ToolFailure> {
    host.database().map_err(|error| {
        ToolFailure::Tool(format!(
            "The aic database cannot be used: {}",
            error.with_hint()
        ))
    })
}

fn check_id(field: &str, value: Option<&str>) -> Result<(), ToolFailure> {
    match value {
        Some(id)
            if id.trim().is_empty()
                || id.chars().count() > MAX_ID_CHARS
                || id.chars().any(char::is_control) =>
        {
            Err(ToolFailure::Tool(format!(
                "`{field}` must be 1 to {MAX_ID_CHARS} printable characters"
            )))
        }
        _ => Ok(()),
    }
}

fn check_intent(intent: &str) -> Result<(), ToolFailure> {
    let chars = intent.chars().count();
    if chars > MAX_INTENT_CHARS {
        return Err(ToolFailure::Tool(format!(
            "`intent` has {chars} characters; at most {MAX_INTENT_CHARS} are accepted: describe the task, do not paste files (aic reads the repository)"
        )));
    }
    Ok(())
}

fn validate_compile(args: &CompileArgs) -> Result<(), ToolFailure> {
    check_intent(&args.intent)?;
    for (field, value) in [
        ("conversationId", args.conversation_id.as_deref()),
        (
            "reparentFromConversationId",
            args.reparent_from_conversation_id.as_deref(),
        ),
        ("modelId", args.model_id.as_deref()),
        ("editorId", args.editor_id.as_deref()),
    ] {
        check_id(field, value)?;
    }
    if let Some(source) = &args.trigger_source
        && !TRIGGER_SOURCES.contains(&source.as_str())
    {
        return Err(ToolFailure::Tool(format!(
            "`triggerSource` `{source}` is not one of: {}",
            TRIGGER_SOURCES.join(", ")
        )));
    }
    for (index, output) in args.tool_outputs.iter().flatten().enumerate() {
        if !TOOL_OUTPUT_TYPES.contains(&output.output_type.as_str()) {
            return Err(ToolFailure::Tool(format!(
                "`toolOutputs[{index}].type` `{}` is not one of: {}",
                output.output_type,
                TOOL_OUTPUT_TYPES.join(", ")
            )));
        }
    }
    if args.reparent_from_conversation_id.is_some()
        && args.trigger_source.as_deref() == Some("subagent_stop")
        && args.conversation_id.is_none()
    {
        return Err(ToolFailure::Tool(
            "`reparentFromConversationId` needs `conversationId`: the parent conversation to move the compilations to".to_owned(),
        ));
    }
    Ok(())
}

/// `aic_compile`: the session layer around one compile, then the log.
pub fn compile(
    host: &Host,
    args: &CompileArgs,
    root: &Path,
    connection: &Connection,
    cancel: Arc<AtomicBool>,
) -> ToolResult {
    validate_compile(args)?;
    let format = args
        .format
        .as_deref()
        .map(str::parse::<PromptFormat>)
        .transpose()
        .map_err(|error| ToolFailure::Tool(format!("`format`: {error}")))?;
    let root = resolve_root(root).map_err(|error| compile_failure(error, None))?;
    if let (Some("subagent_stop"), Some(from), Some(to)) = (
        args.trigger_source.as_deref(),
        args.reparent_from_conversation_id.as_deref(),
        args.conversation_id.as_deref(),
    ) {
        let store = store(host)?;
        let rows = session::reparent(&store, &root, from, to)
            .map_err(|e| ToolFailure::Tool(format!("{e} ({})", e.hint())))?;
        return Ok(json!({"reparented": true, "rowsUpdated": rows}));
    }
    // The session layer applies when the caller names a conversation or a step;
    // a bare call is a single-shot compile.
    let session_id = args.conversation_id.clone().or_else(|| {
        args.step_index
            .is_some()
            .then(|| connection.session_id.clone())
    });
    let store = host.database().ok();
    let mut intent = args.intent.clone();
    if is_weak_intent(&intent)
        && let (Some(conversation), Some(store)) = (&args.conversation_id, &store)
        && let Ok(Some(previous)) = session::weak_intent_fallback(store, &root, conversation)
    {
        intent = previous;
    }
    if intent.trim().is_empty() {
        return Err(ToolFailure::Tool(
            "`intent` is empty: describe the task, e.g. \"fix the null check in the user service\""
                .to_owned(),
        ));
    }
    let mut steps = match (&session_id, &store) {
        (Some(session), Some(store)) => session::steps(store, &root, session).unwrap_or_default(),
        _ => Vec::new(),
    };
    // A retried step (same `stepIndex`) sees only the steps before it: its
    // first attempt may never have reached the model.
    if let Some(index) = args.step_index {
        steps.retain(|step| step.step_index < index);
    }
    let input = if session_id.is_some() {
        session_input(&steps, args.conversation_tokens)
    } else {
        SessionInput {
            conversation_tokens: args.conversation_tokens.map(TokenCount),
            ..Default::default()
        }
    };
    let session_key = session_id.as_ref().map_or_else(String::new, |session| {
        session_key(session, args.step_index, &input)
    });
    let tool_outputs = args.tool_outputs.clone().unwrap_or_default();
    let mut related: Vec<String> = tool_outputs
        .iter()
        .flat_map(|output| output.related_files.iter().cloned())
        .collect();
    related.sort();
    related.dedup();
    let conversation_tokens = input.conversation_tokens;
    let mut limit = reply_limit(&intent);
    let mut request = CompilationRequest {
        intent,
        project_root: root.clone(),
        config_path: args.config_path.as_ref().map(PathBuf::from),
        budget: args.budget.map(TokenCount),
        model_id: args.model_id.clone(),
        editor_id: args
            .editor_id
            .clone()
            .unwrap_or_else(|| connection.editor_id.clone()),
        related_files: related,
        use_prompt_cache: true,
        session_key,
        session: input,
        cancel: Some(cancel),
        size_limit: Some(limit),
        format,
        diff: args
            .diff
            .as_deref()
            .map(crate::pipeline::diff::DiffSpec::parse),
        ..CompilationRequest::default()
    };
    // The reply stays within the client's result-size limit: the compile fits
    // the prompt's JSON text to what the limit leaves beside the meta. Only a
    // meta larger than the room kept for it (thousands of guard findings)
    // needs a second, smaller fit.
    let mut compilation =
        run_compile(&request, host).map_err(|error| compile_failure(error, conversation_tokens))?;
    let mut out = reply(&compilation, args.conversation_id.as_deref());
    let length = out.to_string().chars().count();
    if length > MAX_RESULT_SIZE_CHARS as usize {
        limit.max_chars = limit
            .max_chars
            .saturating_sub(length - MAX_RESULT_SIZE_CHARS as usize + META_RESERVE_CHARS);
        request.size_limit = Some(limit);
        compilation = run_compile(&request, host)
            .map_err(|error| compile_failure(error, conversation_tokens))?;
        out = reply(&compilation, args.conversation_id.as_deref());
    }
    if let Some(store) = &store {
        let origin = CompileOrigin {
            trigger_source: args
                .trigger_source
                .clone()
                .unwrap_or_else(|| "model_initiated".to_owned()),
            conversation_id: args.conversation_id.clone(),
            session_id: Some(connection.session_id.clone()),
        };
        if let Err(message) = record(host, &compilation, &origin) {
            tracing::warn!("The compile was not logged: {message}");
        }
        if let Some(session) = &session_id {
            let now = host.now_ms();
            let step = step_of(
                &compilation,
                args.step_index,
                args.step_intent.as_deref(),
                &tool_outputs,
                &steps,
                now,
            );
            if let Err(error) =
                session::record_step(store, &compilation.project_root, session, step, now)
            {
                tracing::warn!("The session step was not recorded: {error}");
            }
        }
    }
    Ok(out)
}

/// Characters of an `aic_compile` reply kept for everything but the prompt:
/// the meta (its intent aside, counted on its own), the keys, the warnings.
const META_RESERVE_CHARS: usize = 20_000;

/// The size limit that keeps an `aic_compile` reply for `intent` within
/// [`MAX_RESULT_SIZE_CHARS`]: the prompt's JSON string gets what is left of
/// 95 % of the limit after the meta's intent and [`META_RESERVE_CHARS`].
fn reply_limit(intent: &str) -> SizeLimit {
    let mut limit = SizeLimit {
        max_chars: 0,
        scope: SizeScope::Prompt,
        json_escaped: true,
    };
    let room = MAX_RESULT_SIZE_CHARS as usize * 95 / 100;
    limit.max_chars = room
        .saturating_sub(limit.measure(intent))
        .saturating_sub(META_RESERVE_CHARS);
    limit
}

/// The prompt cache's key material for a step of a session: the session, the
/// step, its header, the files shown before and the conversation's tokens.
fn session_key(session: &str, step_index: Option<u32>, input: &SessionInput) -> String {
    let shown: Vec<String> = input
        .previously_shown
        .iter()
        .map(|(path, file)| format!("{path}\t{}\t{}", file.hash, file.tier.name()))
        .collect();
    let material = format!(
        "{session}\0{step_index:?}\0{}\0{}\0{:?}",
        input.header.as_deref().unwrap_or_default(),
        shown.join("\n"),
        input.conversation_tokens
    );
    ContentHash::of(material.as_bytes()).to_hex()
}

/// The key of the compiled prompt in `reply`'s value: the server sends it
/// as the result's text, not in the structured content.
pub const PROMPT_KEY: &str = "compiledPrompt";

/// `aic_compile`'s reply: `{compiledPrompt, meta, conversationId,
/// updateMessage, warnings?}` (the server moves `compiledPrompt` into the
/// result's text).
fn reply(compilation: &Compilation, conversation_id: Option<&str>) -> Value {
    let mut out = json!({
        PROMPT_KEY: compilation.prompt,
        "meta": compilation.meta,
        "conversationId": conversation_id,
        "updateMessage": Value::Null,
    });
    if !compilation.meta.warnings.is_empty() {
        out["warnings"] = json!(compilation.meta.warnings);
    }
    out
}

/// A compile error as the model should read it: the CLI's flags in hints are
/// the tool's argument names, and a budget clamped to nothing by the
/// conversation's tokens says so.
pub(super) fn compile_failure(
    error: CompileError,
    conversation_tokens: Option<TokenCount>,
) -> ToolFailure {
    if let (CompileError::BudgetTooSmall { budget, .. }, Some(tokens)) =
        (&error, conversation_tokens)
        && budget.0 < 4_000
    {
        return ToolFailure::Tool(format!(
            "The conversation already holds {tokens} tokens, which leaves {budget} tokens of the context window for compiled context. Compact the conversation (or start a new one), or pass a smaller `conversationTokens`."
        ));
    }
    match failure_of(error) {
        ToolFailure::Tool(text) => ToolFailure::Tool(
            text.replace("`--root DIR`", "`projectRoot`")
                .replace("--root DIR", "`projectRoot`")
                .replace("`--config FILE`", "`configPath`")
                .replace("--config FILE", "`configPath`")
                .replace(
                    "(`--budget`, contextBudget.maxTokens)",
                    "(`budget`, or contextBudget.maxTokens in aic.config.json)",
                )
                .replace("`--budget`", "`budget`")
                .replace("`--related`", "`toolOutputs[].relatedFiles`"),
        ),
        other => other,
    }
}

/// `aic_inspect`: the trace of a compile, without file contents; not logged.
pub fn inspect(
    host: &Host,
    args: &InspectArgs,
    root: &Path,
    cancel: Arc<AtomicBool>,
) -> ToolResult {
    check_intent(&args.intent)?;
    let request = CompilationRequest {
        intent: args.intent.clone(),
        project_root: root.to_path_buf(),
        config_path: args.config_path.as_ref().map(PathBuf::from),
        budget: args.budget.map(TokenCount),
        model_id: args.model_id.clone(),
        editor_id: "mcp".to_owned(),
        cancel: Some(cancel),
        ..CompilationRequest::default()
    };
    let compilation = run_compile(&request, host).map_err(|error| compile_failure(error, None))?;
    let trace = compilation
        .trace
        .ok_or_else(|| ToolFailure::Internal("the compile returned no trace".to_owned()))?;
    Ok(json!({ "trace": trace }))
}

fn canonical(root: &Path) -> Result<PathBuf, ToolFailure> {
    resolve_root(root).map_err(|error| compile_failure(error, None))
}

fn diagnostic(result: Result<Value, String>) -> ToolResult {
    result
        .map(|mut value| {
            aic_stages::rounded::round_floats(&mut value);
            value
        })
        .map_err(ToolFailure::Tool)
}

/// `aic_status`.
pub fn status(host: &Host, args: &StatusArgs, root: &Path) -> ToolResult {
    if let Some(days) = args.time_range_days
        && !(1..=3660).contains(&days)
    {
        return Err(ToolFailure::Tool(format!(
            "`timeRangeDays` {days} is out of range: pass 1..3660, or leave it out for all time"
        )));
    }
    let root = canonical(root)?;
    let budget = load_config(&root, None).map_or(0, |l| l.config.context_budget.max_tokens.0);
    let rules = crate::rules::analyze(&root, crate::root::home().as_deref()).summary();
    diagnostic(diagnostics::status(
        &*store(host)?,
        &root,
        args.time_range_days,
        budget,
        &rules,
        host.now_ms(),
    ))
}

/// `aic_last`.
pub fn last(host: &Host, root: &Path) -> ToolResult {
    let root = canonical(root)?;
    diagnostic(diagnostics::last(&*store(host)?, &root))
}

/// `aic_projects`: bounded to [`diagnostics::ROW_LIMIT`] rows, most recent first.
pub fn projects(host: &Host) -> ToolResult {
    let mut projects = diagnostics::projects(&*store(host)?).map_err(ToolFailure::Tool)?;
    let total = projects.len();
    projects.truncate(diagnostics::ROW_LIMIT);
    let mut out = json!({ "projects": projects, "truncated": total - projects.len() });
    if total > diagnostics::ROW_LIMIT {
        out["continuation"] = json!(
            "older projects are left out; `aic projects --json` on the command line lists them all"
        );
    }
    Ok(out)
}

/// `aic_chat_summary`.
pub fn chat_summary(host: &Host, args: &ChatSummaryArgs, root: &Path) -> ToolResult {
    check_id("conversationId", args.conversation_id.as_deref())?;
    let root = canonical(root)?;
    diagnostic(diagnostics::chat_summary(
        &*store(host)?,
        &root,
        args.conversation_id.as_deref(),
    ))
}

/// `aic_quality_report`.
pub fn quality(host: &Host, args: &QualityArgs, root: &Path) -> ToolResult {
    let days = args.window_days.unwrap_or(7);
    if !(1..=365).contains(&days) {
        return Err(ToolFailure::Tool(format!(
            "`windowDays` {days} is out of range: pass 1..365 (default 7)"
        )));
    }
    let root = canonical(root)?;
    diagnostic(diagnostics::quality(
        &*store(host)?,
        &root,
        days,
        host.now_ms(),
    ))
}

/// `aic_compile_spec`: validates, compiles (through the spec cache), and
/// returns `{compiledSpec, meta}`; an invalid request is
/// `{error, code: "validation-error", field, message}` with `isError`.
pub fn compile_spec(host: &Host, args: &CompileSpecArgs, root: &Path) -> ToolResult {
    // `budget: 0` means the default, as for `aic_compile`.
    let value = json!({"spec": args.spec, "budget": args.budget.filter(|b| *b > 0)});
    let request = compile_request_from_value(&value).map_err(|problem| {
        ToolFailure::ToolStructured(json!({
            "error": "Invalid aic_compile_spec request",
            "code": aic_stages::spec::SpecValidationError::CODE,
            "field": problem.field(),
            "message": problem.to_string(),
        }))
    })?;
    let budget = request.budget.unwrap_or(DEFAULT_SPEC_BUDGET);
    let config = resolve_root(root)
        .ok()
        .and_then(|root| load_config(&root, None).ok())
        .map(|loaded| loaded.config)
        .unwrap_or_default();
    let model = ModelProfile::for_model(args.model_id.as_deref().or(config.model.id.as_deref()));
    let compiled = run_compile_spec(&request.spec, budget, &model, &config, false, host);
    serde_json::to_value(&compiled.result).map_err(|e| ToolFailure::Internal(e.to_string()))
}

/// One generated model-test probe.
#[derive(Clone, Debug)]
pub struct Probe {
    expected_sum: i64,
    expected_reversed: String,
    embed_intent: String,
    root: PathBuf,
    created_ms: u64,
}

/// The probes a server has handed out, by id.
pub type Probes = Mutex<HashMap<String, Probe>>;

fn random_u64() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

fn random_letters(count: usize) -> String {
    (0..count)
        .map(|_| char::from(b'A' + u8::try_from(random_u64() % 26).unwrap_or(0)))
        .collect()
}

/// `aic_model_test`: without `probeId`, hands out two challenges
/// and an embedded `aic_compile` check; with `probeId` and `answers`, grades
/// them (probes expire after 120 s).
pub fn model_test(host: &Host, args: &ModelTestArgs, root: &Path, probes: &Probes) -> ToolResult {
    let root = canonical(root)?;
    match (&args.probe_id, &args.answers) {
        (None, None) => {
            let a = 10 + i64::try_from(random_u64() % 90).unwrap_or(0);
            let b = 10 + i64::try_from(random_u64() % 90).unwrap_or(0);
            let word = random_letters(8);
            let reversed: String = word.chars().rev().collect();
            let probe_id = random_letters(8);
            let embed_intent = format!("model-test-{}-{reversed}", a + b);
            let mut table = probes
                .lock()
                .map_err(|_| ToolFailure::Internal("probe table poisoned".to_owned()))?;
            // Probes never answered would otherwise stay for the server's
            // life: drop the expired ones whenever a new one is made.
            let now = host.now_ms();
            table.retain(|_, probe| now.saturating_sub(probe.created_ms) <= PROBE_TTL_MS);
            table.insert(
                probe_id.clone(),
                Probe {
                    expected_sum: a + b,
                    expected_reversed: reversed,
                    embed_intent,
                    root: root.clone(),
                    created_ms: now,
                },
            );
            drop(table);
            Ok(json!({
                "probeId": probe_id,
                "challenges": [
                    {"id": 1, "type": "arithmetic", "question": format!("What is {a} + {b}?")},
                    {"id": 2, "type": "string-reverse", "question": format!("Reverse the string: \"{word}\"")},
                    {"id": 3, "type": "compile-embed", "question": "Call aic_compile with intent exactly \"model-test-<answer1>-<answer2>\" (your arithmetic answer, then your reversed string)."},
                ],
                "instructions": format!("Solve challenges 1 and 2, then do challenge 3 with aic_compile (same projectRoot). Finally call aic_model_test with {{\"projectRoot\": \"{}\", \"probeId\": \"{probe_id}\", \"answers\": [<arithmetic answer>, \"<reversed string>\"]}} within 120 seconds.", root.display()),
            }))
        }
        (Some(probe_id), Some(answers)) => {
            let (Some(sum), Some(reversed)) = (
                answers.first().and_then(Value::as_i64),
                answers.get(1).and_then(Value::as_str),
            ) else {
                return Err(ToolFailure::Tool(
                    "`answers` must be `[number, string]`: the arithmetic answer, then the reversed string".to_owned(),
                ));
            };
            if answers.len() != 2 {
                return Err(ToolFailure::Tool(
                    "`answers` must have exactly two items: `[number, string]`".to_owned(),
                ));
            }
            if probe_id.len() != 8 || !probe_id.chars().all(|c| c.is_ascii_uppercase()) {
                return Err(ToolFailure::Tool(
                    "`probeId` must be the 8 uppercase letters A–Z of a probe this server handed out".to_owned(),
                ));
            }
            let probe = probes
                .lock()
                .map_err(|_| ToolFailure::Internal("probe table poisoned".to_owned()))?
                .remove(probe_id);
            let Some(probe) = probe else {
                return Err(ToolFailure::Tool(format!(
                    "probe `{probe_id}` is unknown or already graded: call aic_model_test without probeId for a new one"
                )));
            };
            let elapsed = host.now_ms().saturating_sub(probe.created_ms);
            if elapsed > PROBE_TTL_MS {
                return Err(ToolFailure::Tool(format!(
                    "probe `{probe_id}` expired after {elapsed} ms (120,000 ms allowed): start a new one"
                )));
            }
            let sum_ok = sum == probe.expected_sum;
            let reverse_ok = reversed == probe.expected_reversed;
            let embed_ok = session::compiled_intent_since(
                &*store(host)?,
                &probe.root,
                &probe.embed_intent,
                probe.created_ms,
            )
            .unwrap_or(false);
            Ok(json!({
                "probeId": probe_id,
                "passed": sum_ok && reverse_ok && embed_ok,
                "steps": [
                    {"test": "mcp-call", "passed": true, "note": "aic_model_test reached the server"},
                    {"test": "arithmetic", "passed": sum_ok, "expected": probe.expected_sum, "got": sum},
                    {"test": "string-reverse", "passed": reverse_ok, "expected": probe.expected_reversed, "got": reversed},
                    {"test": "compile-embed", "passed": embed_ok, "note": if embed_ok {
                        "aic_compile was called with the embedded intent".to_owned()
                    } else {
                        format!("aic_compile was not called with intent \"{}\" after the probe was handed out", probe.embed_intent)
                    }},
                ],
            }))
        }
        _ => Err(ToolFailure::Tool(
            "`probeId` and `answers` go together: both to grade a probe, neither to start one"
                .to_owned(),
        )),
    }
}
