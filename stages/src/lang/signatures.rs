//! Signature renders from a parsed file: the `signatures.scm` matches turned
//! into [`CodeChunk`]s for the L1 (with docs) and L2 (signatures only) tiers.
//!
//! A definition's signature is its source text from its first byte up to its
//! `@body`, trimmed (`pub fn load(path: &Path) -> Result<Config, Error>`).
//! Without a `@body`, a definition of at most [`MAX_INLINE_LINES`] lines is
//! kept whole (a short struct with its fields, a type alias); a longer one is
//! cut at its `@body.inline` and written `{ … }` (or `( … )`), or else cut
//! after its first line and written ` …`. Definitions nested in another one
//! (methods in a class) are indented four spaces per level; continuation lines
//! of a multi-line signature keep their indentation relative to its first line.
//!
//! Doc comments: a `@doc` captured in the same match as a definition (a Python
//! docstring) is rendered under the signature, first paragraph only. A node
//! that a pattern of its own captures as `@doc` is a comment that attaches to
//! the definition it directly precedes: same parent, starting its line, no
//! blank line in between, `@attribute` nodes skipped over. Those patterns are
//! only tried on the siblings above a definition and, for the signatures-only
//! tier, inside the text a signature keeps (comments on the fields of a short
//! struct are left out of it), never over the whole tree.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::ops::Range;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, QueryCursor, Tree};

use super::grammar::{CompiledQuery, Grammar, Purpose, Role};
use super::{CodeChunk, SymbolKind};
use crate::work;

/// Definitions spanning at most this many lines are rendered whole when they
/// have no `@body`.
const MAX_INLINE_LINES: usize = 15;

/// One definition, merged over every match that captured its node.
pub(crate) struct Definition<'tree> {
    node: Node<'tree>,
    kind: SymbolKind,
    /// The first pattern that captured the node; it decides `kind`.
    pattern: usize,
    name: Option<Node<'tree>>,
    body: Option<Node<'tree>>,
    inline_body: Option<Node<'tree>>,
    /// A docstring inside the definition.
    inner_doc: Option<Node<'tree>>,
    /// Doc comments directly above the definition, in source order.
    leading_docs: Vec<Node<'tree>>,
    /// How many other definitions contain this one.
    depth: usize,
}

/// The definitions of a parsed file, in file order (containers before their
/// members), with their leading docs and nesting depth resolved.
pub(crate) struct Signatures<'tree> {
    compiled: &'static CompiledQuery,
    definitions: Vec<Definition<'tree>>,
}

/// Collects the definitions of a parsed file.
pub(crate) fn collect<'tree>(
    grammar: Grammar,
    tree: &'tree Tree,
    content: &str,
) -> Signatures<'tree> {
    let compiled = grammar.query(Purpose::Signatures);
    let mut definitions: BTreeMap<(usize, Reverse<usize>, usize), Definition<'tree>> =
        BTreeMap::new();
    let mut cursor = compiled.cursor();
    let mut matches = cursor.matches(&compiled.query, tree.root_node(), content.as_bytes());
    while let Some(matched) = matches.next() {
        let definition =
            matched
                .captures()
                .iter()
                .find_map(|capture| match compiled.role(capture.index) {
                    Role::Definition(kind) => Some((capture.node, kind)),
                    _ => None,
                });
        let Some((node, kind)) = definition else {
            continue;
        };
        let pattern = matched.pattern_index;
        let entry = definitions
            .entry((node.start_byte(), Reverse(node.end_byte()), node.id()))
            .or_insert_with(|| Definition {
                node,
                kind,
                pattern,
                name: None,
                body: None,
                inline_body: None,
                inner_doc: None,
                leading_docs: Vec::new(),
                depth: 0,
            });
        if pattern < entry.pattern {
            entry.kind = kind;
            entry.pattern = pattern;
        }
        for capture in matched.captures() {
            let captured = capture.node;
            match compiled.role(capture.index) {
                Role::Name => {
                    let earlier = entry.name.is_none_or(|name| {
                        (captured.start_byte(), captured.end_byte())
                            < (name.start_byte(), name.end_byte())
                    });
                    if earlier {
                        entry.name = Some(captured);
                    }
                }
                Role::Body => {
                    entry.body.get_or_insert(captured);
                }
                Role::InlineBody => {
                    entry.inline_body.get_or_insert(captured);
                }
                Role::Doc => {
                    entry.inner_doc.get_or_insert(captured);
                }
                _ => {}
            }
        }
    }

    let mut docs = DocFinder::new(compiled, content);
    let mut resolved: Vec<Definition<'tree>> = definitions
        .into_values()
        .filter(|definition| definition.name.is_some())
        .collect();
    let mut open_ends: Vec<usize> = Vec::new();
    for definition in &mut resolved {
        let start = definition.node.start_byte();
        while open_ends.last().is_some_and(|&end| end <= start) {
            open_ends.pop();
        }
        definition.depth = open_ends.len();
        open_ends.push(definition.node.end_byte());
    }
    attach_leading_docs(tree, &mut resolved, &mut docs);
    Signatures {
        compiled,
        definitions: resolved,
    }
}

