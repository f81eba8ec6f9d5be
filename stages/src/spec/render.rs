//! The text of each section of a compiled specification, one function per kind of section, and
//! the facts they show that are read from a type's source: its one-line purpose, its method
//! count and its factory function.
//!
//! Every section is Markdown that starts with a `## ` heading and has no trailing newline; the
//! compiler joins sections with a blank line. Bodies sit in fences longer than any backtick run
//! inside them.

use crate::facts::kind_word;
use crate::fit::ladder::{InclusionTier, names_only};
use crate::lang::{FileAnalysis, SymbolKind};
use crate::language::Language;

use super::{SpecInclusionTier, SpecTypeRef};

/// Heading of the one section that lists every path-only type.
pub(super) const PATH_ONLY_HEADING: &str = "## Path-only types";

/// Heading of the section of merged imports.
const IMPORTS_HEADING: &str = "## Imports of the verbatim types";

/// What an empty body is shown as.
const EMPTY_BODY: &str = "(empty)";

/// Longest run of backticks in `text`.
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

/// `body` in a fence with info string `tag`, the fence longer than any backtick run inside.
fn fenced(out: &mut String, tag: &str, body: &str) {
    let fence = "`".repeat(longest_backtick_run(body).max(2) + 1);
    let body = body.trim_end();
    let body = if body.trim().is_empty() {
        EMPTY_BODY
    } else {
        body
    };
    out.push_str(&fence);
    out.push_str(tag);
    out.push('\n');
    out.push_str(body);
    out.push('\n');
    out.push_str(&fence);
}

/// Why a body is shown at a smaller ladder tier than its section's usual one.
fn level_note(level: InclusionTier) -> &'static str {
    match level {
        InclusionTier::L0 => "",
        InclusionTier::L1 => " (signatures with docs, to fit the budget)",
        InclusionTier::L2 => " (signatures only, to fit the budget)",
        InclusionTier::L3 => " (names only, to fit the budget)",
    }
}

/// `## Name — path — usage, tier`, then the level note.
fn type_heading(
    out: &mut String,
    source: &SpecTypeRef,
    tier: SpecInclusionTier,
    level: InclusionTier,
) {
    out.push_str("## ");
    out.push_str(&source.name);
    out.push_str(" — ");
    out.push_str(source.path.as_str());
    out.push_str(" — ");
    out.push_str(source.usage.as_str());
    out.push_str(", ");
    out.push_str(tier.as_str());
    out.push_str(level_note(level));
    out.push('\n');
}

/// A verbatim section: the heading, then `body` (the type's transformed source without its
/// leading imports, or a smaller ladder render of it at `level`) in a fence.
pub(super) fn verbatim_section(
    source: &SpecTypeRef,
    language: Language,
    body: &str,
    level: InclusionTier,
) -> String {
    let mut out = String::with_capacity(body.len() + 96);
    type_heading(&mut out, source, SpecInclusionTier::Verbatim, level);
    fenced(&mut out, language.fence_tag(), body);
    out
}

/// A signature-path section: the heading, a line with the one-line purpose and the method
/// count (left out when both are unknown), then `body` (the type's signatures, or its names at
/// [`InclusionTier::L3`]) in a fence.
pub(super) fn signature_section(
    source: &SpecTypeRef,
    language: Language,
    outline: &Outline,
    body: &str,
    level: InclusionTier,
) -> String {
    let mut out = String::with_capacity(body.len() + 160);
    type_heading(&mut out, source, SpecInclusionTier::SignaturePath, level);
    let methods = match outline.methods {
        0 => String::new(),
        1 => "1 method.".to_owned(),
        n => format!("{n} methods."),
    };
    if let Some(purpose) = &outline.purpose {
        out.push_str(purpose);
        if !methods.is_empty() {
            out.push_str(if purpose.ends_with('.') { " " } else { ". " });
        }
    }
    out.push_str(&methods);
    if outline.purpose.is_some() || !methods.is_empty() {
        out.push('\n');
    }
    fenced(
        &mut out,
        if level == InclusionTier::L3 {
            ""
        } else {
            language.fence_tag()
        },
        body,
    );
    out
}

