//! Rust imports read from the tokens, without a parse: `use` declarations,
//! `extern crate` and `mod foo;` at the top level, and `use` declarations in
//! top-level inline modules (`mod tests { use super::*; }`) — what the Rust
//! imports query finds in a tree, for a fraction of the cost. The import graph
//! reads the imports of hundreds of candidate files per compile, of which only
//! a few reach the prompt; a tree-sitter parse of each was a third of a cold
//! compile of a Rust repository.
//!
//! The tokens are what matters for item structure: identifiers and keywords,
//! brackets, `;`, `,`, `::`, `*`, `#`; comments, strings (raw, byte and C
//! strings too), character literals and lifetimes are skipped whole, so a
//! `use` in a string or a comment is no import. A `use`, `mod` or `extern`
//! keyword outside every bracket is an item's start (in valid Rust these
//! keywords start nothing else there); inside a top-level `mod name { … }`
//! the same holds one level down. On a file tree-sitter parses without an
//! error the imports are the query's, in the same order
//! (`tests/real_sources.rs` checks every dependency source file); on a file
//! with syntax errors they can differ where the parse's error recovery would
//! have hidden a declaration.

use super::{UsePaths, add, is_relative, join_path, split_last};
use crate::lang::grammar::Grammar;
use crate::lang::{ImportKind, ImportRef};

/// A token's kind; only what item structure needs is told apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// An identifier or keyword (`r#type` included, as written).
    Word,
    /// `::`.
    PathSep,
    /// One of `{ } ( ) [ ] ; , * # ! :`.
    Punct(u8),
    /// Anything else: a literal, a lifetime, another operator.
    Other,
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

/// The imports of a Rust file, as the imports query finds them in its tree.
pub(crate) fn extract(content: &str) -> Vec<ImportRef> {
    let tokens = tokens(content);
    Reader {
        content,
        tokens: &tokens,
        at: 0,
        lists: 0,
        imports: Vec::new(),
    }
    .items()
}

/// Whether `byte` may continue an identifier (non-ASCII letters count: a
/// Rust identifier may hold them).
fn continues_word(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80
}

/// The tokens of `content`, comments and white space left out.
fn tokens(content: &str) -> Vec<Token> {
    let bytes = content.as_bytes();
    let mut tokens = Vec::with_capacity(content.len() / 8);
    let mut at = shebang_end(content);
    while let Some(&byte) = bytes.get(at) {
        let start = at;
        if let Some(length) = space_length(bytes, at) {
            at += length;
            continue;
        }
        let kind = match byte {
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                at = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |end| at + end);
                continue;
            }
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                at = block_comment_end(bytes, at);
                continue;
            }
            b'"' => {
                at = quoted_end(bytes, at + 1);
                Kind::Other
            }
            b'\'' => {
                at = quote_or_lifetime_end(content, at);
                Kind::Other
            }
            b':' if bytes.get(at + 1) == Some(&b':') => {
                at += 2;
                Kind::PathSep
            }
            b'{' | b'}' | b'(' | b')' | b'[' | b']' | b';' | b',' | b'*' | b'#' | b'!' | b':' => {
                at += 1;
                Kind::Punct(byte)
            }
            b'0'..=b'9' => {
                at += 1;
                while bytes.get(at).is_some_and(|&b| continues_word(b)) {
                    at += 1;
                }
                Kind::Other
            }
            _ if continues_word(byte) => {
                if let Some(end) = prefixed_string_end(bytes, at) {
                    at = end;
                    Kind::Other
                } else {
                    // `r#name`: a raw identifier, one word.
                    if byte == b'r'
                        && bytes.get(at + 1) == Some(&b'#')
                        && bytes.get(at + 2).is_some_and(|&b| continues_word(b))
                    {
                        at += 2;
                    }
                    while bytes.get(at).is_some_and(|&b| continues_word(b))
                        && space_length(bytes, at).is_none()
                    {
                        at += 1;
                    }
                    Kind::Word
                }
            }
            _ => {
                at += 1;
                while bytes.get(at).is_some_and(|&b| (b & 0xC0) == 0x80) {
                    at += 1;
                }
                Kind::Other
            }
        };
        tokens.push(Token {
            kind,
            start,
            end: at,
        });
    }
    tokens
}

