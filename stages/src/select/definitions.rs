//! The definition index of a file: every function, method, class, struct,
//! impl, interface and trait it defines (and, in Markdown, every section),
//! with its qualified name and line spans.
//!
//! An agent edits a definition, not a file, so a definition is the unit the
//! fit shows whole or not at all (`docs/selection.md`, "Definitions"). The
//! index is found by one pass over the lines of a file's L0 text, with rules
//! that hold across languages rather than one grammar each:
//!
//! - a definition opens on a line that starts (after modifiers such as
//!   `pub`, `export`, `async`, `static`, `public`) with a definition keyword
//!   (`def`, `class`, `fn`, `function`, `func`, `struct`, `enum`, `trait`,
//!   `interface`, `impl`, `type`, `mod`, …), with `const name = (…) => {`, or,
//!   inside a type or at the top level of a C-like file, with
//!   `Type name(…) {` / `name(…) {` (methods, Java and C functions);
//! - decorators, annotations, attributes and doc comments directly above it
//!   belong to it;
//! - it runs down to the last line indented deeper than its first line,
//!   plus one closing line at its own indentation (`}`, `)`), which is how
//!   every formatter lays code out; a parameter list over several lines is
//!   part of the header;
//! - in Markdown, a heading opens a section that runs to the next heading of
//!   the same or a higher level.
//!
//! Definitions inside a function's body (closures, local helpers) are part
//! of that body, not entries of their own. What it leaves out: code a
//! formatter never touched (bodies not indented), and definitions made by
//! macros or assignments (`Foo = make_class()`).
//!
//! # Example
//!
//! ```
//! use aic_stages::language::Language;
//! use aic_stages::select::definitions::{DefinitionKind, definition_index};
//!
//! let text = "class Printer:\n    \"\"\"Prints.\"\"\"\n\n    def _print_sin(self, e):\n        return 'sin'\n\n\ndef ccode(e):\n    return Printer()\n";
//! let index = definition_index(text, Language::Python);
//! let names: Vec<&str> = index.iter().map(|d| d.name.as_str()).collect();
//! assert_eq!(names, ["Printer", "Printer._print_sin", "ccode"]);
//! assert_eq!((index[0].start, index[0].doc_end, index[0].end), (0, 1, 4));
//! assert_eq!(index[1].parent, Some(0));
//! assert_eq!(index[2].kind, DefinitionKind::Function);
//! ```

use serde::Serialize;

use crate::language::Language;

/// What a definition defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DefinitionKind {
    /// A function or a method.
    Function,
    /// A class, struct, enum, trait, interface, impl block, module or type.
    Type,
    /// A Markdown section (a heading and what follows it).
    Section,
}

/// One definition of a file; lines are zero-based indices into the text the
/// index was made from (the file's L0 text), inclusive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    /// The name qualified by its enclosing definitions: `Request.register_hook`.
    pub name: String,
    /// What it defines.
    pub kind: DefinitionKind,
    /// First line: its decorators, attributes or doc comment when it has them.
    pub start: u32,
    /// The line with the definition keyword (or the heading).
    pub header_start: u32,
    /// Last line of the signature (a parameter list may span lines).
    pub header_end: u32,
    /// Last line of its own docstring under the header (Python), else
    /// `header_end`.
    pub doc_end: u32,
    /// Last line, body included.
    pub end: u32,
    /// Index (in the same list) of the definition it is nested in.
    pub parent: Option<u32>,
}

impl Definition {
    /// Lines in the definition.
    pub fn line_count(&self) -> usize {
        (self.end - self.start) as usize + 1
    }

    /// The simple name: the last segment of [`Definition::name`].
    pub fn simple_name(&self) -> &str {
        self.name.rsplit('.').next().unwrap_or(&self.name)
    }
}

/// The definitions of `text`, in file order (by first line); see the module
/// docs for the rules. Empty for a text that defines nothing.
pub fn definition_index(text: &str, language: Language) -> Vec<Definition> {
    let lines: Vec<&str> = text.lines().collect();
    if language == Language::Markdown {
        return sections(&lines);
    }
    let found = if language.is_code() {
        code_definitions(&lines, language)
    } else {
        // reStructuredText and other prose: titles underlined with `===`,
        // `---`, `~~~`, …
        underlined_sections(&lines)
    };
    if found.is_empty() {
        indented_blocks(&lines)
    } else {
        found
    }
}

