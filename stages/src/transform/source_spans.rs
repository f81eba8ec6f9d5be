//! Where the comments and string literals of a source file are, for the
//! transformers that edit one and must never touch the other
//! ([`CommentStripper`](super::CommentStripper),
//! [`LongStringTruncator`](super::LongStringTruncator)).
//!
//! Languages with a tree-sitter grammar (TypeScript, TSX, JavaScript, Python,
//! Go, Rust, Java) are parsed; a file whose parse has an error anywhere, or
//! that is over [`MAX_PARSE_BYTES`] or its work budget, gets no spans, so the
//! transformers leave it alone. C, C++ and CSS have a hand-written lexer (C and
//! C++ share one; CSS has only `/* */` comments). Every other language gets no
//! spans.
//!
//! Spans are byte ranges into the scanned text, sorted and never overlapping.
//! Nothing inside a string literal is ever reported as a comment, and nothing
//! inside a comment as a string.

use std::cell::RefCell;
use std::ops::Range;

use tree_sitter::{Node, Tree};

use crate::lang::{Grammar, parse_tree, python_long_comment_runs};
use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::work;

pub(crate) use crate::lang::MAX_PARSE_BYTES;

/// How comments are written in a language, which decides what a doc comment
/// and a directive look like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CommentSyntax {
    /// `//` and `/* */` (C, C++, Java, JavaScript, TypeScript, Go, Rust, CSS).
    Slashes,
    /// `#` (Python).
    Hash,
}

/// One comment: its bytes, from the opener to the closer (a line comment ends
/// before its newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Comment {
    pub(crate) range: Range<usize>,
    /// Go only: the comment is part of a run of comment lines that ends on the
    /// line just above a declaration (a Go doc comment).
    pub(crate) above_declaration: bool,
}

/// One string literal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StringLiteral {
    /// The whole literal, prefixes and quotes included.
    pub(crate) range: Range<usize>,
    /// The text between the delimiters.
    pub(crate) content: Range<usize>,
    /// Whether the literal may be shortened: not when it interpolates
    /// expressions (`${…}`, f-strings), when it is a Python docstring, or when
    /// it sits in a Rust attribute (`#[doc = "…"]`).
    pub(crate) truncatable: bool,
}

/// The comments and string literals of one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SourceSpans {
    pub(crate) syntax: Option<CommentSyntax>,
    pub(crate) comments: Vec<Comment>,
    pub(crate) strings: Vec<StringLiteral>,
}

/// What the transformers need of the language providers' grammars: which
/// node kinds are comments and string literals.
impl SourceSpans {
    /// The spans kept by `keep_comment` and `keep_string` (given each span's
    /// range), with every offset passed through `map`: the spans of a text
    /// that a transformer cut pieces out of, for the next transformer.
    pub(crate) fn moved(
        &self,
        keep_comment: impl Fn(&Range<usize>) -> bool,
        keep_string: impl Fn(&Range<usize>) -> bool,
        map: impl Fn(usize) -> usize,
    ) -> Self {
        let map_range = |range: &Range<usize>| map(range.start)..map(range.end);
        Self {
            syntax: self.syntax,
            comments: self
                .comments
                .iter()
                .filter(|comment| keep_comment(&comment.range))
                .map(|comment| Comment {
                    range: map_range(&comment.range),
                    above_declaration: comment.above_declaration,
                })
                .collect(),
            strings: self
                .strings
                .iter()
                .filter(|string| keep_string(&string.range))
                .map(|string| StringLiteral {
                    range: map_range(&string.range),
                    content: map_range(&string.content),
                    truncatable: string.truncatable,
                })
                .collect(),
        }
    }
}

impl Grammar {
    fn is_comment(self, kind: &str) -> bool {
        match self {
            Self::Rust | Self::Java => matches!(kind, "line_comment" | "block_comment"),
            _ => kind == "comment",
        }
    }

