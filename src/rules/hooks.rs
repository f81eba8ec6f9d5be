//! Hook registrations of the editor settings files, and the hooks that do
//! one piece of work twice.
//!
//! A registration runs aic when its command line calls `aic hook …` or
//! `aic compile …` (the program's file name `aic`, `aic.exe`, `aic-<name>`,
//! in exec form — `command` plus `args` — or anywhere in a shell line), or
//! when it runs a script of the project or of the user's home that does
//! (`.claude/hooks/context.sh`, `python "$CLAUDE_PROJECT_DIR"/hooks/x.py`).
//! Its *work* is what aic does there: `context` (the prompt's context, from
//! `aic compile` or a handler with no check) or the check a gate handler
//! names (`aic hook claude PreToolUse no-verify`). Two registrations of one
//! event doing the same work inject or check twice.
//!
//! Left out: scripts outside the project and the home directory, scripts
//! that call aic through another script or a shell function, and commands
//! assembled at run time.

use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

use crate::rules::{Finding, Place, Severity};

/// The most bytes of a hook script read to look for an aic call.
const SCRIPT_MAX_BYTES: u64 = 256 * 1024;

/// One hook handler of an editor settings file.
#[derive(Clone, Debug)]
pub(super) struct Registration {
    /// The event, as the editor names it.
    event: String,
    /// The tools or sources it applies to (`matcher`); `None` for all.
    matcher: Option<String>,
    /// The command line as written (`command`, then any `args`).
    shown: String,
    /// Its words: `command` and `args` in exec form, else the shell line cut
    /// at blanks, quotes and operators.
    words: Vec<String>,
    /// Its arguments as the shell passes them (quotes removed:
    /// `"$CLAUDE_PROJECT_DIR"/x.sh` is one argument), where a script path is
    /// looked for.
    arguments: Vec<String>,
    /// Where it is registered.
    place: Place,
    /// The project root the editor runs the command in.
    root: PathBuf,
    /// The user's home directory, for `~` and `$HOME`.
    home: Option<PathBuf>,
}

/// What a registration does with aic.
#[derive(Clone, Debug, PartialEq, Eq)]
enum AicCall {
    /// Not aic.
    None,
    /// aic, called by the command line itself.
    Direct { work: String },
    /// aic, called by the script the command runs, at this place.
    Script { work: String, call: Place },
}

impl AicCall {
    fn work(&self) -> Option<&str> {
        match self {
            Self::None => None,
            Self::Direct { work } | Self::Script { work, .. } => Some(work),
        }
    }
}

/// The registrations of an editor settings file shown as `path`:
/// `{"hooks": {"Event": [{"hooks": [{"command": "…", "args": […]}]}]}}`
/// (Claude Code, Gemini CLI) or `{"hooks": {"event": [{"command": "…"}]}}`
/// (Cursor). `root` and `home` are where the commands' relative paths, `~`
/// and `$CLAUDE_PROJECT_DIR` lead.
pub(super) fn registrations(
    path: &str,
    text: &str,
    root: &Path,
    home: Option<&Path>,
) -> Vec<Registration> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let Some(events) = value.get("hooks").and_then(|h| h.as_object()) else {
        return Vec::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut after = 0;
    let mut out = Vec::new();
    for (event, entries) in events {
        let mut handlers = Vec::new();
        for entry in entries.as_array().into_iter().flatten() {
            // A matcher group's handlers share its matcher.
            let matcher = entry
                .get("matcher")
                .and_then(|m| m.as_str())
                .filter(|m| !m.is_empty() && *m != "*");
            handlers.push((entry, matcher));
            handlers.extend(
                entry
                    .get("hooks")
                    .and_then(|h| h.as_array())
                    .into_iter()
                    .flatten()
                    .map(|handler| (handler, matcher)),
            );
        }
        for (handler, matcher) in handlers {
            let Some(command) = handler.get("command").and_then(|c| c.as_str()) else {
                continue;
            };
            let args: Vec<String> = handler
                .get("args")
                .and_then(|a| a.as_array())
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str().map(str::to_owned))
                .collect();
            let (shown, words, arguments) = if handler.get("args").is_some() {
                let mut words = vec![command.to_owned()];
                words.extend(args);
                (words.join(" "), words.clone(), words)
            } else {
                let arguments = shlex::split(command).unwrap_or_else(|| shell_words(command));
                (command.to_owned(), shell_words(command), arguments)
            };
            // Handlers are in document order (`preserve_order`): the next
            // line naming the command after the previous handler's is this
            // one's, so exec-form handlers of one binary get their own lines.
            let escaped = json_escaped(command);
            let names = |l: &str| l.contains(command) || l.contains(&escaped);
            let line = lines
                .iter()
                .skip(after)
                .position(|l| names(l))
                .map(|i| after + i + 1)
                .or_else(|| lines.iter().position(|l| names(l)).map(|i| i + 1))
                .unwrap_or(1);
            after = line;
            out.push(Registration {
                event: event.clone(),
                matcher: matcher.map(str::to_owned),
                shown,
                words,
                arguments,
                place: Place {
                    path: path.to_owned(),
                    line,
                },
                root: root.to_path_buf(),
                home: home.map(Path::to_path_buf),
            });
        }
    }
    out
}

