//! The opt-in guard rails (`aic install <client> --with-gates`; see
//! `docs/claude-code.md`, "The gates") and the optional compile gate, as pure
//! decisions: which shell commands skip the repository's git hooks, which files
//! a tool edited, what a blocked stop says, and the arguments an `aic_compile`
//! call gets its conversation id through.
//!
//! The binary keeps the state (edit lists and turn markers under
//! `$AIC_HOME/hook-sessions/`) and runs the user's check commands.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The Claude Code tools that write files (PostToolUse edit tracker matcher).
pub const CLAUDE_EDIT_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// How many times in a row the quality gate blocks a stop before it lets the
/// agent stop anyway (logged): a check the agent cannot fix must not trap it.
pub const MAX_CONSECUTIVE_BLOCKS: u32 = 3;

/// The most characters of a failing command's output quoted in the reason.
const MAX_REASON_OUTPUT_CHARS: usize = 1_500;

/// Why `command` would skip the repository's git hooks, or `None` when it
/// would not: `git … --no-verify` (any subcommand), `git commit -n`, and
/// `git -c core.hooksPath=…`. The command line is split like a POSIX shell would
/// (quotes respected, so `git commit -m "no --no-verify here"` passes), and
/// each of its `;`, `&&`, `||`, `|` segments is checked.
///
/// ```
/// use aic_integrations::gates::bypasses_git_hooks;
///
/// assert!(bypasses_git_hooks("git commit --no-verify -m wip").is_some());
/// assert!(bypasses_git_hooks("cd app && git push --no-verify").is_some());
/// assert!(bypasses_git_hooks("git commit -m 'mention --no-verify'").is_none());
/// assert!(bypasses_git_hooks("echo --no-verify").is_none());
/// ```
pub fn bypasses_git_hooks(command: &str) -> Option<String> {
    let words = shlex::split(command)
        .unwrap_or_else(|| command.split_whitespace().map(str::to_owned).collect());
    let mut segment: Vec<&str> = Vec::new();
    let mut segments = Vec::new();
    for word in &words {
        // A separator glued to a word (`wip;`, `a&&b`) still ends a segment;
        // a word with whitespace in it was quoted, and its `&&` is text.
        if word.contains(char::is_whitespace) {
            segment.push(word);
            continue;
        }
        let mut rest = word.as_str();
        loop {
            let separator = ["&&", "||", ";", "|", "&"]
                .iter()
                .filter_map(|op| rest.find(op).map(|at| (at, op.len())))
                .min();
            if let Some((at, len)) = separator {
                if at > 0 {
                    segment.push(&rest[..at]);
                }
                segments.push(std::mem::take(&mut segment));
                rest = &rest[at + len..];
            } else {
                if !rest.is_empty() {
                    segment.push(rest);
                }
                break;
            }
        }
    }
    segments.push(segment);
    segments.iter().find_map(|segment| {
        git_bypass(segment).or_else(|| {
            // `sh -c "git commit --no-verify"`, `bash -lc '…'`: the quoted
            // command line runs too.
            let shell = segment.iter().position(|word| {
                Path::new(word).file_name().is_some_and(|name| {
                    ["sh", "bash", "zsh", "dash", "ksh"]
                        .iter()
                        .any(|shell| name == *shell)
                })
            })?;
            let inner = segment[shell + 1..]
                .windows(2)
                .find(|pair| {
                    pair[0].starts_with('-') && !pair[0].starts_with("--") && pair[0].contains('c')
                })
                .map(|pair| pair[1])?;
            bypasses_git_hooks(inner)
        })
    })
}

/// Whether `arg` is `--no-verify` or an abbreviation git accepts for it
/// (`--no-verif`, `--no-veri`; `--no-ve` is ambiguous with `--no-verbose`).
fn is_no_verify(arg: &str) -> bool {
    arg.len() >= "--no-veri".len() && "--no-verify".starts_with(arg)
}