/// The definitions of a code file's `lines` by the language rules.
fn code_definitions(lines: &[&str], language: Language) -> Vec<Definition> {
    let python = language == Language::Python;
    let mut found: Vec<Definition> = Vec::new();
    // Open definitions enclosing the current line: (index in `found`, end).
    let mut open: Vec<(usize, u32)> = Vec::new();
    let mut index = 0usize;
    while index < lines.len() {
        let line = lines[index];
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            index += 1;
            continue;
        }
        let at = index as u32;
        while open.last().is_some_and(|&(_, end)| end < at) {
            open.pop();
        }
        let parent = open.last().map(|&(i, _)| i);
        let parent_kind = parent.map(|i| found[i].kind);
        if parent_kind == Some(DefinitionKind::Function) {
            index += 1;
            continue;
        }
        let Some((kind, name)) = opener(trimmed, indent(line), parent_kind.is_some(), python)
            .or_else(|| (!python).then(|| typed_binding(lines, index)).flatten())
        else {
            index += 1;
            continue;
        };
        let start = leading_lines(lines, index);
        let (header_end, end) = span(lines, index, python);
        let doc_end = if python {
            docstring_end(lines, header_end as usize, end as usize).unwrap_or(header_end)
        } else {
            header_end
        };
        let name = match parent {
            Some(i) if !name.contains('.') => format!("{}.{name}", found[i].name),
            _ => name,
        };
        found.push(Definition {
            name,
            kind,
            start,
            header_start: at,
            header_end,
            doc_end,
            end,
            parent: parent.map(|i| i as u32),
        });
        open.push((found.len() - 1, end));
        // Nested definitions start below the header.
        index = header_end as usize + 1;
    }
    found
}

