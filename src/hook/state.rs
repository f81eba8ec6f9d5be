//! What hooks remember between events, under `$AIC_HOME/hook-sessions/`
//! (never in the repository): session markers (the dual path for Claude Code
//! bug #10373), each conversation's turn start and last compile (the compile
//! gate), its last prompt (the gate's message), its edited files and
//! consecutive quality-gate blocks. File names are hashes of the ids.
//!
//! Every operation is best effort: a hook must not fail because its state
//! could not be read or written.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aic_integrations::gates::{self, GateFailure};
use aic_stages::content_hash::ContentHash;

use crate::clock::{Clock, iso};
use crate::host::Host;

/// A kind of per-conversation state.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    /// When the current turn started (ms since the epoch).
    Turn,
    /// When `aic_compile` (or a hook's compile) last ran (ms).
    Compiled,
    /// The turn's prompt (mode 0600).
    Prompt,
    /// The files edited, one relative path per line.
    Edits,
    /// How many stops in a row the quality gate blocked.
    Blocks,
    /// A subagent's parent conversation (Cursor).
    Parent,
}

impl Kind {
    const ALL: [Self; 6] = [
        Self::Turn,
        Self::Compiled,
        Self::Prompt,
        Self::Edits,
        Self::Blocks,
        Self::Parent,
    ];

    fn prefix(self) -> &'static str {
        match self {
            Self::Turn => "turn",
            Self::Compiled => "compiled",
            Self::Prompt => "prompt",
            Self::Edits => "edits",
            Self::Blocks => "blocks",
            Self::Parent => "parent",
        }
    }
}

/// The hook state of one process: the directory under the aic home and the
/// clock that stamps it.
pub(super) struct HookState<'a> {
    dir: Option<PathBuf>,
    clock: &'a dyn Clock,
}

/// State files untouched this long are removed (editors without a session
/// end event, such as Codex CLI, never clean up after themselves).
const STALE_AFTER: Duration = Duration::from_hours(7 * 24);

/// Writes a state file, private (0600 in a 0700 directory): hook state holds
/// prompts.
fn write(path: &Path, bytes: &[u8]) {
    let _ = crate::home::write_private(path, bytes);
}

impl<'a> HookState<'a> {
    /// The state under `host`'s home (`hook-sessions/`); without a home every
    /// operation does nothing.
    pub(super) fn new(host: &'a Host) -> Self {
        Self {
            dir: host.home().map(|home| home.dir().join("hook-sessions")),
            clock: host.clock(),
        }
    }

    /// The marker of a Claude Code session: SessionStart (or the first prompt)
    /// injected its session context.
    pub(super) fn session_marker(&self, session_id: &str) -> Option<PathBuf> {
        let hash = ContentHash::of(session_id.as_bytes()).to_hex();
        self.dir.as_ref().map(|dir| dir.join(hash))
    }

    /// Writes a session marker.
    pub(super) fn write_session_marker(&self, path: &Path) {
        write(path, iso(self.clock.now_ms()).as_bytes());
    }

    fn path(&self, kind: Kind, conversation: &str) -> Option<PathBuf> {
        let hash = ContentHash::of(conversation.as_bytes()).to_hex();
        self.dir
            .as_ref()
            .map(|dir| dir.join(format!("{}-{hash}", kind.prefix())))
    }

    fn read(&self, kind: Kind, conversation: &str) -> Option<String> {
        fs_err::read_to_string(self.path(kind, conversation)?).ok()
    }

    fn read_ms(&self, kind: Kind, conversation: &str) -> Option<u64> {
        self.read(kind, conversation)?.trim().parse().ok()
    }