fn git_bypass(words: &[&str]) -> Option<String> {
    let git = words.iter().position(|word| {
        Path::new(word)
            .file_name()
            .is_some_and(|name| name == "git" || name == "git.exe")
    })?;
    let args = &words[git + 1..];
    let mut subcommand = None;
    let mut index = 0;
    while index < args.len() {
        let arg = args[index];
        if is_no_verify(arg) {
            return Some("`--no-verify` skips the repository's git hooks".to_owned());
        }
        if subcommand.is_none() {
            if arg == "-c" {
                if args.get(index + 1).is_some_and(|setting| {
                    setting.to_ascii_lowercase().starts_with("core.hookspath")
                }) {
                    return Some(
                        "`-c core.hooksPath=…` replaces the repository's git hooks".to_owned(),
                    );
                }
                index += 2;
                continue;
            }
            if arg.to_ascii_lowercase().starts_with("--config-env") || arg == "-C" {
                index += 2;
                continue;
            }
            if !arg.starts_with('-') {
                subcommand = Some(arg);
            }
        } else if subcommand == Some("config")
            && arg.to_ascii_lowercase().starts_with("core.hookspath")
        {
            return Some(
                "`git config core.hooksPath` replaces the repository's git hooks".to_owned(),
            );
        } else if subcommand == Some("commit") && arg.starts_with('-') {
            if arg.starts_with("--") {
                // A long option's value as the next word (`--message "-n"`).
                if COMMIT_VALUE_OPTIONS.contains(&arg) {
                    index += 1;
                }
            } else {
                match short_flags(arg) {
                    ShortFlags::HasN => {
                        return Some("`git commit -n` skips the repository's git hooks".to_owned());
                    }
                    ShortFlags::ValueNext => index += 1,
                    ShortFlags::Plain => {}
                }
            }
        }
        index += 1;
    }
    None
}

/// The long `git commit` options whose value may be the next word.
const COMMIT_VALUE_OPTIONS: [&str; 11] = [
    "--message",
    "--file",
    "--author",
    "--date",
    "--template",
    "--reuse-message",
    "--reedit-message",
    "--fixup",
    "--squash",
    "--cleanup",
    "--trailer",
];

/// What a cluster of `git commit` short flags (`-n`, `-an`, `-am`) holds.
enum ShortFlags {
    /// `-n` before any flag that takes a value.
    HasN,
    /// Ends with a flag whose value is the next word (`-am`).
    ValueNext,
    /// Neither.
    Plain,
}

/// Reads a short-flag cluster: `-m`, `-F`, `-c`, `-C`, `-t` take a value,
/// the rest of the cluster or else the next word.
fn short_flags(cluster: &str) -> ShortFlags {
    let flags: Vec<char> = cluster[1..].chars().collect();
    for (at, flag) in flags.iter().enumerate() {
        if *flag == 'n' {
            return ShortFlags::HasN;
        }
        if "mFcCt".contains(*flag) {
            return if at + 1 == flags.len() {
                ShortFlags::ValueNext
            } else {
                ShortFlags::Plain
            };
        }
    }
    ShortFlags::Plain
}

/// The files a tool call edited, absolute (relative ones resolved against
/// `root`): `file_path` or `notebook_path` of Claude Code's edit tools, the
/// `*** Add File:` / `*** Update File:` lines of a Codex `apply_patch`, and
/// Cursor's `afterFileEdit` `file_path`.
pub fn edited_paths(tool_name: &str, tool_input: &Value, root: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let absolute = |path: &str| {
        let path = Path::new(path.trim());
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            root.join(path)
        }
    };
    if CLAUDE_EDIT_TOOLS.contains(&tool_name) || tool_name.is_empty() {
        for key in ["file_path", "notebook_path"] {
            if let Some(path) = tool_input.get(key).and_then(Value::as_str)
                && !path.trim().is_empty()
            {
                paths.push(absolute(path));
            }
        }
    } else if tool_name == "apply_patch" {
        let mut texts = Vec::new();
        collect_strings(tool_input, &mut texts);
        for text in texts {
            for line in text.lines() {
                let path = line
                    .strip_prefix("*** Add File: ")
                    .or_else(|| line.strip_prefix("*** Update File: "))
                    .or_else(|| line.strip_prefix("*** Move to: "));
                if let Some(path) = path.filter(|p| !p.trim().is_empty()) {
                    paths.push(absolute(path));
                }
            }
        }
    }
    paths.sort();
    paths.dedup();
    paths
}

fn collect_strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(text) => out.push(text),
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        Value::Object(map) => map.values().for_each(|item| collect_strings(item, out)),
        _ => {}
    }
}