/// Width of a line's indentation, a tab counting as four columns.
pub(crate) fn indent(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

/// Modifiers that may precede a definition keyword, each with its space.
const MODIFIERS: [&str; 27] = [
    "pub ",
    "pub(crate) ",
    "pub(super) ",
    "pub(self) ",
    "export ",
    "default ",
    "async ",
    "static ",
    "public ",
    "private ",
    "protected ",
    "internal ",
    "abstract ",
    "final ",
    "override ",
    "readonly ",
    "unsafe ",
    "extern \"C\" ",
    "declare ",
    "synchronized ",
    "native ",
    "open ",
    "sealed ",
    "inline ",
    "virtual ",
    "const ",
    "data ",
];

/// Keywords that open a function.
const FUNCTION_KEYWORDS: [&str; 6] = ["def ", "fn ", "function ", "function* ", "func ", "fun "];

/// Keywords that open a type-like definition.
const TYPE_KEYWORDS: [&str; 13] = [
    "class ",
    "struct ",
    "enum ",
    "trait ",
    "interface ",
    "union ",
    "object ",
    "record ",
    "impl ",
    "impl<",
    "mod ",
    "module ",
    "namespace ",
];

/// Words that start a statement, never a method header.
const CONTROL_WORDS: [&str; 22] = [
    "if", "for", "while", "switch", "catch", "return", "else", "do", "try", "new", "throw",
    "typeof", "await", "yield", "super", "this", "match", "loop", "when", "with", "assert",
    "print",
];

/// The kind and name a line opens, if it opens a definition. `nested`: the
/// line is inside a type's body.
fn opener(
    trimmed: &str,
    indent: usize,
    nested: bool,
    python: bool,
) -> Option<(DefinitionKind, String)> {
    let mut rest = trimmed;
    // `pub(in crate::x)`.
    if let Some(after) = rest.strip_prefix("pub(in ")
        && let Some(close) = after.find(") ")
    {
        rest = &after[close + 2..];
    }
    loop {
        let before = rest;
        for modifier in MODIFIERS {
            if let Some(after) = rest.strip_prefix(modifier) {
                // `const x = …` is a binding, handled below.
                if modifier == "const " && !after.starts_with("fn ") {
                    continue;
                }
                rest = after;
            }
        }
        if rest.len() == before.len() {
            break;
        }
    }
    for keyword in FUNCTION_KEYWORDS {
        if let Some(after) = rest.strip_prefix(keyword) {
            if keyword == "func " && after.starts_with('(') {
                // A Go method: `func (s *Server) Handle(…)`.
                let close = after.find(')')?;
                let receiver = after[1..close]
                    .split_whitespace()
                    .last()?
                    .trim_start_matches('*');
                let receiver = receiver.split('[').next().unwrap_or(receiver);
                let name = identifier(after[close + 1..].trim_start())?;
                return Some((DefinitionKind::Function, format!("{receiver}.{name}")));
            }
            return identifier(after).map(|name| (DefinitionKind::Function, name));
        }
    }
    if python {
        return rest
            .strip_prefix("class ")
            .and_then(identifier)
            .map(|name| (DefinitionKind::Type, name));
    }
    for keyword in TYPE_KEYWORDS {
        if let Some(after) = rest.strip_prefix(keyword) {
            if keyword.starts_with("impl") {
                return impl_name(rest).map(|name| (DefinitionKind::Type, name));
            }
            return identifier(after).map(|name| (DefinitionKind::Type, name));
        }
    }
    if let Some(after) = rest.strip_prefix("type ") {
        let name = identifier(after)?;
        let tail = after[name.len()..].trim_start();
        return (tail.starts_with('=')
            || tail.starts_with('<')
            || tail.starts_with("struct")
            || tail.starts_with("interface"))
        .then_some((DefinitionKind::Type, name));
    }
    if let Some(after) = rest.strip_prefix("macro_rules! ") {
        return identifier(after).map(|name| (DefinitionKind::Function, name));
    }
    // `const name = (…) => {`, `let name = function (…) {`.
    for binding in ["const ", "let ", "var "] {
        if let Some(after) = rest.strip_prefix(binding) {
            let name = identifier(after)?;
            let value = after[name.len()..].trim_start();
            let value = value
                .strip_prefix(':')
                .map_or(value, |typed| typed.split_once('=').map_or("", |(_, v)| v));
            let value = value.strip_prefix('=').unwrap_or(value).trim_start();
            let function = value.starts_with("function")
                || value.starts_with("async")
                || (value.starts_with('(') || identifier(value).is_some())
                    && trimmed.contains("=>");
            return (function && trimmed.trim_end().ends_with(['{', '(']))
                .then_some((DefinitionKind::Function, name));
        }
    }
    method(rest, indent, nested)
}

/// A function bound to a name whose type annotation or parameter list spans
/// lines: `const plugin: Creator<{` … `}> = (opts) => {`, or `const make = (`
/// … `) => {`: the line at the binding's
/// indentation that closes the type (within 24 lines) assigns a function.
fn typed_binding(lines: &[&str], index: usize) -> Option<(DefinitionKind, String)> {
    let line = lines[index];
    let mut rest = line.trim_start();
    for prefix in ["export ", "default ", "declare "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let after = ["const ", "let ", "var "]
        .iter()
        .find_map(|binding| rest.strip_prefix(binding))?;
    let name = identifier(after)?;
    let tail = after[name.len()..].trim_start();
    // `const name = (` with the parameters on the next lines, closed by
    // `) => {` at its own indentation.
    let arrow = tail
        .strip_prefix('=')
        .is_some_and(|value| value.trim().trim_start_matches("async").trim_start() == "(");
    if !arrow
        && (!tail.starts_with(':')
            || tail.contains('=')
            || !tail.trim_end().ends_with(['{', '<', '(', ',']))
    {
        return None;
    }
    let own = indent(line);
    if arrow {
        let close = lines
            .iter()
            .skip(index + 1)
            .take(24)
            .find(|text| !text.trim().is_empty() && indent(text) <= own)?
            .trim();
        return (close.starts_with(')') && close.contains("=>") && close.ends_with('{'))
            .then_some((DefinitionKind::Function, name));
    }
    let close = lines
        .iter()
        .enumerate()
        .skip(index + 1)
        .take(24)
        .find(|(_, text)| !text.trim().is_empty() && indent(text) <= own)?
        .1
        .trim();
    let (_, value) = close.split_once('=')?;
    let value = value.trim_start();
    let function = value.starts_with("function")
        || value.starts_with("async")
        || value.starts_with('(') && close.contains("=>");
    (close.starts_with(['}', '>', ')']) && function && close.ends_with('{'))
        .then_some((DefinitionKind::Function, name))
}

/// A method or C-like function header: `name(…) {`, `Type name(…) {`,
/// `get name() {`, `async *name(…) {` (the parameters may continue on the
/// next lines: a line ending in `(` or `,` counts).
fn method(rest: &str, indent: usize, nested: bool) -> Option<(DefinitionKind, String)> {
    let open = rest.find('(')?;
    let before = rest[..open].trim_end();
    let line = rest.trim_end();
    if !(line.ends_with('{') || line.ends_with('(') || line.ends_with(',') || line.ends_with(')')) {
        return None;
    }
    if before.contains([
        '=', '"', '\'', '`', ':', '!', '&', '|', '+', '-', '/', ';', '{', '}',
    ]) || line.contains("=>")
        || line.ends_with(')') && nested
    {
        return None;
    }
    let words: Vec<&str> = before
        .split_whitespace()
        .filter(|w| !matches!(*w, "get" | "set" | "*"))
        .collect();
    let name = words.last()?.trim_start_matches('*');
    let first = words.first()?;
    if CONTROL_WORDS.contains(first) || identifier(name)? != name {
        return None;
    }
    // Outside a type only a header with a return type counts (`int main(`),
    // never a bare call (`describe(…, () => {`).
    let args = &rest[open..];
    if args.contains(['"', '\'', '`']) || (!nested && (words.len() < 2 || indent > 0)) {
        return None;
    }
    Some((DefinitionKind::Function, name.to_owned()))
}

/// The self type of an `impl` header: `impl<T> Display for Wrapper<T> {` →
/// `Wrapper`.
fn impl_name(header: &str) -> Option<String> {
    let header = header.split('{').next().unwrap_or(header);
    let header = header.split(" where ").next().unwrap_or(header);
    let target = header.rsplit(" for ").next().unwrap_or(header);
    let target = target.strip_prefix("impl").unwrap_or(target);
    // Skip the impl's own generics.
    let target = if target.starts_with('<') {
        let mut depth = 0usize;
        let mut cut = target.len();
        for (at, c) in target.char_indices() {
            match c {
                '<' => depth += 1,
                '>' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        cut = at + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        &target[cut..]
    } else {
        target
    };
    let target = target.trim().trim_start_matches('&');
    let base = target.split('<').next().unwrap_or(target);
    let base = base.rsplit("::").next().unwrap_or(base);
    identifier(base.trim())
}

/// The identifier at the start of `text`.
fn identifier(text: &str) -> Option<String> {
    let text = text.trim_start();
    let end = text
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '$'))
        .map_or(text.len(), |(at, _)| at);
    let name = &text[..end];
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then(|| name.to_owned())
}

/// The first line of the decorators, attributes and doc comment directly
/// above line `index` at its indentation.
fn leading_lines(lines: &[&str], index: usize) -> u32 {
    let own = indent(lines[index]);
    let mut start = index;
    while start > 0 {
        let above = lines[start - 1];
        let trimmed = above.trim_start();
        let leading = indent(above) == own
            && (trimmed.starts_with('@')
                || trimmed.starts_with("#[")
                || trimmed.starts_with("///")
                || trimmed.starts_with("//!")
                || trimmed.starts_with("/**")
                || trimmed.starts_with("//"))
            || indent(above) == own + 1 && (trimmed.starts_with('*'));
        if leading {
            start -= 1;
            continue;
        }
        // A decorator whose arguments span lines (`@click.option(` …
        // `)`): its argument lines and closing bracket, up to its `@` line.
        let mut probe = start;
        while probe > 0 && start - probe < 40 {
            let line = lines[probe - 1];
            let trimmed = line.trim_start();
            if trimmed.is_empty() {
                break;
            }
            if indent(line) == own && trimmed.starts_with('@') {
                break;
            }
            let inside =
                indent(line) > own || indent(line) == own && trimmed.starts_with([')', ']', '}']);
            if !inside {
                break;
            }
            probe -= 1;
        }
        let decorated = probe > 0 && probe < start && {
            let line = lines[probe - 1];
            indent(line) == own && line.trim_start().starts_with('@')
        };
        if !decorated {
            break;
        }
        start = probe - 1;
    }
    start as u32
}

/// `(header_end, end)` of the definition whose keyword is on line `index`.
fn span(lines: &[&str], index: usize, python: bool) -> (u32, u32) {
    let own = indent(lines[index]);
    let first = lines[index].trim_end();
    let opens_body = |line: &str| {
        let line = line.trim_end();
        if python {
            line.ends_with(':')
        } else {
            line.ends_with('{') || line.ends_with("=> {")
        }
    };
    let mut header_end = index;
    let mut end = index;
    let mut body_started = opens_body(first);
    let ends_here =
        !python && (first.ends_with(';') || first.ends_with('}') && first.matches('{').count() > 0);
    if ends_here {
        return (index as u32, index as u32);
    }
    for (next, text) in lines.iter().enumerate().skip(index + 1) {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            continue;
        }
        if indent(text) > own {
            end = next;
            if !body_started {
                header_end = next;
                body_started = opens_body(text);
            }
            continue;
        }
        if trimmed.starts_with([')', '}', ']']) || (!body_started && trimmed.starts_with('>')) {
            end = next;
            // The end of a parameter list over several lines (`) -> Config:`,
            // `) {`): the body follows, indented deeper. A return type may
            // go on below it (`): Promise<` … `> {`, `) -> Dict[` … `]:`).
            if !body_started && trimmed.starts_with([')', ']', '>']) {
                header_end = next;
                body_started = opens_body(text);
                if body_started || trimmed.ends_with([',', '<', '(', '[', '|', '&']) {
                    continue;
                }
            }
            // A line at the header's indentation that closes and opens
            // again (`}> {` after a return type written as an object,
            // `) -> Result<(), E> {`) ends the header: the body follows.
            if opens_body(text) {
                header_end = next;
                body_started = true;
                continue;
            }
            break;
        }
        // A brace on its own line below a C-like header.
        if !body_started && trimmed == "{" {
            header_end = next;
            end = next;
            body_started = true;
            continue;
        }
        break;
    }
    (header_end as u32, end.max(header_end) as u32)
}

/// Last line of a Python docstring that opens the body after `header_end`.
fn docstring_end(lines: &[&str], header_end: usize, end: usize) -> Option<u32> {
    let first = (header_end + 1..=end).find(|&i| !lines[i].trim().is_empty())?;
    let text = lines[first].trim_start();
    let body = text.trim_start_matches(['r', 'u', 'b', 'R', 'U', 'B']);
    let quote = ["\"\"\"", "'''"]
        .into_iter()
        .find(|q| body.starts_with(q))?;
    if body.len() >= 6 && body[3..].contains(quote) {
        return Some(first as u32);
    }
    (first + 1..=end)
        .find(|&i| lines[i].contains(quote))
        .map(|i| i as u32)
}

/// Markdown sections: each heading up to the next of the same or a higher
/// level (headings inside fenced code blocks do not count).
fn sections(lines: &[&str]) -> Vec<Definition> {
    let mut headings: Vec<(usize, usize, String)> = Vec::new();
    let mut fenced = false;
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let level = line.chars().take_while(|c| *c == '#').count();
        let title = line[level..].trim();
        if level <= 6 && line[level..].starts_with(' ') && !title.is_empty() {
            headings.push((index, level, title.to_owned()));
        }
    }
    nest_sections(lines.len(), &headings)
}

