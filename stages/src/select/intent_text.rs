//! IntentText: what a pasted intent is made of.
//!
//! Agents send what the user typed or pasted: a one-line wish, a commit
//! subject, or a whole issue report with code blocks, logs and tracebacks. The
//! parts say different things:
//!
//! - the **title** (the first line, or its first sentence) and the **prose**
//!   say what the task is; only they decide the task class, so a pasted log
//!   that mentions "test" does not make a bug report a test task;
//! - **code** (fenced or indented blocks, `>>>` sessions, inline code spans)
//!   and **log** lines (error output) carry names and words of the code, at a
//!   lower weight than prose;
//! - **trace** lines are read as frames ([`crate::select::stack_trace`]), not as words;
//! - **mentions** are the names written in code form anywhere in the text —
//!   identifiers in backticks, `CamelCase`, `snake_case`, dotted paths
//!   (`pkg.sub.module`), calls (`parse_args()`), rule codes (`L031`) and
//!   quoted names in error messages — which the selector matches against file
//!   names, module paths and defined names as a signal of their own.
//!
//! Markdown headings of issue templates ("## Steps to Reproduce") are
//! structure, not subject, and are left out of the words.

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

use crate::select::stack_trace::{TraceFrame, is_trace_line, parse_frames};

/// Where in the intent a word or name was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Section {
    /// The first line or sentence.
    Title,
    /// Prose after the title.
    Prose,
    /// Inline code spans in prose.
    InlineCode,
    /// Code blocks and interactive sessions.
    Code,
    /// Error output that is not a trace frame.
    Log,
}

impl Section {
    /// How much a word of this section counts, relative to prose: the title
    /// states the task, inline code names exactly what it is about, blocks of
    /// code and logs are mostly the user's own code and noise.
    pub fn weight(self) -> f64 {
        match self {
            Self::Title => 2.0,
            Self::InlineCode => 1.5,
            Self::Prose => 1.0,
            Self::Code | Self::Log => 0.6,
        }
    }
}

/// A name written in code form.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Mention {
    /// The name as written (`parse_args`, `CliRunner`, `pkg.sub.module`).
    pub name: String,
    /// The section it was first written in (the strongest when repeated).
    pub section: Section,
}

/// An intent cut into its parts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IntentText {
    /// The title: the first line, or its first sentence when the line is long.
    pub title: String,
    /// Everything else, as `(section, text)` runs in order.
    pub parts: Vec<(Section, String)>,
    /// Frames of pasted stack traces and error locations.
    pub frames: Vec<TraceFrame>,
    /// Names written in code form, each once, in order of first appearance.
    pub mentions: Vec<Mention>,
}

/// An intent longer than this many words, or with more than one line, is read
/// section by section; a shorter one is all title.
pub const SHORT_INTENT_WORDS: usize = 40;

/// The most mentions kept from one intent.
pub const MAX_MENTIONS: usize = 64;