/// The length in bytes of the white space character at `at`, if it is one:
/// Rust's white space is ASCII space, tab, the line breaks, vertical tab and
/// form feed, and U+0085, U+200E, U+200F, U+2028 and U+2029.
fn space_length(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at..)? {
        [b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c, ..] => Some(1),
        [0xC2, 0x85, ..] => Some(2),
        [0xE2, 0x80, 0x8E | 0x8F | 0xA8 | 0xA9, ..] => Some(3),
        _ => None,
    }
}

/// Where the tokens start: after a first line `#!…` that is no inner
/// attribute (`#![…]`), a shebang.
fn shebang_end(content: &str) -> usize {
    let Some(rest) = content.strip_prefix("#!") else {
        return 0;
    };
    if rest.trim_start().starts_with('[') {
        return 0;
    }
    memchr::memchr(b'\n', content.as_bytes()).map_or(content.len(), |end| end + 1)
}

/// The end of the block comment starting at `at` (`/*`), nested comments
/// included; the text's end when it is not closed.
fn block_comment_end(bytes: &[u8], mut at: usize) -> usize {
    let mut depth = 0_usize;
    while at < bytes.len() {
        match (bytes[at], bytes.get(at + 1)) {
            (b'/', Some(b'*')) => {
                depth += 1;
                at += 2;
            }
            (b'*', Some(b'/')) => {
                depth -= 1;
                at += 2;
                if depth == 0 {
                    return at;
                }
            }
            _ => at += 1,
        }
    }
    bytes.len()
}

/// The end of a string whose body starts at `at`, after its opening `"`:
/// past the closing `"`, a `\` escaping the byte after it.
fn quoted_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// The end of a string with a prefix (`b"…"`, `c"…"`, `r"…"`, `r#"…"#`,
/// `br…`, `cr…`) starting at `at`; `None` when the word there is no such
/// prefix.
fn prefixed_string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut next = at;
    if matches!(bytes.get(next), Some(b'b' | b'c')) {
        next += 1;
    }
    let raw = bytes.get(next) == Some(&b'r');
    if raw {
        next += 1;
    }
    if next == at {
        return None;
    }
    if !raw {
        return (bytes.get(next) == Some(&b'"')).then(|| quoted_end(bytes, next + 1));
    }
    let hashes = bytes
        .get(next..)?
        .iter()
        .take_while(|&&b| b == b'#')
        .count();
    if bytes.get(next + hashes) != Some(&b'"') {
        return None;
    }
    let mut search = next + hashes + 1;
    while let Some(found) = memchr::memchr(b'"', bytes.get(search..).unwrap_or_default()) {
        let quote = search + found;
        let closing = bytes
            .get(quote + 1..)
            .is_some_and(|rest| rest.iter().take(hashes).filter(|&&b| b == b'#').count() == hashes);
        if closing {
            return Some(quote + 1 + hashes);
        }
        search = quote + 1;
    }
    Some(bytes.len())
}

/// The end of a character literal (`'x'`, `'\n'`, `'\u{1F600}'`) or a
/// lifetime or label (`'a`, `'outer`) starting at `at`.
fn quote_or_lifetime_end(content: &str, at: usize) -> usize {
    let bytes = content.as_bytes();
    if bytes.get(at + 1) == Some(&b'\\') {
        // An escape: the literal ends at the next `'` after it.
        return memchr::memchr(b'\'', bytes.get(at + 3..).unwrap_or_default())
            .map_or(bytes.len(), |end| at + 3 + end + 1);
    }
    let Some(character) = content.get(at + 1..).and_then(|rest| rest.chars().next()) else {
        return bytes.len();
    };
    let after = at + 1 + character.len_utf8();
    if bytes.get(after) == Some(&b'\'') {
        return after + 1;
    }
    let mut end = at + 1;
    while bytes.get(end).is_some_and(|&b| continues_word(b)) {
        end += 1;
    }
    end.max(at + 1)
}

/// The deepest use list read (`use a::{b::{c::{…}}}`): reading is
/// recursive, and a generated file nesting lists tens of thousands deep would
/// overflow the stack. Real use trees nest a few levels.
const MAX_USE_LISTS: usize = 64;

/// Reads items from the tokens and collects their imports.
struct Reader<'a> {
    content: &'a str,
    tokens: &'a [Token],
    at: usize,
    /// Use lists open around the cursor (see [`MAX_USE_LISTS`]).
    lists: usize,
    imports: Vec<ImportRef>,
}