    /// The bytes every comment and string literal of this grammar holds (its
    /// opener): a node whose text has none of them holds neither, and the
    /// walk does not go into it.
    fn span_openers(self) -> &'static [u8] {
        match self {
            Self::TypeScript | Self::Tsx | Self::JavaScript => b"/\"'`",
            Self::Python => b"#\"'",
            Self::Go => b"/\"`",
            Self::Rust | Self::Java => b"/\"",
        }
    }

    fn is_string(self, kind: &str) -> bool {
        match self {
            Self::TypeScript | Self::Tsx | Self::JavaScript => {
                matches!(kind, "string" | "template_string")
            }
            Self::Python => kind == "string",
            Self::Go => matches!(kind, "interpreted_string_literal" | "raw_string_literal"),
            Self::Rust => matches!(kind, "string_literal" | "raw_string_literal"),
            Self::Java => kind == "string_literal",
        }
    }
}

/// The spans of the last text scanned or remembered on this thread, keyed by
/// its language and xxh3-128 hash: [`CommentStripper`](super::CommentStripper)
/// remembers the spans of its output, so the
/// [`LongStringTruncator`](super::LongStringTruncator) that runs next on the
/// same text does not parse it again.
struct Remembered {
    language: Language,
    tsx: bool,
    hash: u128,
    length: usize,
    spans: SourceSpans,
}

thread_local! {
    static LAST: RefCell<Option<Remembered>> = const { RefCell::new(None) };
}

fn is_tsx(path: &RelativePath) -> bool {
    path.extension().as_deref() == Some("tsx")
}

/// Remembers the spans of `content` for the next [`scan_cached`] on this
/// thread. The spans must be exactly those [`scan`] would find, or a subset
/// of them that a transformer relying on the cache may safely act on.
pub(crate) fn remember(path: &RelativePath, language: Language, content: &str, spans: SourceSpans) {
    let entry = Remembered {
        language,
        tsx: is_tsx(path),
        hash: xxhash_rust::xxh3::xxh3_128(content.as_bytes()),
        length: content.len(),
        spans,
    };
    LAST.with(|last| {
        if let Ok(mut last) = last.try_borrow_mut() {
            *last = Some(entry);
        }
    });
}

/// [`scan`], answered from the last remembered spans when they are for the
/// same text.
pub(crate) fn scan_cached(
    path: &RelativePath,
    language: Language,
    content: &str,
) -> Option<SourceSpans> {
    let hash = xxhash_rust::xxh3::xxh3_128(content.as_bytes());
    let hit = LAST.with(|last| {
        let last = last.try_borrow().ok()?;
        let entry = last.as_ref()?;
        (entry.language == language
            && entry.tsx == is_tsx(path)
            && entry.hash == hash
            && entry.length == content.len())
        .then(|| entry.spans.clone())
    });
    if hit.is_some() {
        return hit;
    }
    let spans = scan(path, language, content)?;
    remember(path, language, content, spans.clone());
    Some(spans)
}

/// Remembers the comments and strings of `suffix`, the end of `original`
/// left after a leading run of comment blocks was cut off, as those of
/// `original` (scanned, and its tree kept for the file's other uses) that lie
/// past the cut, moved back by its length. So the comment stripper, running
/// after the license header stripper, needs no second parse of nearly the
/// same text.
///
/// Only for grammars whose spans of a piece of code do not depend on the
/// comments before it: Go (doc comment runs) and Python (long comment runs
/// masked before parsing) are scanned on their own text.
pub(crate) fn remember_suffix(
    path: &RelativePath,
    language: Language,
    original: &str,
    suffix: &str,
) {
    let Some(cut) = original.len().checked_sub(suffix.len()) else {
        return;
    };
    if !original.ends_with(suffix)
        || !matches!(
            Grammar::for_file(path, language),
            Some(
                Grammar::TypeScript
                    | Grammar::Tsx
                    | Grammar::JavaScript
                    | Grammar::Rust
                    | Grammar::Java
            )
        )
    {
        return;
    }
    let Some(spans) = scan_cached(path, language, original) else {
        return;
    };
    let moved = spans.moved(
        |comment| comment.start >= cut,
        |string| string.start >= cut,
        |offset| offset - cut,
    );
    remember(path, language, suffix, moved);
}

/// Whether `scan` can find the comments and strings of a language.
pub(crate) fn supported(path: &RelativePath, language: Language) -> bool {
    Grammar::for_file(path, language).is_some()
        || matches!(language, Language::C | Language::Cpp | Language::Css)
}

