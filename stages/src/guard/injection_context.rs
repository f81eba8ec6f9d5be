//! The context of a prompt-injection hit: whether the phrase is quoted in a
//! document about attacks, held in a string literal of a test, mentioned in a
//! changelog or part of a chat template. Such hits are excused: the file is kept
//! with a warning instead of being blocked.

use std::sync::OnceLock;

use regex::Regex;

use crate::guard::LineIndex;
use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::select::file_kind::FileKind as SelectFileKind;

/// How many lines before and after a hit are searched for words that show the
/// text talks *about* prompt injection.
const ABOUT_WINDOW: u32 = 10;

/// Words that show a text discusses attacks rather than making one: "prompt
/// injection", "jailbreak", "attack", … in the main languages. "Example" alone
/// is not one of them: an attack can call itself an example.
fn about_injection() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    crate::work::once(&PATTERN, || {
        Regex::new(
        r"(?i)injection|jailbreak|attack|malicious|adversarial|exploit|red[ -]team|sanitiz|sanitis|inyecci|injektion|injeção|injecao|注入|インジェクション|инъекц|атак",
    )
    .expect("the about-injection pattern is a valid regex")
    })
}

/// Words that show an instruction is aimed at a model rather than at a human
/// reader, as data (`stages/rules/injection/aimed-at-model.txt`: one
/// case-insensitive regex per line).
fn aimed_at_model() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    crate::work::once(&PATTERN, || {
        let alternatives: Vec<String> = include_str!("../../rules/injection/aimed-at-model.txt")
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(|line| format!("(?:{line})"))
            .collect();
        Regex::new(&format!("(?i){}", alternatives.join("|")))
            .expect("the aimed-at-model words are valid regexes")
    })
}

/// What kind of file a hit is in, as far as excusing it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// A changelog or release notes (`CHANGELOG.md`, `NEWS`, `changelog/…`).
    Changelog,
    /// A test file or test data (`tests/…`, `test_*.py`, `*.spec.ts`, `fixtures/…`).
    Test,
    /// Source code.
    Code,
    /// Anything else: prose, configuration, data.
    Document,
}

/// Why a hit is excused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Excuse {
    /// Quoted in a text that talks about injection.
    QuotedAbout,
    /// A string literal in a test file.
    TestLiteral,
    /// A changelog entry that quotes or discusses the phrase.
    Changelog,
    /// Chat-template markup in a template.
    Template,
}

/// The context of one file, built once per file with hits.
pub(crate) struct InjectionContext<'a> {
    kind: FileKind,
    code: bool,
    content: &'a str,
    template: bool,
    lines: &'a LineIndex<'a>,
    /// Per one-based line (index `line - 1`): inside a fenced code block.
    fenced: Vec<bool>,
}

impl<'a> InjectionContext<'a> {
    /// The context of `content` at `path`; `lines` indexes `content`.
    pub(crate) fn new(
        path: &RelativePath,
        language: Language,
        content: &'a str,
        lines: &'a LineIndex<'a>,
    ) -> Self {
        let kind = file_kind(path, language);
        let template = is_template(path, content);
        let fenced = if language.is_code() {
            Vec::new()
        } else {
            fenced_lines(lines)
        };
        Self {
            kind,
            code: language.is_code(),
            content,
            template,
            lines,
            fenced,
        }
    }

    /// The kind of file.
    pub(crate) fn kind(&self) -> FileKind {
        self.kind
    }