/// Sections from `(line, level, title)` headings: each runs to the line
/// before the next heading of the same or a higher level.
fn nest_sections(line_count: usize, headings: &[(usize, usize, String)]) -> Vec<Definition> {
    let mut found: Vec<Definition> = Vec::new();
    let mut open: Vec<(usize, usize)> = Vec::new(); // (index in found, level)
    for (at, (index, level, title)) in headings.iter().enumerate() {
        let end = headings[at + 1..]
            .iter()
            .find(|(_, l, _)| l <= level)
            .map_or(line_count.saturating_sub(1), |(next, _, _)| next - 1);
        while open.last().is_some_and(|&(_, l)| l >= *level) {
            open.pop();
        }
        let parent = open.last().map(|&(i, _)| i as u32);
        found.push(Definition {
            name: title.clone(),
            kind: DefinitionKind::Section,
            start: *index as u32,
            header_start: *index as u32,
            header_end: *index as u32,
            doc_end: *index as u32,
            end: end as u32,
            parent,
        });
        open.push((found.len() - 1, *level));
    }
    found
}

/// Whether `line` imports names: `import`, `from … import`, `use`,
/// `#include`, `require(…)`, `extern crate`.
pub fn is_import_line(line: &str) -> bool {
    let line = line.trim_start();
    [
        "import ",
        "from ",
        "use ",
        "pub use ",
        "#include",
        "extern crate ",
    ]
    .iter()
    .any(|prefix| line.starts_with(prefix))
        || (line.contains("require(") && (line.starts_with("const ") || line.starts_with("var ")))
}

