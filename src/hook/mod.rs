//! Editor hook events (`aic hook <claude|codex|cursor> <Event> [check]`;
//! `docs/claude-code.md`, `docs/codex.md`, `docs/cursor.md`): [`answer`]
//! turns an event's JSON and environment ([`HookInput`]) into exactly what
//! the event expects on stdout, compiling in-process (no MCP round trip, no
//! helper process). `aic hook` ([`crate::commands::hook`]) and `aic daemon`
//! both answer with it.
//!
//! Fails open, always: any error, an unusable payload or project, or a
//! compile that cannot fit gives the event's neutral output (usually empty)
//! and exit code 0, with one line in `$AIC_HOME/hook.log`.
//! Injected text stays within the 10,000-character cap: the prompt is
//! compiled to fit it, not cut. The opt-in gates (`--with-gates`,
//! `--with-compile-gate`) keep their state under `$AIC_HOME/hook-sessions/`.

mod state;

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use aic_integrations::claude::{self, MAX_INJECTED_CHARS};
use aic_integrations::{
    ContextRequest, Editor, HookEnv, HookEvent, HookOutcome, HookPlan, cursor, gates,
};
use aic_stages::fit::assembler::PromptFormat;
use aic_stages::fit::ladder::InclusionTier;
use aic_stages::fit::tokens::TokenCount;

use crate::clock::iso;
use crate::error::CompileError;
use crate::history::compilations::{CompileOrigin, record};
use crate::host::Host;
use crate::pipeline::{Compilation, CompilationRequest, SizeLimit, SizeScope, compile};
use serde::{Deserialize, Serialize};
use state::HookState;

/// The hook log is started over past this size, in bytes.
const MAX_LOG_BYTES: u64 = 1 << 20;

/// Characters of the session block when UserPromptSubmit adds one.
const SESSION_BLOCK_CHARS: usize = 3_500;

/// The longest intent a hook compiles, in characters: the prompt is already in
/// the conversation, and its `## Task` copy must leave room for context.
const MAX_HOOK_INTENT_CHARS: usize = 2_000;

/// How long the compile gate waits for a sibling `aic_compile` call of the
/// same tool batch before refusing a tool.
const COMPILE_GATE_WAIT: Duration = Duration::from_millis(500);

/// Everything a hook handler reads besides its arguments: stdin and the
/// environment variables hooks consult, and the client's working directory.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HookInput {
    /// `<editor> <Event> [check]` and further words.
    pub words: Vec<String>,
    /// The event's JSON as read from stdin (at most 8 MiB).
    pub stdin: Vec<u8>,
    /// `CLAUDE_PROJECT_DIR`.
    pub claude_project_dir: Option<PathBuf>,
    /// `CURSOR_PROJECT_DIR`.
    pub cursor_project_dir: Option<PathBuf>,
    /// The hook process's working directory.
    pub cwd: Option<PathBuf>,
    /// `AIC_PROJECT_ROOT`.
    pub aic_project_root: Option<PathBuf>,
    /// `AIC_CONVERSATION_ID`.
    pub aic_conversation_id: Option<String>,
}

/// The editor a hook's first word names.
pub(crate) fn editor_of(name: Option<&str>) -> Option<Editor> {
    match name {
        Some("claude") => Some(Editor::ClaudeCode),
        Some("codex") => Some(Editor::Codex),
        Some("cursor") => Some(Editor::Cursor),
        _ => None,
    }
}

/// A hook event's output (stdout), computed in this process (the CLI's
/// in-process path, or the daemon for a client). Never fails: a panic in the
/// handler is logged and gives the neutral output.
pub fn answer(input: &HookInput, host: &Host) -> String {
    let words: Vec<&str> = input.words.iter().map(String::as_str).collect();
    let event = words.get(1).copied().unwrap_or_default();
    let Some(editor) = editor_of(words.first().copied()) else {
        return String::new();
    };
    let hook = Hook {
        host,
        state: HookState::new(host),
        editor,
        event,
    };
    if words.len() > 3 {
        hook.log(&format!(
            "extra arguments ignored: {}",
            words[3..].join(" ")
        ));
    }
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook.handle(input))).unwrap_or_else(
        |_| {
            hook.log("the handler panicked");
            neutral(editor, event)
        },
    )
}