    /// Removes state files older than [`STALE_AFTER`].
    fn prune(&self) {
        let Some(dir) = &self.dir else {
            return;
        };
        let Ok(entries) = fs_err::read_dir(dir) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|modified| modified.elapsed().ok())
                .is_some_and(|age| age > STALE_AFTER);
            if stale {
                let _ = fs_err::remove_file(entry.path());
            }
        }
    }

    /// Records that a subagent's conversation belongs to `parent`.
    pub(super) fn link_subagent(&self, child: &str, parent: &str) {
        if let Some(path) = self.path(Kind::Parent, child) {
            write(&path, parent.as_bytes());
        }
    }

    /// The parent recorded for a subagent's conversation.
    pub(super) fn linked_parent(&self, child: &str) -> Option<String> {
        self.read(Kind::Parent, child)
            .map(|parent| parent.trim().to_owned())
            .filter(|parent| !parent.is_empty())
    }

    /// Records that a turn started now, with its prompt; prunes stale state.
    pub(super) fn start_turn(&self, conversation: &str, prompt: Option<&str>) {
        self.prune();
        if let Some(path) = self.path(Kind::Turn, conversation) {
            write(&path, self.clock.now_ms().to_string().as_bytes());
        }
        if let (Some(prompt), Some(path)) = (prompt, self.path(Kind::Prompt, conversation)) {
            let redacted = aic_stages::guard::redact_secrets(prompt);
            write(&path, redacted.as_deref().unwrap_or(prompt).as_bytes());
        }
    }

    /// Records that the conversation compiled now.
    pub(super) fn mark_compiled(&self, conversation: &str) {
        if let Some(path) = self.path(Kind::Compiled, conversation) {
            // One millisecond later than any turn marker written the same
            // millisecond: a compile in the turn's first millisecond counts.
            write(&path, (self.clock.now_ms() + 1).to_string().as_bytes());
        }
    }

    /// The compile gate's question: did this turn compile? `true` when it did,
    /// or when no turn start is known (the gate cannot tell, so it fails open).
    /// Waits up to `wait` for a sibling `aic_compile` call of the same batch
    /// (tools of one batch start together).
    pub(super) fn turn_compiled(&self, conversation: &str, wait: Duration) -> bool {
        let Some(turn) = self.read_ms(Kind::Turn, conversation) else {
            return true;
        };
        let deadline = Instant::now() + wait;
        loop {
            if self
                .read_ms(Kind::Compiled, conversation)
                .is_some_and(|compiled| compiled >= turn)
            {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// The turn's prompt, when one was saved.
    pub(super) fn prompt(&self, conversation: &str) -> Option<String> {
        self.read(Kind::Prompt, conversation)
    }

    /// Adds `paths` (those inside `root`, as relative paths) to the
    /// conversation's edit list.
    pub(super) fn track_edits(&self, conversation: &str, root: &Path, paths: &[PathBuf]) {
        let mut edits = self.edits(conversation);
        for path in paths {
            if let Ok(relative) = path.strip_prefix(root)
                && let Some(relative) = relative.to_str()
                && !relative.is_empty()
                && !edits.iter().any(|e| e == relative)
            {
                edits.push(relative.to_owned());
            }
        }
        if let Some(path) = self.path(Kind::Edits, conversation) {
            write(&path, edits.join("\n").as_bytes());
        }
    }

    /// The conversation's edited files (relative paths), in edit order.
    pub(super) fn edits(&self, conversation: &str) -> Vec<String> {
        self.read(Kind::Edits, conversation)
            .map(|text| text.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Counts one more blocked stop; returns the new count.
    pub(super) fn count_block(&self, conversation: &str) -> u32 {
        let count = self
            .read(Kind::Blocks, conversation)
            .and_then(|t| t.trim().parse::<u32>().ok())
            .unwrap_or(0)
            + 1;
        if let Some(path) = self.path(Kind::Blocks, conversation) {
            write(&path, count.to_string().as_bytes());
        }
        count
    }

    /// Forgets the edit list and the block count (the gate passed or gave up).
    pub(super) fn clear_gate(&self, conversation: &str) {
        for kind in [Kind::Edits, Kind::Blocks] {
            if let Some(path) = self.path(kind, conversation) {
                let _ = fs_err::remove_file(path);
            }
        }
    }

    /// Forgets everything about a conversation (its session ended).
    pub(super) fn end_conversation(&self, conversation: &str) {
        for kind in Kind::ALL {
            if let Some(path) = self.path(kind, conversation) {
                let _ = fs_err::remove_file(path);
            }
        }
    }
}

/// The most output kept from one check, in bytes.
const MAX_CHECK_OUTPUT_BYTES: usize = 64 * 1024;

/// Runs one quality-gate check: `command` through `sh -c` in `root` with the
/// edited `files` appended as arguments, killed (its whole process group)
/// after `timeout`. `None` when it passed.
#[cfg(unix)]
pub(super) fn run_check(
    command: &str,
    root: &Path,
    files: &[String],
    timeout: Duration,
) -> Option<GateFailure> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;

    let failure = |exit_code, output: String| GateFailure {
        command: command.to_owned(),
        exit_code,
        output,
    };
    let mut child = match Command::new("sh")
        .arg("-c")
        .arg(format!("{command} \"$@\""))
        .arg("aic-quality-gate")
        .args(files)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(child) => child,
        Err(error) => return Some(failure(None, format!("could not start: {error}"))),
    };
    let (sender, receiver) = crossbeam_channel::unbounded::<(usize, Vec<u8>)>();
    for (index, pipe) in [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .enumerate()
    {
        let sender = sender.clone();
        if let Some(pipe) = pipe {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = pipe
                    .take(MAX_CHECK_OUTPUT_BYTES as u64)
                    .read_to_end(&mut bytes);
                let _ = sender.send((index, bytes));
            });
        }
    }
    drop(sender);
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                // The whole process group (the check's own children too):
                // `kill -s KILL -- -PGID`, the form every kill(1) reads as
                // a group.
                let _ = Command::new("kill")
                    .args(["-s", "KILL", "--"])
                    .arg(format!("-{}", child.id()))
                    .stderr(Stdio::null())
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let mut outputs = [Vec::new(), Vec::new()];
    let grace = Instant::now() + Duration::from_millis(500);
    while let Ok((index, bytes)) =
        receiver.recv_timeout(grace.saturating_duration_since(Instant::now()))
    {
        outputs[index] = bytes;
    }
    let mut output = String::from_utf8_lossy(&outputs[0]).into_owned();
    output.push_str(&String::from_utf8_lossy(&outputs[1]));
    match status {
        Some(status) if status.success() => None,
        Some(status) => Some(failure(status.code(), output)),
        None => Some(failure(
            None,
            format!("{output}\n(stopped after {} s)", timeout.as_secs()),
        )),
    }
}

/// The quality gate needs a POSIX shell; elsewhere every check passes.
#[cfg(not(unix))]
pub(super) fn run_check(
    _command: &str,
    _root: &Path,
    _files: &[String],
    _timeout: Duration,
) -> Option<GateFailure> {
    None
}

/// Runs every check on the edited files that still exist; `Ok(None)` when
/// all passed (or there was nothing to check), `Ok(Some(reason))` to block.
pub(super) fn quality_gate(
    commands: &[String],
    timeout: Duration,
    root: &Path,
    edits: &[String],
) -> Option<String> {
    let files: Vec<String> = edits
        .iter()
        .filter(|file| root.join(file).is_file())
        .cloned()
        .collect();
    if commands.is_empty() || files.is_empty() {
        return None;
    }
    let failures: Vec<GateFailure> = commands
        .iter()
        .filter_map(|command| run_check(command, root, &files, timeout))
        .collect();
    (!failures.is_empty()).then(|| gates::quality_gate_reason(&failures, &files))
}
