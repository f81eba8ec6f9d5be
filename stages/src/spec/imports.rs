//! Leading import statements of a type's content: split off before the verbatim render, then
//! merged across the verbatim types with duplicates removed.
//!
//! An import region is the run of statements at the very top of the content (blank lines
//! between them allowed) that each start, unindented, with `use `, `import `, `from … import`,
//! `extern crate `, `#include `, `package `, or a `const`/`let`/`var` binding of `require(…)`.
//! A statement runs on over the following lines while its brackets are open, so
//! `use a::{\n b,\n};`, `import {\n a,\n} from "x";`, Go's `import (\n "fmt"\n)` and Python's
//! `from x import (\n a,\n)` are one statement each. `pub use` stays in the body: a re-export
//! is part of the type's interface. Anything else ends the region, including a comment, an
//! attribute or a statement whose brackets never close.

/// The most lines one import statement may span; a longer one ends the region.
const MAX_STATEMENT_LINES: usize = 200;

/// Whether a line starts an import statement (see the module documentation).
fn starts_import(line: &str) -> bool {
    const PREFIXES: [&str; 5] = ["use ", "import ", "extern crate ", "#include ", "package "];
    if PREFIXES.iter().any(|prefix| line.starts_with(prefix)) {
        return true;
    }
    if line.starts_with("from ") && line.contains(" import ") {
        return true;
    }
    ["const ", "let ", "var "]
        .iter()
        .any(|prefix| line.starts_with(prefix))
        && line.contains("require(")
}

/// Opening minus closing brackets on a line.
fn bracket_balance(line: &str) -> i64 {
    line.chars()
        .map(|c| match c {
            '(' | '[' | '{' => 1,
            ')' | ']' | '}' => -1,
            _ => 0,
        })
        .sum()
}

/// Splits the leading import statements off `content`.
///
/// Returns the statements (multi-line ones joined with `\n`, trailing whitespace removed from
/// each line) and the rest of the content from its first non-import line. Without leading
/// imports the statements are empty and the body is `content` itself.
pub(super) fn split_leading_imports(content: &str) -> (Vec<String>, &str) {
    let mut statements = Vec::new();
    let mut rest = content;
    loop {
        let mut lines = rest.split_inclusive('\n');
        let Some(first) = lines.next() else { break };
        if first.trim().is_empty() {
            rest = &rest[first.len()..];
            continue;
        }
        if !starts_import(first) {
            break;
        }
        let mut statement = first.trim_end().to_owned();
        let mut consumed = first.len();
        let mut balance = bracket_balance(first);
        let mut spanned = 1;
        while balance > 0 {
            let Some(line) = lines.next() else { break };
            spanned += 1;
            if spanned > MAX_STATEMENT_LINES {
                break;
            }
            statement.push('\n');
            statement.push_str(line.trim_end());
            consumed += line.len();
            balance += bracket_balance(line);
        }
        if balance > 0 {
            break;
        }
        statements.push(statement);
        rest = &rest[consumed..];
    }
    if statements.is_empty() {
        return (statements, content);
    }
    (statements, rest)
}

/// Adds `statements` to `merged`, leaving out those already in it (compared line by line with
/// trailing whitespace ignored, which [`split_leading_imports`] already removed).
pub(super) fn merge_unique(merged: &mut Vec<String>, statements: &[String]) {
    for statement in statements {
        if !merged.contains(statement) {
            merged.push(statement.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_imports_of_each_language_are_split_off() {
        let rust =
            "use std::fmt;\nuse crate::a::{\n    B,\n    C,\n};\n\n/// Doc.\npub trait T {}\n";
        let (imports, body) = split_leading_imports(rust);
        assert_eq!(
            imports,
            ["use std::fmt;", "use crate::a::{\n    B,\n    C,\n};"]
        );
        assert_eq!(body, "/// Doc.\npub trait T {}\n");

        let ts = "import type { A } from \"./a\";\nimport {\n  b,\n} from \"b\";\nconst c = require(\"c\");\nexport interface I {}\n";
        let (imports, body) = split_leading_imports(ts);
        assert_eq!(imports.len(), 3);
        assert_eq!(body, "export interface I {}\n");

        let go = "package store\n\nimport (\n\t\"fmt\"\n)\n\ntype S struct{}\n";
        let (imports, body) = split_leading_imports(go);
        assert_eq!(imports, ["package store", "import (\n\t\"fmt\"\n)"]);
        assert_eq!(body, "type S struct{}\n");

        let python = "from typing import (\n    Any,\n)\nimport os\nclass P:\n    pass\n";
        let (imports, body) = split_leading_imports(python);
        assert_eq!(imports, ["from typing import (\n    Any,\n)", "import os"]);
        assert_eq!(body, "class P:\n    pass\n");
    }

    #[test]
    fn content_without_leading_imports_is_unchanged() {
        for content in [
            "",
            "pub struct S;\nuse x;\n",
            "//! Module docs.\nuse x;\n",
            "pub use crate::x::Y;\n",
            "    use indented;\n",
            "use never::{closed;\n",
        ] {
            let (imports, body) = split_leading_imports(content);
            assert!(imports.is_empty(), "{content:?}");
            assert_eq!(body, content);
        }
    }

    #[test]
    fn an_unclosed_statement_after_good_ones_stays_in_the_body() {
        let (imports, body) = split_leading_imports("use a;\nuse b::{\nfn f() {}\n");
        assert_eq!(imports, ["use a;"]);
        assert_eq!(body, "use b::{\nfn f() {}\n");
    }

    #[test]
    fn merging_keeps_first_appearance_order_without_duplicates() {
        let mut merged = Vec::new();
        merge_unique(&mut merged, &["use a;".to_owned(), "use b;".to_owned()]);
        merge_unique(&mut merged, &["use b;".to_owned(), "use c;".to_owned()]);
        assert_eq!(merged, ["use a;", "use b;", "use c;"]);
    }
}
