//! Imports from a parsed file: the `imports.scm` matches grouped by import
//! statement, and Rust `use` trees flattened into one import per module path.

use std::collections::BTreeMap;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Tree};

mod js_lexer;
mod rust_lexer;

use super::grammar::{Grammar, MAX_PARSE_BYTES, Purpose, Role};
use super::{ImportKind, ImportRef};

/// The captures of one import statement, gathered over all its matches.
struct Statement<'tree> {
    kind: ImportKind,
    /// Specifier nodes by start byte.
    sources: BTreeMap<usize, Node<'tree>>,
    /// Imported-name nodes by start byte.
    symbols: BTreeMap<usize, Node<'tree>>,
    trees: BTreeMap<usize, Node<'tree>>,
}

/// The imports of a parsed file, in statement order.
///
/// Matches are grouped by their statement capture (`@import`,
/// `@import.reexport`, `@import.module`); a statement captured as both an
/// import and a re-export is a re-export. A statement with several sources
/// (Python `import a, b`) gives one [`ImportRef`] per source, each with the
/// statement's symbols. Matches without a statement capture are ignored.
pub(crate) fn extract(grammar: Grammar, tree: &Tree, content: &str) -> Vec<ImportRef> {
    if let Some(imports) = from_tokens(grammar, content) {
        return imports;
    }
    if !may_import(grammar, content) {
        return Vec::new();
    }
    extract_matches(grammar, tree, content)
}

/// The imports of a Rust file, read from its tokens without a parse (see
/// [`rust_lexer`]); none for a file over [`MAX_PARSE_BYTES`], as a parse
/// would give none.
pub(crate) fn rust_imports(content: &str) -> Vec<ImportRef> {
    if content.len() > MAX_PARSE_BYTES || !may_import(Grammar::Rust, content) {
        return Vec::new();
    }
    rust_lexer::extract(content)
}

/// The imports of a file whose language has a token reader (Rust,
/// TypeScript, TSX, JavaScript), read without a parse; `None` for the other
/// languages, whose imports come from a parse.
pub(crate) fn from_tokens(grammar: Grammar, content: &str) -> Option<Vec<ImportRef>> {
    if grammar == Grammar::Rust {
        Some(rust_imports(content))
    } else if is_script(grammar) {
        Some(script_imports(grammar, content))
    } else {
        None
    }
}

/// Whether `grammar` is TypeScript's, TSX's or JavaScript's.
pub(crate) fn is_script(grammar: Grammar) -> bool {
    matches!(
        grammar,
        Grammar::TypeScript | Grammar::Tsx | Grammar::JavaScript
    )
}

/// The imports of a TypeScript, TSX or JavaScript file (`grammar`), read
/// from its tokens without a parse (see [`js_lexer`]); none for a file over
/// [`MAX_PARSE_BYTES`], as a parse would give none.
pub(crate) fn script_imports(grammar: Grammar, content: &str) -> Vec<ImportRef> {
    if content.len() > MAX_PARSE_BYTES || !may_import(grammar, content) {
        return Vec::new();
    }
    js_lexer::extract(grammar, content)
}

/// The imports the imports query of `grammar` finds in a parse of
/// `content`; `None` when the parse fails or has syntax errors. The
/// reference the token readers are tested against.
pub(crate) fn imports_by_query(grammar: Grammar, content: &str) -> Option<Vec<ImportRef>> {
    let tree = super::grammar::parse_fresh(grammar, content)?;
    if tree.root_node().has_error() {
        return None;
    }
    Some(extract_matches(grammar, &tree, content))
}

/// Whether `content` holds a word that every import pattern of `grammar`
/// needs (`import`, `export` or `require` in TypeScript and JavaScript,
/// `use`, `extern` or `mod` in Rust, `import` elsewhere): a file without
/// them has no import, so it need not be parsed for its imports nor its tree
/// walked by the imports query. Three quarters of babel's code files (its
/// test fixtures) and deno's global declaration files (`lib.*.d.ts`, 1 MB
/// and more) have none.
pub(crate) fn may_import(grammar: Grammar, content: &str) -> bool {
    let words: &[&[u8]] = match grammar {
        Grammar::TypeScript | Grammar::Tsx | Grammar::JavaScript => {
            &[b"import", b"export", b"require"]
        }
        Grammar::Rust => &[b"use", b"extern", b"mod"],
        Grammar::Python | Grammar::Go | Grammar::Java => &[b"import"],
    };
    let bytes = content.as_bytes();
    words.iter().any(|word| has_word(bytes, word))
}

