//! TypeScript and JavaScript imports read from the tokens, without a parse:
//! `import … from "x"`, `import "x"`, TypeScript's `import x = require("x")`,
//! re-exports (`export … from "x"`), `require("x")` calls and dynamic
//! `import("x")` anywhere — what the imports query finds in a tree, for a
//! fraction of the cost. Every code file of a TypeScript or JavaScript
//! repository that holds one of those words was parsed for its imports on a
//! cold compile: a sixth of babel's.
//!
//! The tokens are what the statements need: words, strings, the brackets and
//! `; , . = : *`; comments, template text, regular-expression literals,
//! numbers and the other operators are skipped, so an `import` in a string,
//! a comment or a pattern is no import. A `/` starts a pattern where an
//! operand may start (after an operator, an opening bracket, `;`, `}` or a
//! keyword such as `return`) and divides elsewhere. A word after `.` or `?.`
//! is a property, never a keyword. On a file tree-sitter parses without an
//! error the imports are the query's, in the same order
//! (`tests/real_sources.rs` compares both on the dependency sources and, given
//! a checkout, on a TypeScript or JavaScript repository); on a file with
//! syntax errors they can differ where the parse's error recovery would have
//! read a statement differently.

use super::{Unique, is_relative};
use crate::lang::grammar::Grammar;
use crate::lang::{ImportKind, ImportRef};

/// A token's kind; only what the import statements need is told apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// An identifier or keyword.
    Word,
    /// A `'…'` or `"…"` string, quotes included.
    Str,
    /// One of `( ) { } [ ] ; , . = : *`, or `?` for `?.`.
    Punct(u8),
    /// Another operator (`+`, `=>`, `&&`, `...`): an operand may follow.
    Operator,
    /// Anything else: a number, a pattern, template text, a private name.
    Other,
    /// Template text that ends in `${`: an operand follows.
    TemplateOpen,
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
    /// A comment lies between the token before and this one.
    after_comment: bool,
    /// A `)` that closes the condition of `if`, `while`, `for` or `with`:
    /// a statement, so perhaps a pattern, follows.
    ends_condition: bool,
}

/// The imports of a TypeScript, TSX or JavaScript file (`grammar`), as the
/// imports query finds them in its tree.
pub(crate) fn extract(grammar: Grammar, content: &str) -> Vec<ImportRef> {
    let tokens = tokens(content);
    let mut reader = Reader {
        content,
        tokens: &tokens,
        typescript: matches!(grammar, Grammar::TypeScript | Grammar::Tsx),
        imports: Vec::new(),
    };
    reader.statements();
    reader.imports
}

/// Whether `byte` may start an identifier (a non-ASCII byte is taken as a
/// letter; Unicode white space is checked before).
fn starts_word(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_' || byte == b'$' || byte == b'\\' || byte >= 0x80
}

fn continues_word(byte: u8) -> bool {
    starts_word(byte) || byte.is_ascii_digit()
}

/// The length of the white space at `at`, if any: ASCII white space, and
/// Unicode white space and the byte-order mark.
fn space_length(content: &str, at: usize) -> Option<usize> {
    let byte = *content.as_bytes().get(at)?;
    if byte.is_ascii_whitespace() || byte == 0x0b {
        return Some(1);
    }
    if byte < 0x80 {
        return None;
    }
    let c = content.get(at..)?.chars().next()?;
    // The grammar also skips the zero-width space and the word joiner.
    (c.is_whitespace() || matches!(c, '\u{feff}' | '\u{200b}' | '\u{2060}')).then(|| c.len_utf8())
}

/// Keywords after which an operand, so a pattern, may start.
fn precedes_operand(word: &str) -> bool {
    matches!(
        word,
        "return"
            | "typeof"
            | "instanceof"
            | "in"
            | "of"
            | "new"
            | "delete"
            | "void"
            | "throw"
            | "case"
            | "do"
            | "else"
            | "yield"
            | "await"
    )
}

