//! The agentic session layer (`docs/mcp.md`, "Agent sessions"): what one
//! compile of a multi-step agent session learns from the steps before it, and
//! what it leaves for the steps after it.
//!
//! A session is keyed by its *effective session id*: the `conversationId` when
//! the caller sends one, else the MCP connection's own session id. Its steps
//! live in the `session_state` table of the global database, per project. Each
//! step records the intent, the files shown (path, tier, content hash), the
//! tokens compiled and the shape of the tool outputs sent with it (type and
//! related files, never their content).
//!
//! From that history a compile gets ([`SessionInput`]):
//! - **deduplication**: a file shown in an earlier step and unchanged since is a
//!   one-line "previously shown" marker instead of its body;
//! - **the ConversationCompressor header**: `## Session context` lists the last
//!   [`HEADER_STEPS`] steps, with per-output-type aggregates of their tool
//!   outputs;
//! - **the BudgetAllocator clamp**: the tokens already compiled into the
//!   conversation (or the caller's `conversationTokens`) shrink the budget to
//!   the context window's headroom.
//!
//! Weak placeholder intents fall back to the conversation's last real intent
//! ([`weak_intent_fallback`]), and a finished subagent's compilations can be
//! moved onto its parent conversation ([`reparent`]).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use aic_stages::fit::tokens::TokenCount;
use aic_stages::relative_path::RelativePath;
use aic_stages::select::intent::TaskClass;
use aic_storage::{LogRow, LogTable, StorageError, Store};
use serde::{Deserialize, Serialize};

use crate::clock::iso;
use crate::history::compilations::{CompilationRecord, read_compilations};
use crate::pipeline::{Compilation, PreviousFile, SessionInput, ShownFile};

/// Steps the `## Session context` header lists (the most recent ones).
pub const HEADER_STEPS: usize = 10;

/// Steps kept per session; older ones are dropped from `session_state`.
pub const MAX_STEPS: usize = 200;

/// The values `toolOutputs[].type` accepts on the wire.
pub const TOOL_OUTPUT_TYPES: [&str; 4] = [
    "test-result",
    "lint-error",
    "build-output",
    "command-output",
];

/// The values `triggerSource` accepts on the wire.
pub const TRIGGER_SOURCES: [&str; 8] = [
    "session_start",
    "prompt_submit",
    "tool_gate",
    "subagent_start",
    "subagent_stop",
    "cli",
    "model_initiated",
    "internal_test",
];

/// The intent the reference MCP client sends when the model gave none.
const DEFAULT_WIRE_INTENT: &str = "provide context for the current task";

/// One tool output sent with a compile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(description = "An output of one of the agent's tools since the last compile.")]
pub struct ToolOutput {
    /// The kind of output.
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["test-result", "lint-error", "build-output", "command-output"]))]
    pub output_type: String,
    /// The output text (never stored, never echoed into a prompt).
    pub content: String,
    /// Files the output names: each is boosted in selection.
    #[serde(default)]
    pub related_files: Vec<String>,
}

/// What a step keeps of one tool output: its type and related files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredToolOutput {
    /// The output's type.
    #[serde(rename = "type")]
    pub output_type: String,
    /// The files it named.
    pub related_files: Vec<String>,
}

/// One recorded step of a session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStep {
    /// The step's index: the caller's `stepIndex`, else one past the last.
    pub step_index: u32,
    /// The caller's `stepIntent`, when given.
    pub step_intent: Option<String>,
    /// The intent compiled.
    pub intent: String,
    /// Task class of the intent.
    pub task_class: TaskClass,
    /// Files shown, with tier and content hash.
    pub files: Vec<ShownFile>,
    /// Tokens of the compiled prompt.
    pub tokens_compiled: u32,
    /// The tool outputs sent with the step, without content.
    pub tool_outputs: Vec<StoredToolOutput>,
    /// When the step finished, ISO 8601 UTC.
    pub completed_at: String,
}

