//! `aic hook claude <Event>`: a Claude Code hook handler (integrations brief §0,
//! §1). Reads the event's JSON on stdin, compiles in-process (no MCP round
//! trip, no helper process), and prints exactly what the event expects.
//!
//! Fails open, always: any error, an unusable payload or project, or a
//! compile that cannot fit gives empty stdout and exit code 0, with one line
//! in `$AIC_HOME/hook.log` (brief §0.2). Injected text stays within Claude
//! Code's 10,000-character cap: the prompt is compiled to fit it, not cut.

use std::io::Read;
use std::path::{Path, PathBuf};

use aic_integrations::claude::{self, ContextRequest, HookEnv, HookPlan, MAX_INJECTED_CHARS};
use aic_stages::repo_map::{ContentHash, TokenCount};

use crate::cli::HookArgs;
use crate::error::CompileError;
use crate::facts_cache::{aic_home, now_ms, open_store};
use crate::printer::print_stdout;
use crate::records::{CompileOrigin, iso, record_compilation};
use crate::runner::{CompilationRequest, compile};

/// The most stdin a hook reads, in bytes.
const MAX_STDIN_BYTES: u64 = 8 << 20;

/// Characters per token assumed for the first attempt at a character budget:
/// code runs at 3.5–5, so most first attempts fit and need no second compile.
const CHARS_PER_TOKEN: usize = 5;

/// The hook log is started over past this size, in bytes.
const MAX_LOG_BYTES: u64 = 1 << 20;

/// Characters of the session block when UserPromptSubmit adds one.
const SESSION_BLOCK_CHARS: usize = 3_500;

/// The longest intent a hook compiles, in characters: the prompt is already in
/// the conversation, and its `## Task` copy must leave room for context.
const MAX_HOOK_INTENT_CHARS: usize = 2_000;

/// Runs a hook; never fails.
pub fn run(args: &HookArgs) -> anyhow::Result<()> {
    let event = args.event.clone().unwrap_or_default();
    if args.editor.as_deref() != Some("claude") {
        log(
            &event,
            &format!(
                "`aic hook {}` is not a hook aic handles (only `aic hook claude <Event>`)",
                args.editor.as_deref().unwrap_or("")
            ),
        );
        return Ok(());
    }
    let output = std::panic::catch_unwind(|| handle(&event)).unwrap_or_else(|_| {
        log(&event, "the handler panicked");
        String::new()
    });
    if !output.is_empty() {
        // A closed stdout (the editor gave up) is not worth an error.
        let _ = print_stdout(&output);
    }
    Ok(())
}

fn handle(event_name: &str) -> String {
    // A refit compiles again in this process: keep what the first compile read.
    crate::memo::enable();
    let Some(event) = claude::event_named(event_name) else {
        log(event_name, "not an event aic handles; nothing to do");
        return String::new();
    };
    let mut bytes = Vec::new();
    if std::io::stdin()
        .take(MAX_STDIN_BYTES)
        .read_to_end(&mut bytes)
        .is_err()
    {
        log(event_name, "stdin could not be read");
        return String::new();
    }
    let Some(payload) = claude::parse(&String::from_utf8_lossy(&bytes)) else {
        log(event_name, "stdin is not a JSON object");
        return String::new();
    };
    let marker = payload.session_id.as_deref().and_then(marker_path);
    let env = HookEnv {
        claude_project_dir: std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from),
        process_cwd: std::env::current_dir().ok(),
        session_marked: marker.as_ref().is_some_and(|path| path.exists()),
    };
    match claude::plan(event, &payload, &env) {
        HookPlan::Nothing => {
            let why = if payload.cursor_version.is_some() {
                "a Cursor payload (cursor_version): the Claude Code handler does nothing"
            } else if claude::project_root(&payload, &env).is_none() {
                "no absolute project directory: neither the payload's cwd nor CLAUDE_PROJECT_DIR"
            } else {
                "nothing to inject for this payload"
            };
            log(event_name, why);
            String::new()
        }
        HookPlan::Inject {
            session,
            main,
            mark_session,
        } => {
            let separator = "\n\n";
            let main_chars = match &session {
                Some(_) => MAX_INJECTED_CHARS - SESSION_BLOCK_CHARS - separator.len(),
                None => MAX_INJECTED_CHARS,
            };
            // The event's own context first: without it nothing is injected,
            // and the session block need not be compiled at all.
            let Some(main_text) = compile_to_fit(event_name, &main, main_chars) else {
                return String::new();
            };
            let session_text = session
                .as_ref()
                .and_then(|request| compile_to_fit(event_name, request, SESSION_BLOCK_CHARS));
            let text = match session_text {
                Some(session_text) => format!("{session_text}{separator}{main_text}"),
                None => main_text,
            };
            if mark_session.is_some()
                && let Some(path) = &marker
            {
                write_marker(path);
            }
            claude::render(event, &text)
        }
        HookPlan::Reparent {
            project_root,
            from,
            to,
        } => {
            let outcome = open_store().and_then(|store| {
                let root = fs_err::canonicalize(&project_root).map_err(|e| e.to_string())?;
                crate::session::reparent(&store, &root, &from, &to).map_err(|e| e.to_string())
            });
            if let Err(message) = outcome {
                log(event_name, &format!("reparent failed: {message}"));
            }
            String::new()
        }
        HookPlan::EndSession { .. } => {
            if let Some(path) = &marker {
                let _ = fs_err::remove_file(path);
            }
            String::new()
        }
    }
}