/// An event's output when aic has nothing to say.
pub(crate) fn neutral(editor: Editor, event_name: &str) -> String {
    match editor {
        Editor::Cursor => cursor::render(event_name, &HookOutcome::Neutral, &[]),
        _ => String::new(),
    }
}

/// One hook event being handled.
struct Hook<'a> {
    host: &'a Host,
    state: HookState<'a>,
    editor: Editor,
    event: &'a str,
}

impl Hook<'_> {
    /// Appends `message` to the hook log under this hook's editor and event.
    fn log(&self, message: &str) {
        log(self.host, self.editor.id(), self.event, message);
    }

    fn handle(&self, input: &HookInput) -> String {
        let (editor, event_name) = (self.editor, self.event);
        let known = match editor {
            Editor::Cursor => cursor::event_named(event_name).is_some(),
            _ => claude::event_named(event_name).is_some(),
        };
        if !known {
            self.log("not an event aic handles; nothing to do");
            return neutral(editor, event_name);
        }
        let stdin = String::from_utf8_lossy(&input.stdin);
        let mut env = HookEnv {
            claude_project_dir: input.claude_project_dir.clone(),
            cursor_project_dir: input.cursor_project_dir.clone(),
            process_cwd: input.cwd.clone(),
            project_of: Some(|dir| crate::root::discover_root(dir).0),
            session_marked: false,
            aic_project_root: input.aic_project_root.clone(),
            aic_conversation_id: input.aic_conversation_id.clone(),
            editor_id: if editor == Editor::Codex { "codex" } else { "" },
            check: input.words.get(2).cloned(),
        };
        if editor == Editor::Cursor {
            let Some(payload) = cursor::parse(&stdin) else {
                self.log("stdin is not a JSON object");
                return neutral(editor, event_name);
            };
            let plan = cursor::plan(event_name, &payload, &env);
            if plan == HookPlan::Nothing && payload.cursor_version.is_none() {
                self.log(
                    "not a Cursor payload (no cursor_version): the Cursor handler does nothing",
                );
            }
            // sessionStart hands the session's project and conversation to its
            // later hooks.
            let env_vars: Vec<(&str, String)> = match &plan {
                HookPlan::Inject { main, .. } if event_name == "sessionStart" => {
                    let mut vars =
                        vec![("AIC_PROJECT_ROOT", main.project_root.display().to_string())];
                    vars.extend(
                        main.conversation_id
                            .clone()
                            .map(|conversation| ("AIC_CONVERSATION_ID", conversation)),
                    );
                    vars
                }
                _ => Vec::new(),
            };
            let outcome = self.execute(plan, None);
            return cursor::render(event_name, &outcome, &env_vars);
        }
        let event = claude::event_named(event_name).unwrap_or(HookEvent::PreCompact);
        let Some(payload) = claude::parse(&stdin) else {
            self.log("stdin is not a JSON object");
            return String::new();
        };
        let marker = payload
            .session_id
            .as_deref()
            .and_then(|session| self.state.session_marker(session));
        env.session_marked = marker.as_ref().is_some_and(|path| path.exists());
        let plan = claude::plan(event, &payload, &env);
        if plan == HookPlan::Nothing && event.injects_context(editor) {
            let why = if payload.cursor_version.is_some() {
                "a Cursor payload (cursor_version): this handler does nothing"
            } else if claude::project_root(&payload, &env).is_none() {
                "no absolute project directory: neither the payload's cwd nor CLAUDE_PROJECT_DIR"
            } else {
                "nothing to inject for this payload"
            };
            self.log(why);
        }
        let outcome = self.execute(plan, marker.as_deref());
        claude::render_outcome(editor, event, &outcome)
    }

    /// Carries out a plan.
    fn execute(&self, plan: HookPlan, marker: Option<&Path>) -> HookOutcome {
        let state = &self.state;
        match plan {
            HookPlan::Nothing => HookOutcome::Neutral,
            HookPlan::Inject {
                session,
                main,
                mark_session,
                turn,
            } => self.inject(
                session.as_ref(),
                &main,
                mark_session.is_some(),
                turn.as_deref(),
                marker,
            ),
            HookPlan::Reparent {
                project_root,
                from,
                to,
            } => {
                let outcome = self
                    .host
                    .database()
                    .map_err(|error| error.with_hint())
                    .and_then(|store| {
                        let root =
                            fs_err::canonicalize(&project_root).map_err(|e| e.to_string())?;
                        crate::history::conversations::reparent(&store, &root, &from, &to)
                            .map_err(|e| e.to_string())
                    });
                if let Err(message) = outcome {
                    self.log(&format!("reparent failed: {message}"));
                }
                HookOutcome::Neutral
            }
            HookPlan::LinkSubagent { child, parent } => {
                state.link_subagent(&child, &parent);
                HookOutcome::Neutral
            }
            HookPlan::ReparentLinked { project_root, from } => {
                let Some(to) = state.linked_parent(&from) else {
                    self.log("no parent conversation known for this subagent; nothing to reparent");
                    return HookOutcome::Neutral;
                };
                self.execute(
                    HookPlan::Reparent {
                        project_root,
                        from,
                        to,
                    },
                    marker,
                )
            }
            HookPlan::EndSession { conversation, .. } => {
                if let Some(path) = marker {
                    let _ = fs_err::remove_file(path);
                }
                if let Some(conversation) = conversation {
                    state.end_conversation(&conversation);
                }
                HookOutcome::Neutral
            }
            HookPlan::StartTurn {
                conversation,
                prompt,
            } => {
                state.start_turn(&conversation, Some(&prompt));
                HookOutcome::Neutral
            }
            HookPlan::AicToolCall {
                conversation,
                updated_input,
            } => {
                if let Some(conversation) = &conversation {
                    state.mark_compiled(conversation);
                }
                HookOutcome::Allow { updated_input }
            }
            HookPlan::CompileGate {
                conversation,
                project_root,
            } => {
                let config = crate::config::load_config(&project_root, None).ok();
                if config.is_some_and(|c| c.config.dev_mode && c.config.skip_compile_gate) {
                    return HookOutcome::Neutral;
                }
                if state.turn_compiled(&conversation, COMPILE_GATE_WAIT) {
                    return HookOutcome::Neutral;
                }
                HookOutcome::Deny {
                    reason: gates::compile_gate_reason(state.prompt(&conversation).as_deref()),
                }
            }
            HookPlan::CheckShell { command } => match gates::bypasses_git_hooks(&command) {
                Some(why) => HookOutcome::Deny {
                    reason: format!(
                        "aic: {why}. Run the command without it: the hooks are this project's checks. If they cannot pass, say so to the user instead."
                    ),
                },
                None => HookOutcome::Neutral,
            },
            HookPlan::TrackEdits {
                conversation,
                project_root,
                paths,
            } => {
                state.track_edits(&conversation, &project_root, &paths);
                HookOutcome::Neutral
            }
            HookPlan::QualityGate {
                conversation,
                project_root,
            } => self.quality_gate(&conversation, &project_root),
        }
    }

    /// Injects the event's context (`main`), after the session's when
    /// SessionStart missed it; marks the turn compiled and the session
    /// injected.
    fn inject(
        &self,
        session: Option<&ContextRequest>,
        main: &ContextRequest,
        mark_session: bool,
        turn: Option<&str>,
        marker: Option<&Path>,
    ) -> HookOutcome {
        let state = &self.state;
        if let Some(conversation) = turn {
            state.start_turn(conversation, Some(&main.intent));
        }
        let separator = "\n\n";
        let main_chars = match session {
            Some(_) => MAX_INJECTED_CHARS - SESSION_BLOCK_CHARS - separator.len(),
            None => MAX_INJECTED_CHARS,
        };
        // The event's own context first: without it nothing is injected,
        // and the session block need not be compiled at all.
        let Some(main_text) = self.compile_to_fit(main, main_chars) else {
            return HookOutcome::Neutral;
        };
        if let Some(conversation) = turn {
            state.mark_compiled(conversation);
        }
        let session_text =
            session.and_then(|request| self.compile_to_fit(request, SESSION_BLOCK_CHARS));
        let text = match session_text {
            Some(session_text) => format!("{session_text}{separator}{main_text}"),
            None => main_text,
        };
        if mark_session && let Some(path) = marker {
            state.write_session_marker(path);
        }
        HookOutcome::Context(text)
    }

    /// Runs the quality gate's checks on the conversation's edited files; a
    /// failure blocks the stop, up to [`gates::MAX_CONSECUTIVE_BLOCKS`] times in
    /// a row.
    fn quality_gate(&self, conversation: &str, project_root: &Path) -> HookOutcome {
        let state = &self.state;
        let config = match crate::config::load_config(project_root, None) {
            Ok(loaded) => loaded.config,
            Err(error) => {
                self.log(&format!("quality gate skipped: {error}"));
                return HookOutcome::Neutral;
            }
        };
        let gate = &config.quality_gate;
        if gate.commands.is_empty() {
            return HookOutcome::Neutral;
        }
        let edits = state.edits(conversation);
        let timeout = Duration::from_secs(u64::from(gate.timeout_seconds.max(1)));
        let Some(reason) = state::quality_gate(&gate.commands, timeout, project_root, &edits)
        else {
            state.clear_gate(conversation);
            return HookOutcome::Neutral;
        };
        if state.count_block(conversation) > gates::MAX_CONSECUTIVE_BLOCKS {
            self.log(&format!(
                "the quality gate still fails after blocking {} stops in a row; this stop goes through",
                gates::MAX_CONSECUTIVE_BLOCKS
            ));
            state.clear_gate(conversation);
            return HookOutcome::Neutral;
        }
        HookOutcome::BlockStop { reason }
    }

    /// Compiles `request` so that the injected text has at most `max_chars`
    /// characters: compiled to the limit, not cut. The limit goes into the compile
    /// as a size limit on the file blocks (what is injected, less its header and
    /// the note on compressed files), and the fit phase meets it in the same
    /// compile, compressing the least relevant files first. The token budget is
    /// only an upper bound, generous enough ([`MIN_CHARS_PER_TOKEN`]) that the
    /// characters, not the tokens, decide. `None` (logged) when the compile fails
    /// or nothing fits.
    fn compile_to_fit(&self, request: &ContextRequest, max_chars: usize) -> Option<String> {
        if let Err(error) = crate::root::refuse_broad(&request.project_root) {
            self.log(&error.to_string());
            return None;
        }
        let request = &with_landmarks(request);
        // Redacted before it is cut: a secret cut in half no longer matches a
        // rule, and its first half would reach the prompt.
        let full = aic_stages::guard::redact_secrets(&request.intent)
            .unwrap_or_else(|| request.intent.clone());
        let intent = match full.char_indices().nth(MAX_HOOK_INTENT_CHARS) {
            Some((cut, _)) => format!("{}…", &full[..cut]),
            None => full.clone(),
        };
        let header = header_line(request.trigger_source);
        let orient = request.trigger_source == "session_start";
        let blocks_chars = max_chars
            .saturating_sub(header.chars().count())
            .saturating_sub(NOTE_RESERVE_CHARS)
            .saturating_sub(if orient { MAP_RESERVE_CHARS } else { 0 });
        let sections_estimate = PROMPT_SECTIONS_TOKENS + intent.chars().count() as f64 / 3.0;
        let budget = sections_estimate + blocks_chars as f64 / MIN_CHARS_PER_TOKEN;
        let compiled = compile(
            &CompilationRequest {
                intent,
                project_root: request.project_root.clone(),
                budget: Some(TokenCount(budget as u32)),
                // The budget comes from a size in characters: no model margin.
                budget_counted: true,
                model_id: request.model_id.clone(),
                editor_id: self.editor.id().to_owned(),
                use_prompt_cache: true,
                size_limit: Some(SizeLimit {
                    max_chars: blocks_chars,
                    scope: SizeScope::FileBlocks,
                    json_escaped: false,
                }),
                // The hook injects the Markdown file blocks it cuts out of the
                // prompt, whatever `output.format` says.
                format: Some(PromptFormat::Markdown),
                // A session starts with what a newcomer reads first.
                orient,
                ..CompilationRequest::default()
            },
            self.host,
        );
        let compilation = match compiled {
            Ok(compilation) => compilation,
            Err(CompileError::BudgetTooSmall { .. }) => {
                self.log(&format!(
                "no file fits {max_chars} characters; the aic_compile tool can compile it with a larger budget"
            ));
                return None;
            }
            Err(error) => {
                self.log(&error.to_string());
                return None;
            }
        };
        let context = context_only(&compilation.prompt);
        let text = injected_text(&header, &compilation, &context);
        if text.chars().count() > max_chars {
            self.log(&format!("the prompt did not fit {max_chars} characters"));
            return None;
        }
        let origin = CompileOrigin {
            trigger_source: request.trigger_source.to_owned(),
            conversation_id: request.conversation_id.clone(),
            session_id: None,
        };
        if let Err(message) = record(self.host, &compilation, &origin) {
            self.log(&format!("the compile was not logged: {message}"));
        }
        Some(text)
    }
}