/// The fallback for a file the other rules find nothing in (a YAML or JSON
/// document, an INI or TOML file, a script of top-level statements): blocks
/// by layout. A line opens a block when the next meaningful line (not blank,
/// not a comment) is indented deeper; the block runs to the last line before
/// the next meaningful line indented no deeper than it, plus that line when it
/// closes a bracket at the same indentation (`}`, `]`, `)`). A `[section]`
/// line at the left margin (INI, TOML) opens a block that runs to the next
/// one. Blocks nest; each is a [`DefinitionKind::Section`] named by its first
/// line's key (`jobs`, `"scripts"`, `tool.ruff`), else its first words.
fn indented_blocks(lines: &[&str]) -> Vec<Definition> {
    let meaningful: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            let line = lines[i].trim_start();
            !line.is_empty()
                && !["#", "//", ";", "<!--", "/*", "*"]
                    .iter()
                    .any(|c| line.starts_with(c))
        })
        .collect();
    let is_table = |line: &str| {
        let line = line.trim_end();
        line.starts_with('[') && line.ends_with(']') && line.len() > 2 && !line.contains(',')
    };
    let tables = meaningful.iter().any(|&i| is_table(lines[i]));
    // The layout depth of a line: its indentation, one deeper inside a
    // `[section]`.
    let mut inside_section = false;
    let depths: Vec<usize> = meaningful
        .iter()
        .map(|&i| {
            if tables && is_table(lines[i]) {
                inside_section = true;
                0
            } else {
                // A list item (`- uses: …`) sits one deeper than its key
                // even at the key's indentation, as YAML allows.
                let item = lines[i].trim_start().starts_with("- ");
                indent(lines[i]) + usize::from(inside_section) + usize::from(item)
            }
        })
        .collect();
    let mut found: Vec<Definition> = Vec::new();
    // Open blocks: (index in `found`, or none for a bare bracket, depth).
    let mut open: Vec<(Option<usize>, usize)> = Vec::new();
    for (k, &index) in meaningful.iter().enumerate() {
        let depth = depths[k];
        let closes = ["}", "]", ")"]
            .iter()
            .any(|c| lines[index].trim_start().starts_with(c));
        let mut closed_here = false;
        while let Some(&(block, at)) = open.last() {
            if at < depth {
                break;
            }
            // The line before this one, or this one when it closes the block.
            let end = if at == depth && closes && !closed_here {
                closed_here = true;
                index
            } else {
                meaningful[k - 1]
            };
            if let Some(block) = block {
                found[block].end = end as u32;
            }
            open.pop();
        }
        // An import list over several lines is not a block of its own.
        let imports =
            is_import_line(lines[index]) || lines[index].trim_start().starts_with("export {");
        // A `[section]` opens a block even when it is empty.
        let table = tables && depth == 0 && is_table(lines[index]);
        let opens = !imports && (table || depths.get(k + 1).is_some_and(|&next| next > depth));
        if opens && !closed_here {
            let name = block_name(lines[index]);
            // A bare bracket (`{` around a JSON document) nests what is in
            // it but is no block of its own.
            if !name.chars().any(char::is_alphanumeric) {
                open.push((None, depth));
                continue;
            }
            let parent = open
                .iter()
                .rev()
                .find_map(|&(block, _)| block)
                .map(|b| b as u32);
            found.push(Definition {
                name,
                kind: DefinitionKind::Section,
                start: index as u32,
                header_start: index as u32,
                header_end: index as u32,
                doc_end: index as u32,
                end: index as u32,
                parent,
            });
            open.push((Some(found.len() - 1), depth));
        }
    }
    if let Some(&last) = meaningful.last() {
        for (block, _) in open {
            if let Some(block) = block {
                found[block].end = last as u32;
            }
        }
    }
    found
}