fn json_escaped(text: &str) -> String {
    serde_json::to_string(text)
        .unwrap_or_default()
        .trim_matches('"')
        .to_owned()
}

/// Hooks registered twice: the same command for the same event (in one file
/// or across the project and user levels), or two handlers of one event that
/// do the same aic work — two aic handlers, or an aic handler beside a script
/// that calls aic itself. Handlers whose matchers differ (`Edit` and
/// `Write`) are not compared; a handler without one is compared with all.
pub(super) fn doubled_hooks(registrations: &[Registration]) -> Vec<Finding> {
    let calls: Vec<AicCall> = registrations.iter().map(aic_call).collect();
    let mut findings = Vec::new();
    for (i, first) in registrations.iter().enumerate() {
        for (j, second) in registrations.iter().enumerate().skip(i + 1) {
            // Two matchers that differ are taken to select different
            // tools (`Edit` and `Write`); no matcher selects every one.
            if first.event != second.event
                || (first.matcher.is_some()
                    && second.matcher.is_some()
                    && first.matcher != second.matcher)
            {
                continue;
            }
            let event = &first.event;
            if first.shown.trim() == second.shown.trim() {
                findings.push(Finding {
                    severity: Severity::Warn,
                    code: "doubled-hook",
                    message: format!(
                        "`{}` is registered twice for {event}, so it runs twice on every event: remove one",
                        first.shown
                    ),
                    places: vec![first.place.clone(), second.place.clone()],
                });
                continue;
            }
            let (Some(work), Some(other_work)) = (calls[i].work(), calls[j].work()) else {
                continue;
            };
            if work != other_work {
                continue;
            }
            findings.push(doubled_aic(
                event,
                work,
                (first, &calls[i]),
                (second, &calls[j]),
            ));
        }
    }
    findings
}

/// The finding for two handlers of `event` doing the same aic `work`; the
/// handler that calls aic itself comes first (the one to keep).
fn doubled_aic(
    event: &str,
    work: &str,
    one: (&Registration, &AicCall),
    other: (&Registration, &AicCall),
) -> Finding {
    let ((kept, kept_call), (extra, extra_call)) =
        if matches!(one.1, AicCall::Script { .. }) && matches!(other.1, AicCall::Direct { .. }) {
            (other, one)
        } else {
            (one, other)
        };
    let what = if work == "context" {
        "inject aic's context".to_owned()
    } else {
        format!("run aic's `{work}` check")
    };
    let mut places: Vec<Place> = Vec::new();
    for (registration, call) in [(kept, kept_call), (extra, extra_call)] {
        for place in std::iter::once(&registration.place).chain(match call {
            AicCall::Script { call, .. } => Some(call),
            _ => None,
        }) {
            if !places.contains(place) {
                places.push(place.clone());
            }
        }
    }
    let message = match (kept_call, extra_call) {
        (AicCall::Script { call: a, .. }, AicCall::Script { call: b, .. }) => format!(
            "`{}` and `{}` run scripts that both call aic for {event} ({}:{}, {}:{}) and {what} twice on every event: keep one",
            kept.shown, extra.shown, a.path, a.line, b.path, b.line
        ),
        (_, AicCall::Script { call, .. }) => format!(
            "`{}` runs `{}`, which calls aic (line {}) for {event} beside the aic handler `{}`: both {what}, twice on every event; keep one",
            extra.shown, call.path, call.line, kept.shown
        ),
        _ => format!(
            "two aic handlers for {event} (`{}` and `{}`) {what} twice: keep one (`aic install` writes one)",
            kept.shown, extra.shown
        ),
    };
    Finding {
        severity: Severity::Warn,
        code: "doubled-hook",
        message,
        places,
    }
}

/// What `registration` does with aic: its own words first, else the script
/// it names.
fn aic_call(registration: &Registration) -> AicCall {
    if let Some(work) = aic_work(&registration.words) {
        return AicCall::Direct { work };
    }
    for word in &registration.arguments {
        let Some((full, shown)) = script_path(word, registration) else {
            continue;
        };
        let Some(text) = read_script(&full) else {
            continue;
        };
        for (index, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with('#') || code.starts_with("//") {
                continue;
            }
            if let Some(work) = aic_work(&shell_words(code)) {
                return AicCall::Script {
                    work,
                    call: Place {
                        path: shown,
                        line: index + 1,
                    },
                };
            }
        }
    }
    AicCall::None
}

