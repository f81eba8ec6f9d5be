//! Editor adapters for `aic`: the editors it integrates with, the hook events it
//! handles, and the contract between a hook handler and the compiler.
//!
//! This crate knows editors and nothing of the pipeline: it turns an editor's
//! hook payload into a [`HookPlan`] (what to compile, check or record), and the
//! binary's [`HookOutcome`] into the exact stdout that editor expects. The
//! binary runs the plan: compiles, runs the quality gate, writes markers.
//!
//! Modules: [`claude`] (Claude Code, and Codex CLI, whose hooks are
//! Claude-shaped), [`cursor`], [`gates`] (the opt-in guard rails, shared by
//! all three) and [`install`] (what `aic install` writes).
//!
//! # Example
//!
//! ```
//! use aic_integrations::{Editor, HookEvent};
//!
//! assert_eq!(Editor::ClaudeCode.id(), "claude-code");
//! assert!(HookEvent::UserPromptSubmit.injects_context(Editor::ClaudeCode));
//! assert!(!HookEvent::UserPromptSubmit.injects_context(Editor::Cursor));
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod claude;
pub mod cursor;
pub mod gates;
pub mod install;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

/// An editor `aic` integrates with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Editor {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// Cursor.
    Cursor,
    /// OpenAI's Codex CLI (Claude-shaped hooks).
    Codex,
    /// Any other MCP client; relies on the trigger rule only.
    Generic,
}

impl Editor {
    /// The editor id used in `CompilationMeta.editorId`.
    pub fn id(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Cursor => "cursor",
            Self::Codex => "codex",
            Self::Generic => "generic",
        }
    }
}

/// A lifecycle event an editor reports to a hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum HookEvent {
    /// A session starts.
    SessionStart,
    /// The user submits a prompt.
    UserPromptSubmit,
    /// A tool (or, in Cursor, a shell command) is about to run.
    PreToolUse,
    /// A tool ran (in Cursor also `afterFileEdit`).
    PostToolUse,
    /// The agent is about to stop and hand the turn back.
    Stop,
    /// A subagent starts.
    SubagentStart,
    /// A subagent stops.
    SubagentStop,
    /// The conversation is about to be compacted.
    PreCompact,
    /// The session ends.
    SessionEnd,
}

impl HookEvent {
    /// Whether the editor lets this event's hook add context to the conversation.
    pub fn injects_context(self, editor: Editor) -> bool {
        matches!(
            (editor, self),
            (
                Editor::ClaudeCode,
                Self::SessionStart | Self::UserPromptSubmit | Self::SubagentStart
            ) | (Editor::Codex, Self::SessionStart | Self::UserPromptSubmit)
                | (Editor::Cursor, Self::SessionStart)
        )
    }
}

/// What the binary knows that a plan depends on.
#[derive(Clone, Debug, Default)]
pub struct HookEnv {
    /// `CLAUDE_PROJECT_DIR` (Cursor also sets it, as an alias), when set.
    pub claude_project_dir: Option<PathBuf>,
    /// `CURSOR_PROJECT_DIR`, when set.
    pub cursor_project_dir: Option<PathBuf>,
    /// The process's working directory.
    pub process_cwd: Option<PathBuf>,
    /// The project a directory belongs to (the binary passes its discovery:
    /// the enclosing git work tree or directory holding `aic.config.json`);
    /// `None` takes a payload's directory as the project.
    pub project_of: Option<fn(&Path) -> PathBuf>,
    /// Whether SessionStart already injected session context for this session
    /// (its marker exists): then UserPromptSubmit does not add it again.
    pub session_marked: bool,
    /// `AIC_PROJECT_ROOT`, which aic's Cursor sessionStart hook hands to
    /// the session's later hooks.
    pub aic_project_root: Option<PathBuf>,
    /// `AIC_CONVERSATION_ID`, likewise.
    pub aic_conversation_id: Option<String>,
    /// The editor id an `aic_compile` call is given when the model left it
    /// out (`claude-code`, `codex`); empty means `claude-code`.
    pub editor_id: &'static str,
    /// Which check a tool-event handler runs (`aic hook claude PreToolUse
    /// no-verify`): `conversation-id` (the default), `no-verify` or
    /// `compile-gate`. One event can carry several aic handlers with
    /// different matchers; each runs only its own check.
    pub check: Option<String>,
}

impl HookEnv {
    /// The project `dir` belongs to, through [`HookEnv::project_of`].
    pub fn project(&self, dir: PathBuf) -> PathBuf {
        match self.project_of {
            Some(project_of) => project_of(&dir),
            None => dir,
        }
    }
}