/// The tokens of `content`, comments and white space left out.
fn tokens(content: &str) -> Vec<Token> {
    let bytes = content.as_bytes();
    let mut tokens: Vec<Token> = Vec::with_capacity(content.len() / 6);
    // Brace depths at which a template's `${` was opened, innermost last.
    let mut templates: Vec<usize> = Vec::new();
    let mut depth = 0_usize;
    let mut at = if content.starts_with("#!") {
        memchr::memchr(b'\n', bytes).unwrap_or(bytes.len())
    } else {
        0
    };
    let mut after_comment = false;
    // For each open `(`: whether it opens a statement's condition.
    let mut parens: Vec<bool> = Vec::new();
    let mut ends_condition = false;
    while let Some(&byte) = bytes.get(at) {
        let start = at;
        if let Some(length) = space_length(content, at) {
            at += length;
            continue;
        }
        let next = bytes.get(at + 1).copied();
        let kind = match byte {
            b'/' if next == Some(b'/') => {
                at = line_end(bytes, at);
                after_comment = true;
                continue;
            }
            b'/' if next == Some(b'*') => {
                at = memchr::memmem::find(&bytes[at + 2..], b"*/")
                    .map_or(bytes.len(), |end| at + 2 + end + 2);
                after_comment = true;
                continue;
            }
            b'/' if operand_may_start(content, &tokens, next) => {
                at = pattern_end(bytes, at + 1);
                Kind::Other
            }
            b'"' | b'\'' => {
                at = string_end(bytes, at + 1, byte);
                Kind::Str
            }
            b'`' => template_text(bytes, &mut at, depth, &mut templates),
            b'}' if templates.last() == Some(&depth) => {
                templates.pop();
                template_text(bytes, &mut at, depth, &mut templates)
            }
            b'{' => {
                depth += 1;
                at += 1;
                Kind::Punct(byte)
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                at += 1;
                Kind::Punct(byte)
            }
            b'=' if matches!(next, Some(b'=' | b'>')) => {
                at += 2;
                Kind::Operator
            }
            b'*' if matches!(next, Some(b'*' | b'=')) => {
                at += 2;
                Kind::Operator
            }
            b'(' => {
                parens.push(opens_condition(content, tokens.last()));
                at += 1;
                Kind::Punct(byte)
            }
            b')' => {
                ends_condition = parens.pop().unwrap_or(false);
                at += 1;
                Kind::Punct(byte)
            }
            b'[' | b']' | b';' | b',' | b':' | b'=' | b'*' => {
                at += 1;
                Kind::Punct(byte)
            }
            b'.' if next.is_some_and(|b| b.is_ascii_digit()) => {
                at = number_end(bytes, at + 1);
                Kind::Other
            }
            b'.' if next == Some(b'.') && bytes.get(at + 2) == Some(&b'.') => {
                at += 3;
                Kind::Operator
            }
            b'.' => {
                at += 1;
                Kind::Punct(b'.')
            }
            b'?' if next == Some(b'.') && !bytes.get(at + 2).is_some_and(u8::is_ascii_digit) => {
                at += 2;
                Kind::Punct(b'?')
            }
            b'0'..=b'9' => {
                at = number_end(bytes, at + 1);
                Kind::Other
            }
            // A private name, `#x`.
            b'#' => {
                at = word_end(content, at + 1);
                Kind::Other
            }
            _ if starts_word(byte) => {
                at = word_end(content, at);
                Kind::Word
            }
            _ => {
                at += 1;
                Kind::Operator
            }
        };
        tokens.push(Token {
            kind,
            start,
            end: at.min(bytes.len()),
            after_comment,
            ends_condition,
        });
        after_comment = false;
        ends_condition = false;
    }
    tokens
}

/// Template text from `*at` (past a backtick or a substitution's `}`), with
/// `*at` moved past it: [`Kind::TemplateOpen`], with `depth` pushed on
/// `templates`, when it ends in `${`.
fn template_text(bytes: &[u8], at: &mut usize, depth: usize, templates: &mut Vec<usize>) -> Kind {
    let (end, opens) = template_end(bytes, *at + 1);
    *at = end;
    if opens {
        templates.push(depth);
        Kind::TemplateOpen
    } else {
        Kind::Other
    }
}

/// The end of the word whose characters start at `at` (`\u0041`, an escaped
/// letter, inside it).
fn word_end(content: &str, mut at: usize) -> usize {
    let bytes = content.as_bytes();
    while bytes.get(at).is_some_and(|&b| continues_word(b)) && space_length(content, at).is_none() {
        at += if bytes[at] == b'\\' { 2 } else { 1 };
    }
    at
}

