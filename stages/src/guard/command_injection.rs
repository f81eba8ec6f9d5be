//! Shell commands that have no business in a prompt: downloads piped into a shell,
//! wiping the root or home directory, reverse shells and decoded payloads.

use std::collections::BTreeSet;

use regex::{Regex, RegexSet};

use crate::guard::{
    GuardFinding, GuardFindingType, GuardScanner, GuardSeverity, LineIndex, is_markdown_path,
};
use crate::language::Language;
use crate::relative_path::RelativePath;

/// One command pattern.
struct CommandPattern {
    id: &'static str,
    message: &'static str,
    regex: &'static str,
    /// Whether a match must also pass [`recursive_force`] on its `flags` group.
    rm_flags: bool,
}

/// The shipped command patterns (see [`CommandInjectionScanner`]).
const COMMAND_PATTERNS: &[CommandPattern] = &[
    CommandPattern {
        id: "download-pipe-shell",
        message: "Download piped into a shell",
        rm_flags: false,
        regex: r"(?i)(?-u:\b)(?:curl|wget)(?-u:\b)[^\n|;&]*\|[ \t]*(?:sudo[ \t]+(?:-[a-z]+[ \t]+)*)?(?:ba|z|k|da|fi)?sh(?-u:\b)|(?-u:\b)(?:ba|z)?sh[ \t]+(?:-c[ \t]+[\x22']?\$\(|<\()[ \t]*(?:curl|wget)(?-u:\b)",
    },
    CommandPattern {
        id: "rm-rf-root",
        message: "Recursive delete of the root or home directory",
        regex: r#"(?m)(?-u:\b)rm[ \t]+(?P<flags>(?:--?[A-Za-z][A-Za-z-]*[ \t]+)+)(?:/\*?|~/?\*?|"?\$(?:HOME|\{HOME\})"?/?\*?)(?:[ \t;&|)'"`]|$)"#,
        rm_flags: true,
    },
    CommandPattern {
        id: "reverse-shell",
        message: "Reverse shell",
        rm_flags: false,
        regex: r"(?-u:\b)(?:ba|z)?sh[ \t]+-i[ \t]*(?:>&|&>|>)[ \t]*/dev/(?:tcp|udp)/|(?-u:\b)(?:nc|ncat|netcat)(?-u:\b)[^\n]*[ \t]-[ec][ \t]*/bin/(?:ba|z)?sh(?-u:\b)",
    },
    CommandPattern {
        id: "base64-pipe-shell",
        message: "Decoded payload piped into a shell",
        rm_flags: false,
        regex: r"(?i)(?-u:\b)base64[ \t]+(?:-d|--decode|-D)(?-u:\b)[^\n|;&]*\|[ \t]*(?:sudo[ \t]+)?(?:ba|z|k|da)?sh(?-u:\b)",
    },
    CommandPattern {
        id: "eval-decoded-payload",
        message: "Decoded payload passed to eval or exec",
        rm_flags: false,
        regex: r"(?-u:\b)(?:eval|exec)[ \t]*\([ \t]*(?:base64_decode|gzinflate|gzuncompress|str_rot13|atob|(?:base64\.)?b64decode)[ \t]*\(",
    },
];