/// Whether a Claude Code (or Codex) tool name is one of aic's MCP tools:
/// `mcp__<server>__aic_<tool>`, plugin servers included
/// (`mcp__plugin_aic_aic__aic_compile`).
pub fn is_aic_tool(tool_name: &str) -> bool {
    tool_name.starts_with("mcp__")
        && tool_name
            .rsplit("__")
            .next()
            .is_some_and(|tool| tool.starts_with("aic_"))
}

/// Whether a Claude Code (or Codex) tool name is aic's compile tool.
pub fn is_aic_compile_tool(tool_name: &str) -> bool {
    is_aic_tool(tool_name) && tool_name.ends_with("__aic_compile")
}

/// `arguments` with `conversationId` and `editorId` filled in where the model
/// left them out; `None` when both were there already (or `arguments` is not
/// an object). The model's own values are never replaced.
///
/// ```
/// use aic_integrations::gates::with_conversation;
/// use serde_json::json;
///
/// let filled = with_conversation(&json!({"intent": "fix"}), Some("c-1"), "claude-code");
/// assert_eq!(
///     filled,
///     Some(json!({"intent": "fix", "conversationId": "c-1", "editorId": "claude-code"}))
/// );
/// ```
pub fn with_conversation(
    arguments: &Value,
    conversation: Option<&str>,
    editor_id: &str,
) -> Option<Value> {
    let mut map: Map<String, Value> = arguments.as_object()?.clone();
    let mut changed = false;
    if let Some(conversation) = conversation
        && !map.contains_key("conversationId")
    {
        map.insert(
            "conversationId".to_owned(),
            Value::String(conversation.to_owned()),
        );
        changed = true;
    }
    if !map.contains_key("editorId") {
        map.insert("editorId".to_owned(), Value::String(editor_id.to_owned()));
        changed = true;
    }
    changed.then_some(Value::Object(map))
}

/// The compile gate's reason for refusing a tool: this turn has not called
/// `aic_compile` yet. Names the prompt as the intent to use, when known.
pub fn compile_gate_reason(prompt: Option<&str>) -> String {
    let intent = prompt
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .map(|p| match p.char_indices().nth(200) {
            Some((cut, _)) => format!("{}…", &p[..cut]),
            None => p,
        });
    match intent {
        Some(intent) => format!(
            "aic compile gate: aic_compile has not run for this message. Call aic_compile with {{\"intent\": {}}} first, then retry this tool.",
            Value::String(intent)
        ),
        None => "aic compile gate: aic_compile has not run for this message. Call aic_compile with the task as its intent first, then retry this tool.".to_owned(),
    }
}

/// One failing quality-gate command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateFailure {
    /// The command as configured.
    pub command: String,
    /// Its exit code, `None` when it was killed (timeout) or could not start.
    pub exit_code: Option<i32>,
    /// What it printed (stdout then stderr), or why it did not run.
    pub output: String,
}

/// The reason a stop is blocked: which commands failed on how many edited
/// files, with the end of each one's output (at most 1,500 characters in all).
pub fn quality_gate_reason(failures: &[GateFailure], files: &[String]) -> String {
    let mut reason = format!(
        "aic quality gate: {} of the checks in aic.config.json (qualityGate.commands) failed on the {} file{} edited in this session ({}).",
        failures.len(),
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        list_files(files),
    );
    let share = MAX_REASON_OUTPUT_CHARS / failures.len().max(1);
    for failure in failures {
        let status = match failure.exit_code {
            Some(code) => format!("exit code {code}"),
            None => "did not finish".to_owned(),
        };
        let _ = write!(reason, "\n\n$ {} ({status})\n", failure.command);
        let output = failure.output.trim();
        reason.push_str(&if output.is_empty() {
            "(no output)".to_owned()
        } else {
            tail(output, share)
        });
    }
    reason.push_str("\n\nFix these, or say why they cannot be fixed.");
    reason
}

fn list_files(files: &[String]) -> String {
    let shown: Vec<&str> = files.iter().take(5).map(String::as_str).collect();
    match files.len() {
        n if n > 5 => format!("{} and {} more", shown.join(", "), n - 5),
        _ => shown.join(", "),
    }
}

