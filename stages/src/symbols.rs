//! Definition names found without a parser: the names-only tier of languages
//! without a tree-sitter provider (the [`GenericProvider`]), the fallback of a
//! file whose parse found nothing, and the scan's symbol terms of every code
//! file (a regex is cheaper than a parse for each file of a repository).
//!
//! [`GenericProvider`]: crate::lang::GenericProvider
//!
//! One pattern recognises a definition at the start of a line — after optional
//! visibility and modifier words — introduced by a definition keyword of a
//! common language (`fn`, `struct`, `enum`, `trait`, `class`, `interface`,
//! `type`, `def`, `function`, `func`, `module`, `record`, …). It misses
//! definitions that do not start a line (`const f = () => …` is not one) and
//! never parses, so it cannot fail.

use std::sync::OnceLock;

use regex::Regex;

use crate::terms::{split_words, stem, term_id};

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

fn pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| {
        Regex::new(
            r"(?m)^[ \t]*(?:(?:pub(?:\([^)\n]*\))?|export|default|public|private|protected|internal|static|abstract|final|async|unsafe|extern|sealed|open|override|virtual|partial|declare|const)[ \t]+)*(fn|struct|enum|trait|union|mod|macro_rules!|class|interface|type|def|function\*?|func|module|record|object|protocol|extension|impl)[ \t]+([A-Za-z_$][A-Za-z0-9_$]*)",
        )
        .expect("the definition pattern is a valid constant regex")
    })
}

/// Definitions in file order, each name once (first occurrence wins), at most
/// [`MAX_NAMES`]. `impl` blocks are not definitions and are skipped.
///
/// # Examples
///
/// ```
/// use aic_stages::symbols::defined_names;
/// let names = defined_names("pub struct Config {}\nimpl Config {\n    pub fn load() {}\n}\n");
/// let names: Vec<_> = names.iter().map(|n| (n.kind.as_str(), n.name.as_str())).collect();
/// assert_eq!(names, [("struct", "Config"), ("fn", "load")]);
/// ```
pub fn defined_names(content: &str) -> Vec<DefinedName> {
    let mut names: Vec<DefinedName> = Vec::new();
    for captures in pattern().captures_iter(content) {
        let kind = captures[1].trim_end_matches(['!', '*']);
        if kind == "impl" {
            continue;
        }
        let name = &captures[2];
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

/// [`symbol_terms`] and [`defined_name_ids`] of one text in one pass of the
/// definition pattern (the scan needs both for every code file).
pub fn symbol_terms_and_name_ids(content: &str) -> (Vec<String>, Vec<u32>) {
    let mut names: Vec<&str> = Vec::new();
    let mut ids: Vec<u32> = Vec::new();
    for captures in pattern().captures_iter(content) {
        if &captures[1] == "impl" {
            continue;
        }
        let name = captures.get(2).map_or("", |m| m.as_str());
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
/// use aic_stages::symbols::{defined_name_ids, name_id};
/// let ids = defined_name_ids("class CliRunner:\n    def invoke(self):\n        pass\n");
/// assert!(ids.binary_search(&name_id("clirunner")).is_ok());
/// assert!(ids.binary_search(&name_id("invoke")).is_ok());
/// ```
pub fn defined_name_ids(content: &str) -> Vec<u32> {
    let mut ids: Vec<u32> = pattern()
        .captures_iter(content)
        .filter(|captures| &captures[1] != "impl")
        .map(|captures| name_id(&captures[2]))
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