    /// The text of one-based line `number`.
    pub(crate) fn line(&self, number: u32) -> &'a str {
        self.lines.line(number)
    }

    /// Why the hit starting at byte `start` of the content is excused, if it is.
    /// `markup` is true for chat-template tokens (`im_start` between pipes, `[INST]`).
    pub(crate) fn excuse(&self, start: usize, markup: bool) -> Option<Excuse> {
        if markup && self.template {
            return Some(Excuse::Template);
        }
        let number = self.lines.line_number(start);
        let quoted = self.is_quoted(number, start);
        match self.kind {
            FileKind::Test if quoted => Some(Excuse::TestLiteral),
            FileKind::Changelog if quoted || self.talks_about(number, 0) => Some(Excuse::Changelog),
            _ if quoted && self.talks_about(number, ABOUT_WINDOW) => Some(Excuse::QuotedAbout),
            _ => None,
        }
    }

    /// Whether line `number` of a document is in a fenced code block or a
    /// blockquote: an example set apart from the prose.
    pub(crate) fn in_example_block(&self, number: u32) -> bool {
        !self.code
            && (self.lines.line(number).trim_start().starts_with('>')
                || self
                    .fenced
                    .get((number as usize).saturating_sub(1))
                    .copied()
                    .unwrap_or(false))
    }

    /// Whether the hit starting at `start` on line `number` is quoted: between
    /// quotes or backticks on its line, on a blockquote line or in a fenced code
    /// block.
    pub(crate) fn is_quoted(&self, number: u32, start: usize) -> bool {
        let range = self.lines.line_range(number);
        let line = self.lines.line(number);
        if !self.code {
            if line.trim_start().starts_with('>') {
                return true;
            }
            let index = (number as usize).saturating_sub(1);
            if self.fenced.get(index).copied().unwrap_or(false) {
                return true;
            }
        }
        let before = line
            .get(..start.saturating_sub(range.start).min(line.len()))
            .unwrap_or_default();
        // An open quote before the hit: the closing one may be after it or on a
        // later line (a quotation wrapped in prose).
        let odd = |text: &str, quote: char| quote_count(text, quote) % 2 == 1;
        let straight: &[char] = if self.code {
            &['"', '`', '\'']
        } else {
            &['"', '`']
        };
        if straight.iter().any(|&quote| odd(before, quote)) {
            return true;
        }
        if !self.code && self.in_quoting_element(number, before) {
            return true;
        }
        [
            ('“', '”'),
            ('«', '»'),
            ('„', '“'),
            ('「', '」'),
            ('『', '』'),
        ]
        .iter()
        .any(|&(open, close)| before.rfind(open) > before.rfind(close))
    }

    /// Whether an instruction on line `number` is aimed at the model: its line,
    /// or the next line that is not blank (a label such as `New instructions` ends
    /// its line), names the model or its setup (`AI`, `assistant`, `system
    /// prompt`, `your instructions`), lifts its limits (`without
    /// restrictions`, `unfiltered`), hides something from the user, reaches
    /// for secrets (`print the API keys`), takes over its answers (`reply only
    /// with`) or asks for blanket compliance (`approve everything`). A README
    /// welcoming a new contributor, or a rule it sets for the maintainer of a
    /// module, speaks to a human reader and is not.
    ///
    /// The bytes `hit` of the content (the phrase being judged) are left out
    /// of its line, so that a phrase naming "the previous instructions" is
    /// not aimed at the model by its own words; an empty range leaves the
    /// line whole.
    pub(crate) fn aimed_at_model_besides(&self, number: u32, hit: std::ops::Range<usize>) -> bool {
        let range = self.lines.line_range(number);
        let line = self.lines.line(number);
        let cut_start = hit.start.clamp(range.start, range.end) - range.start;
        let cut_end = hit.end.clamp(range.start, range.end) - range.start;
        let aimed = match (line.get(..cut_start), line.get(cut_end..)) {
            (Some(before), Some(after)) if cut_start < cut_end => {
                aimed_at_model().is_match(before) || aimed_at_model().is_match(after)
            }
            _ => aimed_at_model().is_match(line),
        };
        if aimed {
            return true;
        }
        (number + 1..=self.lines.line_count())
            .map(|at| self.lines.line(at))
            .find(|line| !line.trim().is_empty())
            .is_some_and(|line| aimed_at_model().is_match(line))
    }

    /// Whether line `number` of a code file is prose inside a block that an
    /// earlier line opened: a block comment (`/*`) or a docstring (a
    /// triple-quoted string that starts a statement, not one assigned or
    /// passed: `"""` at the start of its line). Quotes on such a line are
    /// the prose's own, not a string literal's.
    pub(crate) fn in_prose_block(&self, number: u32) -> bool {
        if !self.code {
            return false;
        }
        let above = self
            .content
            .get(..self.lines.line_range(number).start)
            .unwrap_or_default();
        if above.rfind("/*") > above.rfind("*/") {
            return true;
        }
        ["\"\"\"", "'''"].iter().any(|quotes| {
            above.matches(quotes).count() % 2 == 1
                && above.rfind(quotes).is_some_and(|open| {
                    let line_start = above[..open].rfind('\n').map_or(0, |at| at + 1);
                    above[line_start..open]
                        .trim_start()
                        .trim_start_matches(['r', 'u', 'b', 'R', 'U', 'B'])
                        .is_empty()
                })
        })
    }

    /// Whether the lines within `window` of line `number` talk about injection.
    /// A word inside an address (`https://attacker.example/…`,
    /// `ops@attacker.test`, `exploit.example.com`) says nothing about the text.
    pub(crate) fn talks_about(&self, number: u32, window: u32) -> bool {
        let first = number.saturating_sub(window).max(1);
        let last = number.saturating_add(window).min(self.lines.line_count());
        (first..=last).any(|at| {
            let line = self.lines.line(at);
            about_injection()
                .find_iter(line)
                .any(|found| !in_address(line, found.start()))
        })
    }

    /// Whether the text `before` a hit on line `number` (and the lines just
    /// above it) has an HTML quoting element open: `<q>`, `<blockquote>`,
    /// `<code>`, `<pre>`, `<samp>`, `<kbd>` — a quotation in an HTML page.
    fn in_quoting_element(&self, number: u32, before: &str) -> bool {
        if !before.contains('<')
            && !(1..=QUOTE_LOOKBACK)
                .any(|back| number > back && self.lines.line(number - back).contains('<'))
        {
            return false;
        }
        let first = number.saturating_sub(QUOTE_LOOKBACK).max(1);
        let mut text = String::new();
        for at in first..number {
            text.push_str(self.lines.line(at));
            text.push('\n');
        }
        text.push_str(before);
        let text = text.to_ascii_lowercase();
        ["q", "blockquote", "code", "pre", "samp", "kbd"]
            .iter()
            .any(|tag| {
                let open = [format!("<{tag}>"), format!("<{tag} ")]
                    .iter()
                    .filter_map(|open| text.rfind(open.as_str()))
                    .max();
                let close = text.rfind(&format!("</{tag}>"));
                open.is_some_and(|open| close.is_none_or(|close| close < open))
            })
    }
}