/// The comments and string literals of `content`, or `None` when the language
/// is not supported or the file could not be read with confidence (a parse
/// error, an unterminated comment, over [`MAX_PARSE_BYTES`]).
pub(crate) fn scan(path: &RelativePath, language: Language, content: &str) -> Option<SourceSpans> {
    if content.len() > MAX_PARSE_BYTES {
        return None;
    }
    if let Some(grammar) = Grammar::for_file(path, language) {
        let tree = parse_tree(grammar, content)?;
        if tree.root_node().has_error() {
            return None;
        }
        let mut spans = walk(grammar, &tree, content, Prune::BySpanOpeners);
        if grammar == Grammar::Python {
            // The comments of long runs are not in the tree.
            let masked = python_long_comment_runs(content);
            if !masked.is_empty() {
                spans
                    .comments
                    .extend(masked.into_iter().map(|range| Comment {
                        range,
                        above_declaration: false,
                    }));
                spans.comments.sort_by_key(|comment| comment.range.start);
                spans.comments.dedup_by_key(|comment| comment.range.start);
            }
        }
        return Some(spans);
    }
    match language {
        Language::C | Language::Cpp => lex(content, Dialect::C),
        Language::Css => lex(content, Dialect::Css),
        _ => None,
    }
}

/// Node kinds a Go doc comment may sit above.
const GO_DECLARATIONS: &[&str] = &[
    "package_clause",
    "import_declaration",
    "function_declaration",
    "method_declaration",
    "type_declaration",
    "const_declaration",
    "var_declaration",
    "type_spec",
    "type_alias",
    "const_spec",
    "var_spec",
    "field_declaration",
    "method_elem",
];

/// What the walk keeps of each node on the path from the root to the current
/// one: its kind, and (Go) the run of comment lines seen last among its
/// children, waiting for the declaration that would make it a doc comment.
struct Level<'tree> {
    kind: &'tree str,
    /// Indices in `comments` of the current run of comments on consecutive
    /// lines among this node's children, and the row the run ends on.
    run: Vec<usize>,
    run_end_row: usize,
}

/// Whether [`walk`] skips the nodes that cannot hold a comment or a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Prune {
    /// Go into a node only when its text holds one of the grammar's
    /// [`Grammar::span_openers`] (what the scan does).
    BySpanOpeners,
    /// Go into every node (what the tests compare with).
    #[cfg(test)]
    Never,
}

/// Answers "does this byte range hold one of the openers?" for ranges asked
/// in document order, scanning each byte of the text at most once.
struct Openers<'text> {
    bytes: &'text [u8],
    is_opener: [bool; 256],
    /// Where the last question's range started.
    asked_from: usize,
    /// The first opener at or after `asked_from` (the text's length if none).
    next: usize,
}

impl<'text> Openers<'text> {
    fn new(content: &'text str, openers: &[u8]) -> Self {
        let mut is_opener = [false; 256];
        for &byte in openers {
            is_opener[usize::from(byte)] = true;
        }
        let mut found = Self {
            bytes: content.as_bytes(),
            is_opener,
            asked_from: 0,
            next: 0,
        };
        found.next = found.first_from(0);
        found
    }

    fn first_from(&self, start: usize) -> usize {
        self.bytes
            .get(start..)
            .and_then(|rest| {
                rest.iter()
                    .position(|&byte| self.is_opener[usize::from(byte)])
            })
            .map_or(self.bytes.len(), |offset| start + offset)
    }

    fn any_in(&mut self, range: Range<usize>) -> bool {
        // A walk in document order only moves forward; anything else
        // searches afresh.
        if range.start < self.asked_from || self.next < range.start {
            self.next = self.first_from(range.start);
        }
        self.asked_from = range.start;
        self.next < range.end
    }
}