/// Characters per token assumed for the token budget of a hook's compile: a
/// lower bound for code and prose (measured 3.1–4.5 on deno, vite and click),
/// so the budget rarely binds before the size limit does.
const MIN_CHARS_PER_TOKEN: f64 = 2.5;

/// Characters kept free for the note on compressed files.
const NOTE_RESERVE_CHARS: usize = 200;

/// Tokens of a prompt's own sections (task, classification, constraints)
/// besides the intent's words, for the first budget.
const PROMPT_SECTIONS_TOKENS: f64 = 180.0;

/// The first line of the text a hook injects for `trigger_source`, with the
/// blank line after it.
fn header_line(trigger_source: &str) -> String {
    let header = match trigger_source {
        "prompt_submit" => "Repository files aic selected for this request",
        "subagent_start" => {
            "Repository files aic selected for this subagent: an overview of the project"
        }
        _ => "Repository files aic selected for this session: an overview of the project",
    };
    format!("{header} (compressed tiers are marked in each heading):\n\n")
}

/// The text a hook injects for `compilation`: its `context` ([`context_only`])
/// after the `header` ([`header_line`]), and a last line when files are
/// compressed or sliced to fit.
fn injected_text(header: &str, compilation: &Compilation, context: &str) -> String {
    let sliced = context.matches(" [sliced]\n").count();
    let compressed: usize = sliced
        + compilation
            .meta
            .summarisation_tiers
            .iter()
            .filter(|(tier, _)| **tier != InclusionTier::L0)
            .map(|(_, count)| count)
            .sum::<usize>();
    let mut text = format!("{header}{context}");
    if compressed > 0 {
        // Say that the size limit shaped the context.
        let _ = write!(
            text,
            "\n\n({compressed} of {} files are compressed or sliced to fit the hook's size limit; the aic_compile tool returns them in full with a larger budget.)",
            compilation.meta.files_selected
        );
    }
    text
}