/// Compiles `request` so that the prompt has at most `max_chars` characters:
/// a first budget of `max_chars / 4` tokens, then up to two refits scaled by
/// the characters the prompt really took. `None` (logged) when the compile
/// fails or cannot fit.
fn compile_to_fit(event: &str, request: &ContextRequest, max_chars: usize) -> Option<String> {
    if let Err(message) = crate::mcp::refuse_broad_root_message(&request.project_root) {
        log(event, &message);
        return None;
    }
    let request = &with_landmarks(request);
    let intent = match request.intent.char_indices().nth(MAX_HOOK_INTENT_CHARS) {
        Some((cut, _)) => format!("{}…", &request.intent[..cut]),
        None => request.intent.clone(),
    };
    let mut budget = u32::try_from(max_chars / CHARS_PER_TOKEN).unwrap_or(u32::MAX);
    for _ in 0..3 {
        let compilation = match compile(&CompilationRequest {
            intent: intent.clone(),
            project_root: request.project_root.clone(),
            budget: Some(TokenCount(budget)),
            model_id: request.model_id.clone(),
            editor_id: "claude-code".to_owned(),
            use_prompt_cache: true,
            ..CompilationRequest::default()
        }) {
            Ok(compilation) => compilation,
            Err(CompileError::BudgetTooSmall { .. }) => {
                log(
                    event,
                    &format!(
                        "no file fits {max_chars} characters; the aic_compile tool can compile it with a larger budget"
                    ),
                );
                return None;
            }
            Err(error) => {
                log(event, &error.to_string());
                return None;
            }
        };
        let text = context_only(&compilation.prompt);
        let chars = text.chars().count();
        if chars <= max_chars {
            record(event, request, &compilation);
            return Some(text);
        }
        let scale = max_chars as f64 * 0.95 / chars as f64;
        budget = (f64::from(compilation.meta.tokens_compiled.0) * scale) as u32;
    }
    log(
        event,
        &format!("the prompt did not fit {max_chars} characters"),
    );
    None
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

/// The facts of a compiled prompt for a hook: its `## Context` section (the
/// files), under one line saying what it is. The task, classification and
/// constraint sections are left out: the prompt is already in the
/// conversation, and injected text should state facts, not give
/// instructions (brief §1.3).
fn context_only(prompt: &str) -> String {
    let Some(start) = prompt.find("## Context\n\n") else {
        return prompt.to_owned();
    };
    let body = &prompt[start + "## Context\n\n".len()..];
    let body = body
        .find("\n## Constraints\n")
        .map_or(body, |end| &body[..=end]);
    format!(
        "Repository files aic selected for this request (compressed tiers are marked in each heading):\n\n{}",
        body.trim_end()
    )
}

fn record(event: &str, request: &ContextRequest, compilation: &crate::runner::Compilation) {
    let origin = CompileOrigin {
        trigger_source: request.trigger_source.to_owned(),
        conversation_id: request.conversation_id.clone(),
        session_id: None,
    };
    if let Err(message) =
        open_store().and_then(|store| record_compilation(&store, compilation, &origin))
    {
        log(event, &format!("the compile was not logged: {message}"));
    }
}

/// The marker of a Claude Code session: SessionStart (or the first prompt)
/// injected its session context (dual path for bug #10373). Kept under
/// `$AIC_HOME`, never in the repository.
fn marker_path(session_id: &str) -> Option<PathBuf> {
    let hash = ContentHash::of(session_id.as_bytes()).to_hex();
    aic_home().map(|home| home.join("hook-sessions").join(hash))
}

fn write_marker(path: &Path) {
    if let Some(parent) = path.parent() {
        let _ = fs_err::create_dir_all(parent);
    }
    let _ = fs_err::write(path, iso(now_ms()));
}

/// Appends one line to `$AIC_HOME/hook.log` (started over past 1 MiB).
fn log(event: &str, message: &str) {
    let Some(home) = aic_home() else {
        return;
    };
    let path = home.join("hook.log");
    if fs_err::metadata(&path).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
        let _ = fs_err::rename(&path, home.join("hook.log.old"));
    }
    let _ = fs_err::create_dir_all(&home);
    let line = format!("{} claude {event}: {message}\n", iso(now_ms()));
    if let Ok(mut file) = fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = std::io::Write::write_all(&mut file, line.as_bytes());
    }
}
