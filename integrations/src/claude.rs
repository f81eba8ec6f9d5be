//! Claude Code hooks (`docs/claude-code.md`): what a hook payload asks of aic,
//! and the exact stdout each event expects. Codex CLI's hooks are Claude-shaped
//! (`docs/codex.md`): the same payloads
//! and plans, with JSON output on every event.
//!
//! Pure: the binary reads stdin, calls [`parse`] and [`plan`], runs what the
//! plan says (a compile, a reparent, a marker removal) and prints [`render`]'s
//! output. Every failure on the way is an empty output and exit code 0: a hook
//! never breaks the editor.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::gates;
pub use crate::{ContextRequest, HookEnv, HookOutcome, HookPlan};
use crate::{Editor, HookEvent};

/// Claude Code caps injected text (plain stdout, `additionalContext`) at this
/// many characters; longer text is moved to a file and only previewed. aic
/// compiles to fit it instead of being cut.
pub const MAX_INJECTED_CHARS: usize = 10_000;

/// The intent of session-level context (the same for every session event).
pub const SESSION_INTENT: &str = "understand project structure, architecture, and recent changes";

/// The longest conversation id accepted from a payload.
const MAX_ID_CHARS: usize = 128;

/// The fields of a Claude Code hook payload that aic reads.
/// Unknown fields are ignored; every field is optional.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct ClaudePayload {
    /// The Claude Code session.
    pub session_id: Option<String>,
    /// The transcript file: its name (without `.jsonl`) is the conversation id.
    pub transcript_path: Option<String>,
    /// The working directory of the session.
    pub cwd: Option<String>,
    /// The event, as Claude Code names it.
    pub hook_event_name: Option<String>,
    /// UserPromptSubmit: the user's prompt.
    pub prompt: Option<String>,
    /// SessionStart: `startup`, `resume`, `clear`, `compact` or `fork`.
    pub source: Option<String>,
    /// SubagentStart/SubagentStop: the subagent's type.
    pub agent_type: Option<String>,
    /// SubagentStart/SubagentStop: the subagent's id.
    pub agent_id: Option<String>,
    /// SubagentStop: the subagent's own transcript.
    pub agent_transcript_path: Option<String>,
    /// SessionStart: the model, when Claude Code sends it.
    pub model: Option<Value>,
    /// A conversation id sent directly (other hosts of Claude-shaped hooks).
    pub conversation_id: Option<String>,
    /// PreToolUse/PostToolUse: the tool.
    pub tool_name: Option<String>,
    /// PreToolUse/PostToolUse: the tool's arguments.
    pub tool_input: Option<Value>,
    /// Present when Cursor runs a hook from Claude Code's settings (Cursor loads
    /// them as third-party hooks): the Claude handlers then do nothing.
    pub cursor_version: Option<Value>,
}

/// Parses a payload; `None` for empty input, invalid JSON or a non-object. A
/// field of an unexpected type (a number where a string belongs) is treated as
/// absent rather than failing the whole payload.
pub fn parse(stdin: &str) -> Option<ClaudePayload> {
    let value: Value = serde_json::from_str(stdin.trim()).ok()?;
    let object = value.as_object()?;
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(ClaudePayload {
        session_id: text("session_id"),
        transcript_path: text("transcript_path"),
        cwd: text("cwd"),
        hook_event_name: text("hook_event_name"),
        prompt: text("prompt"),
        source: text("source"),
        agent_type: text("agent_type"),
        agent_id: text("agent_id"),
        agent_transcript_path: text("agent_transcript_path"),
        model: object.get("model").cloned(),
        conversation_id: text("conversation_id"),
        tool_name: text("tool_name"),
        tool_input: object.get("tool_input").cloned(),
        cursor_version: object.get("cursor_version").cloned(),
    })
}

/// The conversation id of a payload: the transcript file's name
/// without `.jsonl`, else a direct `conversation_id`, else the `session_id`;
/// only printable ASCII up to 128 characters.
pub fn conversation_id(payload: &ClaudePayload) -> Option<String> {
    let from_transcript = payload.transcript_path.as_deref().and_then(|path| {
        Path::new(path.trim())
            .file_name()
            .and_then(|name| name.to_str())
            .map(|name| name.trim_end_matches(".jsonl").to_owned())
    });
    [
        from_transcript,
        payload.conversation_id.clone(),
        payload.session_id.clone(),
    ]
    .into_iter()
    .flatten()
    .map(|id| id.trim().to_owned())
    .find(|id| valid_id(id))
}

fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_ID_CHARS && id.chars().all(|c| c.is_ascii_graphic())
}

/// The project root of a payload: `CLAUDE_PROJECT_DIR` when the payload's
/// `cwd` lies inside it (Claude Code may have moved into a subdirectory),
/// else the project `cwd` is in ([`HookEnv::project`]), else
/// `CLAUDE_PROJECT_DIR`, else the project of the process's working
/// directory; only absolute paths count.
pub fn project_root(payload: &ClaudePayload, env: &HookEnv) -> Option<PathBuf> {
    let cwd = payload
        .cwd
        .as_deref()
        .map(str::trim)
        .filter(|cwd| !cwd.is_empty())
        .map(PathBuf::from)
        .filter(|cwd| cwd.is_absolute());
    let project = env.claude_project_dir.clone().filter(|p| p.is_absolute());
    match (cwd, project) {
        (Some(cwd), Some(project)) if cwd.starts_with(&project) => Some(project),
        (Some(cwd), _) => Some(env.project(cwd)),
        (None, Some(project)) => Some(project),
        (None, None) => env
            .process_cwd
            .clone()
            .filter(|p| p.is_absolute())
            .map(|cwd| env.project(cwd)),
    }
}

/// The user's prompt as an intent: IDE markup (`<ide_selection>…</ide_selection>`
/// and other `<ide_*>` regions) removed, whitespace trimmed.
pub fn clean_prompt(prompt: &str) -> String {
    let mut out = String::with_capacity(prompt.len());
    let mut rest = prompt;
    while let Some(start) = rest.find("<ide_") {
        out.push_str(&rest[..start]);
        let tag_end = rest[start..].find('>').map(|i| start + i);
        let Some(tag_end) = tag_end else {
            rest = "";
            break;
        };
        let name = rest[start + 1..tag_end]
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .trim_end_matches('/');
        let close = format!("</{name}>");
        rest = match rest[tag_end..].find(&close) {
            Some(i) => &rest[tag_end + i + close.len()..],
            None => &rest[tag_end + 1..],
        };
    }
    out.push_str(rest);
    out.trim().to_owned()
}