/// How many lines above a hit an open HTML quoting element is looked for.
const QUOTE_LOOKBACK: u32 = 5;

/// How many times `quote` opens or closes a quotation in `text`: an
/// apostrophe between two letters or digits (`don't`, `l'assistant`) is
/// none.
fn quote_count(text: &str, quote: char) -> usize {
    if quote != '\'' {
        return text.matches(quote).count();
    }
    let chars: Vec<char> = text.chars().collect();
    chars
        .iter()
        .enumerate()
        .filter(|&(index, &c)| {
            c == quote
                && !(index > 0
                    && chars[index - 1].is_alphanumeric()
                    && chars
                        .get(index + 1)
                        .is_some_and(|next| next.is_alphanumeric()))
        })
        .count()
}

/// Whether byte `at` of `line` is inside an address: a URL, an e-mail
/// address or a host name (a word with a dot and no spaces, such as
/// `attacker.example`).
fn in_address(line: &str, at: usize) -> bool {
    let start = line
        .get(..at)
        .and_then(|before| before.rfind(|c: char| c.is_whitespace() || "\"'`(<[".contains(c)))
        .map_or(0, |space| space + 1);
    let end = line
        .get(at..)
        .and_then(|after| after.find(|c: char| c.is_whitespace() || "\"'`)>]".contains(c)))
        .map_or(line.len(), |space| at + space);
    let token = line
        .get(start..end)
        .unwrap_or_default()
        .trim_end_matches(['.', ',', ';', ':']);
    token.contains("://")
        || token.contains('@')
        || token.split('.').filter(|part| !part.is_empty()).count() >= 2
            && token
                .rsplit('.')
                .next()
                .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()))
}