impl IntentText {
    /// Cuts `intent` into its parts.
    ///
    /// # Examples
    ///
    /// ```
    /// use aic_stages::select::intent_text::{IntentText, Section};
    /// let text = IntentText::parse("Schema.load drops `partial`\n\nWhen I call `schema.load(data, partial=True)` ...\n\n```\nTraceback (most recent call last):\n  File \"/venv/site-packages/marshmallow/schema.py\", line 12, in load\nValueError: boom\n```\n");
    /// assert_eq!(text.title, "Schema.load drops `partial`");
    /// assert_eq!(text.frames.len(), 1);
    /// let names: Vec<&str> = text.mentions.iter().map(|m| m.name.as_str()).collect();
    /// assert!(names.contains(&"Schema.load"));
    /// assert!(names.contains(&"partial"));
    /// assert!(text.parts.iter().any(|(s, t)| *s == Section::Log && t.contains("ValueError")));
    /// ```
    pub fn parse(intent: &str) -> Self {
        let text = intent.replace("\r\n", "\n");
        let mut lines = text
            .lines()
            .map(str::trim_end)
            .skip_while(|l| l.trim().is_empty());
        let first = lines.next().unwrap_or("").trim();
        let first = first.trim_start_matches('#').trim();
        let (title, title_rest) = split_title(first);
        let mut parts: Vec<(Section, String)> = Vec::new();
        let push = |parts: &mut Vec<(Section, String)>, section: Section, line: &str| match parts
            .last_mut()
        {
            Some((last, text)) if *last == section => {
                text.push('\n');
                text.push_str(line);
            }
            _ => parts.push((section, line.to_owned())),
        };
        if !title_rest.is_empty() {
            push(&mut parts, Section::Prose, title_rest);
        }
        let mut fence: Option<&str> = None;
        let mut previous_blank = true;
        for line in lines {
            let trimmed = line.trim_start();
            if let Some(marker) = fence {
                if trimmed.starts_with(marker) {
                    fence = None;
                } else if is_trace_line(line) {
                    // Frames are read from the whole text below.
                } else if looks_like_log(trimmed) {
                    push(&mut parts, Section::Log, line);
                } else {
                    push(&mut parts, Section::Code, line);
                }
                previous_blank = false;
                continue;
            }
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                fence = Some(&trimmed[..3]);
                previous_blank = false;
                continue;
            }
            let blank = trimmed.is_empty();
            if blank {
                previous_blank = true;
                continue;
            }
            if is_trace_line(line) {
            } else if trimmed.starts_with('#') && trimmed.trim_start_matches('#').starts_with(' ') {
                // A markdown heading: template structure, not subject.
            } else if trimmed.starts_with(">>> ")
                || trimmed.starts_with("... ")
                || trimmed.starts_with("$ ")
                || (line.starts_with("    ")
                    && (previous_blank || parts.last().is_some_and(|(s, _)| *s == Section::Code)))
            {
                push(&mut parts, Section::Code, line);
            } else if looks_like_log(trimmed) {
                push(&mut parts, Section::Log, line);
            } else {
                push(&mut parts, Section::Prose, line);
            }
            previous_blank = false;
        }
        let frames = parse_frames(&text);
        let mut mentions = Mentions::default();
        mentions.scan(title, Section::Title);
        for (section, text) in &parts {
            mentions.scan(text, *section);
        }
        Self {
            title: title.to_owned(),
            parts,
            frames,
            mentions: mentions.finish(),
        }
    }

    /// Whether the intent is long enough to be read by sections: more than one
    /// non-blank line, or more than [`SHORT_INTENT_WORDS`] words.
    pub fn is_long(&self) -> bool {
        !self.parts.is_empty()
            || !self.frames.is_empty()
            || self.title.split_whitespace().count() > SHORT_INTENT_WORDS
    }

    /// The text that says what the task is: the title and the prose (inline
    /// code spans included, as written).
    pub fn task_text(&self) -> String {
        let mut out = self.title.clone();
        for (section, text) in &self.parts {
            if *section == Section::Prose {
                out.push('\n');
                out.push_str(text);
            }
        }
        out
    }

    /// Every run of text with its section, the title first. Inline code spans
    /// are reported as [`Section::InlineCode`] runs after the prose they sit in.
    pub fn sections(&self) -> Vec<(Section, String)> {
        let mut out = vec![(Section::Title, self.title.clone())];
        for (section, text) in &self.parts {
            out.push((*section, text.clone()));
            if *section == Section::Prose {
                for span in inline_code_spans(text) {
                    out.push((Section::InlineCode, span.to_owned()));
                }
            }
        }
        out
    }
}

/// The title of a first line: the whole line when short, else its first
/// sentence (the rest is prose).
fn split_title(first: &str) -> (&str, &str) {
    if first.split_whitespace().count() <= 25 {
        return (first, "");
    }
    for (index, _) in first.match_indices(['.', '?', '!']) {
        let after = &first[index + 1..];
        if after.starts_with(' ') && index > 20 {
            return (&first[..=index], after.trim());
        }
    }
    (first, "")
}

/// Whether a line reads as error output: an exception or error line
/// (`TypeError: …`, `error[E0308]: …`, `ERROR …`), a log record with a level,
/// or a pytest `E   ` line.
fn looks_like_log(line: &str) -> bool {
    static LOG: OnceLock<Regex> = OnceLock::new();
    let log = LOG.get_or_init(|| {
        Regex::new(r"^(?:E\s{2,}|(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Warning|Fault)\b|error(?:\[\w+\])?:|warning:|panic:|(?:\[?\d{4}-\d\d-\d\d[ T][\d:.,]+\]?\s+)?\[?(?:ERROR|WARN|WARNING|INFO|DEBUG|TRACE|FATAL|CRITICAL)\]?[\s:])")
            .expect("the log pattern is a valid constant regex")
    });
    log.is_match(line)
}