/// The encoded value of a `session_state` row.
#[derive(Default, Serialize, Deserialize)]
struct SessionDocument {
    /// Encoding version.
    v: u32,
    /// Steps, oldest first.
    steps: Vec<SessionStep>,
}

const DOCUMENT_VERSION: u32 = 1;

/// The recorded steps of `session` in the project at `root` (canonical),
/// oldest first; empty for a new session or an undecodable row.
///
/// # Errors
///
/// [`StorageError`] when the database cannot be read.
pub fn steps(store: &Store, root: &Path, session: &str) -> Result<Vec<SessionStep>, StorageError> {
    let Some(project) = store.project(&root.to_string_lossy())? else {
        return Ok(Vec::new());
    };
    let Some(bytes) = store.session_state(&project.id, session)? else {
        return Ok(Vec::new());
    };
    Ok(serde_json::from_slice::<SessionDocument>(&bytes)
        .ok()
        .filter(|document| document.v == DOCUMENT_VERSION)
        .map(|document| document.steps)
        .unwrap_or_default())
}

/// Appends one step to `session` (keeping the last [`MAX_STEPS`]).
///
/// # Errors
///
/// [`StorageError`] when the database cannot be read or written.
pub fn record_step(
    store: &Store,
    root: &Path,
    session: &str,
    step: SessionStep,
    now_ms: u64,
) -> Result<(), StorageError> {
    let project = store.project_id(&root.to_string_lossy(), now_ms)?;
    let mut steps = steps(store, root, session)?;
    // A retried step replaces the earlier attempt.
    steps.retain(|existing| existing.step_index != step.step_index);
    steps.push(step);
    steps.sort_by_key(|step| step.step_index);
    if steps.len() > MAX_STEPS {
        steps.drain(..steps.len() - MAX_STEPS);
    }
    let document = SessionDocument {
        v: DOCUMENT_VERSION,
        steps,
    };
    let bytes = serde_json::to_vec(&document).unwrap_or_default();
    store.put_session_state(&project, session, &bytes)
}

/// The step a finished compile adds to its session.
pub fn step_of(
    compilation: &Compilation,
    step_index: Option<u32>,
    step_intent: Option<&str>,
    tool_outputs: &[ToolOutput],
    previous: &[SessionStep],
    now_ms: u64,
) -> SessionStep {
    SessionStep {
        step_index: step_index.unwrap_or_else(|| {
            previous
                .last()
                .map_or(0, |step| step.step_index.saturating_add(1))
        }),
        step_intent: step_intent
            .map(|text| aic_stages::guard::redact_secrets(text).unwrap_or_else(|| text.to_owned())),
        intent: compilation.meta.intent.clone(),
        task_class: compilation.meta.task_class,
        // Files shown as a "previously shown" marker keep their earlier
        // showing: this step did not show them again.
        files: compilation
            .shown
            .iter()
            .filter(|file| !compilation.meta.previously_shown.contains(&file.path))
            .cloned()
            .collect(),
        tokens_compiled: compilation.meta.tokens_compiled.0,
        tool_outputs: tool_outputs
            .iter()
            .map(|output| StoredToolOutput {
                output_type: output.output_type.clone(),
                related_files: output.related_files.clone(),
            })
            .collect(),
        completed_at: iso(now_ms),
    }
}

/// What the pipeline gets from a session's history: the header, the files
/// already shown (the latest showing of each), and the conversation's tokens
/// (`conversation_tokens` from the wire, else the sum over recorded steps).
pub fn session_input(steps: &[SessionStep], conversation_tokens: Option<u32>) -> SessionInput {
    let mut previously_shown: BTreeMap<RelativePath, PreviousFile> = BTreeMap::new();
    for step in steps {
        for file in &step.files {
            previously_shown.insert(
                file.path.clone(),
                PreviousFile {
                    hash: file.hash.clone(),
                    tier: file.tier,
                    step: step.step_index,
                },
            );
        }
    }
    let summed: u64 = steps.iter().map(|s| u64::from(s.tokens_compiled)).sum();
    let conversation_tokens = conversation_tokens
        .map(TokenCount)
        .or_else(|| (!steps.is_empty()).then(|| TokenCount::from_u64(summed)));
    SessionInput {
        header: header(steps),
        previously_shown,
        conversation_tokens,
    }
}