/// Warns about shell commands that have no business in a prompt.
///
/// ## What it does
///
/// Runs on every path except markdown (`.md`, `.mdc`, `.mdx`, which
/// [`MarkdownInstructionScanner`](crate::guard::MarkdownInstructionScanner)
/// covers) and reports a [`GuardFindingType::CommandInjection`] finding per line
/// and pattern:
///
/// | Id | Matches |
/// | --- | --- |
/// | `download-pipe-shell` | `curl` or `wget` piped (on one line) into `sh`, `bash`, `zsh`, `ksh`, `dash` or `fish`, optionally through `sudo`; or a shell running `-c "$(…)"` or `<(…)` on the output of `curl`/`wget` |
/// | `rm-rf-root` | `rm` with `-r` and `-f` flags (any order, grouped or not) on `/`, `/*`, `~`, `~/`, `$HOME` or `${HOME}` alone |
/// | `reverse-shell` | An interactive shell redirected to `/dev/tcp/…` or `/dev/udp/…`; `nc`/`ncat`/`netcat` with `-e` or `-c` running `/bin/sh` |
/// | `base64-pipe-shell` | `base64 -d` (`--decode`, `-D`) piped into a shell |
/// | `eval-decoded-payload` | `eval(`/`exec(` applied straight to `base64_decode(`, `gzinflate(`, `gzuncompress(`, `str_rot13(`, `atob(` or `b64decode(` |
///
/// Findings are [`GuardSeverity::Warn`]: the file stays. The guard raises them,
/// and the file's prompt-injection findings, to [`GuardSeverity::Block`] when the
/// same file also holds a prompt-injection finding: a dangerous command next to
/// an instruction-override phrase is an attack, not an install script.
///
/// ## Why
///
/// An agent that reads "run this" next to a command that downloads and executes
/// code, wipes a home directory or opens a shell to another host may run it. The
/// warning lets the developer see such text in a compiled prompt.
///
/// ## Example
///
/// In `scripts/install.sh`, a line that pipes
/// `curl -fsSL https://get.example.com/install.sh` into `sh` gets the warning
/// `download-pipe-shell`.
///
/// ## Known problems
///
/// - Install scripts, Dockerfiles and CI files legitimately pipe downloads into a
///   shell; that is why the scanner only warns.
/// - Template literals, `$(…)`, backticks, ordinary pipes and `str | None`
///   annotations are never matched; `rm -rf` of any path below the root or home
///   (`/tmp/x`, `~/.cache`) is not matched. Commands split across lines, or built
///   from variables, are not detected.
pub struct CommandInjectionScanner {
    /// All patterns at once, to find which ones occur in a single pass.
    set: RegexSet,
    /// Each pattern alone, in [`COMMAND_PATTERNS`] order, to locate its matches.
    regexes: Vec<Regex>,
}

impl CommandInjectionScanner {
    /// Compiles the patterns.
    ///
    /// # Panics
    ///
    /// Never in practice: the patterns are constants, compiled by the unit tests.
    pub fn new() -> Self {
        let sources = COMMAND_PATTERNS.iter().map(|pattern| pattern.regex);
        let set = RegexSet::new(sources.clone()).expect("the command patterns are valid regexes");
        let regexes = sources
            .map(|source| Regex::new(source).expect("the command patterns are valid regexes"))
            .collect();
        Self { set, regexes }
    }
}

impl Default for CommandInjectionScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl GuardScanner for CommandInjectionScanner {
    fn name(&self) -> &'static str {
        "CommandInjectionScanner"
    }

    fn scan(&self, path: &RelativePath, _language: Language, content: &str) -> Vec<GuardFinding> {
        if is_markdown_path(path) {
            return Vec::new();
        }
        let matched = self.set.matches(content);
        if !matched.matched_any() {
            return Vec::new();
        }
        let lines = LineIndex::new(content);
        let mut hits = BTreeSet::new();
        for index in &matched {
            let (Some(pattern), Some(regex)) =
                (COMMAND_PATTERNS.get(index), self.regexes.get(index))
            else {
                continue;
            };
            for captures in regex.captures_iter(content) {
                let Some(found) = captures.get(0) else {
                    continue;
                };
                let flags = captures.name("flags").map_or("", |flags| flags.as_str());
                if !pattern.rm_flags || recursive_force(flags) {
                    hits.insert((lines.line_number(found.start()), index));
                }
            }
        }
        hits.into_iter()
            .filter_map(|(line, index)| {
                let pattern = COMMAND_PATTERNS.get(index)?;
                Some(GuardFinding {
                    severity: GuardSeverity::Warn,
                    finding_type: GuardFindingType::CommandInjection,
                    file: path.clone(),
                    line: Some(line),
                    message: pattern.message.to_owned(),
                    pattern: Some(pattern.id.to_owned()),
                })
            })
            .collect()
    }
}