fn model_of(payload: &ClaudePayload) -> Option<String> {
    match payload.model.as_ref()? {
        Value::String(model) => Some(model.clone()),
        Value::Object(object) => object
            .get("id")
            .or_else(|| object.get("display_name"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    }
    .filter(|model| valid_id(model))
}

/// Decides what a Claude Code (or Codex) hook does for `event`: SessionStart,
/// UserPromptSubmit and SubagentStart inject context; SubagentStop reparents;
/// SessionEnd removes the session's markers; PreToolUse runs the check its
/// handler names ([`HookEnv::check`]): `conversation-id` (default: an
/// `aic_compile` call gets the conversation id), `no-verify` (a Bash command
/// that skips git hooks) or `compile-gate`; PostToolUse tracks edited files and
/// Stop runs the quality gate (both only installed with `--with-gates`). A
/// Cursor payload, or one without a usable project, does nothing.
pub fn plan(event: HookEvent, payload: &ClaudePayload, env: &HookEnv) -> HookPlan {
    if payload.cursor_version.is_some() {
        return HookPlan::Nothing;
    }
    let Some(root) = project_root(payload, env) else {
        return HookPlan::Nothing;
    };
    let conversation = conversation_id(payload);
    let request = |intent: String, trigger_source: &'static str| ContextRequest {
        intent,
        project_root: root.clone(),
        conversation_id: conversation.clone(),
        model_id: model_of(payload),
        trigger_source,
    };
    let tool = payload.tool_name.as_deref().unwrap_or_default();
    let tool_input = payload.tool_input.clone().unwrap_or(Value::Null);
    match event {
        HookEvent::SessionStart => HookPlan::Inject {
            session: None,
            main: request(SESSION_INTENT.to_owned(), "session_start"),
            mark_session: payload.session_id.clone().filter(|id| valid_id(id)),
            turn: None,
        },
        HookEvent::UserPromptSubmit => {
            let intent = clean_prompt(payload.prompt.as_deref().unwrap_or_default());
            if intent.is_empty() {
                return HookPlan::Nothing;
            }
            let session_id = payload.session_id.clone().filter(|id| valid_id(id));
            let missed = session_id.is_some() && !env.session_marked;
            HookPlan::Inject {
                session: missed.then(|| request(SESSION_INTENT.to_owned(), "session_start")),
                main: request(intent, "prompt_submit"),
                mark_session: if missed { session_id } else { None },
                turn: conversation.clone(),
            }
        }
        HookEvent::SubagentStart => {
            let agent = payload
                .agent_type
                .as_deref()
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .unwrap_or("general-purpose");
            HookPlan::Inject {
                session: None,
                main: request(
                    format!("{SESSION_INTENT}, for the {agent} subagent"),
                    "subagent_start",
                ),
                mark_session: None,
                turn: None,
            }
        }
        HookEvent::SubagentStop => {
            let from = payload
                .agent_transcript_path
                .as_deref()
                .and_then(|path| {
                    Path::new(path.trim())
                        .file_name()
                        .and_then(|name| name.to_str())
                        .map(|name| name.trim_end_matches(".jsonl").to_owned())
                })
                .or_else(|| payload.agent_id.clone())
                .filter(|id| valid_id(id));
            match (from, conversation) {
                (Some(from), Some(to)) if from != to => HookPlan::Reparent {
                    project_root: root,
                    from,
                    to,
                },
                _ => HookPlan::Nothing,
            }
        }
        HookEvent::SessionEnd => {
            let session_id = payload.session_id.clone().filter(|id| valid_id(id));
            if session_id.is_none() && conversation.is_none() {
                return HookPlan::Nothing;
            }
            HookPlan::EndSession {
                session_id,
                conversation,
            }
        }
        HookEvent::PreToolUse => match env.check.as_deref().unwrap_or("conversation-id") {
            "no-verify" => match tool_input.get("command").and_then(Value::as_str) {
                Some(command) if tool == "Bash" || tool == "shell" => HookPlan::CheckShell {
                    command: command.to_owned(),
                },
                _ => HookPlan::Nothing,
            },
            "compile-gate" => match conversation {
                Some(conversation) if !gates::is_aic_tool(tool) && !tool.is_empty() => {
                    HookPlan::CompileGate {
                        conversation,
                        project_root: root,
                    }
                }
                _ => HookPlan::Nothing,
            },
            "conversation-id" if gates::is_aic_compile_tool(tool) => HookPlan::AicToolCall {
                updated_input: gates::with_conversation(
                    &tool_input,
                    conversation.as_deref(),
                    if env.editor_id.is_empty() {
                        "claude-code"
                    } else {
                        env.editor_id
                    },
                ),
                conversation,
            },
            _ => HookPlan::Nothing,
        },
        HookEvent::PostToolUse => {
            let paths = gates::edited_paths(tool, &tool_input, &root);
            match conversation {
                Some(conversation) if !paths.is_empty() && !tool.is_empty() => {
                    HookPlan::TrackEdits {
                        conversation,
                        project_root: root,
                        paths,
                    }
                }
                _ => HookPlan::Nothing,
            }
        }
        HookEvent::Stop => match conversation {
            Some(conversation) => HookPlan::QualityGate {
                conversation,
                project_root: root,
            },
            None => HookPlan::Nothing,
        },
        HookEvent::PreCompact => HookPlan::Nothing,
    }
}

/// The stdout for injected `context`: plain text on
/// UserPromptSubmit (never starting with `{`, which would be parsed as JSON —
/// bug #17550), nested `hookSpecificOutput` JSON on SessionStart and
/// SubagentStart (never a flat `additionalContext` — #31658), nothing
/// elsewhere or for empty context.
pub fn render(event: HookEvent, context: &str) -> String {
    render_outcome(
        Editor::ClaudeCode,
        event,
        &HookOutcome::Context(context.to_owned()),
    )
}

/// The stdout of a Claude Code or Codex hook for `outcome`: context as [`render`]
/// gives it (Codex: `hookSpecificOutput` JSON on
/// every event, as its output is schema-validated); a PreToolUse allow with
/// new arguments or a deny as `hookSpecificOutput.permissionDecision`; a
/// blocked Stop as top-level `decision: "block"` with its `reason`. A neutral
/// outcome prints nothing.
pub fn render_outcome(editor: Editor, event: HookEvent, outcome: &HookOutcome) -> String {
    let mut out = match (outcome, event) {
        (HookOutcome::Context(context), _) => {
            let context = context.trim();
            if context.is_empty() {
                return String::new();
            }
            match (event, editor) {
                (HookEvent::UserPromptSubmit, Editor::ClaudeCode) => {
                    return if context.starts_with('{') {
                        format!("aic context:\n{context}\n")
                    } else {
                        format!("{context}\n")
                    };
                }
                (
                    HookEvent::SessionStart
                    | HookEvent::SubagentStart
                    | HookEvent::UserPromptSubmit,
                    _,
                ) => json!({
                    "hookSpecificOutput": {
                        "hookEventName": event_name(event),
                        "additionalContext": context,
                    }
                }),
                _ => return String::new(),
            }
        }
        (
            HookOutcome::Allow {
                updated_input: Some(input),
            },
            HookEvent::PreToolUse,
        ) => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": "aic: conversation id added to the aic_compile call",
                "updatedInput": input,
            }
        }),
        (HookOutcome::Deny { reason }, HookEvent::PreToolUse) => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }),
        (HookOutcome::BlockStop { reason }, HookEvent::Stop) => {
            json!({"decision": "block", "reason": reason})
        }
        _ => return String::new(),
    }
    .to_string();
    out.push('\n');
    out
}

