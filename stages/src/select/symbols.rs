//! Definition names found without a parser: the names-only tier of languages
//! without a tree-sitter provider (the [`GenericProvider`]), the fallback of a
//! file whose parse found nothing, and the scan's symbol terms of every code
//! file (a line scan is far cheaper than a parse for each file of a
//! repository).
//!
//! [`GenericProvider`]: crate::lang::GenericProvider
//!
//! A definition is a line that starts — after blanks and optional visibility
//! and modifier words ([`MODIFIERS`]) — with a definition keyword of a common
//! language ([`KEYWORDS`]: `fn`, `struct`, `enum`, `trait`, `class`,
//! `interface`, `type`, `def`, `function`, `func`, `module`, `record`, …),
//! blanks and a name (see [`definitions`]). It misses definitions that do not
//! start a line (`const f = () => …` is not one) and never parses, so it
//! cannot fail.

use crate::select::terms::{split_words, stem, term_id};

/// One definition: the keyword that introduced it and its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefinedName {
    /// The keyword (`fn`, `class`, `def`, …).
    pub kind: String,
    /// The defined name, as written.
    pub name: String,
}

/// The most definitions kept per file.
pub const MAX_NAMES: usize = 200;

/// The words that may stand before a definition keyword, each followed by
/// spaces or tabs (`pub` may carry a parenthesised scope: `pub(crate)`).
pub const MODIFIERS: &[&str] = &[
    "pub",
    "export",
    "default",
    "public",
    "private",
    "protected",
    "internal",
    "static",
    "abstract",
    "final",
    "async",
    "unsafe",
    "extern",
    "sealed",
    "open",
    "override",
    "virtual",
    "partial",
    "declare",
    "const",
];

/// The definition keywords, as written (`function*` is a generator).
pub const KEYWORDS: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "trait",
    "union",
    "mod",
    "macro_rules!",
    "class",
    "interface",
    "type",
    "def",
    "function",
    "function*",
    "func",
    "module",
    "record",
    "object",
    "protocol",
    "extension",
    "impl",
];

/// The longest of the [`MODIFIERS`] and [`KEYWORDS`], in bytes
/// (`macro_rules!`).
const LONGEST_WORD: usize = 12;

/// Every definition of `content`, in file order, as (keyword, name): a line
/// that starts — after spaces or tabs, then any [`MODIFIERS`] — with one of
/// the [`KEYWORDS`], spaces or tabs, and a name (`[A-Za-z_$][A-Za-z0-9_$]*`,
/// the longest such run). Read a line at a time without a regex: most lines
/// are turned down at their first word.
pub fn definitions(content: &str) -> impl Iterator<Item = (&str, &str)> {
    // The memchr crate's search for line ends (vectorised), not `str::split`'s.
    let ends = memchr::memchr_iter(b'\n', content.as_bytes()).chain([content.len()]);
    let mut start = 0;
    ends.filter_map(move |end| {
        let line = content.get(start..end);
        start = end + 1;
        definition_on_line(line?)
    })
}

/// The definition a line (without its `\n`) starts with, if any (see
/// [`definitions`]).
fn definition_on_line(line: &str) -> Option<(&str, &str)> {
    let bytes = line.as_bytes();
    let blanks_from = |at: usize| {
        bytes.get(at..).map_or(0, |rest| {
            rest.iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count()
        })
    };
    let mut at = blanks_from(0);
    loop {
        // Every modifier and keyword starts with a lower-case letter: most
        // lines (`}`, `//`, `let`, `x = …`) end here or at the word's length.
        if !bytes.get(at).is_some_and(u8::is_ascii_lowercase) {
            return None;
        }
        // `pub(…)` holds anything but `)` and may hold blanks.
        if bytes.get(at..)?.starts_with(b"pub(")
            && let Some(close) = memchr::memchr(b')', bytes.get(at + 4..)?)
            && blanks_from(at + 4 + close + 1) > 0
        {
            let after = at + 4 + close + 1;
            at = after + blanks_from(after);
            continue;
        }
        let word_length = bytes
            .get(at..)?
            .iter()
            .take(LONGEST_WORD + 1)
            .take_while(|&&b| b != b' ' && b != b'\t')
            .count();
        if word_length > LONGEST_WORD {
            return None;
        }
        let word = line.get(at..at + word_length)?;
        let blanks = blanks_from(at + word_length);
        if blanks == 0 {
            return None;
        }
        if MODIFIERS.contains(&word) {
            at += word_length + blanks;
            continue;
        }
        if !KEYWORDS.contains(&word) {
            return None;
        }
        let start = at + word_length + blanks;
        let rest = bytes.get(start..)?;
        if !rest
            .first()
            .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_' || b == b'$')
        {
            return None;
        }
        let length = rest
            .iter()
            .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
            .count();
        return Some((word, line.get(start..start + length)?));
    }
}