/// Files whose names say what a project is, looked for at its root.
const LANDMARKS: [&str; 8] = [
    "package.json",
    "Cargo.toml",
    "pyproject.toml",
    "setup.py",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "Gemfile",
];

/// Top-level directories that say nothing about a project's architecture.
const SKIPPED_DIRECTORIES: [&str; 14] = [
    "node_modules",
    "target",
    "dist",
    "build",
    "vendor",
    "docs",
    "doc",
    "examples",
    "test",
    "tests",
    "benches",
    "bench",
    "fixtures",
    "scripts",
];

/// A session-level request (`SESSION_INTENT` has no word that names a file)
/// gets the project's landmark files and top-level directories as words, so
/// the selector has something to match: the manifest, `src`, `packages`.
fn with_landmarks(request: &ContextRequest) -> ContextRequest {
    if !request.intent.starts_with(claude::SESSION_INTENT) {
        return request.clone();
    }
    // Manifests and source directories, not documentation: words such as
    // "readme" or "docs" would make the task a docs task.
    let mut words: Vec<String> = LANDMARKS
        .iter()
        .filter(|name| request.project_root.join(name).is_file())
        .map(|name| (*name).to_owned())
        .collect();
    if let Ok(entries) = fs_err::read_dir(&request.project_root) {
        let mut directories: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| !name.starts_with('.') && !SKIPPED_DIRECTORIES.contains(&name.as_str()))
            .collect();
        directories.sort();
        words.extend(directories.into_iter().take(8));
    }
    let mut request = request.clone();
    if !words.is_empty() {
        request.intent = format!("{}: {}", request.intent, words.join(" "));
    }
    request
}