impl<'a> Reader<'a> {
    fn peek(&self, ahead: usize) -> Option<Token> {
        self.tokens.get(self.at + ahead).copied()
    }

    fn text(&self, token: Token) -> &'a str {
        self.content.get(token.start..token.end).unwrap_or_default()
    }

    fn is_word(&self, token: Option<Token>, word: &str) -> bool {
        token.is_some_and(|token| token.kind == Kind::Word && self.text(token) == word)
    }

    fn is_other(&self, token: Option<Token>, text: &str) -> bool {
        token.is_some_and(|token| token.kind == Kind::Other && self.text(token) == text)
    }

    fn is_punct(token: Option<Token>, punct: u8) -> bool {
        token.is_some_and(|token| token.kind == Kind::Punct(punct))
    }

    /// An identifier as tree-sitter reads one: a word that is not a
    /// path keyword (`self`, `super`, `crate`).
    fn identifier(&self, token: Option<Token>) -> Option<Token> {
        token.filter(|&token| {
            token.kind == Kind::Word && !matches!(self.text(token), "self" | "super" | "crate")
        })
    }

    /// Every item of the file, and of its top-level inline modules.
    fn items(mut self) -> Vec<ImportRef> {
        // The open brackets: (byte, whether a `{` is a top-level module's body).
        let mut open: Vec<(u8, bool)> = Vec::new();
        let mut visibility = false;
        while let Some(token) = self.peek(0) {
            let at_item_level = open.is_empty() || open == [(b'{', true)];
            if !at_item_level {
                self.at += 1;
                match token.kind {
                    Kind::Punct(byte @ (b'{' | b'(' | b'[')) => open.push((byte, false)),
                    Kind::Punct(b'}' | b')' | b']') => {
                        open.pop();
                    }
                    _ => {}
                }
                continue;
            }
            let top = open.is_empty();
            match (token.kind, self.text(token)) {
                (Kind::Word, "pub") => {
                    self.at += 1;
                    visibility = true;
                    // `pub(crate)`, `pub(in path)`: part of the visibility.
                    if Self::is_punct(self.peek(0), b'(') {
                        self.skip_balanced();
                    }
                    continue;
                }
                // `impl Trait + use<'a>` (precise capturing) is no declaration.
                (Kind::Word, "use") if !self.is_other(self.peek(1), "<") => {
                    let kind = if visibility {
                        ImportKind::Reexport
                    } else {
                        ImportKind::Import
                    };
                    self.at += 1;
                    self.use_declaration(kind);
                }
                (Kind::Word, "extern") if top && self.is_word(self.peek(1), "crate") => {
                    self.at += 2;
                    // `extern crate self as name;` names `self` (the grammar
                    // reads it as an identifier there).
                    if let Some(name) = self.peek(0).filter(|name| name.kind == Kind::Word) {
                        self.push_source(self.text(name), ImportKind::Import);
                    }
                }
                (Kind::Word, "mod") if self.identifier(self.peek(1)).is_some() => {
                    let name = self.peek(1).map(|name| self.text(name)).unwrap_or_default();
                    self.at += 2;
                    if top && Self::is_punct(self.peek(0), b';') {
                        self.push_source(name, ImportKind::ModuleDeclaration);
                    } else if Self::is_punct(self.peek(0), b'{') {
                        self.at += 1;
                        open.push((b'{', top));
                    }
                }
                (Kind::Punct(byte @ (b'{' | b'(' | b'[')), _) => {
                    self.at += 1;
                    open.push((byte, false));
                }
                (Kind::Punct(b'}' | b')' | b']'), _) => {
                    self.at += 1;
                    open.pop();
                }
                _ => self.at += 1,
            }
            visibility = false;
        }
        self.imports
    }

    /// Skips the bracket at the cursor and everything up to its match.
    fn skip_balanced(&mut self) {
        let mut depth = 0_usize;
        while let Some(token) = self.peek(0) {
            self.at += 1;
            match token.kind {
                Kind::Punct(b'{' | b'(' | b'[') => depth += 1,
                Kind::Punct(b'}' | b')' | b']') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    fn push_source(&mut self, source: &str, kind: ImportKind) {
        if source.is_empty() {
            return;
        }
        self.imports.push(ImportRef {
            is_relative: kind == ImportKind::ModuleDeclaration
                || is_relative(Grammar::Rust, source),
            source: source.to_owned(),
            symbols: Vec::new(),
            kind,
        });
    }

    /// The use tree after `use`, up to its `;`, flattened into imports.
    fn use_declaration(&mut self, kind: ImportKind) {
        let mut paths = UsePaths::default();
        self.use_clause("", &mut paths);
        // Whatever the clause did not take, up to the `;` (a malformed tree).
        let mut depth = 0_usize;
        while let Some(token) = self.peek(0) {
            match token.kind {
                Kind::Punct(b';') if depth == 0 => break,
                Kind::Punct(b'{' | b'(' | b'[') => depth += 1,
                Kind::Punct(b'}' | b')' | b']') => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.at += 1;
        }
        if Self::is_punct(self.peek(0), b';') {
            self.at += 1;
        }
        for (source, symbols) in paths.paths {
            self.imports.push(ImportRef {
                is_relative: is_relative(Grammar::Rust, &source),
                source,
                symbols: symbols.values,
                kind,
            });
        }
    }

    /// One use clause under `prefix`: a list, a wildcard, a path (with a
    /// list, a wildcard or an alias after it), as the imports query's tree
    /// flattening reads them.
    fn use_clause(&mut self, prefix: &str, paths: &mut UsePaths) {
        if Self::is_punct(self.peek(0), b'{') {
            self.use_list(prefix, paths);
            return;
        }
        if Self::is_punct(self.peek(0), b'*') {
            self.at += 1;
            add(paths, join_path(prefix, ""), "*".to_owned());
            return;
        }
        let path = self.path();
        let path_text = path.map_or_else(String::new, |(start, end)| self.span_text(start, end));
        let after_sep = self.peek(0).is_some_and(|t| t.kind == Kind::PathSep);
        if after_sep && Self::is_punct(self.peek(1), b'{') {
            self.at += 1;
            let inner = join_path(prefix, &path_text);
            self.use_list(&inner, paths);
            return;
        }
        if after_sep && Self::is_punct(self.peek(1), b'*') {
            self.at += 2;
            add(paths, join_path(prefix, &path_text), "*".to_owned());
            return;
        }
        if path.is_none() {
            return;
        }
        if self.is_word(self.peek(0), "as") {
            self.at += 2;
        }
        if path_text == "self" && !prefix.is_empty() {
            add(paths, prefix.to_owned(), String::new());
            return;
        }
        let full = join_path(prefix, &path_text);
        let (module, name) = split_last(&full);
        if module.is_empty() {
            add(paths, name.to_owned(), String::new());
        } else {
            add(paths, module.to_owned(), name.to_owned());
        }
    }

    /// `{ clause, clause, … }` under `prefix`; a list nested deeper than
    /// [`MAX_USE_LISTS`] is skipped whole.
    fn use_list(&mut self, prefix: &str, paths: &mut UsePaths) {
        if self.lists >= MAX_USE_LISTS {
            self.skip_balanced();
            return;
        }
        self.lists += 1;
        self.use_list_items(prefix, paths);
        self.lists -= 1;
    }

    fn use_list_items(&mut self, prefix: &str, paths: &mut UsePaths) {
        self.at += 1;
        loop {
            match self.peek(0) {
                None => return,
                Some(token) if token.kind == Kind::Punct(b'}') => {
                    self.at += 1;
                    return;
                }
                Some(token) if token.kind == Kind::Punct(b',') => self.at += 1,
                Some(_) => {
                    let before = self.at;
                    self.use_clause(prefix, paths);
                    if self.at == before {
                        // Nothing a clause takes: step over it.
                        self.at += 1;
                    }
                }
            }
        }
    }

    /// A path at the cursor (`a`, `a::b::c`, `::a::b`, `self`, `$crate`):
    /// the byte range from its first token to its last, stopping before a
    /// `::` that a list or a wildcard follows; `None` when there is none.
    fn path(&mut self) -> Option<(usize, usize)> {
        let first = self.peek(0)?;
        let start = first.start;
        let mut end;
        match first.kind {
            Kind::PathSep if self.peek(1).is_some_and(|t| t.kind == Kind::Word) => {
                end = self.peek(1)?.end;
                self.at += 2;
            }
            Kind::Word => {
                end = first.end;
                self.at += 1;
            }
            Kind::Other
                if self.text(first) == "$"
                    && self.peek(1).is_some_and(|t| t.kind == Kind::Word) =>
            {
                end = self.peek(1)?.end;
                self.at += 2;
            }
            _ => return None,
        }
        while self.peek(0).is_some_and(|t| t.kind == Kind::PathSep)
            && self.peek(1).is_some_and(|t| t.kind == Kind::Word)
        {
            end = self.peek(1)?.end;
            self.at += 2;
        }
        Some((start, end))
    }

    /// The text from `start` to `end` without white space, as the query
    /// reads a path node (a comment inside it stays).
    fn span_text(&self, start: usize, end: usize) -> String {
        self.content
            .get(start..end)
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(content: &str) -> Vec<(String, Vec<String>, ImportKind)> {
        extract(content)
            .into_iter()
            .map(|import| (import.source, import.symbols, import.kind))
            .collect()
    }

    fn import(
        source: &str,
        symbols: &[&str],
        kind: ImportKind,
    ) -> (String, Vec<String>, ImportKind) {
        (
            source.to_owned(),
            symbols.iter().map(|&s| s.to_owned()).collect(),
            kind,
        )
    }

    #[test]
    fn use_trees_flatten_per_module() {
        // One import per module of a use tree (`self` adds none to `a`'s
        // symbols), symbols in order; `pub(…)` makes a re-export.
        assert_eq!(
            read("use a::{b, c::{d as _, e}, self, f::*};\npub(crate) use crate::g::H;\n"),
            [
                import("a", &["b"], ImportKind::Import),
                import("a::c", &["d", "e"], ImportKind::Import),
                import("a::f", &["*"], ImportKind::Import),
                import("crate::g", &["H"], ImportKind::Reexport),
            ]
        );
    }

    #[test]
    fn strings_comments_and_bodies_hide_nothing_and_add_nothing() {
        let content = "\
            fn f<'a>(x: &'a str) -> char { let _ = \"use no::string;\"; let _ = r#\"use \"no\"\"#; '{' }\n\
            /* use no::comment; /* nested } */ */\n\
            // use no::line_comment;\n\
            impl X { fn g() { use no::body; } }\n\
            macro_rules! m { () => { use no::macro_body; }; }\n\
            mod tests { use super::*; mod deeper { use no::deeper; } }\n\
            mod declared;\n\
            extern crate alloc as heap;\n";
        assert_eq!(
            read(content),
            [
                import("super", &["*"], ImportKind::Import),
                import("declared", &[], ImportKind::ModuleDeclaration),
                import("alloc", &[], ImportKind::Import),
            ]
        );
    }

    #[test]
    fn precise_capturing_shebangs_and_unicode_spaces_start_nothing() {
        let content = "#!/usr/bin/env run \"it\n\
            fn f<'a>(x: &'a [u8]) -> impl Iterator<Item = &'a u8> + use<'a> { x.iter() }\n\
            use std::fmt;\u{2028}use c::d;\n\
            mod later;\n";
        assert_eq!(
            read(content),
            [
                import("std", &["fmt"], ImportKind::Import),
                import("c", &["d"], ImportKind::Import),
                import("later", &[], ImportKind::ModuleDeclaration),
            ]
        );
        assert_eq!(
            read("#![allow(x)]\nuse a::b;\n"),
            [import("a", &["b"], ImportKind::Import)]
        );
    }

    #[test]
    fn use_lists_nested_beyond_the_limit_are_skipped_not_overflowed() {
        let depth = 100_000;
        let content = format!(
            "use a::{}b{};\nuse c::d;\n",
            "{".repeat(depth),
            "}".repeat(depth)
        );
        assert_eq!(read(&content), [import("c", &["d"], ImportKind::Import)]);
    }

    #[test]
    fn an_unclosed_bracket_or_string_ends_the_reading() {
        assert_eq!(
            read("use a::b;\nfn f() {\n"),
            [import("a", &["b"], ImportKind::Import)]
        );
        assert_eq!(
            read("use a::b;\nconst S: &str = \"open\n"),
            [import("a", &["b"], ImportKind::Import)]
        );
        assert_eq!(
            read("use a::{b,\n"),
            [import("a", &["b"], ImportKind::Import)]
        );
    }
}