/// Whether every import a TypeScript or JavaScript file can hold is a
/// statement directly under the root, so the imports query need not look
/// for pattern starts deeper down (which walks every node of every function
/// body): there is no `require`, and each `import` or `export` keyword in the
/// tree is the keyword of a statement whose parent is the root (as the
/// parse, error recovery included, placed it). A dynamic `import()`, or an
/// import in `declare module`, in a block or under an error node fails the
/// check, and the whole tree is searched as before.
fn only_top_level_statements(grammar: Grammar, tree: &Tree, content: &str) -> bool {
    if !matches!(
        grammar,
        Grammar::TypeScript | Grammar::Tsx | Grammar::JavaScript
    ) {
        return false;
    }
    let bytes = content.as_bytes();
    if has_word(bytes, b"require") {
        return false;
    }
    let root = tree.root_node();
    [&b"import"[..], b"export"].iter().all(|word| {
        word_starts(bytes, word).all(|at| {
            let Some(node) = root.descendant_for_byte_range(at, at + word.len()) else {
                return true;
            };
            // Text in a comment, a string or a name is no keyword.
            if node.kind().as_bytes() != *word {
                return true;
            }
            node.parent().is_some_and(|statement| {
                matches!(statement.kind(), "import_statement" | "export_statement")
                    && statement.parent() == Some(root)
            })
        })
    })
}

/// The offsets at which `word` occurs in `bytes` as a whole word (see
/// [`has_word`]).
fn word_starts<'a>(bytes: &'a [u8], word: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let part_of_name = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$';
    memchr::memmem::find_iter(bytes, word).filter(move |&at| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + word.len()).copied();
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
    })
}

/// Whether `word` occurs in `bytes` as a whole word: not preceded or followed
/// by an ASCII letter, digit, `_` or `$` (`requireResidentKey` holds no
/// `require`). A non-ASCII neighbour counts as a boundary, so the check
/// never drops a keyword next to Unicode white space.
fn has_word(bytes: &[u8], word: &[u8]) -> bool {
    word_starts(bytes, word).next().is_some()
}

/// [`extract`] without the word check.
fn extract_matches(grammar: Grammar, tree: &Tree, content: &str) -> Vec<ImportRef> {
    let top_level = only_top_level_statements(grammar, tree, content);
    collect(grammar, tree, content, top_level)
}