/// Whether a `(` after `previous` opens the condition of `if`, `while`,
/// `for` or `with`.
fn opens_condition(content: &str, previous: Option<&Token>) -> bool {
    previous.is_some_and(|token| {
        token.kind == Kind::Word
            && matches!(
                content.get(token.start..token.end),
                Some("if" | "while" | "for" | "with")
            )
    })
}

/// Whether a `/` (followed by `next`) after `tokens` starts a pattern
/// rather than dividing: at the start, after an operator, an opening
/// bracket, `, ; : = }`, the `)` of an `if`, `while`, `for` or `with`
/// condition, a keyword that takes an operand (not a property named like
/// one, `x.in`), or a template's `${`. JSX's `</` and `} />` are
/// no pattern, nor is a `/` after TypeScript's non-null `x!` or a postfix
/// `x++`.
fn operand_may_start(content: &str, tokens: &[Token], next: Option<u8>) -> bool {
    let Some(&previous) = tokens.last() else {
        return true;
    };
    let before = tokens.len().checked_sub(2).map(|at| tokens[at]);
    let text = |token: Token| content.get(token.start..token.end).unwrap_or("");
    match previous.kind {
        Kind::TemplateOpen => true,
        Kind::Operator => match text(previous) {
            "<" => false,
            // `x!`, `x++`, `x--`: the operator is glued to an operand.
            "!" | "+" | "-" => !before.is_some_and(|before| {
                before.end == previous.start
                    && match before.kind {
                        Kind::Word => !precedes_operand(text(before)),
                        Kind::Punct(punct) => matches!(punct, b')' | b']'),
                        Kind::Operator => text(previous) != "!" && text(before) == text(previous),
                        Kind::Str | Kind::Other => true,
                        Kind::TemplateOpen => false,
                    }
            }),
            _ => true,
        },
        Kind::Punct(b'}') => next != Some(b'>'),
        Kind::Punct(b')') => previous.ends_condition,
        Kind::Punct(punct) => !matches!(punct, b')' | b']' | b'.' | b'?'),
        Kind::Word => {
            precedes_operand(text(previous))
                && !before.is_some_and(|before| matches!(before.kind, Kind::Punct(b'.' | b'?')))
        }
        Kind::Str | Kind::Other => false,
    }
}

/// The end of a `//` comment starting at `at`: the next line break (`\n`,
/// `\r`, U+2028 or U+2029) or the text's end.
fn line_end(bytes: &[u8], at: usize) -> usize {
    let mut from = at;
    while let Some(offset) = memchr::memchr3(b'\n', b'\r', 0xe2, &bytes[from..]) {
        let end = from + offset;
        if bytes[end] != 0xe2 || matches!(bytes.get(end + 1..end + 3), Some([0x80, 0xa8 | 0xa9])) {
            return end;
        }
        from = end + 1;
    }
    bytes.len()
}

/// The end of a number starting before `at` (digits, letters for bases,
/// exponents and `n`, `_`, `.`).
fn number_end(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
    {
        at += 1;
    }
    at
}

/// The end of a pattern whose body starts at `at`: past the closing `/`
/// (a `/` in a class `[…]` or escaped does not close it) and its flags; at
/// the line's end when unclosed.
fn pattern_end(bytes: &[u8], mut at: usize) -> usize {
    let mut in_class = false;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'\\' => at += 1,
            b'\n' | b'\r' => return at,
            b'[' => in_class = true,
            b']' => in_class = false,
            b'/' if !in_class => {
                at += 1;
                while bytes.get(at).is_some_and(|&b| continues_word(b)) {
                    at += 1;
                }
                return at;
            }
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

/// The end of a string whose body starts at `at`, past its closing `quote`;
/// at the line's end when unclosed (a string cannot span lines unless the
/// line break is escaped).
fn string_end(bytes: &[u8], mut at: usize, quote: u8) -> usize {
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'\\' => {
                at += if bytes.get(at + 1) == Some(&b'\r') && bytes.get(at + 2) == Some(&b'\n') {
                    3
                } else {
                    2
                };
                continue;
            }
            b'\n' | b'\r' => return at,
            _ if byte == quote => return at + 1,
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

/// The end of template text starting at `at`: past its closing backtick, or
/// past a `${` (then `true`: a substitution opens).
fn template_end(bytes: &[u8], mut at: usize) -> (usize, bool) {
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'\\' => at += 1,
            b'`' => return (at + 1, false),
            b'$' if bytes.get(at + 1) == Some(&b'{') => return (at + 2, true),
            _ => {}
        }
        at += 1;
    }
    (bytes.len(), false)
}