/// One line of the path-only section: `- Name — path — usage`, then `; factory `f`` when the
/// source has a factory function.
pub(super) fn path_only_line(source: &SpecTypeRef, factory: Option<&str>) -> String {
    let mut out = format!(
        "- {} — {} — {}",
        source.name,
        source.path.as_str(),
        source.usage.as_str()
    );
    if let Some(factory) = factory {
        out.push_str("; factory `");
        out.push_str(factory);
        out.push('`');
    }
    out
}

/// The merged imports of the verbatim types: one fence per language, in the order the
/// languages first appear.
pub(super) fn imports_section(groups: &[(Language, Vec<String>)]) -> String {
    let mut out = String::from(IMPORTS_HEADING);
    for (language, statements) in groups {
        out.push('\n');
        fenced(&mut out, language.fence_tag(), &statements.join("\n"));
    }
    out
}

/// A code block's section: `## label`, then its body (at `level`) in a fence.
pub(super) fn code_section(
    label: &str,
    language: Language,
    body: &str,
    level: InclusionTier,
) -> String {
    let mut out = String::with_capacity(body.len() + label.len() + 64);
    out.push_str("## ");
    out.push_str(label);
    out.push_str(level_note(level));
    out.push('\n');
    fenced(&mut out, language.fence_tag(), body);
    out
}

/// A prose block's section: `## label`, then its text as is.
pub(super) fn prose_section(label: &str, body: &str) -> String {
    let body = body.trim();
    let mut out = String::with_capacity(body.len() + label.len() + 4);
    out.push_str("## ");
    out.push_str(label);
    out.push('\n');
    out.push_str(if body.is_empty() { EMPTY_BODY } else { body });
    out
}

/// What a signature-path section says about a type beyond its signatures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Outline {
    /// The first line of the doc comment of the first definition, without comment markers.
    pub(super) purpose: Option<String>,
    /// Methods among the defined names.
    pub(super) methods: usize,
    /// The factory function, when one is recognised ([`factory`]).
    pub(super) factory: Option<String>,
}

impl Outline {
    /// Reads the outline from a provider's analysis of the type's source.
    pub(super) fn of(analysis: &FileAnalysis) -> Self {
        Self {
            purpose: analysis
                .signatures_with_docs
                .as_deref()
                .zip(analysis.signatures_only.as_deref())
                .and_then(|(with_docs, only)| purpose(with_docs, only)),
            methods: analysis
                .names
                .iter()
                .filter(|name| name.kind == SymbolKind::Method)
                .count(),
            factory: factory(analysis),
        }
    }
}

/// The longest purpose shown, in characters; a longer first sentence is cut with `…`.
const MAX_PURPOSE_CHARS: usize = 240;

/// The one-line purpose: the first sentence of the doc comment of the first definition.
///
/// Doc lines are the lines of the with-docs render that the signatures-only render lacks: a
/// doc comment before the first signature line, or a docstring (`"""`, `'''`) right after it
/// (Python). The first paragraph of them (up to an empty doc line or the next signature line)
/// is joined into one line and cut after its first sentence (`.` followed by a space or the
/// end).
fn purpose(with_docs: &str, signatures_only: &str) -> Option<String> {
    let signature_lines: Vec<&str> = signatures_only.lines().collect();
    let mut matched = 0;
    let mut paragraph: Vec<&str> = Vec::new();
    for line in with_docs.lines() {
        if matched >= 2 {
            break;
        }
        if signature_lines.get(matched) == Some(&line) {
            if !paragraph.is_empty() {
                break;
            }
            matched += 1;
            continue;
        }
        let trimmed = line.trim_start();
        let docstring = trimmed.starts_with("\"\"\"") || trimmed.starts_with("'''");
        if matched == 1 && paragraph.is_empty() && !docstring {
            continue;
        }
        let text = strip_comment_markers(line);
        if text.chars().any(char::is_alphanumeric) {
            paragraph.push(text);
        } else if !paragraph.is_empty() {
            break;
        }
    }
    if paragraph.is_empty() {
        return None;
    }
    let joined = paragraph.join(" ");
    let sentence = joined
        .match_indices(". ")
        .next()
        .map_or(joined.as_str(), |(at, _)| &joined[..=at]);
    if sentence.chars().count() > MAX_PURPOSE_CHARS {
        let cut: String = sentence.chars().take(MAX_PURPOSE_CHARS - 1).collect();
        return Some(cut.trim_end().to_owned() + "…");
    }
    Some(sentence.to_owned())
}