/// The name of a block opened by `line`: the key before `:` or `=` (quotes
/// dropped), a `[section]`'s name, else its first three words.
fn block_name(line: &str) -> String {
    let line = line.trim();
    if let Some(table) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
        return table.trim_matches(['[', ']']).trim().to_owned();
    }
    let key = line
        .split([':', '='])
        .next()
        .unwrap_or(line)
        .trim()
        .trim_start_matches("- ")
        .trim_matches(['"', '\'']);
    if !key.is_empty() && key.len() < line.len() && !key.contains(' ') {
        return key.to_owned();
    }
    line.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Sections of a prose file whose titles are underlined (reStructuredText):
/// a line followed by a run of one punctuation character at least as long,
/// the level set by the order in which each character first appears.
fn underlined_sections(lines: &[&str]) -> Vec<Definition> {
    let mut levels: Vec<char> = Vec::new();
    let mut headings: Vec<(usize, usize, String)> = Vec::new();
    for (index, pair) in lines.windows(2).enumerate() {
        let (title, rule) = (pair[0].trim_end(), pair[1].trim_end());
        let Some(mark) = rule.chars().next() else {
            continue;
        };
        let underline = "=-~^*#+\"`:'".contains(mark)
            && rule.len() >= 3
            && rule.chars().all(|c| c == mark)
            && !title.trim().is_empty()
            && !title.starts_with(' ')
            && rule.chars().count() >= title.chars().count();
        if !underline || title.chars().all(|c| c == mark) {
            continue;
        }
        let level = levels.iter().position(|&c| c == mark).unwrap_or_else(|| {
            levels.push(mark);
            levels.len() - 1
        });
        headings.push((index, level + 1, title.trim().to_owned()));
    }
    let mut found = nest_sections(lines.len(), &headings);
    // The underline is part of the heading.
    for section in &mut found {
        section.header_end = (section.header_end + 1).min(section.end);
        section.doc_end = section.header_end;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str, language: Language) -> Vec<(String, u32, u32)> {
        definition_index(text, language)
            .into_iter()
            .map(|d| (d.name, d.start, d.end))
            .collect()
    }

    fn owned(items: &[(&str, u32, u32)]) -> Vec<(String, u32, u32)> {
        items
            .iter()
            .map(|(n, s, e)| ((*n).to_owned(), *s, *e))
            .collect()
    }

    #[test]
    fn files_without_definitions_get_blocks_by_layout() {
        let yaml = "# CI\nname: ci\non:\n  push:\n    branches: [main]\njobs:\n  test:\n    runs-on: ubuntu\n    steps:\n    - uses: checkout\n    - run: make\n";
        assert_eq!(
            names(yaml, Language::Yaml),
            owned(&[
                ("on", 2, 4),
                ("push", 3, 4),
                ("jobs", 5, 10),
                ("test", 6, 10),
                ("steps", 8, 10)
            ])
        );
        let json = "{\n  \"name\": \"vite\",\n  \"scripts\": {\n    \"build\": \"tsc\"\n  },\n  \"files\": [\n    \"dist\"\n  ]\n}\n";
        assert_eq!(
            names(json, Language::Json),
            owned(&[("scripts", 2, 4), ("files", 5, 7)])
        );
        let ini =
            "[MASTER]\njobs=1\n\n[EMPTY]\n[MESSAGES CONTROL]\ndisable=\n    C0111,\n    R0201\n";
        assert_eq!(
            names(ini, Language::Unknown),
            owned(&[
                ("MASTER", 0, 1),
                ("EMPTY", 3, 3),
                ("MESSAGES CONTROL", 4, 7),
                ("disable", 5, 7)
            ])
        );
        // A Python file of data and imports: the dict is a block, the
        // import list is not.
        let data = "from x import (\n    a,\n)\n\nTABLE = {\n    1: 'one',\n    2: 'two',\n}\n";
        assert_eq!(names(data, Language::Python), owned(&[("TABLE", 4, 7)]));
        // A file with definitions keeps only them.
        assert_eq!(
            names(
                "def f():\n    x = {\n        1: 2,\n    }\n",
                Language::Python
            ),
            owned(&[("f", 0, 3)])
        );
    }

    #[test]
    fn python_classes_methods_decorators_and_long_headers() {
        let text = "import os\n\n@dataclass\nclass Option(Parameter):\n    x = 1\n\n    @property\n    def help(self):\n        return self._help\n\n    def get_help_extra(\n        self, ctx\n    ) -> dict:\n        \"\"\"Extra help.\n\n        More.\n        \"\"\"\n        def local():\n            pass\n        return {}\n\n\ndef main():\n    Option()\n";
        assert_eq!(
            names(text, Language::Python),
            owned(&[
                ("Option", 2, 19),
                ("Option.help", 6, 8),
                ("Option.get_help_extra", 10, 19),
                ("main", 22, 23)
            ])
        );
        let index = definition_index(text, Language::Python);
        assert_eq!((index[2].header_start, index[2].header_end), (10, 12));
        assert_eq!(index[2].doc_end, 16);
    }

    #[test]
    fn rust_impls_traits_and_attributes() {
        let text = "/// A wrapper.\n#[derive(Debug)]\npub struct Wrapper<T>(T);\n\nimpl<T: Display> fmt::Display for Wrapper<T> {\n    fn fmt(&self, f: &mut Formatter) -> fmt::Result {\n        write!(f, \"{}\", self.0)\n    }\n}\n\npub(crate) async fn load(\n    path: &Path,\n) -> Result<()> {\n    Ok(())\n}\n";
        assert_eq!(
            names(text, Language::Rust),
            owned(&[
                ("Wrapper", 0, 2),
                ("Wrapper", 4, 8),
                ("Wrapper.fmt", 5, 7),
                ("load", 10, 14)
            ])
        );
    }

    #[test]
    fn typescript_classes_methods_and_arrow_functions() {
        let text = "export class Server {\n  private port = 1;\n  async listen(port: number): Promise<void> {\n    if (port) {\n      return;\n    }\n  }\n  get url() {\n    return '';\n  }\n}\n\nexport const createServer = async (opts: Opts) => {\n  return new Server();\n};\n\ndescribe('server', () => {\n  it('works', () => {\n  });\n});\n";
        assert_eq!(
            names(text, Language::TypeScript),
            owned(&[
                ("Server", 0, 10),
                ("Server.listen", 2, 6),
                ("Server.url", 7, 9),
                ("createServer", 12, 14)
            ])
        );
    }

    #[test]
    fn decorators_whose_arguments_span_lines_belong_to_the_definition() {
        let text = "x = 1\n\n@cli.command()\n@click.option(\n    \"--fast\",\n    is_flag=True,\n)\n@click.argument(\"paths\")\ndef fix(fast, paths):\n    return fast\n";
        assert_eq!(names(text, Language::Python), owned(&[("fix", 2, 9)]));
    }

    #[test]
    fn an_arrow_function_whose_parameters_span_lines() {
        let text = "const makeScssWorker = (\n  environment: Env,\n  maxWorkers: number,\n) => {\n  const skip = (url: string) => {\n    return url\n  }\n  return skip\n}\n\nexport const run = async (\n  a: number,\n) => {\n  return a\n}\n\nconst call = (\n  1,\n)\n";
        assert_eq!(
            names(text, Language::TypeScript),
            owned(&[("makeScssWorker", 0, 8), ("run", 10, 14)])
        );
    }

    #[test]
    fn a_function_whose_type_spans_lines_is_a_definition() {
        let text = "const UrlRewritePostcssPlugin: PostCSS.PluginCreator<{\n  replacer: CssUrlReplacer\n}> = (opts) => {\n  const replacerForDeclaration = async (rawUrl: string) => {\n    return rawUrl\n  }\n  return { postcssPlugin: 'x' }\n}\n\nconst config: Config = {\n  a: 1,\n}\n";
        assert_eq!(
            names(text, Language::TypeScript),
            owned(&[("UrlRewritePostcssPlugin", 0, 7)])
        );
    }

    #[test]
    fn a_return_type_written_as_an_object_is_part_of_the_header() {
        let text = "export async function resolveBuildPlugins(config: ResolvedConfig): Promise<{\n  pre: Plugin[]\n  post: Plugin[]\n}> {\n  return { pre: [], post: [] }\n}\n\nexport function other() {}\n";
        let index = definition_index(text, Language::TypeScript);
        assert_eq!((index[0].header_end, index[0].end), (3, 5), "{index:?}");
    }

    /// A return type that goes on below the parameter list (`): Promise<` …
    /// `> {`, `) -> Dict[` … `]:`) belongs to the header, and the body to
    /// the definition.
    #[test]
    fn a_return_type_below_the_parameters_is_part_of_the_header() {
        let ts = "async function tryBind(\n  port: number,\n): Promise<\n  { ok: true } | { ok: false }\n> {\n  return listen(port)\n}\n\nexport function other() {}\n";
        let index = definition_index(ts, Language::TypeScript);
        assert_eq!(
            (index[0].name.as_str(), index[0].header_end, index[0].end),
            ("tryBind", 4, 6),
            "{index:?}"
        );
        let python = "def load(\n    path,\n) -> Dict[\n    str, int\n]:\n    return {}\n\nx = 1\n";
        assert_eq!(names(python, Language::Python), owned(&[("load", 0, 5)]));
    }

    #[test]
    fn go_methods_java_methods_and_markdown_sections() {
        let go = "type Server struct {\n\tport int\n}\n\nfunc (s *Server) Listen() error {\n\treturn nil\n}\n";
        assert_eq!(
            names(go, Language::Go),
            owned(&[("Server", 0, 2), ("Server.Listen", 4, 6)])
        );
        let java = "public class App {\n    @Override\n    public static void main(String[] args) throws Exception {\n        run();\n    }\n}\n";
        assert_eq!(
            names(java, Language::Java),
            owned(&[("App", 0, 5), ("App.main", 1, 4)])
        );
        let markdown =
            "# Title\n\nintro\n\n## Install\n\n```sh\n# not a heading\n```\n\n## Use\n\ntext\n";
        assert_eq!(
            names(markdown, Language::Markdown),
            owned(&[("Title", 0, 12), ("Install", 4, 9), ("Use", 10, 12)])
        );
        let rst =
            "PVSystem\n========\n\nintro\n\nArrays\n------\n\ntext\n\nLosses\n------\n\nmore\n";
        assert_eq!(
            names(
                rst,
                Language::detect(&crate::relative_path::RelativePath::new("a.rst").unwrap())
            ),
            owned(&[("PVSystem", 0, 13), ("Arrays", 5, 9), ("Losses", 10, 13)])
        );
    }
}