/// One compile a hook asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextRequest {
    /// The intent to compile.
    pub intent: String,
    /// The project root.
    pub project_root: PathBuf,
    /// The conversation, for the session layer and the log.
    pub conversation_id: Option<String>,
    /// The model, when the payload names it.
    pub model_id: Option<String>,
    /// `session_start`, `prompt_submit`, `subagent_start`.
    pub trigger_source: &'static str,
}

/// What a hook should do; the binary carries it out and turns the result into
/// a [`HookOutcome`].
#[derive(Clone, Debug, PartialEq)]
pub enum HookPlan {
    /// Print nothing (an event's neutral answer).
    Nothing,
    /// Compile and inject: the session block first when there is one (the
    /// dual path for Claude Code bug #10373), then the main one. Each gets
    /// its share of [`claude::MAX_INJECTED_CHARS`].
    Inject {
        /// Session-level context to add first, when SessionStart missed it.
        session: Option<ContextRequest>,
        /// The context of this event.
        main: ContextRequest,
        /// Write the session marker after a successful injection.
        mark_session: Option<String>,
        /// The conversation whose turn starts here (UserPromptSubmit): the
        /// compile gate's turn marker.
        turn: Option<String>,
    },
    /// A subagent starts (Cursor): remember its parent, which its stop event
    /// may not carry.
    LinkSubagent {
        /// The subagent's conversation.
        child: String,
        /// The parent conversation.
        parent: String,
    },
    /// Move a finished subagent's compilations onto its parent conversation,
    /// looked up from [`HookPlan::LinkSubagent`] when `to` is `None`.
    ReparentLinked {
        /// The project.
        project_root: PathBuf,
        /// The subagent's conversation.
        from: String,
    },
    /// Move a finished subagent's compilations onto its parent conversation.
    Reparent {
        /// The project.
        project_root: PathBuf,
        /// The subagent's conversation.
        from: String,
        /// The parent conversation.
        to: String,
    },
    /// The session ended: remove its markers and the edit list.
    EndSession {
        /// The editor's session (Claude Code's `session_id`).
        session_id: Option<String>,
        /// The conversation.
        conversation: Option<String>,
    },
    /// A turn starts (Cursor's beforeSubmitPrompt, which cannot inject):
    /// remember the prompt and the turn for the compile gate.
    StartTurn {
        /// The conversation.
        conversation: String,
        /// The user's prompt.
        prompt: String,
    },
    /// An aic tool is about to run: mark that this conversation compiled in
    /// this turn, and pass the arguments on with the conversation id added.
    AicToolCall {
        /// The conversation.
        conversation: Option<String>,
        /// The tool's arguments with `conversationId` and `editorId` filled
        /// in; `None` when nothing needed adding.
        updated_input: Option<Value>,
    },
    /// Another tool is about to run while the compile gate is installed:
    /// allowed once this turn compiled (see [`gates`]).
    CompileGate {
        /// The conversation.
        conversation: String,
        /// The project (its config may switch the gate off).
        project_root: PathBuf,
    },
    /// A shell command is about to run: refuse `git … --no-verify`.
    CheckShell {
        /// The command line.
        command: String,
    },
    /// The agent edited files: add them to the conversation's edit list.
    TrackEdits {
        /// The conversation.
        conversation: String,
        /// The project.
        project_root: PathBuf,
        /// The files, absolute.
        paths: Vec<PathBuf>,
    },
    /// The agent is about to stop: run the quality gate on its edits.
    QualityGate {
        /// The conversation.
        conversation: String,
        /// The project (`qualityGate.commands` come from its config).
        project_root: PathBuf,
    },
}

/// What running a [`HookPlan`] came to, before an editor's renderer turns it
/// into stdout.
#[derive(Clone, Debug, PartialEq)]
pub enum HookOutcome {
    /// No opinion: the event's neutral output.
    Neutral,
    /// Text to inject.
    Context(String),
    /// Let a tool run, with these arguments when given.
    Allow {
        /// The replacement arguments.
        updated_input: Option<Value>,
    },
    /// Refuse a tool call, saying why (shown to the model and the user).
    Deny {
        /// Why.
        reason: String,
    },
    /// Keep the agent working instead of stopping, saying why.
    BlockStop {
        /// Why (the failing command and its output).
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_claude_code_injects_per_prompt_and_subagent_context() {
        assert!(HookEvent::SubagentStart.injects_context(Editor::ClaudeCode));
        assert!(!HookEvent::SubagentStart.injects_context(Editor::Cursor));
        assert!(HookEvent::SessionStart.injects_context(Editor::Cursor));
        assert!(HookEvent::UserPromptSubmit.injects_context(Editor::Codex));
        assert!(!HookEvent::SessionStart.injects_context(Editor::Generic));
    }
}