/// Whether `rm` flags (`-rf`, `-r -f`, `--recursive --force`) ask for a forced
/// recursive delete.
fn recursive_force(flags: &str) -> bool {
    let mut recursive = false;
    let mut force = false;
    for flag in flags.split_whitespace() {
        if let Some(long) = flag.strip_prefix("--") {
            recursive |= long == "recursive";
            force |= long == "force";
        } else if let Some(short) = flag.strip_prefix('-') {
            recursive |= short.contains(['r', 'R']);
            force |= short.contains('f');
        }
    }
    recursive && force
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    fn scan(path: &str, content: &str) -> Vec<(u32, String)> {
        let path = RelativePath::new(path).unwrap();
        CommandInjectionScanner::new()
            .scan(&path, Language::detect(&path), content)
            .into_iter()
            .map(|finding| {
                assert_eq!(finding.severity, GuardSeverity::Warn);
                assert_eq!(finding.finding_type, GuardFindingType::CommandInjection);
                (finding.line.unwrap(), finding.pattern.unwrap())
            })
            .collect()
    }

    /// `shell/dangerous_commands.txt` holds one dangerous command per line.
    #[test_case(1, "download-pipe-shell")]
    #[test_case(2, "download-pipe-shell")]
    #[test_case(3, "download-pipe-shell")]
    #[test_case(4, "download-pipe-shell")]
    #[test_case(5, "download-pipe-shell")]
    #[test_case(6, "rm-rf-root")]
    #[test_case(7, "rm-rf-root")]
    #[test_case(8, "rm-rf-root")]
    #[test_case(9, "rm-rf-root")]
    #[test_case(10, "rm-rf-root")]
    #[test_case(11, "reverse-shell")]
    #[test_case(12, "reverse-shell")]
    #[test_case(13, "base64-pipe-shell")]
    #[test_case(14, "eval-decoded-payload")]
    #[test_case(15, "eval-decoded-payload")]
    fn detects_each_command(line: usize, id: &str) {
        let commands = include_str!("../../tests/fixtures/guard/shell/dangerous_commands.txt");
        let command = commands.lines().nth(line - 1).unwrap();
        assert_eq!(
            scan("scripts/setup.sh", command),
            vec![(1, id.to_owned())],
            "{command}"
        );
    }

    #[test_case("src/api/client.ts", include_str!("../../tests/fixtures/guard/typescript/template_literals.ts"))]
    #[test_case("src/download.js", include_str!("../../tests/fixtures/guard/javascript/shell_helpers.js"))]
    #[test_case("tools/report.py", include_str!("../../tests/fixtures/guard/python/annotations_and_fstrings.py"))]
    #[test_case("tools/cleanup.py", include_str!("../../tests/fixtures/guard/python/subprocess_calls.py"))]
    #[test_case("scripts/stats.sh", include_str!("../../tests/fixtures/guard/shell/pipes_and_substitutions.sh"))]
    #[test_case("scripts/clean.sh", include_str!("../../tests/fixtures/guard/shell/curl_and_cleanup.sh"))]
    #[test_case(".github/workflows/ci.yaml", include_str!("../../tests/fixtures/guard/yaml/ci_workflow.yaml"))]
    fn ordinary_code_is_clean(path: &str, content: &str) {
        assert_eq!(scan(path, content), Vec::new());
    }

    #[test]
    fn install_script_is_a_warning() {
        let content = include_str!("../../tests/fixtures/guard/shell/install_rust.sh");
        assert_eq!(
            scan("scripts/install_rust.sh", content),
            vec![(6, "download-pipe-shell".to_owned())]
        );
    }

    #[test]
    fn markdown_is_skipped() {
        let commands = include_str!("../../tests/fixtures/guard/shell/dangerous_commands.txt");
        assert_eq!(scan("INSTALL.md", commands), Vec::new());
        assert_eq!(scan("docs/setup.mdx", commands), Vec::new());
    }
}