/// The last `max` characters of `text`, from a line start when possible.
fn tail(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let skip = count - max;
    let cut = text.char_indices().nth(skip).map_or(0, |(i, _)| i);
    let rest = &text[cut..];
    let rest = rest.find('\n').map_or(rest, |nl| &rest[nl + 1..]);
    format!("…\n{rest}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn hook_bypasses_are_found_in_every_spelling() {
        for command in [
            "git commit --no-verify",
            "git commit -nm wip",
            "git commit -an",
            "git -C sub commit -n",
            "git push origin main --no-verify",
            "npm test && git commit --no-verify -m x",
            "git -c core.hooksPath=/dev/null commit -m x",
            "/usr/bin/git merge --no-verify topic",
            "make; git commit --no-verify",
            "true&&git commit --no-verify",
            "git commit --no-verif -m x",
            "git commit --no-veri",
            "git config core.hooksPath /dev/null",
            "git config --local core.hooksPath .nohooks",
            "bash -c \"git commit --no-verify -m x\"",
            "sh -lc 'cd sub && git push --no-verify'",
        ] {
            assert!(bypasses_git_hooks(command).is_some(), "{command}");
        }
        for command in [
            "git commit -m 'skip --no-verify'",
            "git commit --message -n",
            "git commit -am -n",
            "git commit -m \"-n is fine\"",
            "git log -n 3",
            "git commit -mn",
            "echo git --no-verify-ish",
            "cargo test --no-verify",
            "git status",
            "",
            "git commit -m 'unbalanced",
            "git commit --no-ve -m x",
            "git config user.name me",
            "bash -c 'git commit -m ok'",
        ] {
            assert!(bypasses_git_hooks(command).is_none(), "{command}");
        }
    }

    #[test]
    fn edits_come_from_each_tools_input() {
        let root = Path::new("/repo");
        assert_eq!(
            edited_paths("Edit", &json!({"file_path": "/repo/src/a.rs"}), root),
            [PathBuf::from("/repo/src/a.rs")]
        );
        assert_eq!(
            edited_paths("NotebookEdit", &json!({"notebook_path": "n.ipynb"}), root),
            [PathBuf::from("/repo/n.ipynb")]
        );
        assert!(edited_paths("Read", &json!({"file_path": "/repo/a"}), root).is_empty());
        let patch = "*** Begin Patch\n*** Update File: src/b.py\n@@\n-x\n+y\n*** Add File: new.py\n+z\n*** Delete File: old.py\n*** End Patch\n";
        assert_eq!(
            edited_paths(
                "apply_patch",
                &json!({"command": ["apply_patch", patch]}),
                root
            ),
            [
                PathBuf::from("/repo/new.py"),
                PathBuf::from("/repo/src/b.py")
            ]
        );
    }

    #[test]
    fn aic_tools_are_recognised_by_their_mcp_names() {
        assert!(is_aic_compile_tool("mcp__aic__aic_compile"));
        assert!(is_aic_compile_tool("mcp__plugin_aic_aic__aic_compile"));
        assert!(is_aic_tool("mcp__aic__aic_status"));
        assert!(!is_aic_compile_tool("mcp__aic__aic_status"));
        assert!(!is_aic_tool("Bash"));
        assert!(!is_aic_tool("mcp__other__compile"));
    }

    #[test]
    fn the_models_own_conversation_id_is_kept() {
        assert_eq!(
            with_conversation(
                &json!({"intent": "x", "conversationId": "mine", "editorId": "e"}),
                Some("c-1"),
                "claude-code"
            ),
            None
        );
        assert_eq!(with_conversation(&json!("text"), Some("c"), "cursor"), None);
    }

    #[test]
    fn a_blocked_stop_names_the_command_and_quotes_the_end_of_its_output() {
        let mut long = String::new();
        for i in 0..400 {
            let _ = writeln!(long, "line {i}");
        }
        let reason = quality_gate_reason(
            &[GateFailure {
                command: "ruff check".to_owned(),
                exit_code: Some(1),
                output: long,
            }],
            &["a.py".to_owned()],
        );
        assert!(reason.contains("$ ruff check (exit code 1)"));
        assert!(reason.contains("line 399"));
        assert!(!reason.contains("line 3\n"));
        assert!(reason.contains("the 1 file edited in this session (a.py)"));
        assert!(reason.chars().count() < 2_000);
    }
}