/// Finds the comments and strings in one pass over the tree with a cursor,
/// O(nodes): ancestors come from the walk's own stack and Go doc comments
/// from the run of comments it has just passed, never from `Node::parent` or
/// `Node::next_sibling`, each of which costs a walk down from the root. With
/// [`Prune::BySpanOpeners`] a node whose text has no comment or string
/// opener is passed over whole (most statements of most code), which the
/// tests check finds the same spans.
fn walk(grammar: Grammar, tree: &Tree, content: &str, prune: Prune) -> SourceSpans {
    let mut openers = Openers::new(content, grammar.span_openers());
    let syntax = if grammar == Grammar::Python {
        CommentSyntax::Hash
    } else {
        CommentSyntax::Slashes
    };
    let mut spans = SourceSpans {
        syntax: Some(syntax),
        ..SourceSpans::default()
    };
    let mut cursor = tree.walk();
    let mut levels: Vec<Level<'_>> = Vec::new();
    loop {
        let node = cursor.node();
        let kind = node.kind();
        work::tick(1);
        let mut descend = true;
        if grammar.is_comment(kind) {
            descend = false;
            let mut range = node.byte_range();
            // A Rust line comment may include its newline.
            while range.end > range.start
                && matches!(content.as_bytes()[range.end - 1], b'\n' | b'\r')
            {
                range.end -= 1;
            }
            if grammar == Grammar::Go
                && let Some(level) = levels.last_mut()
            {
                let start_row = node.start_position().row;
                if level.run.is_empty() || start_row != level.run_end_row + 1 {
                    level.run.clear();
                }
                level.run.push(spans.comments.len());
                level.run_end_row = node.end_position().row;
            }
            spans.comments.push(Comment {
                range,
                above_declaration: false,
            });
        } else {
            if grammar == Grammar::Go
                && let Some(level) = levels.last_mut()
                && !level.run.is_empty()
            {
                if node.start_position().row == level.run_end_row + 1
                    && GO_DECLARATIONS.contains(&kind)
                {
                    for &index in &level.run {
                        spans.comments[index].above_declaration = true;
                    }
                }
                level.run.clear();
            }
            // Named only: TypeScript's `string` type keyword is an unnamed
            // node of kind `string`.
            if node.is_named() && grammar.is_string(kind) {
                descend = false;
                spans.strings.push(string_literal(grammar, node, &levels));
            }
        }
        if descend
            && (prune != Prune::BySpanOpeners || openers.any_in(node.byte_range()))
            && cursor.goto_first_child()
        {
            levels.push(Level {
                kind,
                run: Vec::new(),
                run_end_row: 0,
            });
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return spans;
            }
            levels.pop();
        }
    }
}

fn string_literal(grammar: Grammar, node: Node<'_>, ancestors: &[Level<'_>]) -> StringLiteral {
    let range = node.byte_range();
    if node.kind() == "raw_string_literal" && grammar == Grammar::Rust {
        // Its delimiters are not nodes: the one child is the text between them.
        let content = node
            .named_child(0)
            .filter(|child| child.kind() == "string_content");
        return StringLiteral {
            range: range.clone(),
            content: content.map_or(range.start..range.start, |child| child.byte_range()),
            truncatable: content.is_some() && !in_rust_attribute(ancestors),
        };
    }
    let count = node.child_count();
    let first = node.child(0);
    let last = count.checked_sub(1).and_then(|index| node.child(index));
    let content = match (first, last) {
        (Some(first), Some(last)) if count >= 2 && first.end_byte() <= last.start_byte() => {
            first.end_byte()..last.start_byte()
        }
        _ => range.start..range.start,
    };
    let mut truncatable = count >= 2;
    let mut child_cursor = node.walk();
    if node.children(&mut child_cursor).any(|child| {
        matches!(
            child.kind(),
            "interpolation" | "template_substitution" | "string_interpolation"
        )
    }) {
        truncatable = false;
    }
    let docstring = grammar == Grammar::Python
        && ancestors
            .last()
            .is_some_and(|parent| parent.kind == "expression_statement");
    if docstring || (grammar == Grammar::Rust && in_rust_attribute(ancestors)) {
        truncatable = false;
    }
    StringLiteral {
        range,
        content,
        truncatable,
    }
}

/// Whether a Rust node sits in an attribute (`#[doc = "…"]`), looking at
/// most 16 levels up its `ancestors` (the root first).
fn in_rust_attribute(ancestors: &[Level<'_>]) -> bool {
    ancestors
        .iter()
        .rev()
        .take(16)
        .any(|level| matches!(level.kind, "attribute_item" | "inner_attribute_item"))
}

/// The lexer's language family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dialect {
    /// C and C++: `//` (continued by a trailing backslash), `/* */`, strings,
    /// character literals, C++ raw strings `R"d(…)d"` and digit separators
    /// (`1'000`).
    C,
    /// CSS: `/* */` only, strings in either quote.
    Css,
}

