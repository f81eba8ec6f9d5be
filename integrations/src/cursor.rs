//! Cursor hooks (`docs/cursor.md`): what
//! a Cursor hook payload asks of aic, and the JSON each event expects.
//!
//! Cursor can inject context only at `sessionStart`, so per-prompt context
//! comes from the model calling `aic_compile`, prompted by the trigger rule
//! (`.cursor/rules/AIC.mdc`). The hooks help that path: `beforeSubmitPrompt`
//! remembers the prompt and starts the turn, `preToolUse` (matcher `MCP`) gives
//! `aic_compile` calls the conversation id, and the optional compile gate
//! refuses other tools until the turn has compiled. Handlers do nothing for a
//! payload without `cursor_version` (a Claude Code payload).

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::claude::{SESSION_INTENT, clean_prompt};
use crate::{ContextRequest, HookEnv, HookEvent, HookOutcome, HookPlan, gates};

/// The longest id accepted from a payload.
const MAX_ID_CHARS: usize = 128;

/// The fields of a Cursor hook payload that aic reads.
/// Every field is optional; a field of an unexpected type is absent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CursorPayload {
    /// The conversation (stable across the chat).
    pub conversation_id: Option<String>,
    /// The generation (one per user message).
    pub generation_id: Option<String>,
    /// sessionStart: the session.
    pub session_id: Option<String>,
    /// Cursor's version: its presence is what marks a Cursor payload.
    pub cursor_version: Option<Value>,
    /// The workspace folders; the first is the project.
    pub workspace_roots: Vec<String>,
    /// beforeSubmitPrompt: the user's prompt.
    pub prompt: Option<String>,
    /// preToolUse/postToolUse: the tool (`MCP:aic_compile`, `Shell`, …).
    pub tool_name: Option<String>,
    /// preToolUse/postToolUse: the tool's arguments.
    pub tool_input: Option<Value>,
    /// beforeShellExecution: the command line.
    pub command: Option<String>,
    /// afterFileEdit: the edited file.
    pub file_path: Option<String>,
    /// subagentStart/subagentStop: the parent conversation.
    pub parent_conversation_id: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// stop: how the agent loop ended (`completed`, `aborted`, `error`).
    pub status: Option<String>,
}