/// The parts of a string's body between its escape sequences (the
/// grammar's string fragments), each without white space; empty parts left
/// out.
fn fragments(body: &str) -> Vec<String> {
    let bytes = body.as_bytes();
    let mut parts = Vec::new();
    let mut part_start = 0;
    let mut at = 0;
    let push = |parts: &mut Vec<String>, part: &str| {
        let part: String = part.chars().filter(|c| !c.is_whitespace()).collect();
        if !part.is_empty() {
            parts.push(part);
        }
    };
    while let Some(offset) = memchr::memchr(b'\\', &bytes[at..]) {
        let escape = at + offset;
        push(&mut parts, &body[part_start..escape]);
        at = escape + escape_length(body, escape);
        part_start = at.min(body.len());
        at = part_start;
    }
    push(&mut parts, &body[part_start..]);
    parts
}

/// The length of the escape sequence at `at` (a `\`): `\xHH`, `\uHHHH`,
/// `\u{H…}`, up to three octal digits, a line break (`\r\n` whole) or one
/// character.
fn escape_length(body: &str, at: usize) -> usize {
    let bytes = body.as_bytes();
    let hex = |from: usize, count: usize| {
        bytes
            .get(from..from + count)
            .is_some_and(|digits| digits.iter().all(u8::is_ascii_hexdigit))
    };
    match bytes.get(at + 1) {
        None => 1,
        Some(b'x') if hex(at + 2, 2) => 4,
        Some(b'u') if hex(at + 2, 4) => 6,
        Some(b'u') if bytes.get(at + 2) == Some(&b'{') => {
            let digits = bytes[at + 3..]
                .iter()
                .take_while(|b| b.is_ascii_hexdigit())
                .count();
            if digits > 0 && bytes.get(at + 3 + digits) == Some(&b'}') {
                4 + digits
            } else {
                2
            }
        }
        Some(b'0'..=b'7') => {
            1 + bytes[at + 1..]
                .iter()
                .take(3)
                .take_while(|b| (b'0'..=b'7').contains(b))
                .count()
        }
        Some(b'\r') if bytes.get(at + 2) == Some(&b'\n') => 3,
        Some(_) => 1 + body[at + 1..].chars().next().map_or(1, char::len_utf8),
    }
}

/// Reads import statements from the tokens.
struct Reader<'a> {
    content: &'a str,
    tokens: &'a [Token],
    /// TypeScript or TSX: `import type`, `import x = require("x")`.
    typescript: bool,
    imports: Vec<ImportRef>,
}

impl<'a> Reader<'a> {
    fn token(&self, at: usize) -> Option<Token> {
        self.tokens.get(at).copied()
    }

