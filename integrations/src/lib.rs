//! Editor adapters for `aic`: the editors it integrates with, the hook events it
//! handles, and the contract between a hook handler and the compiler.
//!
//! This crate knows editors and nothing of the pipeline: the binary hands it a
//! [`CompileFn`], and it turns editor hook payloads into compile requests and
//! compile results into each editor's hook output. The payload types, renderers and
//! installers for Claude Code and Cursor build on these types.
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
#![deny(missing_docs)]

pub mod claude;
pub mod install;

use serde::Serialize;

/// An editor `aic` integrates with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Editor {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// Cursor.
    Cursor,
    /// Any other MCP client; relies on the trigger rule only.
    Generic,
}

impl Editor {
    /// The editor id used in `CompilationMeta.editorId`.
    pub fn id(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Cursor => "cursor",
            Self::Generic => "generic",
        }
    }
}

/// A lifecycle event an editor reports to a hook (seed §2.2.1 capability table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum HookEvent {
    /// A session starts.
    SessionStart,
    /// The user submits a prompt.
    UserPromptSubmit,
    /// A tool is about to run.
    PreToolUse,
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
    /// Whether the editor lets this event's hook add context to the conversation
    /// (seed §2.2.1 "Current editor capabilities").
    pub fn injects_context(self, editor: Editor) -> bool {
        matches!(
            (editor, self),
            (
                Editor::ClaudeCode,
                Self::SessionStart | Self::UserPromptSubmit | Self::SubagentStart
            ) | (Editor::Cursor, Self::SessionStart)
        )
    }
}

/// What a hook asks the compiler for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookCompileRequest {
    /// The intent: the user's prompt, or a description of the session.
    pub intent: String,
    /// The project root the editor reports.
    pub project_root: std::path::PathBuf,
    /// The editor.
    pub editor: Editor,
    /// The event that triggered the compile.
    pub event: HookEvent,
}

/// The compiler as a hook sees it: a request in, the compiled prompt out, or an
/// error message fit to show the user.
pub type CompileFn = dyn Fn(&HookCompileRequest) -> Result<String, String> + Send + Sync;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_claude_code_injects_per_prompt_and_subagent_context() {
        assert!(HookEvent::SubagentStart.injects_context(Editor::ClaudeCode));
        assert!(!HookEvent::SubagentStart.injects_context(Editor::Cursor));
        assert!(HookEvent::SessionStart.injects_context(Editor::Cursor));
        assert!(!HookEvent::SessionStart.injects_context(Editor::Generic));
    }

    #[test]
    fn a_compile_fn_can_be_boxed_and_called() {
        let compile: Box<CompileFn> =
            Box::new(|request| Ok(format!("## Task\n\n{}\n", request.intent)));
        let request = HookCompileRequest {
            intent: "fix the parser".to_owned(),
            project_root: ".".into(),
            editor: Editor::ClaudeCode,
            event: HookEvent::UserPromptSubmit,
        };
        assert_eq!(compile(&request).unwrap(), "## Task\n\nfix the parser\n");
    }
}