/// Sets the leading docs of every definition (sorted by start) in one walk
/// of the tree with a cursor that keeps the siblings seen so far at each
/// level. It descends only into nodes that hold a definition's start, and
/// never calls `Node::prev_sibling`, which walks down from the root and
/// made files with many definitions quadratic.
fn attach_leading_docs<'tree>(
    tree: &'tree Tree,
    definitions: &mut [Definition<'tree>],
    docs: &mut DocFinder<'_>,
) {
    if definitions.is_empty() {
        return;
    }
    let starts: Vec<usize> = definitions.iter().map(|d| d.node.start_byte()).collect();
    let by_id: std::collections::HashMap<usize, usize> = definitions
        .iter()
        .enumerate()
        .map(|(index, definition)| (definition.node.id(), index))
        .collect();
    // Whether a definition starts within `node`'s bytes (or at its start).
    let holds_definition = |node: Node<'_>| {
        let (start, end) = (node.start_byte(), node.end_byte());
        let first = starts.partition_point(|&s| s < start);
        starts.get(first).is_some_and(|&s| s == start || s < end)
    };
    let mut cursor = tree.walk();
    let mut levels: Vec<Vec<Node<'tree>>> = vec![Vec::new()];
    loop {
        let node = cursor.node();
        work::tick(1);
        let siblings = levels.last_mut().expect("the walk is inside the tree");
        if let Some(&index) = by_id.get(&node.id()) {
            definitions[index].leading_docs = docs.leading(node, siblings);
        }
        siblings.push(node);
        if holds_definition(node) && cursor.goto_first_child() {
            levels.push(Vec::new());
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            levels.pop();
        }
    }
}

/// Runs the doc-comment patterns of `signatures.scm` (those without a
/// definition) on single nodes and small subtrees, never on the whole tree.
struct DocFinder<'a> {
    compiled: &'a CompiledQuery,
    content: &'a str,
    cursor: QueryCursor,
}

impl<'a> DocFinder<'a> {
    fn new(compiled: &'a CompiledQuery, content: &'a str) -> Self {
        Self {
            compiled,
            content,
            cursor: QueryCursor::new(),
        }
    }

    /// [`Role::Doc`] or [`Role::Attribute`] when a pattern without a
    /// definition captures `node` itself as one.
    fn role_of(&mut self, node: Node<'_>) -> Option<Role> {
        self.cursor.set_max_start_depth(Some(0));
        let mut matches = self
            .cursor
            .matches(&self.compiled.query, node, self.content.as_bytes());
        while let Some(matched) = matches.next() {
            for capture in matched.captures() {
                let role = self.compiled.role(capture.index);
                if capture.node == node && matches!(role, Role::Doc | Role::Attribute) {
                    return Some(role);
                }
            }
        }
        None
    }