/// The ConversationCompressor: `Steps completed:` and one numbered
/// line per recent step (intent, files, tokens), each followed by one indented
/// line per tool output type of that step (count and summed related files).
/// `None` for a session with no steps. Deterministic: no times, no content.
pub fn header(steps: &[SessionStep]) -> Option<String> {
    if steps.is_empty() {
        return None;
    }
    let mut out = String::from("Steps completed:");
    for step in &steps[steps.len().saturating_sub(HEADER_STEPS)..] {
        let label = step
            .step_intent
            .as_deref()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or(&step.intent);
        let _ = write!(
            out,
            "\n{}. {} ({} files, {} tokens)",
            step.step_index,
            one_line(label),
            step.files.len(),
            step.tokens_compiled
        );
        let mut by_type: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for output in &step.tool_outputs {
            let entry = by_type.entry(&output.output_type).or_default();
            entry.0 += 1;
            entry.1 += output.related_files.len();
        }
        for (output_type, (count, related)) in by_type {
            let _ = write!(
                out,
                "\n   {output_type}: {count} output{}, {related} related file{}",
                if count == 1 { "" } else { "s" },
                if related == 1 { "" } else { "s" }
            );
        }
    }
    Some(out)
}

/// An intent on one line, at most 200 characters.
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &joined[..cut]),
        None => joined,
    }
}

/// Whether an intent is a placeholder rather than a task: empty, the MCP
/// client's default string, or `provide context for…`.
pub fn is_weak_intent(intent: &str) -> bool {
    let normalised = intent.trim().to_lowercase();
    normalised.is_empty()
        || normalised == DEFAULT_WIRE_INTENT
        || normalised.starts_with("provide context for")
}

/// The last intent of `conversation` in the project at `root` whose task class
/// is not `general`, for a weak intent to fall back to.
///
/// # Errors
///
/// [`StorageError`] when the database cannot be read.
pub fn weak_intent_fallback(
    store: &Store,
    root: &Path,
    conversation: &str,
) -> Result<Option<String>, StorageError> {
    Ok(conversation_rows(store, root)?
        .into_iter()
        .rev()
        .map(|(_, record)| record)
        .find(|record| {
            record.conversation_id.as_deref() == Some(conversation)
                && record.task_class != TaskClass::General
                && !is_weak_intent(&record.intent)
        })
        .map(|record| record.intent))
}

/// Moves the compilations of conversation `from` onto conversation `to` (a
/// `subagent_stop` call, see `docs/mcp.md`): returns the rows updated.
///
/// # Errors
///
/// [`StorageError`] when the database cannot be read or written.
pub fn reparent(store: &Store, root: &Path, from: &str, to: &str) -> Result<usize, StorageError> {
    let rows: Vec<LogRow> = conversation_rows(store, root)?
        .into_iter()
        .filter(|(_, record)| record.conversation_id.as_deref() == Some(from))
        .map(|(key, mut record)| {
            record.conversation_id = Some(to.to_owned());
            LogRow {
                table: LogTable::Compilations,
                key,
                value: serde_json::to_vec(&record).unwrap_or_default(),
            }
        })
        .collect();
    if !rows.is_empty() {
        store.rewrite_logs(&rows)?;
    }
    Ok(rows.len())
}