/// Definitions in file order, each name once (first occurrence wins), at most
/// [`MAX_NAMES`]. `impl` blocks are not definitions and are skipped.
///
/// # Examples
///
/// ```
/// use aic_stages::select::symbols::defined_names;
/// let names = defined_names("pub struct Config {}\nimpl Config {\n    pub fn load() {}\n}\n");
/// let names: Vec<_> = names.iter().map(|n| (n.kind.as_str(), n.name.as_str())).collect();
/// assert_eq!(names, [("struct", "Config"), ("fn", "load")]);
/// ```
pub fn defined_names(content: &str) -> Vec<DefinedName> {
    let mut names: Vec<DefinedName> = Vec::new();
    for (kind, name) in definitions(content) {
        let kind = kind.trim_end_matches(['!', '*']);
        if kind == "impl" {
            continue;
        }
        if names.iter().any(|n| n.name == name) {
            continue;
        }
        names.push(DefinedName {
            kind: kind.to_owned(),
            name: name.to_owned(),
        });
        if names.len() == MAX_NAMES {
            break;
        }
    }
    names
}

/// [`symbol_terms`] and [`defined_name_ids`] of one text in one pass of
/// [`definitions`] (the scan needs both for every code file).
pub fn symbol_terms_and_name_ids(content: &str) -> (Vec<String>, Vec<u32>) {
    let mut names: Vec<&str> = Vec::new();
    let mut ids: Vec<u32> = Vec::new();
    for (kind, name) in definitions(content) {
        if kind == "impl" {
            continue;
        }
        ids.push(name_id(name));
        if names.len() < MAX_NAMES && !names.contains(&name) {
            names.push(name);
        }
    }
    ids.sort_unstable();
    ids.dedup();
    (name_terms(names), ids)
}

/// The stemmed words of a file's defined names ([`defined_names`]), sorted and
/// deduplicated (`UserService`, `find_by_token` → `by`, `find`, `servic`,
/// `token`, `user`).
pub fn symbol_terms(content: &str) -> Vec<String> {
    name_terms(defined_names(content).iter().map(|n| n.name.as_str()))
}

/// The identity of a defined or mentioned name for exact matching: the
/// [`term_id`] of the name lower-cased, so `CliRunner` in an intent meets
/// `class CliRunner` (and `clirunner`) but not `CliRunnerTest`.
pub fn name_id(name: &str) -> u32 {
    term_id(&name.to_lowercase())
}

/// The [`name_id`]s of every name `content` defines (no [`MAX_NAMES`] cap:
/// a large module's last definitions are as nameable as its first), sorted
/// and deduplicated.
///
/// # Examples
///
/// ```
/// use aic_stages::select::symbols::{defined_name_ids, name_id};
/// let ids = defined_name_ids("class CliRunner:\n    def invoke(self):\n        pass\n");
/// assert!(ids.binary_search(&name_id("clirunner")).is_ok());
/// assert!(ids.binary_search(&name_id("invoke")).is_ok());
/// ```
pub fn defined_name_ids(content: &str) -> Vec<u32> {
    let mut ids: Vec<u32> = definitions(content)
        .filter(|&(kind, _)| kind != "impl")
        .map(|(_, name)| name_id(name))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The stemmed words of a list of names, sorted and deduplicated, one-letter
/// words left out.
pub fn name_terms<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut terms: Vec<String> = names
        .into_iter()
        .flat_map(split_words)
        .filter(|w| w.len() > 1)
        .map(|w| stem(&w))
        .collect();
    terms.sort_unstable();
    terms.dedup();
    terms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(content: &str) -> Vec<String> {
        defined_names(content)
            .into_iter()
            .map(|n| format!("{} {}", n.kind, n.name))
            .collect()
    }

    #[test]
    fn finds_definitions_across_languages() {
        assert_eq!(
            names(
                "class Parser:\n    def parse(self):\n        pass\n\nasync def main():\n    pass\n"
            ),
            ["class Parser", "def parse", "def main"]
        );
        assert_eq!(
            names(
                "export default class App {}\nexport async function load() {}\ninterface Props {}\n"
            ),
            ["class App", "function load", "interface Props"]
        );
        assert_eq!(
            names("func (s *Server) Serve() error {\n}\ntype Server struct{}\n"),
            ["type Server"]
        );
        assert_eq!(
            names("pub(crate) const fn limit() {}\nmacro_rules! bail {}\n"),
            ["fn limit", "macro_rules bail"]
        );
        assert!(names("let x = 1;\n// fn not_a_definition\n").is_empty());
    }

    #[test]
    fn longest_word_is_the_longest_modifier_or_keyword() {
        let longest = MODIFIERS
            .iter()
            .chain(KEYWORDS)
            .map(|word| word.len())
            .max();
        assert_eq!(longest, Some(LONGEST_WORD));
        assert!(
            MODIFIERS
                .iter()
                .chain(KEYWORDS)
                .all(|word| word.as_bytes()[0].is_ascii_lowercase())
        );
    }

    #[test]
    fn one_pass_gives_the_same_terms_and_ids() {
        let text = "class Parser:\n    def parse(self):\n        pass\nimpl Parser {}\nfn load_config() {}\n";
        let (terms, ids) = symbol_terms_and_name_ids(text);
        assert_eq!(terms, symbol_terms(text));
        assert_eq!(ids, defined_name_ids(text));
    }

    #[test]
    fn terms_are_split_stemmed_and_sorted() {
        let terms = symbol_terms("export class UserService {}\nfunction find_by_token() {}\n");
        assert_eq!(terms, ["by", "find", "servic", "token", "user"]);
    }
}