fn lex(content: &str, dialect: Dialect) -> Option<SourceSpans> {
    let bytes = content.as_bytes();
    let mut spans = SourceSpans {
        syntax: Some(CommentSyntax::Slashes),
        ..SourceSpans::default()
    };
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'/' if dialect == Dialect::C && bytes.get(at + 1) == Some(&b'/') => {
                let mut end = at + 2;
                loop {
                    let Some(offset) = memchr::memchr(b'\n', &bytes[end..]) else {
                        end = bytes.len();
                        break;
                    };
                    let newline = end + offset;
                    let line = &bytes[..newline];
                    let line = line.strip_suffix(b"\r").unwrap_or(line);
                    if line.ends_with(b"\\") {
                        end = newline + 1;
                        continue;
                    }
                    end = line.len();
                    break;
                }
                spans.comments.push(Comment {
                    range: at..end,
                    above_declaration: false,
                });
                at = end;
            }
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                let close = memchr::memmem::find(&bytes[at + 2..], b"*/")?;
                let end = at + 2 + close + 2;
                spans.comments.push(Comment {
                    range: at..end,
                    above_declaration: false,
                });
                at = end;
            }
            b'"' => {
                if dialect == Dialect::C
                    && let Some(literal) = raw_string(content, at)
                {
                    at = literal.range.end;
                    spans.strings.push(literal);
                    continue;
                }
                let literal = quoted(content, at, b'"', prefix_start(bytes, at));
                at = literal.range.end;
                spans.strings.push(literal);
            }
            b'\'' if dialect == Dialect::Css => {
                let literal = quoted(content, at, b'\'', at);
                at = literal.range.end;
                spans.strings.push(literal);
            }
            b'\'' => {
                let start = prefix_start(bytes, at);
                let digit_separator = start == at
                    && at > 0
                    && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
                if digit_separator {
                    at += 1;
                } else {
                    // A character literal: skipped, never shortened.
                    at = quoted(content, at, b'\'', start).range.end;
                }
            }
            byte if byte.is_ascii_alphanumeric() || byte == b'_' => {
                at += 1;
                while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                    at += 1;
                }
            }
            _ => at += 1,
        }
    }
    Some(spans)
}

/// Where a literal starts once its encoding prefix (`L`, `u`, `U`, `u8`) is
/// included: `at` itself when the identifier before the quote is not one.
fn prefix_start(bytes: &[u8], at: usize) -> usize {
    let mut start = at;
    while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
        start -= 1;
    }
    match &bytes[start..at] {
        b"L" | b"u" | b"U" | b"u8" => start,
        _ => at,
    }
}

/// A literal closed by `quote`, with backslash escapes, that ends at an
/// unescaped newline when left open (C strings cannot span lines).
fn quoted(content: &str, quote_at: usize, quote: u8, start: usize) -> StringLiteral {
    let bytes = content.as_bytes();
    let mut at = quote_at + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'\n' => {
                return StringLiteral {
                    range: start..at,
                    content: quote_at + 1..at,
                    truncatable: false,
                };
            }
            byte if byte == quote => {
                return StringLiteral {
                    range: start..at + 1,
                    content: quote_at + 1..at,
                    truncatable: true,
                };
            }
            _ => at += 1,
        }
    }
    let end = bytes.len();
    StringLiteral {
        range: start..end,
        content: (quote_at + 1).min(end)..end,
        truncatable: false,
    }
}

/// A C++ raw string `R"delimiter(…)delimiter"` whose quote is at `quote_at`,
/// with an optional encoding prefix before the `R`.
fn raw_string(content: &str, quote_at: usize) -> Option<StringLiteral> {
    let bytes = content.as_bytes();
    let mut start = quote_at;
    while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
        start -= 1;
    }
    if !matches!(
        &bytes[start..quote_at],
        b"R" | b"LR" | b"uR" | b"UR" | b"u8R"
    ) {
        return None;
    }
    let open = quote_at + 1 + memchr::memchr(b'(', bytes.get(quote_at + 1..)?)?;
    let delimiter = &content[quote_at + 1..open];
    if delimiter.len() > 16
        || delimiter
            .bytes()
            .any(|b| b.is_ascii_whitespace() || matches!(b, b'\\' | b'(' | b')' | b'"'))
    {
        return None;
    }
    let closer = format!("){delimiter}\"");
    let close = open + 1 + memchr::memmem::find(&bytes[open + 1..], closer.as_bytes())?;
    Some(StringLiteral {
        range: start..close + closer.len(),
        content: open + 1..close,
        truncatable: true,
    })
}