    /// The doc comments directly above the node whose earlier siblings are
    /// `siblings` (nearest last), in source order.
    fn leading<'tree>(&mut self, node: Node<'tree>, siblings: &[Node<'tree>]) -> Vec<Node<'tree>> {
        let mut found = Vec::new();
        let mut below = node;
        for &candidate in siblings.iter().rev() {
            work::tick(1);
            if !adjacent(candidate, below, self.content) {
                break;
            }
            match self.role_of(candidate) {
                Some(Role::Doc) if starts_line(candidate, self.content) => found.push(candidate),
                Some(Role::Attribute) => {}
                _ => break,
            }
            below = candidate;
        }
        found.reverse();
        found
    }

    /// Byte ranges of the doc comments inside `node` within `range`, sorted.
    fn within(&mut self, node: Node<'_>, range: Range<usize>) -> Vec<Range<usize>> {
        self.cursor.set_max_start_depth(None);
        self.cursor.set_byte_range(range);
        let mut found = Vec::new();
        let mut matches = self
            .cursor
            .matches(&self.compiled.query, node, self.content.as_bytes());
        while let Some(matched) = matches.next() {
            let captures = matched.captures();
            let defines = captures
                .iter()
                .any(|capture| matches!(self.compiled.role(capture.index), Role::Definition(_)));
            if defines {
                continue;
            }
            for capture in captures {
                if self.compiled.role(capture.index) == Role::Doc {
                    found.push(capture.node.byte_range());
                }
            }
        }
        self.cursor.set_byte_range(0..usize::MAX);
        found.sort_unstable_by_key(|range| (range.start, range.end));
        found.dedup();
        found
    }
}

/// Whether only whitespace and at most one line break separate two nodes.
fn adjacent(upper: Node<'_>, lower: Node<'_>, content: &str) -> bool {
    let between = slice(content, upper.end_byte(), lower.start_byte());
    if !between.chars().all(char::is_whitespace) {
        return false;
    }
    // Line comments may or may not own their line break, depending on the
    // grammar.
    let own_break =
        usize::from(slice(content, upper.start_byte(), upper.end_byte()).ends_with('\n'));
    between.matches('\n').count() + own_break <= 1
}

/// Whether nothing but whitespace precedes `node` on its first line.
fn starts_line(node: Node<'_>, content: &str) -> bool {
    let start = node.start_byte();
    let line_start = content
        .get(..start)
        .and_then(|before| before.rfind('\n'))
        .map_or(0, |newline| newline + 1);
    slice(content, line_start, start)
        .chars()
        .all(char::is_whitespace)
}

/// `content[start..end]`, or `""` when that is not a valid range.
fn slice(content: &str, start: usize, end: usize) -> &str {
    content.get(start..end).unwrap_or_default()
}

/// The number of lines a node spans, not counting a final line it only
/// enters with its closing line break.
fn line_span(node: Node<'_>) -> usize {
    let start = node.start_position();
    let end = node.end_position();
    let rows = end.row.saturating_sub(start.row);
    if end.column == 0 && rows > 0 {
        rows
    } else {
        rows + 1
    }
}

/// One-based line numbers of a node, first and last inclusive.
fn lines(node: Node<'_>) -> (u32, u32) {
    let first = node.start_position().row + 1;
    let last = first + line_span(node) - 1;
    (
        u32::try_from(first).unwrap_or(u32::MAX),
        u32::try_from(last).unwrap_or(u32::MAX),
    )
}

/// `content[start..end]` without the parts of `removed` (sorted byte ranges)
/// that lie inside it; a removed range alone on its line takes the whole line
/// with it.
fn text_without<'a>(
    content: &'a str,
    start: usize,
    end: usize,
    removed: &[Range<usize>],
) -> Cow<'a, str> {
    let first = removed.partition_point(|range| range.start < start);
    let mut text = String::new();
    let mut copied_to = start;
    for range in removed[first..]
        .iter()
        .take_while(|range| range.start < end)
    {
        if range.start < copied_to || range.end > end {
            continue;
        }
        let removed_text = slice(content, range.start, range.end);
        let owns_break = removed_text.ends_with('\n');
        let before = slice(content, copied_to, range.start);
        let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
        let alone_before = before[line_start..].trim().is_empty();
        let after = slice(content, range.end, end);
        let rest_of_line = if owns_break {
            Some(0)
        } else {
            after
                .find('\n')
                .filter(|&newline| after[..newline].trim().is_empty())
        };
        let (cut_start, cut_end) = match rest_of_line {
            Some(newline) if alone_before => {
                let through_break = if owns_break { 0 } else { newline + 1 };
                (copied_to + line_start, range.end + through_break)
            }
            // A trailing comment: keep the line break it may own.
            _ => (range.start, range.end - usize::from(owns_break)),
        };
        text.push_str(slice(content, copied_to, cut_start));
        copied_to = cut_end;
    }
    if copied_to == start {
        return Cow::Borrowed(slice(content, start, end));
    }
    text.push_str(slice(content, copied_to, end));
    Cow::Owned(text)
}