/// The kind of the file at `path`, from the selector's [`SelectFileKind`]:
/// changelogs, tests and their data, code, and everything else.
fn file_kind(path: &RelativePath, language: Language) -> FileKind {
    match SelectFileKind::of(path, language) {
        SelectFileKind::Changelog => FileKind::Changelog,
        SelectFileKind::Test | SelectFileKind::Fixture => FileKind::Test,
        _ if language.is_code() => FileKind::Code,
        _ => FileKind::Document,
    }
}

/// Whether the file is a (Jinja-style) template: a `.jinja`/`.j2` file, or one
/// holding template tags (`{% … %}`, `{{ … }}`), as chat templates do.
fn is_template(path: &RelativePath, content: &str) -> bool {
    let extension = path.extension();
    matches!(extension.as_deref(), Some("jinja" | "jinja2" | "j2"))
        || (content.contains("{%") && content.contains("%}"))
        || (content.contains("{{") && content.contains("}}"))
}

/// Per line: whether it is inside a fenced code block (```` ``` ```` or `~~~`),
/// the fence lines included.
fn fenced_lines(lines: &LineIndex<'_>) -> Vec<bool> {
    let mut fence: Option<(char, usize)> = None;
    let mut fenced = Vec::with_capacity(lines.line_count() as usize);
    for number in 1..=lines.line_count() {
        let trimmed = lines.line(number).trim_start();
        let marker = trimmed.chars().next().filter(|c| matches!(c, '`' | '~'));
        let run = marker.map_or(0, |marker| {
            trimmed.chars().take_while(|&c| c == marker).count()
        });
        match (fence, marker) {
            (None, Some(marker)) if run >= 3 => {
                fence = Some((marker, run));
                fenced.push(true);
            }
            (Some((open, length)), Some(marker)) if marker == open && run >= length => {
                fence = None;
                fenced.push(true);
            }
            (open, _) => fenced.push(open.is_some()),
        }
    }
    fenced
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    #[test_case("CHANGELOG.md", FileKind::Changelog)]
    #[test_case("docs/HISTORY.rst", FileKind::Changelog)]
    #[test_case("changelog/1234.feature.md", FileKind::Changelog)]
    #[test_case("tests/test_guard.py", FileKind::Test)]
    #[test_case("src/guard.test.ts", FileKind::Test)]
    #[test_case("src/test/java/GuardTest.java", FileKind::Test)]
    #[test_case("pkg/guard_test.go", FileKind::Test)]
    #[test_case("src/guard.rs", FileKind::Code)]
    #[test_case("docs/security.md", FileKind::Document)]
    #[test_case("contest.md", FileKind::Document)]
    fn kinds(path: &str, kind: FileKind) {
        let path = RelativePath::new(path).unwrap();
        assert_eq!(file_kind(&path, Language::detect(&path)), kind);
    }

    #[test]
    fn fences_are_tracked() {
        let content = "a\n```text\nb\n```\nc\n~~~~\nd\n~~~~\n";
        let lines = LineIndex::new(content);
        assert_eq!(
            fenced_lines(&lines),
            vec![false, true, true, true, false, true, true, true, false]
        );
    }

    fn excuse(path: &str, content: &str, needle: &str) -> Option<Excuse> {
        let path = RelativePath::new(path).unwrap();
        let lines = LineIndex::new(content);
        let judged = InjectionContext::new(&path, Language::detect(&path), content, &lines);
        let start = content.find(needle).unwrap();
        judged.excuse(start, false)
    }

    #[test_case("An attack says \"PHRASE\" to the model.\n", Some(Excuse::QuotedAbout))]
    #[test_case("An attack says `PHRASE` to the model.\n", Some(Excuse::QuotedAbout))]
    #[test_case("An attack:\n\n> PHRASE\n", Some(Excuse::QuotedAbout))]
    #[test_case("Attacks:\n\n```\nPHRASE\n```\n", Some(Excuse::QuotedAbout))]
    #[test_case("An attack says PHRASE to the model.\n", None)]
    #[test_case("A note says \"PHRASE\" to the model.\n", None)]
    fn quoted_in_a_doc_about_attacks(content: &str, expected: Option<Excuse>) {
        assert_eq!(excuse("docs/security.md", content, "PHRASE"), expected);
    }
}
