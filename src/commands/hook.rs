//! `aic hook <claude|codex|cursor> <Event> [check]`: reads the event's JSON
//! on stdin and prints what the event expects ([`crate::hook`] answers it).
//! A running `aic daemon` answers when there is one, started on first use;
//! otherwise the hook runs in this process. Never fails.

use std::io::Read;
use std::path::PathBuf;

use aic_integrations::{Editor, claude, cursor};

use crate::args::HookArgs;
use crate::hook::{HookInput, answer, editor_of, log, neutral};
use crate::host::Host;
use crate::printer::print_stdout;

/// The most stdin a hook reads, in bytes.
const MAX_STDIN_BYTES: u64 = 8 << 20;

/// Runs a hook; never fails. A running `aic daemon` (started on first use)
/// answers when there is one; otherwise the hook runs in this process.
pub fn run(args: &HookArgs, host: &Host) -> anyhow::Result<()> {
    let event = args.event().unwrap_or_default();
    let Some(editor) = editor_of(args.editor()) else {
        log(
            host,
            args.editor().unwrap_or(""),
            event,
            "not a hook aic handles (`aic hook <claude|codex|cursor> <Event>`)",
        );
        return Ok(());
    };
    let known = match editor {
        Editor::Cursor => cursor::event_named(event).is_some(),
        _ => claude::event_named(event).is_some(),
    };
    if !known {
        log(
            host,
            editor.id(),
            event,
            "not an event aic handles; nothing to do",
        );
        let output = neutral(editor, event);
        if !output.is_empty() {
            let _ = print_stdout(&output);
        }
        return Ok(());
    }
    let mut stdin = Vec::new();
    if std::io::stdin()
        .take(MAX_STDIN_BYTES)
        .read_to_end(&mut stdin)
        .is_err()
    {
        log(host, editor.id(), event, "stdin could not be read");
        stdin.clear();
    }
    let input = HookInput {
        words: args.words.clone(),
        stdin,
        claude_project_dir: std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from),
        cursor_project_dir: std::env::var_os("CURSOR_PROJECT_DIR").map(PathBuf::from),
        cwd: std::env::current_dir().ok(),
        aic_project_root: std::env::var_os("AIC_PROJECT_ROOT").map(PathBuf::from),
        aic_conversation_id: std::env::var("AIC_CONVERSATION_ID").ok(),
    };
    let output = crate::daemon::client::hook(&input).unwrap_or_else(|| answer(&input, host));
    if !output.is_empty() {
        // A closed stdout (the editor gave up) is not worth an error.
        let _ = print_stdout(&output);
    }
    Ok(())
}