/// Whether a comment's text is a doc comment that tier renders and readers
/// rely on: `///` (not `////`), `//!`, `/**` (not `/**/` or `/***`), `/*!`.
pub(crate) fn is_doc_comment(text: &str, syntax: CommentSyntax) -> bool {
    if syntax != CommentSyntax::Slashes {
        return false;
    }
    (text.starts_with("///") && !text.starts_with("////"))
        || text.starts_with("//!")
        || (text.starts_with("/**") && !text.starts_with("/**/") && !text.starts_with("/***"))
        || text.starts_with("/*!")
}

/// Comment bodies that start like this are directives to a compiler, linter,
/// formatter or bundler, and change what the code means or how it is checked.
const DIRECTIVE_PREFIXES: &[&str] = &[
    "@",
    "eslint",
    "prettier-ignore",
    "istanbul ignore",
    "c8 ignore",
    "v8 ignore",
    "jshint",
    "jslint",
    "global ",
    "globals ",
    "exported ",
    "tslint:",
    "biome-ignore",
    "deno-lint-ignore",
    "deno-fmt-ignore",
    "dprint-ignore",
    "webpack",
    "+build",
    "nolint",
    "lint:",
    "NOLINT",
    "clang-format",
    "IWYU pragma",
    "NOTREACHED",
    "FALLTHROUGH",
    "FALLTHRU",
    "NOSONAR",
    "noinspection",
    "CHECKSTYLE",
    "checkstyle:",
    "language=",
    "swiftlint:",
    "ReSharper",
    "type:",
    "noqa",
    "pylint:",
    "pyright:",
    "pyre-",
    "mypy:",
    "fmt:",
    "isort:",
    "ruff:",
    "yapf:",
    "pragma",
    "nosec",
    "-*-",
    "coding:",
    "coding=",
    "vim:",
    "cspell:",
    "spellchecker:",
    "ignore-tidy",
    "Code generated",
    "syntax=",
    "escape=",
    "check=",
    "yaml-language-server",
    "shellcheck",
    "rubocop:",
    "frozen_string_literal",
    "encoding:",
    "typed:",
];

/// Text that marks a directive wherever it appears in a comment.
const DIRECTIVE_MARKERS: &[&str] = &[
    "noqa",
    "NOLINT",
    "nosec",
    "type: ignore",
    "pragma: no",
    "eslint-disable",
    "eslint-enable",
    "@ts-",
    "prettier-ignore",
    "istanbul ignore",
    "fallthrough",
    "fall through",
    "falls through",
    "fall-through",
    "NOSONAR",
    "noinspection",
    "DO NOT EDIT",
    "@generated",
];

