//! PromptAssembler: one string in a fixed section order, in one of four
//! layouts ([`PromptFormat`]).
//!
//! The sections, in order: the task (the intent, verbatim), its
//! classification, optional notes (what the compiler could not do or left
//! out), optional diff (for a compile about changes), optional specification, optional session context, optional project
//! structure, optional key constraints (the first three constraints), the
//! context (the files), then optional constraints (every constraint, after
//! the context). Markdown writes them as `## Task`, `## Context`, …; XML as
//! `<task>`, `<context>`, … inside one `<prompt>` element; JSON as the keys of
//! one object (`task`, `files`, …); plain text as upper-case titles underlined
//! with `=`. Every format gives each file its path, tier and language. No
//! compiler-owned instructions about the reply's format are added. The prompt
//! holds no timestamps, absolute paths or machine details, so equal inputs
//! give equal bytes.

use std::fmt::Write;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::fit::ladder::InclusionTier;
use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::select::intent::TaskClassification;

/// The layout of a compiled prompt. The sections, their order and what each
/// file block says (path, tier, language, body) are the same in every
/// format; only the markup differs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptFormat {
    /// `## Task` sections, `### path [tier]` headings and fenced bodies.
    #[default]
    Markdown,
    /// One `<prompt>` element: `<task>`, `<context>` with one
    /// `<file path=… tier=… language=…>` per file (its body in a CDATA
    /// section), …; well-formed whatever the files hold.
    Xml,
    /// One JSON object: `task`, `taskClassification`, …, `files` (an array of
    /// `{path, tier, language, body}`), `constraints`.
    Json,
    /// Upper-case section titles underlined with `=`, a ruled `File:` line
    /// before each body, no markup inside.
    Plain,
}

impl PromptFormat {
    /// Every format, the default first.
    pub const ALL: [Self; 4] = [Self::Markdown, Self::Xml, Self::Json, Self::Plain];

    /// The format's name as `--format` and `output.format` take it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Markdown => "markdown",
            Self::Xml => "xml",
            Self::Json => "json",
            Self::Plain => "plain",
        }
    }
}

impl std::fmt::Display for PromptFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A format name that is none of [`PromptFormat::ALL`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown prompt format `{0}`: use one of markdown, xml, json, plain")]
pub struct UnknownFormat(pub String);

impl FromStr for PromptFormat {
    type Err = UnknownFormat;

    /// A format by name, ignoring case (`md` and `text` are accepted for
    /// `markdown` and `plain`).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name.trim().to_ascii_lowercase().as_str() {
            "markdown" | "md" => Ok(Self::Markdown),
            "xml" => Ok(Self::Xml),
            "json" => Ok(Self::Json),
            "plain" | "text" | "txt" => Ok(Self::Plain),
            _ => Err(UnknownFormat(name.to_owned())),
        }
    }
}

/// One file block of the context section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextFile {
    /// The file.
    pub path: RelativePath,
    /// Its language (the block names it; Markdown puts it in the fence).
    pub language: Language,
    /// The tier of `body`.
    pub tier: InclusionTier,
    /// The text to show.
    pub body: String,
    /// Whether `body` is a slice of the file's lines (the block then says
    /// `sliced`, not the tier).
    pub sliced: bool,
}

impl ContextFile {
    /// The tier the block names: the tier's name, or `sliced`.
    pub fn tier_label(&self) -> &'static str {
        if self.sliced {
            "sliced"
        } else {
            self.tier.name()
        }
    }
}

/// Everything the assembler puts into a prompt.
#[derive(Clone, Debug, Default)]
pub struct PromptParts<'a> {
    /// The user's intent, verbatim.
    pub intent: &'a str,
    /// The classification.
    pub classification: Option<&'a TaskClassification>,
    /// The specification section's body, when a spec was compiled.
    pub specification: Option<&'a str>,
    /// The session context section's body.
    pub session_context: Option<&'a str>,
    /// The project structure section's body.
    pub project_structure: Option<&'a str>,
    /// Merged constraints.
    pub constraints: &'a [String],
    /// The notes: what the agent should know about the context — files named
    /// but not found, files shown as slices, relevant files left out — one
    /// item each.
    pub notes: &'a [String],
    /// The diff section's unified diff, for a compile about changes.
    pub diff: Option<&'a str>,
}