/// Whether the project at `root` logged a compile of exactly `intent` at or
/// after `since_ms` (the embedded check of `aic_model_test`).
///
/// # Errors
///
/// [`StorageError`] when the database cannot be read.
pub fn compiled_intent_since(
    store: &Store,
    root: &Path,
    intent: &str,
    since_ms: u64,
) -> Result<bool, StorageError> {
    let Some(project) = store.project(&root.to_string_lossy())? else {
        return Ok(false);
    };
    Ok(read_compilations(store, &project.id, since_ms)?
        .into_iter()
        .any(|(_, record)| record.intent.trim() == intent))
}

fn conversation_rows(
    store: &Store,
    root: &Path,
) -> Result<Vec<(aic_storage::LogKey, CompilationRecord)>, StorageError> {
    match store.project(&root.to_string_lossy())? {
        Some(project) => read_compilations(store, &project.id, 0),
        None => Ok(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aic_stages::fit::ladder::InclusionTier;

    fn step(
        index: u32,
        intent: &str,
        files: &[(&str, InclusionTier)],
        outputs: &[(&str, usize)],
    ) -> SessionStep {
        SessionStep {
            step_index: index,
            step_intent: None,
            intent: intent.to_owned(),
            task_class: TaskClass::Bugfix,
            files: files
                .iter()
                .map(|(path, tier)| ShownFile {
                    path: RelativePath::new(path).unwrap(),
                    tier: *tier,
                    hash: format!("{path}-hash"),
                })
                .collect(),
            tokens_compiled: 1_000,
            tool_outputs: outputs
                .iter()
                .map(|(t, n)| StoredToolOutput {
                    output_type: (*t).to_owned(),
                    related_files: (0..*n).map(|i| format!("f{i}.rs")).collect(),
                })
                .collect(),
            completed_at: "2026-11-30T00:00:00.000Z".to_owned(),
        }
    }

    #[test]
    fn header_lists_the_last_ten_steps_with_output_aggregates() {
        let steps: Vec<SessionStep> = (0..12)
            .map(|i| {
                step(
                    i,
                    &format!("step {i}"),
                    &[("a.rs", InclusionTier::L0)],
                    if i == 11 {
                        &[("test-result", 2), ("test-result", 1), ("lint-error", 0)]
                    } else {
                        &[]
                    },
                )
            })
            .collect();
        let header = header(&steps).unwrap();
        assert!(header.starts_with("Steps completed:\n2. step 2 (1 files, 1000 tokens)"));
        assert!(!header.contains("\n1. step 1"));
        assert!(header.ends_with(
            "11. step 11 (1 files, 1000 tokens)\n   lint-error: 1 output, 0 related files\n   test-result: 2 outputs, 3 related files"
        ));
        assert_eq!(header.lines().count(), 1 + 10 + 2);
        assert_eq!(super::header(&[]), None);
    }

    #[test]
    fn the_latest_showing_of_a_file_wins_and_tokens_sum() {
        let steps = [
            step(
                0,
                "a",
                &[("a.rs", InclusionTier::L0), ("b.rs", InclusionTier::L2)],
                &[],
            ),
            step(1, "b", &[("b.rs", InclusionTier::L0)], &[]),
        ];
        let input = session_input(&steps, None);
        let b = &input.previously_shown[&RelativePath::new("b.rs").unwrap()];
        assert_eq!((b.tier, b.step), (InclusionTier::L0, 1));
        assert_eq!(input.conversation_tokens, Some(TokenCount(2_000)));
        assert_eq!(
            session_input(&steps, Some(5)).conversation_tokens,
            Some(TokenCount(5))
        );
        assert_eq!(session_input(&[], None).conversation_tokens, None);
    }

    #[test]
    fn weak_intents_are_recognised() {
        for weak in [
            "",
            "  ",
            "Provide context for the current task",
            "provide context for: x",
        ] {
            assert!(is_weak_intent(weak), "{weak:?}");
        }
        assert!(!is_weak_intent("fix the login bug"));
    }
}