/// Whether a comment is a directive that changes meaning or tooling and so is
/// kept: a Go-style `//name:` directive with no space after the slashes,
/// `//export`, `//line`, or a body starting with or containing one of the
/// known pragma words (`@ts-…`, `eslint-…`, `# noqa`, `# type:`, `# -*- coding`,
/// `/*#__PURE__*/`, `// NOLINT`, `// fallthrough`, …).
pub(crate) fn is_directive(text: &str, syntax: CommentSyntax) -> bool {
    let body = match syntax {
        CommentSyntax::Slashes => {
            if let Some(rest) = text.strip_prefix("//") {
                let name_end = rest
                    .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
                    .unwrap_or(rest.len());
                if (name_end > 0 && rest[name_end..].starts_with(':'))
                    || rest.starts_with("export ")
                    || rest.starts_with("extern ")
                    || rest.starts_with("line ")
                {
                    return true;
                }
                rest
            } else {
                let rest = text.strip_prefix("/*").unwrap_or(text);
                rest.strip_suffix("*/").unwrap_or(rest)
            }
        }
        CommentSyntax::Hash => text.strip_prefix('#').unwrap_or(text),
    };
    let body = body.trim_start_matches(|c: char| c.is_whitespace() || c == '*');
    if syntax == CommentSyntax::Slashes && body.starts_with('#') {
        // `//# sourceMappingURL=…`, `/*#__PURE__*/`, `//#region`.
        return true;
    }
    DIRECTIVE_PREFIXES
        .iter()
        .any(|prefix| body.starts_with(prefix))
        || DIRECTIVE_MARKERS.iter().any(|marker| body.contains(marker))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The code files under `root` with a grammar, up to `limit` of them.
    fn code_files(root: &std::path::Path, limit: usize) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(directory) = stack.pop() {
            let Ok(entries) = fs_err::read_dir(&directory) else {
                continue;
            };
            let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
            entries.sort();
            for path in entries {
                if out.len() >= limit {
                    return out;
                }
                if path.is_dir() {
                    if !path.ends_with("target") && !path.ends_with(".git") {
                        stack.push(path);
                    }
                    continue;
                }
                let Some(name) = path.to_str() else { continue };
                let Some(relative) = RelativePath::new(name.trim_start_matches('/')) else {
                    continue;
                };
                if Grammar::for_file(&relative, Language::detect(&relative)).is_none() {
                    continue;
                }
                if let Ok(text) = fs_err::read_to_string(&path) {
                    out.push((relative.as_str().to_owned(), text));
                }
            }
        }
        out
    }

    /// Passing over the nodes without a comment or string opener finds the
    /// same spans as visiting every node, on this workspace's sources and
    /// fixtures (every grammar), the tree-sitter grammar crates' own sources,
    /// and the directories in `AIC_SPANS_CORPUS` (`:`-separated) for a larger
    /// check on real repositories.
    #[test]
    fn pruned_walk_finds_the_spans_of_a_full_walk() {
        let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the stages crate sits in the workspace")
            .to_path_buf();
        let mut roots = vec![workspace];
        let cargo_home = std::env::var_os("CARGO_HOME").map_or_else(
            || {
                std::path::PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                    .join(".cargo")
            },
            std::path::PathBuf::from,
        );
        if let Ok(registries) = fs_err::read_dir(cargo_home.join("registry/src")) {
            for registry in registries.filter_map(Result::ok) {
                if let Ok(crates) = fs_err::read_dir(registry.path()) {
                    roots.extend(
                        crates
                            .filter_map(Result::ok)
                            .map(|entry| entry.path())
                            .filter(|path| {
                                path.file_name()
                                    .and_then(|name| name.to_str())
                                    .is_some_and(|name| name.starts_with("tree-sitter-"))
                            }),
                    );
                }
            }
        }
        if let Some(extra) = std::env::var_os("AIC_SPANS_CORPUS") {
            roots.extend(std::env::split_paths(&extra));
        }
        let mut compared = std::collections::HashMap::<Grammar, usize>::new();
        for root in roots {
            for (name, text) in code_files(&root, 200_000) {
                let path = RelativePath::new(&name).unwrap();
                let Some(grammar) = Grammar::for_file(&path, Language::detect(&path)) else {
                    continue;
                };
                let Some(tree) = parse_tree(grammar, &text) else {
                    continue;
                };
                assert_eq!(
                    walk(grammar, &tree, &text, Prune::BySpanOpeners),
                    walk(grammar, &tree, &text, Prune::Never),
                    "{name}"
                );
                *compared.entry(grammar).or_default() += 1;
            }
        }
        for grammar in Grammar::ALL {
            assert!(
                compared.get(&grammar).copied().unwrap_or(0) > 0,
                "no {grammar:?} file compared: {compared:?}"
            );
        }
    }

    fn texts(path: &str, content: &str) -> (Vec<String>, Vec<String>) {
        let path = RelativePath::new(path).unwrap();
        let spans = scan(&path, Language::detect(&path), content).unwrap();
        (
            spans
                .comments
                .iter()
                .map(|c| content[c.range.clone()].to_owned())
                .collect(),
            spans
                .strings
                .iter()
                .map(|s| content[s.content.clone()].to_owned())
                .collect(),
        )
    }

    /// The spans remembered for the text after a license header are exactly
    /// those a scan of that text finds, for each grammar the shortcut serves;
    /// Go and Python texts are left to their own scan.
    #[test]
    fn spans_after_a_cut_header_equal_a_scan_of_the_rest() {
        let cases = [
            (
                "src/a.ts",
                "// Copyright 2018 the Authors. MIT license.\n\n/** Doc. */\nexport function f(a: string) { return `x${a}` + \"/* no */\"; } // tail\n",
            ),
            (
                "src/a.tsx",
                "/*\n * Copyright (c) 2020 Acme\n */\nconst el = <div title=\"// t\">{/* c */}</div>; // e\n",
            ),
            (
                "lib/a.js",
                "// SPDX-License-Identifier: MIT\n// Copyright Acme\nconst a = require('./b'); /* c */ const s = '// s';\n",
            ),
            (
                "src/lib.rs",
                "// Copyright 2018-2025 the Deno authors. MIT license.\n\n//! Crate docs.\n/// Doc.\npub fn f() -> &'static str { r#\"// raw\"# } // end\n",
            ),
            (
                "src/A.java",
                "/* Copyright 2024 Acme. All rights reserved. */\npackage a;\n/** Doc. */\nclass A { String s = \"/* x */\"; } // end\n",
            ),
        ];
        for (file, original) in cases {
            let path = RelativePath::new(file).unwrap();
            let language = Language::detect(&path);
            let cut = original.find('\n').unwrap() + 1;
            let cut = if original.starts_with("/*") {
                original.find("*/").unwrap() + 3
            } else {
                cut
            };
            let suffix = &original[cut..];
            remember_suffix(&path, language, original, suffix);
            assert_eq!(
                LAST.with(|last| last.borrow().as_ref().map(|entry| entry.length)),
                Some(suffix.len()),
                "{file}: the spans of the rest are remembered"
            );
            assert_eq!(
                scan_cached(&path, language, suffix),
                scan(&path, language, suffix),
                "{file}"
            );
        }
        for file in ["main.go", "main.py"] {
            let path = RelativePath::new(file).unwrap();
            let language = Language::detect(&path);
            let original = "// Copyright Acme\n# Copyright Acme\nx = 1\n";
            let suffix = &original[18..];
            LAST.with(|last| *last.borrow_mut() = None);
            remember_suffix(&path, language, original, suffix);
            assert!(
                LAST.with(|last| last.borrow().is_none()),
                "{file}: nothing remembered"
            );
        }
    }

    #[test]
    fn rust_raw_strings_and_char_literals_hide_comment_openers() {
        let (comments, strings) = texts(
            "a.rs",
            "let a = r#\"// no \"# ; // yes\nlet c = '/'; /* b */ let d = \"/*x*/\";\n",
        );
        assert_eq!(comments, ["// yes", "/* b */"]);
        assert_eq!(strings, ["// no ", "/*x*/"]);
    }

    #[test]
    fn c_lexer_knows_raw_strings_digit_separators_and_continuations() {
        let (comments, strings) = texts(
            "a.cpp",
            "int n = 1'000; // one \\\n still\nauto s = R\"x(// )\" no)x\"; char c = '\"'; /* b */\n",
        );
        assert_eq!(comments, ["// one \\\n still", "/* b */"]);
        assert_eq!(strings, ["// )\" no"]);
    }

    #[test]
    fn a_parse_error_gives_no_spans() {
        let path = RelativePath::new("a.py").unwrap();
        assert!(scan(&path, Language::Python, "def (:\n  # c\n").is_none());
    }

    #[test]
    fn directives_and_docs_are_recognised() {
        use CommentSyntax::{Hash, Slashes};
        for text in [
            "//go:build linux",
            "// @ts-expect-error",
            "/*#__PURE__*/",
            "/* eslint-disable no-console */",
            "// NOLINT(bugprone)",
            "// fallthrough",
        ] {
            assert!(is_directive(text, Slashes), "{text}");
        }
        for text in ["# type: ignore", "# noqa: E501", "# -*- coding: utf-8 -*-"] {
            assert!(is_directive(text, Hash), "{text}");
        }
        assert!(!is_directive("// Note: see below", Slashes));
        assert!(!is_directive("# TODO: remove", Hash));
        assert!(is_doc_comment("/// Docs", Slashes));
        assert!(is_doc_comment("/** Docs */", Slashes));
        assert!(!is_doc_comment("/**/", Slashes));
        assert!(!is_doc_comment("//// banner", Slashes));
    }
}