impl PromptParts<'_> {
    /// The text sections before the context, in prompt order, each as its
    /// Markdown title and body; `None` bodies and empty lists are left out.
    fn head_sections(&self) -> Vec<(&'static str, Section<'_>)> {
        let mut sections = vec![("Task", Section::Text(self.intent.trim()))];
        if let Some(task) = self.classification {
            sections.push(("Task Classification", Section::Classification(task)));
        }
        if !self.notes.is_empty() {
            sections.push(("Notes", Section::List(self.notes)));
        }
        if let Some(diff) = self.diff.filter(|d| !d.trim().is_empty()) {
            sections.push(("Diff", Section::Code("diff", diff.trim_end())));
        }
        let texts = [
            ("Specification", self.specification),
            ("Session context", self.session_context),
            ("Project structure", self.project_structure),
        ];
        for (title, text) in texts {
            if let Some(text) = text.filter(|s| !s.trim().is_empty()) {
                sections.push((title, Section::Text(text.trim_end())));
            }
        }
        if !self.constraints.is_empty() {
            let key = &self.constraints[..self.constraints.len().min(3)];
            sections.push(("Constraints (key)", Section::List(key)));
        }
        sections
    }
}

/// A section's content.
enum Section<'a> {
    Text(&'a str),
    /// Text shown verbatim, fenced in Markdown with this info string.
    Code(&'static str, &'a str),
    List(&'a [String]),
    Classification(&'a TaskClassification),
}

/// Builds compiled prompts in one [`PromptFormat`].
#[derive(Clone, Copy, Debug, Default)]
pub struct PromptAssembler {
    format: PromptFormat,
}

impl PromptAssembler {
    /// The assembler of `format`.
    pub const fn new(format: PromptFormat) -> Self {
        Self { format }
    }

    /// Its format.
    pub const fn format(&self) -> PromptFormat {
        self.format
    }

    /// Assembles the prompt from its parts and the file blocks, in the order
    /// given: [`head`](Self::head), [`context_heading`](Self::context_heading),
    /// each [`file_block_at`](Self::file_block_at), [`tail`](Self::tail).
    ///
    /// # Examples
    ///
    /// ```
    /// use aic_stages::fit::assembler::{PromptAssembler, PromptParts};
    /// let prompt = PromptAssembler::default().assemble(&PromptParts { intent: "Explain `x`", ..Default::default() }, &[]);
    /// assert!(prompt.starts_with("## Task\n\nExplain `x`\n"));
    /// ```
    pub fn assemble(&self, parts: &PromptParts<'_>, files: &[ContextFile]) -> String {
        let mut out = self.head(parts);
        out.push_str(&self.context_heading());
        for (index, file) in files.iter().enumerate() {
            out.push_str(&self.file_block_at(file, index + 1 == files.len()));
        }
        out.push_str(&self.tail(parts));
        out
    }

    /// Everything before the context section's heading.
    pub fn head(&self, parts: &PromptParts<'_>) -> String {
        let mut out = String::new();
        if self.format == PromptFormat::Xml {
            out.push_str("<prompt>\n");
        } else if self.format == PromptFormat::Json {
            out.push_str("{\n");
        }
        for (title, content) in parts.head_sections() {
            self.section(&mut out, title, &content);
        }
        out
    }

    /// The context section's heading (Markdown `## Context` and a blank line).
    pub fn context_heading(&self) -> String {
        match self.format {
            PromptFormat::Markdown => "## Context\n\n".to_owned(),
            PromptFormat::Xml => "<context>\n".to_owned(),
            PromptFormat::Json => "  \"files\": [\n".to_owned(),
            PromptFormat::Plain => plain_title("Context"),
        }
    }

    /// Everything after the last file block.
    pub fn tail(&self, parts: &PromptParts<'_>) -> String {
        let mut out = String::new();
        match self.format {
            PromptFormat::Xml => out.push_str("</context>\n\n"),
            PromptFormat::Json => out.push_str("  ]"),
            PromptFormat::Markdown | PromptFormat::Plain => {}
        }
        if !parts.constraints.is_empty() {
            if self.format == PromptFormat::Json {
                out.push_str(",\n");
            }
            self.section(&mut out, "Constraints", &Section::List(parts.constraints));
        }
        match self.format {
            PromptFormat::Xml => out.push_str("</prompt>\n"),
            // The last section wrote `,\n`: the object ends after its value.
            PromptFormat::Json if out.ends_with(",\n") => {
                out.truncate(out.len() - 2);
                out.push_str("\n}\n");
            }
            PromptFormat::Json => out.push_str("\n}\n"),
            PromptFormat::Markdown | PromptFormat::Plain => {}
        }
        out
    }

    /// One file's block as any but the last (the size the fit estimates with).
    pub fn file_block(&self, file: &ContextFile) -> String {
        self.file_block_at(file, false)
    }

    /// One file's block; `last` tells the JSON array's last element, which
    /// has no comma after it.
    ///
    /// Markdown: `### <path> [<tier>]`, then the body in a fence longer than
    /// any backtick run inside it (the language as its info string), then a
    /// blank line. XML: `<file path tier language>` with the body in a CDATA
    /// section (a `]]>` inside is split across two). JSON: one line
    /// `{"path", "tier", "language", "body"}`. Plain: a ruled
    /// `File: <path> [<tier>, <language>]` line, then the body verbatim.
    pub fn file_block_at(&self, file: &ContextFile, last: bool) -> String {
        let body = file.body.trim_end_matches('\n');
        let tier = file.tier_label();
        match self.format {
            PromptFormat::Markdown => {
                let fence = "`".repeat(longest_backtick_run(body).max(2) + 1);
                format!(
                    "### {} [{tier}]\n{fence}{}\n{body}\n{fence}\n\n",
                    file.path,
                    file.language.fence_tag()
                )
            }
            PromptFormat::Xml => format!(
                "<file path=\"{}\" tier=\"{tier}\" language=\"{}\">\n{}\n</file>\n",
                xml_attribute(file.path.as_str()),
                file.language.as_str(),
                cdata(body)
            ),
            PromptFormat::Json => format!(
                "    {{\"path\": {}, \"tier\": \"{tier}\", \"language\": \"{}\", \"body\": {}}}{}\n",
                json_string(file.path.as_str()),
                file.language.as_str(),
                json_string(&format!("{body}\n")),
                if last { "" } else { "," }
            ),
            PromptFormat::Plain => format!(
                "{PLAIN_RULE}\nFile: {} [{tier}, {}]\n{PLAIN_RULE}\n{body}\n\n",
                file.path,
                file.language.as_str()
            ),
        }
    }

    /// Writes one section of the head or tail.
    fn section(self, out: &mut String, title: &str, content: &Section<'_>) {
        match self.format {
            PromptFormat::Markdown => {
                let text = match content {
                    Section::Code(tag, code) => {
                        let fence = "`".repeat(longest_backtick_run(code).max(2) + 1);
                        format!("{fence}{tag}\n{code}\n{fence}")
                    }
                    other => text_of(other),
                };
                let _ = write!(out, "## {title}\n\n{text}\n\n");
            }
            PromptFormat::Plain => {
                out.push_str(&plain_title(title));
                let _ = write!(out, "{}\n\n", text_of(content));
            }
            PromptFormat::Xml => {
                let tag = snake_name(title);
                match content {
                    Section::Text(text) => {
                        let _ = write!(out, "<{tag}>\n{}\n</{tag}>\n\n", xml_text(text));
                    }
                    Section::Code(_, code) => {
                        let _ = write!(out, "<{tag}>\n{}\n</{tag}>\n\n", cdata(code));
                    }
                    Section::List(items) => {
                        let item = if tag.starts_with("constraints") {
                            "constraint"
                        } else {
                            "note"
                        };
                        let _ = writeln!(out, "<{tag}>");
                        for text in *items {
                            let _ = writeln!(out, "<{item}>{}</{item}>", xml_text(text.trim()));
                        }
                        let _ = write!(out, "</{tag}>\n\n");
                    }
                    Section::Classification(task) => {
                        let _ = write!(
                            out,
                            "<{tag} class=\"{}\" confidence=\"{:.2}\" matched_keywords=\"{}\"/>\n\n",
                            task.task_class.as_str(),
                            task.confidence,
                            xml_attribute(&task.matched_keywords.join(", "))
                        );
                    }
                }
            }
            PromptFormat::Json => {
                let key = camel_name(title);
                let value = match content {
                    Section::Text(text) | Section::Code(_, text) => json_string(text),
                    Section::List(items) => {
                        let items: Vec<String> =
                            items.iter().map(|item| json_string(item.trim())).collect();
                        format!("[{}]", items.join(", "))
                    }
                    Section::Classification(task) => {
                        let keywords: Vec<String> = task
                            .matched_keywords
                            .iter()
                            .map(|k| json_string(k))
                            .collect();
                        format!(
                            "{{\"taskClass\": \"{}\", \"confidence\": {:.2}, \"matchedKeywords\": [{}]}}",
                            task.task_class.as_str(),
                            task.confidence,
                            keywords.join(", ")
                        )
                    }
                };
                let _ = writeln!(out, "  \"{key}\": {value},");
            }
        }
    }
}

/// The rule around a plain-text file's `File:` line.
const PLAIN_RULE: &str = "================================================================";

/// A section's text as Markdown and plain text show it.
fn text_of(content: &Section<'_>) -> String {
    match content {
        Section::Text(text) | Section::Code(_, text) => (*text).to_owned(),
        Section::List(items) => bullets(items),
        Section::Classification(task) => {
            let mut line = format!(
                "{} (confidence {:.2})",
                task.task_class.as_str(),
                task.confidence
            );
            if !task.matched_keywords.is_empty() {
                let _ = write!(
                    line,
                    "; matched keywords: {}",
                    task.matched_keywords.join(", ")
                );
            }
            line
        }
    }
}

/// A plain-text section title: upper case, underlined, a blank line after.
fn plain_title(title: &str) -> String {
    let title = title.to_uppercase();
    format!("{title}\n{}\n\n", "=".repeat(title.chars().count()))
}

/// `Task Classification` → `task_classification`; `Constraints (key)` →
/// `constraints_key`.
fn snake_name(title: &str) -> String {
    title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
        .collect::<Vec<_>>()
        .join("_")
}

/// `Task Classification` → `taskClassification`.
fn camel_name(title: &str) -> String {
    let mut out = String::new();
    for (index, word) in snake_name(title).split('_').enumerate() {
        if index == 0 {
            out.push_str(word);
        } else {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                out.push(first.to_ascii_uppercase());
                out.extend(chars);
            }
        }
    }
    out
}

fn bullets(items: &[String]) -> String {
    items
        .iter()
        .map(|c| format!("- {}", c.trim()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A JSON string literal.
fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

/// Text for an XML element: as it is when it holds no markup character,
/// else a CDATA section; characters XML forbids are replaced ([`xml_chars`]).
fn xml_text(text: &str) -> String {
    if text.contains(['<', '>', '&']) {
        cdata(text)
    } else {
        xml_chars(text).into_owned()
    }
}

/// `text` with each character XML 1.0 forbids everywhere, CDATA and
/// character references included — the control characters other than tab,
/// line feed and carriage return (a terminal's escape, a vertical tab, a form
/// feed, NUL), and U+FFFE and U+FFFF — replaced by U+FFFD, so the prompt
/// parses. Test snapshots and logs hold ANSI colour codes often enough.
fn xml_chars(text: &str) -> std::borrow::Cow<'_, str> {
    let forbidden = |c: char| matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}');
    if text.contains(forbidden) {
        std::borrow::Cow::Owned(text.replace(forbidden, "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// `text` in a CDATA section; a `]]>` inside ends one section after its
/// `]]` and starts the next before its `>`, so the parsed text is `text`
/// (with the characters XML forbids replaced, see [`xml_chars`]).
fn cdata(text: &str) -> String {
    format!(
        "<![CDATA[{}]]>",
        xml_chars(text).replace("]]>", "]]]]><![CDATA[>")
    )
}

/// `text` as an XML attribute value (inside double quotes).
fn xml_attribute(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in xml_chars(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            c => out.push(c),
        }
    }
    out
}

fn longest_backtick_run(text: &str) -> usize {
    let mut longest = 0;
    let mut current = 0;
    for byte in text.bytes() {
        if byte == b'`' {
            current += 1;
            longest = longest.max(current);
        } else {
            current = 0;
        }
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::intent::IntentClassifier;

    fn file(path: &str, body: &str) -> ContextFile {
        let path = RelativePath::new(path).unwrap();
        ContextFile {
            language: Language::detect(&path),
            path,
            tier: InclusionTier::L0,
            body: body.to_owned(),
            sliced: false,
        }
    }

    #[test]
    fn sections_come_in_fixed_order() {
        let task = IntentClassifier.classify("fix the parser");
        let constraints = vec![
            "one".to_owned(),
            "two".to_owned(),
            "three".to_owned(),
            "four".to_owned(),
        ];
        let parts = PromptParts {
            intent: "fix the parser",
            classification: Some(&task),
            session_context: Some("Steps completed: 1"),
            constraints: &constraints,
            ..PromptParts::default()
        };
        let prompt = PromptAssembler::default()
            .assemble(&parts, &[file("src/parser.rs", "fn parse() {}\n")]);
        let order = [
            "## Task\n",
            "## Task Classification\n",
            "## Session context\n",
            "## Constraints (key)\n",
            "## Context\n",
            "### src/parser.rs [full]\n```rust\nfn parse() {}\n```\n",
            "## Constraints\n",
        ];
        assert_in_order(&prompt, &order);
        assert!(
            prompt.contains("- three\n\n## Context"),
            "key constraints are the first three"
        );
        assert!(prompt.ends_with("- four\n\n"));
    }

    #[test]
    fn intent_is_verbatim() {
        let intent = "Why does `compile()` return <None> & \"fail\"?";
        let prompt = PromptAssembler::default().assemble(
            &PromptParts {
                intent,
                ..PromptParts::default()
            },
            &[],
        );
        assert!(prompt.contains(intent));
    }

    #[test]
    fn fence_outgrows_backticks_in_body() {
        let block = PromptAssembler::default().file_block(&file("README.md", "```sh\nls\n```\n"));
        assert!(block.starts_with("### README.md [full]\n````markdown\n```sh"));
        assert!(block.ends_with("```\n````\n\n"));
    }

    /// Every optional list section, and files whose bodies hold what breaks
    /// naive markup: a CDATA end, a closing tag, quotes, backslashes.
    struct Tricky {
        task: TaskClassification,
        constraints: Vec<String>,
        notes: Vec<String>,
        files: Vec<ContextFile>,
    }

    impl Tricky {
        fn new() -> Self {
            let mut files = vec![
                file("src/a&b.py", "s = ']]>'\n# </file> </context>\n"),
                file("docs/q\"uote.md", "\"quoted\" \\ back\\slash\n```\nfence\n"),
            ];
            files[1].sliced = true;
            Self {
                task: IntentClassifier.classify("fix the <parser> & \"lexer\""),
                constraints: vec!["keep `a` < b".to_owned(), "two".to_owned()],
                notes: vec!["`x.py` is not found".to_owned()],
                files,
            }
        }

        fn parts(&self) -> PromptParts<'_> {
            PromptParts {
                intent: "fix the parser",
                classification: Some(&self.task),
                notes: &self.notes,
                constraints: &self.constraints,
                ..PromptParts::default()
            }
        }
    }

    /// Asserts that `parts` occur in `prompt` in this order.
    fn assert_in_order(prompt: &str, parts: &[&str]) {
        let mut at = 0;
        for part in parts {
            let found = prompt[at..]
                .find(part)
                .unwrap_or_else(|| panic!("{part:?} missing or out of order in\n{prompt}"));
            at += found + part.len();
        }
    }

    /// Characters XML forbids (a terminal escape, a vertical tab, a form
    /// feed, NUL, U+FFFF) in a body, a path, a note and the task come out as
    /// U+FFFD, and the prompt parses; tab, line feed and other text stay.
    #[test]
    fn xml_replaces_the_characters_xml_forbids() {
        let body = "expected:\n\u{1b}[31merror\u{1b}[0m\tfailed\u{b}\u{c}\u{0}\u{ffff} <&>\n";
        let files = vec![file("snap\u{1b}shots/out.txt", body)];
        let notes = vec!["note \u{7} with a bell".to_owned()];
        let parts = PromptParts {
            intent: "explain the \u{1b}[31m colours",
            notes: &notes,
            ..PromptParts::default()
        };
        let prompt = PromptAssembler::new(PromptFormat::Xml).assemble(&parts, &files);
        let doc = roxmltree::Document::parse(&prompt).unwrap_or_else(|e| panic!("{e}\n{prompt}"));
        let file_node = doc
            .descendants()
            .find(|n| n.has_tag_name("file"))
            .expect("one file element");
        assert_eq!(
            file_node.attribute("path"),
            Some("snap\u{fffd}shots/out.txt")
        );
        let shown: String = file_node.children().filter_map(|c| c.text()).collect();
        assert_eq!(
            shown.trim_matches('\n'),
            "expected:\n\u{fffd}[31merror\u{fffd}[0m\tfailed\u{fffd}\u{fffd}\u{fffd}\u{fffd} <&>"
        );
        assert!(prompt.contains("note \u{fffd} with a bell"), "{prompt}");
        assert!(
            prompt.contains("explain the \u{fffd}[31m colours"),
            "{prompt}"
        );
    }

    #[test]
    fn xml_is_well_formed_and_gives_back_every_body() {
        let tricky = Tricky::new();
        let files = &tricky.files;
        let parts = PromptParts {
            intent: "fix the <parser> & \"lexer\" ]]>",
            project_structure: Some("src/ <code>"),
            ..tricky.parts()
        };
        let prompt = PromptAssembler::new(PromptFormat::Xml).assemble(&parts, files);
        let doc = roxmltree::Document::parse(&prompt).unwrap_or_else(|e| panic!("{e}\n{prompt}"));
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "prompt");
        let order: Vec<&str> = root
            .children()
            .filter(roxmltree::Node::is_element)
            .map(|n| n.tag_name().name())
            .collect();
        assert_eq!(
            order,
            [
                "task",
                "task_classification",
                "notes",
                "project_structure",
                "constraints_key",
                "context",
                "constraints"
            ]
        );
        let task_text: String = root
            .children()
            .find(|n| n.has_tag_name("task"))
            .unwrap()
            .children()
            .filter_map(|c| c.text())
            .collect();
        assert_eq!(task_text.trim(), parts.intent);
        let shown: Vec<(String, String, String, String)> = root
            .descendants()
            .filter(|n| n.has_tag_name("file"))
            .map(|n| {
                let body: String = n.children().filter_map(|c| c.text()).collect();
                (
                    n.attribute("path").unwrap().to_owned(),
                    n.attribute("tier").unwrap().to_owned(),
                    n.attribute("language").unwrap().to_owned(),
                    body.trim_matches('\n').to_owned(),
                )
            })
            .collect();
        assert_eq!(shown.len(), 2);
        for ((path, tier, language, body), file) in shown.iter().zip(files) {
            assert_eq!(path, file.path.as_str());
            assert_eq!(tier, file.tier_label());
            assert_eq!(language, file.language.as_str());
            assert_eq!(body, file.body.trim_end_matches('\n'));
        }
    }

    #[test]
    fn json_parses_with_sections_in_order_and_every_file() {
        let tricky = Tricky::new();
        let (parts, files) = (tricky.parts(), &tricky.files);
        let prompt = PromptAssembler::new(PromptFormat::Json).assemble(&parts, files);
        let value: serde_json::Value =
            serde_json::from_str(&prompt).unwrap_or_else(|e| panic!("{e}\n{prompt}"));
        let keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "task",
                "taskClassification",
                "notes",
                "constraintsKey",
                "files",
                "constraints"
            ]
        );
        let shown = value["files"].as_array().unwrap();
        assert_eq!(shown.len(), 2);
        for (shown, file) in shown.iter().zip(files) {
            assert_eq!(shown["path"], file.path.as_str());
            assert_eq!(shown["tier"], file.tier_label());
            assert_eq!(shown["language"], file.language.as_str());
            assert_eq!(shown["body"], file.body.as_str());
        }
        // No constraints, no files: still one object.
        let bare = PromptAssembler::new(PromptFormat::Json).assemble(
            &PromptParts {
                intent: "x",
                ..PromptParts::default()
            },
            &[],
        );
        let value: serde_json::Value = serde_json::from_str(&bare).unwrap();
        assert_eq!(value["files"], serde_json::json!([]));
    }

    #[test]
    fn plain_text_has_titles_and_file_lines() {
        let tricky = Tricky::new();
        let (parts, files) = (tricky.parts(), &tricky.files);
        let prompt = PromptAssembler::new(PromptFormat::Plain).assemble(&parts, files);
        let order = [
            "TASK\n====\n\nfix the parser\n",
            "TASK CLASSIFICATION\n",
            "NOTES\n=====\n\n- `x.py` is not found\n",
            "CONTEXT\n=======\n\n",
            "File: src/a&b.py [full, python]\n",
            "File: docs/q\"uote.md [sliced, markdown]\n",
            "CONSTRAINTS\n===========\n\n- keep `a` < b\n- two\n",
        ];
        assert_in_order(&prompt, &order);
    }

    #[test]
    fn blocks_add_up_to_the_prompt_in_every_format() {
        let tricky = Tricky::new();
        let (parts, files) = (tricky.parts(), &tricky.files);
        for format in PromptFormat::ALL {
            let assembler = PromptAssembler::new(format);
            let mut joined = assembler.head(&parts) + &assembler.context_heading();
            for (index, file) in files.iter().enumerate() {
                joined.push_str(&assembler.file_block_at(file, index + 1 == files.len()));
            }
            joined.push_str(&assembler.tail(&parts));
            assert_eq!(joined, assembler.assemble(&parts, files), "{format}");
        }
    }

    #[test]
    fn format_names_parse_and_print() {
        for format in PromptFormat::ALL {
            assert_eq!(format.as_str().parse::<PromptFormat>(), Ok(format));
        }
        assert_eq!("MD".parse::<PromptFormat>(), Ok(PromptFormat::Markdown));
        let error = "yaml".parse::<PromptFormat>().unwrap_err();
        assert!(
            error.to_string().contains("markdown, xml, json, plain"),
            "{error}"
        );
    }
}