/// The aic work of a command's words: `context` for `aic compile …` and
/// `aic hook <editor> <event>`, the check for `aic hook <editor> <event>
/// <check>`; `None` when no word is an aic program followed by `hook` or
/// `compile`.
fn aic_work(words: &[String]) -> Option<String> {
    let at = words.iter().position(|word| is_aic_program(word))?;
    let rest = &words[at + 1..];
    match rest.first().map(String::as_str) {
        Some("compile") => Some("context".to_owned()),
        Some("hook") => {
            let check = rest.get(3).filter(|w| {
                !w.starts_with('-') && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
            Some(check.map_or_else(|| "context".to_owned(), Clone::clone))
        }
        _ => None,
    }
}

/// Whether `word` runs aic: its file name is `aic`, `aic.exe` or `aic-<name>`
/// (`aic-launch`, a versioned copy).
fn is_aic_program(word: &str) -> bool {
    let name = word.rsplit(['/', '\\']).next().unwrap_or(word);
    name == "aic"
        || name == "aic.exe"
        || name
            .strip_prefix("aic-")
            .is_some_and(|rest| !rest.is_empty())
}

/// The words of a shell or script line, cut at blanks, quotes and the
/// characters that separate commands and arguments (`;&|()<>` and `` ` ``,
/// and `,[]` for a Python or JavaScript argument list).
fn shell_words(line: &str) -> Vec<String> {
    line.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '`' | ';' | '&' | '|' | '(' | ')' | '<' | '>' | ',' | '[' | ']'
            )
    })
    .filter(|word| !word.is_empty())
    .map(str::to_owned)
    .collect()
}

/// The file `word` names when it looks like a script path (it holds a `/`
/// or ends in a script extension), with `$CLAUDE_PROJECT_DIR`,
/// `$GEMINI_PROJECT_DIR`, `$HOME` and `~` expanded and a relative path taken
/// from the project root; `None` unless the file lies inside the project or
/// the home directory. Also the path shown for it: project-relative, or
/// under `~/`.
fn script_path(word: &str, registration: &Registration) -> Option<(PathBuf, String)> {
    if word.starts_with('-') || word.contains("://") {
        return None;
    }
    let scripted = Path::new(word)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| {
            matches!(
                e,
                "sh" | "bash" | "zsh" | "py" | "js" | "mjs" | "cjs" | "ts" | "rb" | "pl"
            )
        });
    if !word.contains('/') && !scripted {
        return None;
    }
    let root = registration.root.as_path();
    let home = registration.home.as_deref();
    let mut full = None;
    for variable in ["CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"] {
        for written in [format!("${variable}"), format!("${{{variable}}}")] {
            if let Some(rest) = word.strip_prefix(written.as_str()) {
                full = Some(root.join(rest.trim_start_matches('/')));
            }
        }
    }
    if full.is_none()
        && let Some(home) = home
    {
        for written in ["~/", "$HOME/", "${HOME}/"] {
            if let Some(rest) = word.strip_prefix(written) {
                full = Some(home.join(rest));
            }
        }
    }
    let full = full.unwrap_or_else(|| root.join(word));
    if full.components().any(|c| matches!(c, Component::ParentDir)) {
        return None;
    }
    let shown = if let Ok(relative) = full.strip_prefix(root) {
        relative.to_string_lossy().replace('\\', "/")
    } else {
        let relative = full.strip_prefix(home?).ok()?;
        format!("~/{}", relative.to_string_lossy().replace('\\', "/"))
    };
    Some((full, shown))
}

/// The first [`SCRIPT_MAX_BYTES`] of a script, when it is a readable file.
fn read_script(full: &Path) -> Option<String> {
    if !full.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    fs_err::File::open(full)
        .ok()?
        .take(SCRIPT_MAX_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        shell_words(line)
    }

    #[test]
    fn aic_work_reads_the_call_in_its_forms() {
        assert_eq!(
            aic_work(&words("aic hook claude UserPromptSubmit")).as_deref(),
            Some("context")
        );
        assert_eq!(
            aic_work(&words(
                "/usr/local/bin/aic hook claude PreToolUse no-verify"
            ))
            .as_deref(),
            Some("no-verify")
        );
        assert_eq!(
            aic_work(&words(
                "\"${CLAUDE_PLUGIN_ROOT}/bin/aic-launch\" hook claude SessionStart"
            ))
            .as_deref(),
            Some("context")
        );
        assert_eq!(
            aic_work(&words("CONTEXT=$(aic compile \"$PROMPT\" --budget 4000)")).as_deref(),
            Some("context")
        );
        assert_eq!(
            aic_work(&words("subprocess.run([\"aic\", \"compile\", prompt])")).as_deref(),
            Some("context")
        );
        assert_eq!(aic_work(&words("aic --version")), None);
        assert_eq!(aic_work(&words("mosaic compile x")), None);
        assert_eq!(aic_work(&words("npx prettier --write .")), None);
    }
}