/// The name Claude Code gives `event`.
pub fn event_name(event: HookEvent) -> &'static str {
    match event {
        HookEvent::SessionStart => "SessionStart",
        HookEvent::UserPromptSubmit => "UserPromptSubmit",
        HookEvent::PreToolUse => "PreToolUse",
        HookEvent::PostToolUse => "PostToolUse",
        HookEvent::Stop => "Stop",
        HookEvent::SubagentStart => "SubagentStart",
        HookEvent::SubagentStop => "SubagentStop",
        HookEvent::PreCompact => "PreCompact",
        HookEvent::SessionEnd => "SessionEnd",
    }
}

/// The Claude Code event named `name` (`UserPromptSubmit`, …), if aic handles it.
pub fn event_named(name: &str) -> Option<HookEvent> {
    Some(match name {
        "SessionStart" => HookEvent::SessionStart,
        "UserPromptSubmit" => HookEvent::UserPromptSubmit,
        "SubagentStart" => HookEvent::SubagentStart,
        "SubagentStop" => HookEvent::SubagentStop,
        "SessionEnd" => HookEvent::SessionEnd,
        "PreToolUse" => HookEvent::PreToolUse,
        "PostToolUse" => HookEvent::PostToolUse,
        "Stop" => HookEvent::Stop,
        "PreCompact" => HookEvent::PreCompact,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> HookEnv {
        HookEnv {
            claude_project_dir: Some("/repo".into()),
            process_cwd: Some("/elsewhere".into()),
            ..HookEnv::default()
        }
    }

    fn payload(json: &str) -> ClaudePayload {
        parse(json).unwrap()
    }

    #[test]
    fn malformed_input_is_no_payload() {
        for text in ["", "   ", "{", "[1,2]", "\"text\"", "null"] {
            assert_eq!(parse(text), None, "{text:?}");
        }
        // A field of the wrong type is absent, not fatal.
        let p = payload(r#"{"cwd": 3, "session_id": 7, "prompt": "fix it"}"#);
        assert_eq!(
            (p.cwd, p.session_id, p.prompt.as_deref()),
            (None, None, Some("fix it"))
        );
    }

    #[test]
    fn a_subdirectory_cwd_uses_the_project_dir() {
        let p = payload(r#"{"prompt":"x","cwd":"/repo/src/deep"}"#);
        assert_eq!(project_root(&p, &env()), Some(PathBuf::from("/repo")));
        let p = payload(r#"{"prompt":"x","cwd":"/worktree"}"#);
        assert_eq!(project_root(&p, &env()), Some(PathBuf::from("/worktree")));
    }

    #[test]
    fn the_conversation_is_the_transcript_name() {
        let p = payload(
            r#"{"session_id":"s-1","transcript_path":"/home/u/.claude/projects/x/abc-123.jsonl"}"#,
        );
        assert_eq!(conversation_id(&p).as_deref(), Some("abc-123"));
        let p = payload(r#"{"session_id":"s-1","conversation_id":"  c-9 "}"#);
        assert_eq!(conversation_id(&p).as_deref(), Some("c-9"));
        let p = payload(r#"{"session_id":"s-1"}"#);
        assert_eq!(conversation_id(&p).as_deref(), Some("s-1"));
        let p = payload(r#"{"session_id":"bad id with spaces"}"#);
        assert_eq!(conversation_id(&p), None);
    }

    #[test]
    fn ide_markup_is_removed_from_prompts() {
        assert_eq!(
            clean_prompt(
                "<ide_selection>let x = 1;</ide_selection> fix the parser <ide_opened_file>a.rs</ide_opened_file>"
            ),
            "fix the parser"
        );
        assert_eq!(clean_prompt("fix <ide_x> the bug"), "fix  the bug");
        assert_eq!(clean_prompt("a < b and <ide_"), "a < b and");
    }

    #[test]
    fn user_prompt_submit_adds_session_context_until_marked() {
        let p = payload(r#"{"session_id":"s1","cwd":"/work","prompt":"fix the login bug"}"#);
        let HookPlan::Inject {
            session,
            main,
            mark_session,
            turn,
        } = plan(HookEvent::UserPromptSubmit, &p, &env())
        else {
            panic!("no injection");
        };
        assert_eq!(main.intent, "fix the login bug");
        assert_eq!(main.project_root, PathBuf::from("/work"));
        assert_eq!(main.trigger_source, "prompt_submit");
        assert_eq!(session.unwrap().intent, SESSION_INTENT);
        assert_eq!(mark_session.as_deref(), Some("s1"));
        assert_eq!(turn.as_deref(), Some("s1"));
        let marked = HookEnv {
            session_marked: true,
            ..env()
        };
        assert!(matches!(
            plan(HookEvent::UserPromptSubmit, &p, &marked),
            HookPlan::Inject {
                session: None,
                mark_session: None,
                ..
            }
        ));
    }

    #[test]
    fn cursor_payloads_and_missing_projects_do_nothing() {
        let p = payload(r#"{"cursor_version":"1.7","prompt":"x","cwd":"/w"}"#);
        assert_eq!(
            plan(HookEvent::UserPromptSubmit, &p, &env()),
            HookPlan::Nothing
        );
        let p = payload(r#"{"prompt":"x","cwd":"relative/dir"}"#);
        let none = HookEnv::default();
        assert_eq!(
            plan(HookEvent::UserPromptSubmit, &p, &none),
            HookPlan::Nothing
        );
        // A relative cwd falls back to CLAUDE_PROJECT_DIR.
        assert_eq!(project_root(&p, &env()), Some(PathBuf::from("/repo")));
        let p = payload(r#"{"prompt":"   ","cwd":"/w"}"#);
        assert_eq!(
            plan(HookEvent::UserPromptSubmit, &p, &env()),
            HookPlan::Nothing
        );
    }

    #[test]
    fn the_project_falls_back_to_claude_project_dir() {
        let p = payload(r#"{"prompt":"x"}"#);
        assert_eq!(project_root(&p, &env()), Some(PathBuf::from("/repo")));
    }

    #[test]
    fn subagent_stop_reparents_onto_the_parent() {
        let p = payload(
            r#"{"cwd":"/w","transcript_path":"/t/parent.jsonl","agent_transcript_path":"/t/agent-7.jsonl"}"#,
        );
        assert_eq!(
            plan(HookEvent::SubagentStop, &p, &env()),
            HookPlan::Reparent {
                project_root: "/w".into(),
                from: "agent-7".to_owned(),
                to: "parent".to_owned()
            }
        );
    }

    #[test]
    fn outputs_follow_each_events_format() {
        assert_eq!(
            render(HookEvent::UserPromptSubmit, "## Task\n\nx\n"),
            "## Task\n\nx\n"
        );
        assert!(render(HookEvent::UserPromptSubmit, "{x}").starts_with("aic context:"));
        let out: Value = serde_json::from_str(&render(HookEvent::SubagentStart, "ctx")).unwrap();
        assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SubagentStart");
        assert_eq!(out["hookSpecificOutput"]["additionalContext"], "ctx");
        assert!(out.get("additionalContext").is_none());
        assert_eq!(render(HookEvent::SessionEnd, "ctx"), "");
        assert_eq!(render(HookEvent::SessionStart, "  "), "");
    }
}