    fn text(&self, token: Token) -> &'a str {
        self.content.get(token.start..token.end).unwrap_or_default()
    }

    fn is_word(&self, at: usize, word: &str) -> bool {
        self.token(at)
            .is_some_and(|token| token.kind == Kind::Word && self.text(token) == word)
    }

    fn is_punct(&self, at: usize, punct: u8) -> bool {
        self.token(at)
            .is_some_and(|token| token.kind == Kind::Punct(punct))
    }

    fn is_kind(&self, at: usize, kind: Kind) -> bool {
        self.token(at).is_some_and(|token| token.kind == kind)
    }

    /// Whether the word at `at` follows `.` or `?.`: a property, never a
    /// keyword.
    fn is_property(&self, at: usize) -> bool {
        at > 0 && (self.is_punct(at - 1, b'.') || self.is_punct(at - 1, b'?'))
    }

    /// Every statement's imports, in the order the statements start.
    fn statements(&mut self) {
        let mut at = 0;
        while let Some(token) = self.token(at) {
            // A word after `.` or `?.` is a property (`import.meta` is read
            // at `import`).
            let property = self.is_property(at);
            // `new require("x")` constructs, it calls nothing (`a.new` is a
            // property).
            let constructed = at > 0 && self.is_word(at - 1, "new") && !self.is_property(at - 1);
            at = match (token.kind, self.text(token)) {
                (Kind::Word, "import") if !property => self.import(at),
                (Kind::Word, "export") if !property => self.export(at),
                (Kind::Word, "require") if !property && !constructed => self.require(at),
                _ => at + 1,
            };
        }
    }

    /// Whether `from "x"` starts at `at`.
    fn is_from_source(&self, at: usize) -> bool {
        self.is_word(at, "from") && self.is_kind(at + 1, Kind::Str)
    }

    /// Records one import per fragment of the string at `source`.
    fn push(&mut self, source: usize, symbols: &[String], kind: ImportKind) {
        let Some(token) = self.token(source) else {
            return;
        };
        let text = self.text(token);
        let body = text
            .get(1..text.len().saturating_sub(1))
            .unwrap_or_default();
        for source in fragments(body) {
            self.imports.push(ImportRef {
                is_relative: is_relative(Grammar::JavaScript, &source),
                source,
                symbols: symbols.to_vec(),
                kind,
            });
        }
    }

    /// Whether the string at `at` is a call's first argument, alone or
    /// followed by more (`("x")`, `("x", options)`), not the start of a
    /// longer expression (`("x" + name)`) nor after a comment (which the
    /// grammar counts as the first argument).
    fn string_argument(&self, at: usize) -> bool {
        self.token(at)
            .is_some_and(|token| token.kind == Kind::Str && !token.after_comment)
            && (self.is_punct(at + 1, b')') || self.is_punct(at + 1, b','))
    }

    /// `import` at `at`: a declaration, a side-effect import, TypeScript's
    /// `import x = require("x")`, or a dynamic `import("x")`. Returns where
    /// reading goes on.
    fn import(&mut self, at: usize) -> usize {
        if self.is_punct(at + 1, b'(') {
            if self.string_argument(at + 2) {
                self.push(at + 2, &[], ImportKind::Import);
            }
            return at + 1;
        }
        if self.is_kind(at + 1, Kind::Str) {
            self.push(at + 1, &[], ImportKind::Import);
            return at + 2;
        }
        let mut next = at + 1;
        let mut symbols = Unique::default();
        // `import type X from …`, `import typeof X from …`; `import type from
        // "x"` imports a default named `type`.
        if self.typescript
            && (self.is_word(next, "type") || self.is_word(next, "typeof"))
            && !self.is_word(next + 1, "from")
            && !self.is_punct(next + 1, b',')
            && !self.is_punct(next + 1, b'=')
        {
            next += 1;
        }
        if self.is_kind(next, Kind::Word) && !self.is_word(next, "from")
            || self.is_word(next, "from") && self.is_word(next + 1, "from")
        {
            let name = self.text(self.tokens[next]).to_owned();
            if self.is_punct(next + 1, b'=') {
                // `import x = require("x")`; `import x = a.b` imports nothing.
                if self.typescript
                    && self.is_word(next + 2, "require")
                    && self.is_punct(next + 3, b'(')
                    && self.is_kind(next + 4, Kind::Str)
                    && self.is_punct(next + 5, b')')
                {
                    self.push(next + 4, &[name], ImportKind::Import);
                    return next + 6;
                }
                return next + 1;
            }
            symbols.push(name);
            next += 1;
            if self.is_punct(next, b',') {
                next += 1;
            }
        }
        if self.is_punct(next, b'*') {
            if !self.is_word(next + 1, "as") || !self.is_kind(next + 2, Kind::Word) {
                return at + 1;
            }
            next += 3;
        } else if self.is_punct(next, b'{') {
            let Some(end) = self.specifiers(next, &mut symbols, true) else {
                return at + 1;
            };
            next = end;
        }
        if !self.is_from_source(next) {
            return at + 1;
        }
        self.push(next + 1, &symbols.values, ImportKind::Import);
        next + 2
    }

    /// `export` at `at`: a re-export (`export * from "x"`, `export * as n
    /// from "x"`, `export { a, b as c } from "x"`) or another export, whose
    /// tokens are read on. Returns where reading goes on.
    fn export(&mut self, at: usize) -> usize {
        let mut next = at + 1;
        if self.typescript
            && self.is_word(next, "type")
            && (self.is_punct(next + 1, b'{') || self.is_punct(next + 1, b'*'))
        {
            next += 1;
        }
        let mut symbols = Unique::default();
        if self.is_punct(next, b'*') {
            next += 1;
            if self.is_word(next, "as") {
                if !self.is_kind(next + 1, Kind::Word) && !self.is_kind(next + 1, Kind::Str) {
                    return at + 1;
                }
                next += 2;
            }
        } else if self.is_punct(next, b'{') {
            let Some(end) = self.specifiers(next, &mut symbols, false) else {
                return at + 1;
            };
            next = end;
        } else {
            return at + 1;
        }
        if !self.is_from_source(next) {
            return at + 1;
        }
        self.push(next + 1, &symbols.values, ImportKind::Reexport);
        next + 2
    }

    /// The names of a `{ … }` list of import or export specifiers starting
    /// at `open` (`a`, `b as c`, `type d`, `"e" as f`): each specifier's
    /// name when it is an identifier, not its alias. Returns the index after
    /// the `}`; `None` when the list is not one.
    fn specifiers(&self, open: usize, symbols: &mut Unique, import: bool) -> Option<usize> {
        let mut at = open + 1;
        loop {
            if self.is_punct(at, b'}') {
                return Some(at + 1);
            }
            // `type a`, `type as` and `typeof a` in TypeScript; `type` alone
            // and `type as x` name `type`.
            if self.typescript
                && (self.is_word(at, "type") || import && self.is_word(at, "typeof"))
                && (self.is_kind(at + 1, Kind::Word) && !self.is_word(at + 1, "as")
                    || self.is_kind(at + 1, Kind::Str)
                    || self.is_word(at + 1, "as")
                        && (self.is_punct(at + 2, b'}') || self.is_punct(at + 2, b',')))
            {
                at += 1;
            }
            let name = self.token(at)?;
            match name.kind {
                // JavaScript's grammar reads `default` in `default as x` as
                // a keyword, TypeScript's as an identifier.
                Kind::Word if !self.typescript && self.text(name) == "default" => {}
                Kind::Word => symbols.push(self.text(name).to_owned()),
                Kind::Str => {}
                _ => return None,
            }
            at += 1;
            if self.is_word(at, "as") {
                if !self.is_kind(at + 1, Kind::Word) && !self.is_kind(at + 1, Kind::Str) {
                    return None;
                }
                at += 2;
            }
            if self.is_punct(at, b',') {
                at += 1;
            } else if !self.is_punct(at, b'}') {
                return None;
            }
        }
    }

    /// `require` at `at`: a call with a string first argument is an import;
    /// its symbols are the shorthand names of an object pattern it is the
    /// whole value of (`const { a, b } = require("x")`). Returns where
    /// reading goes on.
    fn require(&mut self, at: usize) -> usize {
        // `require("x")` or `require?.("x")`.
        let open = if self.is_punct(at + 1, b'?') {
            at + 2
        } else {
            at + 1
        };
        if !self.is_punct(open, b'(') || !self.string_argument(open + 1) {
            return at + 1;
        }
        let symbols = self.destructured(at, open).unwrap_or_default();
        self.push(open + 1, &symbols, ImportKind::Import);
        at + 1
    }

    /// The shorthand names of `const|let|var { a, b: c, d = 1, ...e } = ` just
    /// before the `require` call at `call` whose arguments open at `open`
    /// (`a` only), when the call is the declarator's whole value (not
    /// `require("x").y`, nor `… as T` or `… satisfies T`).
    fn destructured(&self, call: usize, open: usize) -> Option<Vec<String>> {
        let close = self.call_end(open)?;
        let whole_value = match self.token(close + 1) {
            None => true,
            Some(token) if token.kind == Kind::Word => {
                !matches!(self.text(token), "as" | "satisfies")
            }
            Some(token) => matches!(
                token.kind,
                Kind::Str | Kind::Punct(b';' | b',' | b'}' | b')')
            ),
        };
        if !whole_value
            || call < 3
            || !self.is_punct(call - 1, b'=')
            || !self.is_punct(call - 2, b'}')
        {
            return None;
        }
        // The pattern's `{`, and its direct children's shorthand names.
        let mut depth = 0_usize;
        let mut at = call - 2;
        let mut names = Vec::new();
        loop {
            let token = self.token(at)?;
            match token.kind {
                Kind::Punct(b'}' | b')' | b']') => depth += 1,
                Kind::Punct(b'{' | b'(' | b'[') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Kind::Word
                    if depth == 1
                        && (self.is_punct(at.wrapping_sub(1), b'{')
                            || self.is_punct(at.wrapping_sub(1), b','))
                        && (self.is_punct(at + 1, b'}') || self.is_punct(at + 1, b',')) =>
                {
                    names.push(self.text(token).to_owned());
                }
                _ => {}
            }
            at = at.checked_sub(1)?;
        }
        if at == 0 || !self.declarator_starts(at - 1) {
            return None;
        }
        names.reverse();
        let mut symbols = Unique::default();
        for name in names {
            symbols.push(name);
        }
        Some(symbols.values)
    }

    /// Whether the token at `at`, just before a pattern, makes it a
    /// declarator: `const`, `let` or `var`, or a `,` after an earlier
    /// declarator of the same declaration (`const a = f(1, 2), { b } = …`).
    fn declarator_starts(&self, at: usize) -> bool {
        let declares = |at: usize| {
            self.is_word(at, "const") || self.is_word(at, "let") || self.is_word(at, "var")
        };
        if declares(at) {
            return true;
        }
        if !self.is_punct(at, b',') {
            return false;
        }
        // Back to the declaration's keyword over whole brackets; a `;` or an
        // opening bracket of its own first means a list of another kind.
        let mut depth = 0_usize;
        for before in (0..at).rev() {
            match self.tokens[before].kind {
                Kind::Punct(b')' | b']' | b'}') => depth += 1,
                Kind::Punct(b'(' | b'[' | b'{') => match depth.checked_sub(1) {
                    Some(outer) => depth = outer,
                    None => return false,
                },
                Kind::Punct(b';') if depth == 0 => return false,
                Kind::Word if depth == 0 && declares(before) => return true,
                _ => {}
            }
        }
        false
    }

    /// The index of the `)` that closes the `(` at `open`.
    fn call_end(&self, open: usize) -> Option<usize> {
        let mut depth = 0_usize;
        for at in open..self.tokens.len() {
            match self.tokens[at].kind {
                Kind::Punct(b'(' | b'[' | b'{') => depth += 1,
                Kind::Punct(b')' | b']' | b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(at);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(grammar: Grammar, content: &str) -> Vec<(String, Vec<String>)> {
        extract(grammar, content)
            .into_iter()
            .map(|import| (import.source, import.symbols))
            .collect()
    }

    #[test]
    fn broken_text_ends_the_reading_without_a_panic() {
        // Unbalanced brackets, unclosed strings, templates and patterns, a
        // lone escape and a multi-byte character after a backslash: the
        // reader reads what it can and never indexes out of bounds.
        let broken = [
            "a} = require('x')",
            "}} = require('x')",
            "require(",
            "import {",
            "import { a as",
            "export {",
            "export * as",
            "'unterminated\nimport a from './a'",
            "`${ require('./t') ",
            "x = /[/; import b from './b'",
            "\\",
            "import c from '\\",
            "import d from '\\é'",
            "const { e } = require('./e'",
            "import(",
            "#!",
        ];
        for text in broken {
            for grammar in [Grammar::JavaScript, Grammar::TypeScript] {
                let _ = extract(grammar, text);
            }
        }
        // A string left open at the line's end does not hide the next line.
        assert_eq!(
            sources(Grammar::JavaScript, "'unterminated\nimport a from './a'"),
            [("./a".to_owned(), vec!["a".to_owned()])]
        );
    }

    #[test]
    fn patterns_and_templates_hide_their_text() {
        // After `(`, `=` or `return` a `/` starts a pattern; after a name or
        // `)` it divides. A template's `${ … }` is code, its text is not.
        let text = "const a = x.replace(/import b from 'no'/, '');\n\
                    const c = y / 2; const d = require('./d') / 3;\n\
                    function f() { return /require('no')/.test(z); }\n\
                    const t = `import e from 'no' ${ `${require('./nested')}` }`;\n";
        assert_eq!(
            sources(Grammar::JavaScript, text),
            [("./d".to_owned(), vec![]), ("./nested".to_owned(), vec![])]
        );
    }
}