/// The imports the query finds, looking for pattern starts only among the
/// root's children when `top_level`.
fn collect(grammar: Grammar, tree: &Tree, content: &str, top_level: bool) -> Vec<ImportRef> {
    let compiled = grammar.query(Purpose::Imports);
    let mut statements: BTreeMap<(usize, usize), Statement<'_>> = BTreeMap::new();
    let mut cursor = compiled.cursor();
    if top_level && !compiled.rooted {
        cursor.set_max_start_depth(Some(1));
    }
    let mut matches = cursor.matches(&compiled.query, tree.root_node(), content.as_bytes());
    while let Some(found) = matches.next() {
        let Some((statement, kind)) =
            found
                .captures()
                .iter()
                .find_map(|capture| match compiled.role(capture.index) {
                    Role::Import(kind) => Some((capture.node, kind)),
                    _ => None,
                })
        else {
            continue;
        };
        let entry = statements
            .entry((statement.start_byte(), statement.id()))
            .or_insert_with(|| Statement {
                kind,
                sources: BTreeMap::new(),
                symbols: BTreeMap::new(),
                trees: BTreeMap::new(),
            });
        if kind == ImportKind::Reexport {
            entry.kind = kind;
        }
        for capture in found.captures() {
            let node = capture.node;
            match compiled.role(capture.index) {
                Role::ImportSource => {
                    entry.sources.insert(node.start_byte(), node);
                }
                Role::ImportSymbol => {
                    entry.symbols.insert(node.start_byte(), node);
                }
                Role::ImportSymbolList => {
                    let mut walk = node.walk();
                    for specifier in node.named_children(&mut walk) {
                        if let Some(name) = specifier
                            .child_by_field_name("name")
                            .filter(|name| name.kind() == "identifier")
                        {
                            entry.symbols.insert(name.start_byte(), name);
                        }
                    }
                }
                Role::ImportTree => {
                    entry.trees.insert(node.start_byte(), node);
                }
                _ => {}
            }
        }
    }

    let mut imports = Vec::new();
    for statement in statements.values() {
        let mut symbols = Unique::default();
        for node in statement.symbols.values() {
            symbols.push(text(*node, content));
        }
        let symbols = symbols.values;
        for node in statement.sources.values() {
            let source = text(*node, content);
            if source.is_empty() {
                continue;
            }
            imports.push(ImportRef {
                is_relative: statement.kind == ImportKind::ModuleDeclaration
                    || is_relative(grammar, &source),
                source,
                symbols: symbols.clone(),
                kind: statement.kind,
            });
        }
        for node in statement.trees.values() {
            let mut paths = UsePaths::default();
            flatten_use_tree(*node, "", content, &mut paths);
            for (source, symbols) in paths.paths {
                imports.push(ImportRef {
                    is_relative: is_relative(grammar, &source),
                    source,
                    symbols: symbols.values,
                    kind: statement.kind,
                });
            }
        }
    }
    imports
}

/// Whether a specifier points into the project rather than at a package.
fn is_relative(grammar: Grammar, source: &str) -> bool {
    match grammar {
        Grammar::TypeScript | Grammar::Tsx | Grammar::JavaScript => {
            source.starts_with('.') || source.starts_with('/')
        }
        Grammar::Python => source.starts_with('.'),
        Grammar::Go => source.starts_with("./") || source.starts_with("../"),
        Grammar::Rust => matches!(source.split("::").next(), Some("crate" | "self" | "super")),
        Grammar::Java => false,
    }
}