/// Whether a syntax error lies in the part of `node` before byte `end`.
fn has_error_before(node: Node<'_>, end: usize) -> bool {
    if !node.has_error() {
        return false;
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
    children.into_iter().any(|child| {
        if child.end_byte() <= end {
            child.has_error()
        } else {
            child.start_byte() < end && has_error_before(child, end)
        }
    })
}

/// The first line of `text` followed by ` …`.
fn first_line_elided(text: &str) -> String {
    format!("{} …", text.lines().next().unwrap_or_default().trim_end())
}

/// How much of a definition's text its signature keeps.
enum Cut {
    /// Up to this byte, then ` …` after the first line (a signature with a
    /// syntax error in it, where error recovery may have swallowed what
    /// follows).
    FirstLine(usize),
    /// Up to this byte, then this elision mark.
    At(usize, Option<&'static str>),
}

/// Where a definition's signature ends.
fn cut(definition: &Definition<'_>, content: &str) -> Cut {
    let node = definition.node;
    if let Some(body) = definition.body {
        if has_error_before(node, body.start_byte()) {
            return Cut::FirstLine(body.start_byte());
        }
        return Cut::At(body.start_byte(), None);
    }
    if node.has_error() {
        return Cut::FirstLine(node.end_byte());
    }
    if line_span(node) <= MAX_INLINE_LINES {
        return Cut::At(node.end_byte(), None);
    }
    if let Some(inline) = definition.inline_body {
        let elided = match slice(content, inline.start_byte(), inline.end_byte())
            .chars()
            .next()
        {
            Some('(') => "( … )",
            Some('[') => "[ … ]",
            _ => "{ … }",
        };
        return Cut::At(inline.start_byte(), Some(elided));
    }
    Cut::FirstLine(node.end_byte())
}

/// The signature of a definition as written, without its body, and without
/// the doc comments inside it unless `with_docs`.
fn signature_text(
    definition: &Definition<'_>,
    docs: &mut DocFinder<'_>,
    with_docs: bool,
) -> String {
    let content = docs.content;
    let start = definition.node.start_byte();
    match cut(definition, content) {
        Cut::FirstLine(end) => first_line_elided(slice(content, start, end)),
        Cut::At(end, elided) => {
            let removed = if with_docs {
                Vec::new()
            } else {
                docs.within(definition.node, start..end)
            };
            let text = text_without(content, start, end, &removed);
            let text = text.trim_end();
            match elided {
                Some(mark) => format!("{text} {mark}"),
                // A body that does not own its opening brace (a macro's first
                // rule).
                None if definition.body.is_some() => text
                    .strip_suffix('{')
                    .map_or(text, str::trim_end)
                    .to_owned(),
                None => text.to_owned(),
            }
        }
    }
}

/// The first paragraph of a Python docstring, re-quoted:
/// `"""Summary line."""`. `None` for an empty docstring.
fn docstring_summary(raw: &str) -> Option<String> {
    let unprefixed = raw.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let quote = ["\"\"\"", "'''", "\"", "'"]
        .into_iter()
        .find(|quote| unprefixed.starts_with(quote))?;
    let inner = &unprefixed[quote.len()..];
    let inner = inner.strip_suffix(quote).unwrap_or(inner);
    let paragraph: Vec<&str> = inner
        .lines()
        .map(str::trim)
        .skip_while(|line| line.is_empty())
        .take_while(|line| !line.is_empty())
        .collect();
    if paragraph.is_empty() {
        return None;
    }
    Some(format!("{quote}{}{quote}", paragraph.join("\n")))
}

/// Appends `text` line by line: every line prefixed with `indent`, lines
/// after the first losing up to `column` columns of the indentation they had
/// in the file, trailing whitespace removed, blank lines left empty.
fn push_block(out: &mut String, text: &str, column: usize, indent: &str) {
    for (index, line) in text.lines().enumerate() {
        let line = if index == 0 {
            line
        } else {
            let strip = line
                .bytes()
                .take(column)
                .take_while(|byte| *byte == b' ' || *byte == b'\t')
                .count();
            &line[strip..]
        };
        let line = line.trim_end();
        if !out.is_empty() {
            out.push('\n');
        }
        if !line.is_empty() {
            out.push_str(indent);
            out.push_str(line);
        }
    }
}

/// Renders the definitions as chunks: L1 (`with_docs`) with their doc
/// comments, L2 without any doc comment.
pub(crate) fn chunks(
    signatures: &Signatures<'_>,
    content: &str,
    with_docs: bool,
) -> Vec<CodeChunk> {
    let mut docs = DocFinder::new(signatures.compiled, content);
    signatures
        .definitions
        .iter()
        .filter_map(|definition| {
            let name = definition.name?;
            let indent = "    ".repeat(definition.depth);
            let mut rendered = String::new();
            if with_docs {
                for doc in &definition.leading_docs {
                    let text = slice(content, doc.start_byte(), doc.end_byte());
                    push_block(&mut rendered, text, doc.start_position().column, &indent);
                }
            }
            push_block(
                &mut rendered,
                &signature_text(definition, &mut docs, with_docs),
                definition.node.start_position().column,
                &indent,
            );
            if with_docs
                && let Some(doc) = definition.inner_doc
                && let Some(summary) =
                    docstring_summary(slice(content, doc.start_byte(), doc.end_byte()))
            {
                push_block(&mut rendered, &summary, 0, &format!("{indent}    "));
            }
            let (start_line, end_line) = lines(definition.node);
            Some(CodeChunk {
                symbol_name: slice(content, name.start_byte(), name.end_byte()).to_owned(),
                symbol_kind: definition.kind,
                start_line,
                end_line,
                content: rendered,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docstring_summary_keeps_the_first_paragraph() {
        assert_eq!(
            docstring_summary("\"\"\"One line.\n\n    More detail.\n    \"\"\"").as_deref(),
            Some("\"\"\"One line.\"\"\"")
        );
        assert_eq!(
            docstring_summary("r'''\n    First\n    second.\n'''").as_deref(),
            Some("'''First\nsecond.'''")
        );
        assert_eq!(docstring_summary("\"\"\"   \"\"\""), None);
    }

    #[test]
    fn removed_ranges_take_their_line_when_alone_on_it() {
        let content = "struct A {\n    /// doc\n    a: u32, // trailing\n    /** b */ b: u32,\n}";
        let ranges: Vec<Range<usize>> = ["/// doc\n", "// trailing", "/** b */"]
            .iter()
            .map(|needle| {
                let start = content.find(needle).expect("needle is in the content");
                start..start + needle.len()
            })
            .collect();
        assert_eq!(
            text_without(content, 0, content.len(), &ranges),
            "struct A {\n    a: u32, \n     b: u32,\n}"
        );
        assert_eq!(text_without(content, 0, 9, &ranges), "struct A ");
    }

    #[test]
    fn continuation_lines_are_reindented_to_the_nesting_level() {
        let mut out = String::new();
        push_block(&mut out, "fn f(\n        a: u32,\n    ) -> u32", 4, "  ");
        assert_eq!(out, "  fn f(\n      a: u32,\n  ) -> u32");
    }
}