/// The contents of `inline code` spans of a prose run.
fn inline_code_spans(text: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('`') else { break };
        let span = after[..close].trim();
        if !span.is_empty() && !span.contains('\n') {
            spans.push(span);
        }
        rest = &after[close + 1..];
    }
    spans
}

#[derive(Default)]
struct Mentions {
    found: Vec<Mention>,
    index: HashMap<String, usize>,
}

impl Mentions {
    fn add(&mut self, name: &str, section: Section) {
        let name = name.trim_matches('.');
        let name = ["self.", "this.", "cls."]
            .iter()
            .find_map(|prefix| name.strip_prefix(prefix))
            .unwrap_or(name);
        if name.len() < 3
            || name.len() > 120
            || self.found.len() >= MAX_MENTIONS && !self.index.contains_key(name)
        {
            return;
        }
        if let Some(&at) = self.index.get(name) {
            if section.weight() > self.found[at].section.weight() {
                self.found[at].section = section;
            }
            return;
        }
        self.index.insert(name.to_owned(), self.found.len());
        self.found.push(Mention {
            name: name.to_owned(),
            section,
        });
    }

    fn scan(&mut self, text: &str, section: Section) {
        static SPAN: OnceLock<Regex> = OnceLock::new();
        static WORD: OnceLock<Regex> = OnceLock::new();
        static QUOTED: OnceLock<Regex> = OnceLock::new();
        let span =
            SPAN.get_or_init(|| Regex::new(r"`([^`\n]{1,120})`").expect("valid constant regex"));
        let word = WORD.get_or_init(|| {
            Regex::new(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(\()?")
                .expect("valid constant regex")
        });
        let quoted = QUOTED.get_or_init(|| {
            Regex::new(r"'([A-Za-z_][A-Za-z0-9_.]{2,80})'").expect("valid constant regex")
        });
        // A backticked name is a mention (`partial`), and so is every
        // code-shaped name in a longer span; the plain words of a backticked
        // command (`sqlfluff fix`) are not.
        for c in span.captures_iter(text) {
            let inner = c[1].trim();
            let single = word.find(inner).is_some_and(|m| {
                m.as_str().trim_end_matches('(').len() == inner.trim_end_matches("()").len()
            });
            for m in word.captures_iter(inner) {
                let whole = m.get(0).expect("group 0 always matches").as_str();
                let name = whole.trim_end_matches('(');
                if single || is_code_shaped(name, m.get(1).is_some()) {
                    self.add(name, Section::InlineCode.max_with(section));
                }
            }
        }
        // Quoted names in error messages: 'AsStringVisitor', 'visit_unknown'.
        if matches!(section, Section::Log | Section::Prose | Section::Title) {
            for c in quoted.captures_iter(text) {
                let name = &c[1];
                if is_code_shaped(name, false)
                    || name
                        .chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                        && section == Section::Log
                {
                    self.add(name, section);
                }
            }
        }
        for c in word.captures_iter(text) {
            let whole = c.get(0).expect("group 0 always matches").as_str();
            let called = c.get(1).is_some();
            let name = whole.trim_end_matches('(');
            if is_code_shaped(name, called) {
                self.add(name, section);
            }
        }
    }

    fn finish(self) -> Vec<Mention> {
        self.found
    }
}

impl Section {
    /// The stronger of two sections for a mention found in both.
    fn max_with(self, other: Self) -> Self {
        if other.weight() > self.weight() {
            other
        } else {
            self
        }
    }
}

/// Whether a word is written the way code names are: a call (`parse(`), a
/// dotted path of identifiers (`pkg.mod`, not `e.g`), `snake_case`,
/// `CamelCase` or `camelCase` with an inner capital, or letters then digits
/// (`L031`, `PersonName3`).
fn is_code_shaped(name: &str, called: bool) -> bool {
    if name.len() < 3 {
        return false;
    }
    if called {
        return true;
    }
    if name.contains('.') {
        let parts: Vec<&str> = name.split('.').collect();
        // `e.g.`, `i.e.`, versions and domains are not code.
        return parts.len() >= 2
            && parts.iter().all(|p| p.len() >= 2)
            && !matches!(
                parts.last().copied(),
                Some("com" | "org" | "io" | "net" | "html" | "md" | "txt")
            );
    }
    let has_lower = name.chars().any(|c| c.is_ascii_lowercase());
    let has_upper = name.chars().any(|c| c.is_ascii_uppercase());
    let inner_upper = name.chars().skip(1).any(|c| c.is_ascii_uppercase()) && has_lower;
    let snake =
        name.trim_matches('_').contains('_') && name.chars().any(|c| c.is_ascii_alphabetic());
    let dunder = name.starts_with("__") && name.ends_with("__");
    let letters_digits = {
        let letters = name.chars().take_while(char::is_ascii_alphabetic).count();
        letters >= 1
            && letters < name.len()
            && name[letters..].starts_with(|c: char| c.is_ascii_digit())
            && has_upper
    };
    snake || dunder || inner_upper || letters_digits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> &'static str {
        crate::select::intent_fixtures::intent_fixture(name)
    }

    fn names(text: &IntentText) -> Vec<&str> {
        text.mentions.iter().map(|m| m.name.as_str()).collect()
    }

    #[test]
    fn a_one_liner_is_all_title() {
        let text = IntentText::parse("fix the CliRunner stderr capture");
        assert_eq!(text.title, "fix the CliRunner stderr capture");
        assert!(text.parts.is_empty());
        assert!(!text.is_long());
        assert_eq!(names(&text), ["CliRunner"]);
    }

    #[test]
    fn issue_report_sections() {
        let text = IntentText::parse(fixture("issue-report.md"));
        assert_eq!(
            text.title,
            "TSQL - L031 incorrectly triggers \"Avoid using aliases in join condition\" when no join present"
        );
        assert!(text.is_long());
        let task = text.task_text();
        assert!(task.contains("there is no join condition"), "{task}");
        assert!(!task.contains("SELECT"), "code is not task text: {task}");
        assert!(
            !task.contains("Steps to Reproduce"),
            "headings are structure: {task}"
        );
        assert!(
            text.parts
                .iter()
                .any(|(s, t)| *s == Section::Code && t.contains("mytable AS a"))
        );
        assert!(names(&text).contains(&"L031"), "{:?}", names(&text));
    }

    #[test]
    fn traceback_lines_become_frames_not_words() {
        let text = IntentText::parse(fixture("python-traceback.txt"));
        assert_eq!(text.frames.len(), 4);
        let all: String = text.parts.iter().map(|(_, t)| t.as_str()).collect();
        assert!(!all.contains("site-packages"), "{all}");
        assert!(
            text.parts
                .iter()
                .any(|(s, t)| *s == Section::Log && t.contains("AttributeError"))
        );
        let names = names(&text);
        for expected in [
            "fields.List",
            "fields.DateTime",
            "MySchema",
            "opts",
            "SCHEMA_OPTS_VAR_NAME",
        ] {
            assert!(names.contains(&expected), "{expected} in {names:?}");
        }
        assert!(!names.contains(&"seems"));
    }

    #[test]
    fn code_shapes() {
        for name in [
            "parse_args",
            "CliRunner",
            "toJSON",
            "L031",
            "PersonName3",
            "pkg.sub.module",
            "__init__",
        ] {
            assert!(is_code_shaped(name, false), "{name}");
        }
        for name in [
            "the",
            "Python",
            "e.g",
            "README",
            "example.com",
            "v2",
            "utf8",
        ] {
            assert!(!is_code_shaped(name, false), "{name}");
        }
        assert!(is_code_shaped("reindl", true));
    }

    #[test]
    fn long_first_line_keeps_its_first_sentence_as_title() {
        let line = "The dump method of the schema class drops the partial argument when it is nested. It should pass it on to the nested schema, as load does, and to every field that takes it, like the list and tuple fields.";
        let text = IntentText::parse(line);
        assert_eq!(
            text.title,
            "The dump method of the schema class drops the partial argument when it is nested."
        );
        assert!(text.task_text().contains("as load does"));
    }
}