/// A node's text with all whitespace removed: specifiers and paths never
/// contain any, but a path split over lines (`crate::a\n    ::b`) does.
fn text(node: Node<'_>, content: &str) -> String {
    content
        .get(node.byte_range())
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// Non-empty strings in first-seen order, each once; linear in their
/// number (a `from x import` or `export { … }` list may name thousands).
#[derive(Default)]
struct Unique {
    values: Vec<String>,
    seen: rustc_hash::FxHashSet<String>,
}

impl Unique {
    fn push(&mut self, value: String) {
        if !value.is_empty() && self.seen.insert(value.clone()) {
            self.values.push(value);
        }
    }
}

/// The (module path, symbols) pairs of a Rust use tree, in first-seen order.
#[derive(Default)]
struct UsePaths {
    paths: Vec<(String, Unique)>,
    /// Where each module path is in `paths`.
    index: rustc_hash::FxHashMap<String, usize>,
}

fn join_path(prefix: &str, path: &str) -> String {
    if prefix.is_empty() {
        path.to_owned()
    } else if path.is_empty() {
        prefix.to_owned()
    } else {
        format!("{prefix}::{path}")
    }
}

/// Adds `symbol` to the import of `source`, creating it if needed; an empty
/// symbol only makes sure the import exists.
fn add(paths: &mut UsePaths, source: String, symbol: String) {
    if source.is_empty() {
        return;
    }
    let index = if let Some(&index) = paths.index.get(&source) {
        index
    } else {
        paths.index.insert(source.clone(), paths.paths.len());
        paths.paths.push((source, Unique::default()));
        paths.paths.len() - 1
    };
    paths.paths[index].1.push(symbol);
}

/// Splits a path into its module and last segment: `a::b::C` → (`a::b`, `C`).
fn split_last(path: &str) -> (&str, &str) {
    path.rsplit_once("::").unwrap_or(("", path))
}

/// Flattens a Rust use tree under `prefix` into (module path, symbols) pairs
/// in source order: `crate::a::{b::C, D, e::*}` gives `crate::a::b` with `C`,
/// `crate::a` with `D` and `crate::a::e` with `*`. A bare `use foo;` imports
/// the crate `foo` with no symbols; `self` in a list imports the list's module.
fn flatten_use_tree(node: Node<'_>, prefix: &str, content: &str, paths: &mut UsePaths) {
    match node.kind() {
        "use_as_clause" => {
            if let Some(path) = node.child_by_field_name("path") {
                flatten_use_tree(path, prefix, content, paths);
            }
        }
        "use_wildcard" => {
            let path = node
                .named_child(0)
                .map(|path| text(path, content))
                .unwrap_or_default();
            add(paths, join_path(prefix, &path), "*".to_owned());
        }
        "scoped_use_list" => {
            let path = node
                .child_by_field_name("path")
                .map(|path| text(path, content))
                .unwrap_or_default();
            let inner = join_path(prefix, &path);
            if let Some(list) = node.child_by_field_name("list") {
                flatten_use_tree(list, &inner, content, paths);
            }
        }
        "use_list" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                flatten_use_tree(child, prefix, content, paths);
            }
        }
        "self" if !prefix.is_empty() => add(paths, prefix.to_owned(), String::new()),
        "line_comment" | "block_comment" => {}
        _ => {
            let path = join_path(prefix, &text(node, content));
            let (module, name) = split_last(&path);
            if module.is_empty() {
                add(paths, name.to_owned(), String::new());
            } else {
                add(paths, module.to_owned(), name.to_owned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::grammar::parse;

    /// The word check keeps every file that has an import (the words may be
    /// anywhere: a string, a comment, a call) and drops only files whose
    /// query finds nothing.
    #[test]
    fn the_word_check_drops_only_files_without_imports() {
        let sources = [
            "import x from './x';\nx();\n",
            "export * from \"./all\";\n",
            "export { a } from './a';\n",
            "const { a } = require('./a');\n",
            "function f() { return import('./lazy'); }\n",
            "if (ok) {\n  const b = require(\"./b\");\n}\n",
            "const s = 'require';\nlet t = s;\n",
            "function plain(a, b) { return a + b; }\nclass C { m() {} }\n",
            "// nothing to see\nconst impor = 1, expor = 2;\n",
            "interface Options { requireResidentKey?: boolean; exported: string; }\n",
            "const x = a.require_y + b.importer;\n",
        ];
        for grammar in [Grammar::TypeScript, Grammar::Tsx, Grammar::JavaScript] {
            for source in sources {
                let tree = parse(grammar, source).unwrap();
                let all = extract_matches(grammar, &tree, source);
                assert_eq!(
                    extract(grammar, &tree, source),
                    all,
                    "{grammar:?}: {source}"
                );
                if !may_import(grammar, source) {
                    assert!(all.is_empty(), "{grammar:?}: {source}");
                }
            }
            for source in &sources[7..] {
                assert!(!may_import(grammar, source), "{source}");
            }
            assert!(!extract(grammar, &parse(grammar, sources[0]).unwrap(), sources[0]).is_empty());
        }
        let others = [
            (Grammar::Rust, "use std::fmt;\nfn main() {}\n"),
            (Grammar::Rust, "mod parser;\nextern crate alloc;\n"),
            (Grammar::Rust, "fn main() { let x = 1; }\n"),
            (Grammar::Python, "from os import path\nimport sys\n"),
            (Grammar::Python, "def f():\n    return 1\n"),
            (Grammar::Go, "package main\nimport \"fmt\"\n"),
            (Grammar::Go, "package main\nfunc main() {}\n"),
            (Grammar::Java, "import java.util.List;\nclass A {}\n"),
            (Grammar::Java, "class A { void f() {} }\n"),
        ];
        for (grammar, source) in others.iter().copied() {
            let tree = parse(grammar, source).unwrap();
            let all = extract_matches(grammar, &tree, source);
            assert_eq!(
                extract(grammar, &tree, source),
                all,
                "{grammar:?}: {source}"
            );
            assert_eq!(
                may_import(grammar, source),
                !all.is_empty(),
                "{grammar:?}: {source}"
            );
        }
    }

    /// Files whose imports are all statements under the root are searched
    /// from the root's children only, with the same result; a nested import,
    /// a dynamic one or `require` sends the query through the whole tree.
    #[test]
    fn top_level_imports_are_found_without_walking_the_whole_tree() {
        let cases = [
            (
                "import a from './a';\nexport * from './b';\nfunction f() { return 1; }\n",
                true,
            ),
            (
                "// import x from 'nowhere'\nconst s = \"export\";\nimport a from './a';\n",
                true,
            ),
            (
                "export default function f() {}\nexport const x = 1;\n",
                true,
            ),
            (
                "import a from './a';\nasync function f() { await import('./lazy'); }\n",
                false,
            ),
            ("const a = require('./a');\n", false),
            (
                "declare module 'm' {\n  import x from './x';\n  export * from './y';\n}\n",
                false,
            ),
            ("if (a) {\nimport x from './x';\n}\n", false),
            ("import a from './a'\nfunction (\n", true),
        ];
        for grammar in [Grammar::TypeScript, Grammar::Tsx, Grammar::JavaScript] {
            for (source, top_level) in cases {
                let tree = parse(grammar, source).unwrap();
                if grammar != Grammar::JavaScript || !source.starts_with("declare") {
                    assert_eq!(
                        only_top_level_statements(grammar, &tree, source),
                        top_level,
                        "{grammar:?}: {source}"
                    );
                }
                assert_eq!(
                    extract_matches(grammar, &tree, source),
                    collect(grammar, &tree, source, false),
                    "{grammar:?}: {source}"
                );
            }
        }
    }

    /// A Python `from … import` of thousands of names and a Rust use list of
    /// thousands of paths give every name once (each name used to be checked
    /// against all before it: 8,000 names took 45 ms, 16,000 four times
    /// that).
    #[test]
    fn long_python_and_rust_lists_give_every_name_once() {
        let names: Vec<String> = (0..8_000).map(|i| format!("name{i}")).collect();
        let source = format!(
            "from pkg.mod import (\n    {},\n    name0\n)\n",
            names.join(",\n    ")
        );
        let tree = parse(Grammar::Python, &source).unwrap();
        let imports = extract(Grammar::Python, &tree, &source);
        assert_eq!(imports.len(), 1);
        assert_eq!(imports[0].source, "pkg.mod");
        assert_eq!(imports[0].symbols, names);

        let modules: Vec<String> = (0..4_000).map(|i| format!("m{i}::Item")).collect();
        let source = format!(
            "use crate::{{{}, m0::Item, m0::Other}};\n",
            modules.join(", ")
        );
        let tree = parse(Grammar::Rust, &source).unwrap();
        let imports = extract(Grammar::Rust, &tree, &source);
        assert_eq!(imports.len(), 4_000);
        assert_eq!(imports[0].source, "crate::m0");
        assert_eq!(imports[0].symbols, ["Item", "Other"]);
        assert_eq!(imports[3_999].source, "crate::m3999");
    }

    /// A list of names is read from its node: every name of a long `export
    /// { … } from` or `import { … } from` list is found, once.
    #[test]
    fn long_name_lists_give_every_name() {
        let names: Vec<String> = (0..2_000).map(|i| format!("name{i}")).collect();
        let list = names.join(",\n  ");
        let source = format!(
            "import {{\n  {list}\n}} from './a';\nexport {{\n  {list}\n}} from './b';\nexport type {{ {list} }};\n"
        );
        for grammar in [Grammar::TypeScript, Grammar::Tsx, Grammar::JavaScript] {
            let tree = parse(grammar, &source).unwrap();
            let imports = extract(grammar, &tree, &source);
            let sources: Vec<&str> = imports.iter().map(|i| i.source.as_str()).collect();
            assert_eq!(sources, ["./a", "./b"], "{grammar:?}");
            for import in &imports {
                assert_eq!(import.symbols, names, "{grammar:?}");
            }
        }
    }
}