/// The facts of a compiled prompt for a hook: the body of its `## Context`
/// section (the files). The task, classification and constraint sections
/// are left out: the prompt is already in the conversation, and injected
/// text should state facts, not give instructions.
fn context_only(prompt: &str) -> String {
    let Some(start) = prompt.find("## Context\n\n") else {
        return prompt.to_owned();
    };
    let body = &prompt[start + "## Context\n\n".len()..];
    let body = body
        .find("\n## Constraints\n")
        .map_or(body, |end| &body[..=end]);
    // An orienting context's directory map goes first, within its reserve.
    let map = prompt.find(STRUCTURE_HEADING).map(|at| {
        let rest = &prompt[at..];
        let end = rest[STRUCTURE_HEADING.len()..]
            .find("\n## ")
            .map_or(rest.len(), |end| end + STRUCTURE_HEADING.len() + 1);
        let mut map = String::new();
        for line in rest[..end].trim_end().lines() {
            if map.chars().count() + line.chars().count() + 2 > MAP_RESERVE_CHARS {
                map.push_str("…\n");
                break;
            }
            map.push_str(line);
            map.push('\n');
        }
        map.trim_end().to_owned()
    });
    match map {
        Some(map) => format!("{map}\n\n{}", body.trim_end()),
        None => body.trim_end().to_owned(),
    }
}

/// Characters kept for the directory map a session start injects.
const MAP_RESERVE_CHARS: usize = 1_500;

/// The heading of the prompt's directory map.
const STRUCTURE_HEADING: &str = "## Project structure\n\n";

/// Appends one line to `$AIC_HOME/hook.log` (started over past 1 MiB).
pub(crate) fn log(host: &Host, editor: &str, event: &str, message: &str) {
    let Some(home) = host.home().map(crate::home::AicHome::dir) else {
        return;
    };
    let path = home.join("hook.log");
    if fs_err::metadata(&path).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
        let _ = fs_err::rename(&path, home.join("hook.log.old"));
    }
    let _ = crate::home::create_private_dir(home);
    let line = format!("{} {editor} {event}: {message}\n", iso(host.now_ms()));
    if let Ok(mut file) = crate::home::open_private(&path, true) {
        let _ = std::io::Write::write_all(&mut file, line.as_bytes());
    }
}