/// A doc line without its comment markers and surrounding whitespace.
fn strip_comment_markers(line: &str) -> &str {
    let mut text = line.trim();
    for prefix in [
        "///", "//!", "/**", "/*!", "/*", "//", "*", "#", "\"\"\"", "'''", "--",
    ] {
        if let Some(rest) = text.strip_prefix(prefix) {
            text = rest;
            break;
        }
    }
    for suffix in ["*/", "\"\"\"", "'''"] {
        if let Some(rest) = text.strip_suffix(suffix) {
            text = rest;
        }
    }
    text.trim()
}

/// Name prefixes of factory functions, best first; `new` and `default` must match whole.
const FACTORY_NAMES: [&str; 2] = ["new", "default"];
const FACTORY_PREFIXES: [&str; 6] = ["new", "create", "make", "build", "from", "with"];

/// The factory function of a type: among the functions and methods its source defines, the
/// first named `new`, else `default`, else the first whose name starts with `new`, `create`,
/// `make`, `build`, `from` or `with` (any case; `NewStore` in Go).
fn factory(analysis: &FileAnalysis) -> Option<String> {
    let functions: Vec<&str> = analysis
        .names
        .iter()
        .filter(|name| matches!(name.kind, SymbolKind::Function | SymbolKind::Method))
        .map(|name| name.name.as_str())
        .collect();
    for exact in FACTORY_NAMES {
        if let Some(found) = functions.iter().find(|name| **name == exact) {
            return Some((*found).to_owned());
        }
    }
    functions
        .iter()
        .find(|name| {
            let lower = name.to_ascii_lowercase();
            FACTORY_PREFIXES
                .iter()
                .any(|prefix| lower.starts_with(prefix))
        })
        .map(|name| (*name).to_owned())
}

/// The names-only render of a source: `kind name` per defined name, or, without any, the
/// size line of [`names_only`].
pub(super) fn names_body(analysis: &FileAnalysis, body: &str) -> String {
    if analysis.names.is_empty() {
        return names_only(body);
    }
    analysis.names.iter().fold(String::new(), |mut out, name| {
        out.push_str(kind_word(name.kind));
        out.push(' ');
        out.push_str(&name.name);
        out.push('\n');
        out
    })
}

/// Splits a code block written as one fenced block (```` ```rust ```` … ```` ``` ````) into
/// its info string and its inside; other content comes back whole with no info string.
pub(super) fn unfence(content: &str) -> (Option<&str>, &str) {
    let trimmed = content.trim();
    let run = trimmed.bytes().take_while(|&b| b == b'`').count();
    if run < 3 {
        return (None, content);
    }
    let fence = &trimmed[..run];
    let Some(newline) = trimmed.find('\n') else {
        return (None, content);
    };
    let info = trimmed[run..newline].trim();
    let inside = &trimmed[newline + 1..];
    let Some(inside) = inside.strip_suffix(fence) else {
        return (None, content);
    };
    if inside.contains(fence) || info.contains('`') {
        return (None, content);
    }
    (Some(info).filter(|i| !i.is_empty()), inside)
}