/// Parses a payload; `None` for empty input, invalid JSON or a non-object.
pub fn parse(stdin: &str) -> Option<CursorPayload> {
    let value: Value = serde_json::from_str(stdin.trim()).ok()?;
    let object = value.as_object()?;
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(CursorPayload {
        conversation_id: text("conversation_id"),
        generation_id: text("generation_id"),
        session_id: text("session_id"),
        cursor_version: object.get("cursor_version").cloned(),
        workspace_roots: object
            .get("workspace_roots")
            .and_then(Value::as_array)
            .map(|roots| {
                roots
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        prompt: text("prompt"),
        tool_name: text("tool_name"),
        tool_input: object.get("tool_input").cloned(),
        command: text("command"),
        file_path: text("file_path"),
        parent_conversation_id: text("parent_conversation_id"),
        model: text("model"),
        status: text("status"),
    })
}

/// The Cursor event named `name` (`sessionStart`, …) as aic handles it:
/// `beforeSubmitPrompt` is the turn's start, `beforeShellExecution` a
/// pre-tool check, `afterFileEdit` a post-tool one.
pub fn event_named(name: &str) -> Option<HookEvent> {
    Some(match name {
        "sessionStart" => HookEvent::SessionStart,
        "beforeSubmitPrompt" => HookEvent::UserPromptSubmit,
        "preToolUse" | "beforeShellExecution" => HookEvent::PreToolUse,
        "postToolUse" | "afterFileEdit" => HookEvent::PostToolUse,
        "stop" => HookEvent::Stop,
        "subagentStart" => HookEvent::SubagentStart,
        "subagentStop" => HookEvent::SubagentStop,
        "preCompact" => HookEvent::PreCompact,
        "sessionEnd" => HookEvent::SessionEnd,
        _ => return None,
    })
}

fn valid_id(id: &str) -> Option<String> {
    let id = id.trim();
    (!id.is_empty() && id.len() <= MAX_ID_CHARS && id.chars().all(|c| c.is_ascii_graphic()))
        .then(|| id.to_owned())
}

/// The project of a payload: the first absolute workspace root, else
/// `AIC_PROJECT_ROOT` (set by aic's sessionStart hook), else
/// `CURSOR_PROJECT_DIR`, else `CLAUDE_PROJECT_DIR` (Cursor's alias), else the
/// project of the process's working directory ([`HookEnv::project`]).
pub fn project_root(payload: &CursorPayload, env: &HookEnv) -> Option<PathBuf> {
    payload
        .workspace_roots
        .iter()
        .map(|root| PathBuf::from(root.trim()))
        .find(|root| root.is_absolute())
        .or_else(|| env.aic_project_root.clone().filter(|p| p.is_absolute()))
        .or_else(|| env.cursor_project_dir.clone().filter(|p| p.is_absolute()))
        .or_else(|| env.claude_project_dir.clone().filter(|p| p.is_absolute()))
        .or_else(|| {
            env.process_cwd
                .clone()
                .filter(|p| p.is_absolute())
                .map(|cwd| env.project(cwd))
        })
}

/// The conversation of a payload: `conversation_id`, else `session_id`.
pub fn conversation_id(payload: &CursorPayload) -> Option<String> {
    [&payload.conversation_id, &payload.session_id]
        .into_iter()
        .flatten()
        .find_map(|id| valid_id(id))
}

/// [`conversation_id`], else `AIC_CONVERSATION_ID` from aic's sessionStart
/// hook.
fn conversation_or_env(payload: &CursorPayload, env: &HookEnv) -> Option<String> {
    conversation_id(payload).or_else(|| env.aic_conversation_id.as_deref().and_then(valid_id))
}

/// Whether a Cursor tool call is aic's `aic_compile`, and where its arguments
/// are: Cursor names MCP calls `MCP:<tool>`, or wraps them in an envelope
/// (`tool_name` `MCP`/`call_mcp_tool` with `toolName` and `arguments`).
fn aic_compile_arguments(payload: &CursorPayload) -> Option<(Value, bool)> {
    let name = payload.tool_name.as_deref()?.to_ascii_lowercase();
    let input = payload.tool_input.clone().unwrap_or(Value::Null);
    let envelope = matches!(name.as_str(), "mcp" | "call_mcp_tool" | "callmcptool");
    if envelope {
        let tool = input.get("toolName").and_then(Value::as_str)?;
        return (tool.eq_ignore_ascii_case("aic_compile")).then(|| {
            (
                input.get("arguments").cloned().unwrap_or_else(|| json!({})),
                true,
            )
        });
    }
    let tool = name.rsplit([':', '_']).next().unwrap_or_default();
    (name.ends_with("aic_compile") || (tool == "compile" && name.contains("aic")))
        .then_some((input, false))
}

/// Whether a Cursor tool call is one of aic's tools (the compile gate lets
/// them through).
fn is_aic_tool(payload: &CursorPayload) -> bool {
    let name = payload
        .tool_name
        .as_deref()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if matches!(name.as_str(), "mcp" | "call_mcp_tool" | "callmcptool") {
        return payload
            .tool_input
            .as_ref()
            .and_then(|input| input.get("toolName"))
            .and_then(Value::as_str)
            .is_some_and(|tool| tool.to_ascii_lowercase().starts_with("aic_"));
    }
    name.contains("aic_")
}

/// Decides what a Cursor hook does: sessionStart injects
/// session context; beforeSubmitPrompt starts the turn; preToolUse runs its
/// handler's check (`conversation-id` by default, or `compile-gate`);
/// beforeShellExecution refuses git hook bypasses; afterFileEdit and stop are
/// the quality gate; subagentStop reparents; sessionEnd cleans up.
pub fn plan(event_name: &str, payload: &CursorPayload, env: &HookEnv) -> HookPlan {
    if payload.cursor_version.is_none() {
        return HookPlan::Nothing;
    }
    let Some(event) = event_named(event_name) else {
        return HookPlan::Nothing;
    };
    let Some(root) = project_root(payload, env) else {
        return HookPlan::Nothing;
    };
    let conversation = conversation_or_env(payload, env);
    match (event, event_name) {
        (HookEvent::SessionStart, _) => HookPlan::Inject {
            session: None,
            main: ContextRequest {
                intent: SESSION_INTENT.to_owned(),
                project_root: root,
                conversation_id: conversation,
                model_id: payload.model.as_deref().and_then(valid_id),
                trigger_source: "session_start",
            },
            mark_session: None,
            turn: None,
        },
        (HookEvent::UserPromptSubmit, _) => match conversation {
            Some(conversation) => HookPlan::StartTurn {
                conversation,
                prompt: clean_prompt(payload.prompt.as_deref().unwrap_or_default()),
            },
            None => HookPlan::Nothing,
        },
        (HookEvent::PreToolUse, "beforeShellExecution") => match &payload.command {
            Some(command) => HookPlan::CheckShell {
                command: command.clone(),
            },
            None => HookPlan::Nothing,
        },
        (HookEvent::PreToolUse, _) => match env.check.as_deref().unwrap_or("conversation-id") {
            "compile-gate" => match conversation {
                Some(conversation) if !is_aic_tool(payload) => HookPlan::CompileGate {
                    conversation,
                    project_root: root,
                },
                _ => HookPlan::Nothing,
            },
            "conversation-id" => match aic_compile_arguments(payload) {
                Some((arguments, envelope)) => {
                    let filled =
                        gates::with_conversation(&arguments, conversation.as_deref(), "cursor");
                    let updated_input = filled.map(|filled| {
                        if envelope {
                            let mut input: Map<String, Value> = payload
                                .tool_input
                                .as_ref()
                                .and_then(Value::as_object)
                                .cloned()
                                .unwrap_or_default();
                            input.insert("arguments".to_owned(), filled);
                            Value::Object(input)
                        } else {
                            filled
                        }
                    });
                    HookPlan::AicToolCall {
                        conversation,
                        updated_input,
                    }
                }
                None => HookPlan::Nothing,
            },
            _ => HookPlan::Nothing,
        },
        (HookEvent::PostToolUse, _) => {
            let paths = match (&payload.file_path, event_name) {
                (Some(path), "afterFileEdit") => {
                    gates::edited_paths("", &json!({ "file_path": path }), &root)
                }
                _ => Vec::new(),
            };
            match conversation {
                Some(conversation) if !paths.is_empty() => HookPlan::TrackEdits {
                    conversation,
                    project_root: root,
                    paths,
                },
                _ => HookPlan::Nothing,
            }
        }
        // A loop the user aborted, or that failed, is not sent back to work.
        (HookEvent::Stop, _) if payload.status.as_deref().is_some_and(|s| s != "completed") => {
            HookPlan::Nothing
        }
        (HookEvent::Stop, _) => match conversation {
            Some(conversation) => HookPlan::QualityGate {
                conversation,
                project_root: root,
            },
            None => HookPlan::Nothing,
        },
        (HookEvent::SubagentStart, _) => {
            let parent = payload.parent_conversation_id.as_deref().and_then(valid_id);
            match (conversation, parent) {
                (Some(child), Some(parent)) if child != parent => {
                    HookPlan::LinkSubagent { child, parent }
                }
                _ => HookPlan::Nothing,
            }
        }
        (HookEvent::SubagentStop, _) => {
            let parent = payload.parent_conversation_id.as_deref().and_then(valid_id);
            match (conversation, parent) {
                (Some(from), Some(to)) if from != to => HookPlan::Reparent {
                    project_root: root,
                    from,
                    to,
                },
                (Some(from), None) => HookPlan::ReparentLinked {
                    project_root: root,
                    from,
                },
                _ => HookPlan::Nothing,
            }
        }
        (HookEvent::SessionEnd, _) => match conversation {
            Some(conversation) => HookPlan::EndSession {
                session_id: None,
                conversation: Some(conversation),
            },
            None => HookPlan::Nothing,
        },
        (HookEvent::PreCompact, _) => HookPlan::Nothing,
    }
}

/// The stdout of a Cursor hook: sessionStart
/// `{"additional_context", "env"}`; beforeSubmitPrompt always
/// `{"continue": true}` (it cannot inject, and aic never holds a prompt
/// back); preToolUse and beforeShellExecution `{"permission": …}` with
/// `updated_input` (aic's own `aic_compile` only) or the refusal's
/// `user_message`/`agent_message`, and `{}` when aic has no objection (an
/// explicit `allow` could skip the user's own approval of a tool); stop
/// `{"followup_message"}` when the quality gate failed, else `{}`. Other
/// events print nothing.
pub fn render(event_name: &str, outcome: &HookOutcome, env_vars: &[(&str, String)]) -> String {
    let value = match event_name {
        "sessionStart" => {
            let mut out = Map::new();
            if let HookOutcome::Context(context) = outcome
                && !context.trim().is_empty()
            {
                out.insert(
                    "additional_context".to_owned(),
                    Value::String(context.trim().to_owned()),
                );
            }
            if !env_vars.is_empty() {
                let env: Map<String, Value> = env_vars
                    .iter()
                    .map(|(key, value)| ((*key).to_owned(), Value::String(value.clone())))
                    .collect();
                out.insert("env".to_owned(), Value::Object(env));
            }
            Value::Object(out)
        }
        "beforeSubmitPrompt" => json!({"continue": true}),
        "preToolUse" | "beforeShellExecution" => match outcome {
            HookOutcome::Deny { reason } => json!({
                "permission": "deny",
                "user_message": reason,
                "agent_message": reason,
            }),
            HookOutcome::Allow {
                updated_input: Some(input),
            } => json!({"permission": "allow", "updated_input": input}),
            _ => json!({}),
        },
        "stop" => match outcome {
            HookOutcome::BlockStop { reason } => json!({"followup_message": reason}),
            _ => json!({}),
        },
        _ => return String::new(),
    };
    let mut out = value.to_string();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(json: &str) -> CursorPayload {
        parse(json).unwrap()
    }

    fn env() -> HookEnv {
        HookEnv {
            process_cwd: Some("/elsewhere".into()),
            ..HookEnv::default()
        }
    }

    #[test]
    fn claude_payloads_do_nothing_in_cursor_handlers() {
        let p = payload(r#"{"prompt":"x","cwd":"/w","session_id":"s"}"#);
        assert_eq!(plan("beforeSubmitPrompt", &p, &env()), HookPlan::Nothing);
    }

    #[test]
    fn the_project_is_the_first_workspace_root() {
        let p = payload(
            r#"{"cursor_version":"1.7","workspace_roots":["rel","/w/app","/w/other"],"conversation_id":"c1"}"#,
        );
        assert_eq!(project_root(&p, &env()), Some(PathBuf::from("/w/app")));
        let HookPlan::Inject { main, .. } = plan("sessionStart", &p, &env()) else {
            panic!("no injection");
        };
        assert_eq!(main.conversation_id.as_deref(), Some("c1"));
        assert_eq!(main.trigger_source, "session_start");
    }

    #[test]
    fn aic_compile_calls_get_the_conversation_in_both_shapes() {
        let direct = payload(
            r#"{"cursor_version":"1","workspace_roots":["/w"],"conversation_id":"c1","tool_name":"MCP:aic_compile","tool_input":{"intent":"fix"}}"#,
        );
        assert_eq!(
            plan("preToolUse", &direct, &env()),
            HookPlan::AicToolCall {
                conversation: Some("c1".to_owned()),
                updated_input: Some(
                    json!({"intent": "fix", "conversationId": "c1", "editorId": "cursor"})
                ),
            }
        );
        let envelope = payload(
            r#"{"cursor_version":"1","workspace_roots":["/w"],"conversation_id":"c1","tool_name":"MCP","tool_input":{"server":"aic","toolName":"aic_compile","arguments":{"intent":"fix"}}}"#,
        );
        let HookPlan::AicToolCall {
            updated_input: Some(input),
            ..
        } = plan("preToolUse", &envelope, &env())
        else {
            panic!("not an aic call");
        };
        assert_eq!(input["server"], "aic");
        assert_eq!(input["arguments"]["conversationId"], "c1");
        let other = payload(
            r#"{"cursor_version":"1","workspace_roots":["/w"],"conversation_id":"c1","tool_name":"Read","tool_input":{"path":"a"}}"#,
        );
        assert_eq!(plan("preToolUse", &other, &env()), HookPlan::Nothing);
        let gate = HookEnv {
            check: Some("compile-gate".to_owned()),
            ..env()
        };
        assert!(matches!(
            plan("preToolUse", &other, &gate),
            HookPlan::CompileGate { .. }
        ));
        assert_eq!(plan("preToolUse", &direct, &gate), HookPlan::Nothing);
    }

    #[test]
    fn subagents_are_linked_to_their_parent_for_the_stop() {
        let start = payload(
            r#"{"cursor_version":"1","workspace_roots":["/w"],"conversation_id":"sub-1","parent_conversation_id":"c1"}"#,
        );
        assert_eq!(
            plan("subagentStart", &start, &env()),
            HookPlan::LinkSubagent {
                child: "sub-1".to_owned(),
                parent: "c1".to_owned()
            }
        );
        let stop =
            payload(r#"{"cursor_version":"1","workspace_roots":["/w"],"conversation_id":"sub-1"}"#);
        assert_eq!(
            plan("subagentStop", &stop, &env()),
            HookPlan::ReparentLinked {
                project_root: "/w".into(),
                from: "sub-1".to_owned()
            }
        );
    }

    #[test]
    fn outputs_follow_each_events_format() {
        assert_eq!(
            render("beforeSubmitPrompt", &HookOutcome::Neutral, &[]),
            "{\"continue\":true}\n"
        );
        assert_eq!(render("preToolUse", &HookOutcome::Neutral, &[]), "{}\n");
        let deny: Value = serde_json::from_str(&render(
            "beforeShellExecution",
            &HookOutcome::Deny {
                reason: "no".to_owned(),
            },
            &[],
        ))
        .unwrap();
        assert_eq!(deny["permission"], "deny");
        assert_eq!(deny["agent_message"], "no");
        let start: Value = serde_json::from_str(&render(
            "sessionStart",
            &HookOutcome::Context("ctx".to_owned()),
            &[("AIC_CONVERSATION_ID", "c1".to_owned())],
        ))
        .unwrap();
        assert_eq!(start["additional_context"], "ctx");
        assert_eq!(start["env"]["AIC_CONVERSATION_ID"], "c1");
        assert_eq!(render("stop", &HookOutcome::Neutral, &[]), "{}\n");
        assert_eq!(render("sessionEnd", &HookOutcome::Neutral, &[]), "");
    }
}