/// The language an info string (`rust`, `ts`, `py`) names, by extension or common name.
pub(super) fn language_of_tag(tag: &str) -> Language {
    let tag = tag
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    Language::from_extension(&tag).unwrap_or(match tag.as_str() {
        "rust" => Language::Rust,
        "typescript" => Language::TypeScript,
        "javascript" => Language::JavaScript,
        "python" => Language::Python,
        "golang" => Language::Go,
        "markdown" => Language::Markdown,
        "shell" | "bash" | "zsh" => Language::Shell,
        "text" | "plaintext" => Language::Text,
        _ => Language::Unknown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::analyze_file;
    use crate::relative_path::RelativePath;

    fn analysis(path: &str, content: &str) -> FileAnalysis {
        let path = RelativePath::new(path).unwrap();
        analyze_file(&path, Language::detect(&path), content)
    }

    #[test]
    fn outline_reads_purpose_methods_and_factory() {
        let rust = "/// Counts tokens.\npub struct Counter;\nimpl Counter {\n    /// Makes one.\n    pub fn new() -> Self { Self }\n    pub fn count(&self) -> u32 { 0 }\n}\n";
        let outline = Outline::of(&analysis("a.rs", rust));
        assert_eq!(outline.purpose.as_deref(), Some("Counts tokens."));
        assert_eq!(outline.methods, 2);
        assert_eq!(outline.factory.as_deref(), Some("new"));

        let ts = "/**\n * Loads users.\n */\nexport class Users {\n  static createUsers(): Users { return new Users(); }\n}\n";
        let outline = Outline::of(&analysis("a.ts", ts));
        assert_eq!(outline.purpose.as_deref(), Some("Loads users."));
        assert_eq!(outline.factory.as_deref(), Some("createUsers"));

        let python = "class Node:\n    \"\"\"One node.\"\"\"\n    def is_leaf(self) -> bool:\n        return True\n";
        let outline = Outline::of(&analysis("a.py", python));
        assert_eq!(outline.purpose.as_deref(), Some("One node."));
        assert_eq!(outline.factory, None);

        let multi_line = "/// The language of a file, detected from its\n/// extension. More text.\npub enum L { A }\n";
        let outline = Outline::of(&analysis("a.rs", multi_line));
        assert_eq!(
            outline.purpose.as_deref(),
            Some("The language of a file, detected from its extension.")
        );
        let python = "class P:\n    \"\"\"Parse a stream\n    into nodes\n\n    More.\n    \"\"\"\n    def parse(self):\n        pass\n";
        let outline = Outline::of(&analysis("a.py", python));
        assert_eq!(
            outline.purpose.as_deref(),
            Some("Parse a stream into nodes")
        );

        let undocumented = "pub struct Plain;\n/// Not the type's doc.\npub fn helper() {}\n";
        let outline = Outline::of(&analysis("a.rs", undocumented));
        assert_eq!(outline.purpose, None);
    }

    #[test]
    fn fences_outgrow_backticks_and_empty_bodies_say_so() {
        let mut out = String::new();
        fenced(&mut out, "md", "a ``` b");
        assert_eq!(out, "````md\na ``` b\n````");
        let mut out = String::new();
        fenced(&mut out, "", "  \n");
        assert_eq!(out, "```\n(empty)\n```");
        assert_eq!(prose_section("Task", "\n"), "## Task\n(empty)");
    }

    #[test]
    fn single_fenced_blocks_are_unwrapped() {
        assert_eq!(
            unfence("```rust\nfn a() {}\n```\n"),
            (Some("rust"), "fn a() {}\n")
        );
        assert_eq!(unfence("```\nx\n```"), (None, "x\n"));
        assert_eq!(unfence("plain"), (None, "plain"));
        assert_eq!(
            unfence("```a\nx\n```\ntext\n```b\ny\n```"),
            (None, "```a\nx\n```\ntext\n```b\ny\n```")
        );
        assert_eq!(language_of_tag("rust"), Language::Rust);
        assert_eq!(language_of_tag("ts"), Language::TypeScript);
        assert_eq!(language_of_tag("py title=x"), Language::Python);
        assert_eq!(language_of_tag("text"), Language::Text);
        assert_eq!(language_of_tag("nonsense"), Language::Unknown);
    }
}
