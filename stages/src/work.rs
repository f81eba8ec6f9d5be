//! A per-thread count of the units of work the per-file stages do — tree nodes
//! visited, bytes scanned, query matches — so tests can check that a stage
//! grows linearly with its input by counting work, never by timing it.
//!
//! Counting is one thread-local addition per unit; the stages tick where they
//! loop over a file's nodes or bytes. The count is never reset by the stages:
//! a caller reads [`count`] before and after the work it measures.
//!
//! # Examples
//!
//! ```
//! let before = aic_stages::work::count();
//! // … run a stage on this thread …
//! let done = aic_stages::work::count() - before;
//! # let _ = done;
//! ```

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::Instant;

thread_local! {
    static UNITS: Cell<u64> = const { Cell::new(0) };
    static PARSES: Cell<u64> = const { Cell::new(0) };
    static SETUP_NS: Cell<u64> = const { Cell::new(0) };
}

/// The value `cell` holds, built by `init` on first use; the time this thread
/// spends building it, or waiting for another thread that is, counts in
/// [`setup_ns`].
pub(crate) fn once<T>(cell: &OnceLock<T>, init: impl FnOnce() -> T) -> &T {
    if let Some(value) = cell.get() {
        return value;
    }
    let started = Instant::now();
    let value = cell.get_or_init(init);
    let spent = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    SETUP_NS.with(|ns| ns.set(ns.get().saturating_add(spent)));
    value
}

/// Nanoseconds this thread has spent building the process's shared tables
/// (compiled tree-sitter queries, the tokenizer, the guard's scanners and
/// secret regexes, the transforms' regexes) or waiting for them: paid
/// once per process, not by the file that happened to need them first, so a
/// per-file time leaves it out.
pub fn setup_ns() -> u64 {
    SETUP_NS.with(Cell::get)
}

/// Counts one tree-sitter parse on this thread.
#[inline]
pub(crate) fn parsed() {
    PARSES.with(|count| count.set(count.get().wrapping_add(1)));
}

/// The tree-sitter parses done on this thread so far (a text asked for again
/// is answered from the last tree and not counted).
pub fn parses() -> u64 {
    PARSES.with(Cell::get)
}

/// Adds `units` to this thread's count.
#[inline]
pub(crate) fn tick(units: u64) {
    UNITS.with(|count| count.set(count.get().wrapping_add(units)));
}

/// The units of work counted on this thread so far.
pub fn count() -> u64 {
    UNITS.with(Cell::get)
}

/// The units of work `run` does on this thread, with its result.
pub fn measure<T>(run: impl FnOnce() -> T) -> (T, u64) {
    let before = count();
    let out = run();
    (out, count().wrapping_sub(before))
}

/// Parses `content` with the tree-sitter grammar of `path` and `language`,
/// bypassing the remembered and kept trees, and returns the bytes the tree
/// spans; `None` when no grammar handles the file or it is over the parse
/// bounds. For the parse benchmark: the one cost of a code file's per-file
/// work that `aic` cannot shrink.
pub fn parse_uncached(
    path: &crate::relative_path::RelativePath,
    language: crate::language::Language,
    content: &str,
) -> Option<usize> {
    let grammar = crate::lang::Grammar::for_file(path, language)?;
    crate::lang::parse_fresh(grammar, content).map(|tree| tree.root_node().end_byte())
}

/// Generated inputs for the linear-time checks and the scaling benchmark:
/// the shapes that made a per-file stage super-linear before (long comment
/// runs, many small definitions, many comments on one line, many strings).
pub const SHAPES: &[&str] = &[
    "python-comments-in-def",
    "go-comments-in-func",
    "go-comments-above-func",
    "go-many-functions",
    "rust-many-functions",
    "python-many-functions",
    "typescript-many-functions",
    "java-many-methods",
    "javascript-inline-comments",
    "c-comments",
    "python-strings-in-list",
];

/// A file of one of the [`SHAPES`] with `n` repetitions of its unit (a
/// comment line, a definition, …): its path (which decides the language) and
/// its text. Its size grows linearly with `n`.
///
/// # Panics
///
/// On a shape not in [`SHAPES`].
pub fn generate(shape: &str, n: usize) -> (&'static str, String) {
    let lines = |head: &str, line: &dyn Fn(usize) -> String, tail: &str| {
        let mut out = head.to_owned();
        for i in 0..n {
            out.push_str(&line(i));
        }
        out.push_str(tail);
        out
    };
    match shape {
        "python-comments-in-def" => (
            "a.py",
            lines(
                "def f(x):\n",
                &|i| format!("    # note {i}\n"),
                "    return x\n",
            ),
        ),
        "go-comments-in-func" => (
            "a.go",
            lines(
                "package a\n\nfunc f() {\n",
                &|i| format!("\t// note {i}\n"),
                "}\n",
            ),
        ),
        "go-comments-above-func" => (
            "a.go",
            lines(
                "package a\n\n",
                &|i| format!("// note {i}\n"),
                "func f() {}\n",
            ),
        ),
        "go-many-functions" => (
            "a.go",
            lines(
                "package a\n\n",
                &|i| format!("// F{i} does.\nfunc F{i}() {{}}\n"),
                "",
            ),
        ),
        "rust-many-functions" => (
            "a.rs",
            lines("", &|i| format!("/// F{i}.\npub fn f{i}() {{}}\n"), ""),
        ),
        "python-many-functions" => (
            "a.py",
            lines(
                "",
                &|i| format!("def f{i}():\n    \"\"\"F.\"\"\"\n    return {i}\n"),
                "",
            ),
        ),
        "typescript-many-functions" => (
            "a.ts",
            lines(
                "",
                &|i| format!("/** F{i}. */\nexport function f{i}(): number {{ return {i}; }}\n"),
                "",
            ),
        ),
        "java-many-methods" => (
            "A.java",
            lines(
                "class A {\n",
                &|i| format!("  /** M. */\n  int m{i}() {{ return {i}; }}\n"),
                "}\n",
            ),
        ),
        "javascript-inline-comments" => (
            "a.js",
            lines("", &|i| format!("f(/* a */ {i}, /* b */ 2); // c\n"), ""),
        ),
        "c-comments" => (
            "a.c",
            lines(
                "int f(void) {\n",
                &|i| format!("  // note {i}\n"),
                "  return 0;\n}\n",
            ),
        ),
        "python-strings-in-list" => (
            "a.py",
            lines("X = [\n", &|i| format!("    \"s{i}\",\n"), "]\n"),
        ),
        _ => panic!("unknown shape `{shape}`"),
    }
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;
    use crate::facts::default_facts;

    #[test_case("python-comments-in-def")]
    #[test_case("go-comments-in-func")]
    #[test_case("go-comments-above-func")]
    #[test_case("go-many-functions")]
    #[test_case("rust-many-functions")]
    #[test_case("python-many-functions")]
    #[test_case("typescript-many-functions")]
    #[test_case("java-many-methods")]
    #[test_case("javascript-inline-comments")]
    #[test_case("c-comments")]
    #[test_case("python-strings-in-list")]
    fn per_file_work_grows_linearly(shape: &str) {
        assert!(SHAPES.contains(&shape));
        let work_at = |n: usize| {
            let (path, text) = generate(shape, n);
            let (facts, units) = measure(|| default_facts(path, text.as_bytes()));
            assert!(!facts.guard.blocked, "{shape}");
            units
        };
        let small = work_at(200);
        let large = work_at(2_000);
        assert!(small > 0, "{shape}: no work counted");
        // Ten times the input may cost ten times the work, with some slack
        // for fixed costs; a quadratic stage costs a hundred times.
        assert!(
            large <= small * 13,
            "{shape}: {small} units at 200, {large} at 2,000"
        );
    }

    #[test_case(
        "a.py",
        "import os\n\ndef f(x):\n    # note\n    return os.path.join(x, 'a' * 300)\n"
    )]
    #[test_case(
        "a.go",
        "package a\n\nimport \"fmt\"\n\n// F prints.\nfunc F() {\n\t// note\n\tfmt.Println(\"x\")\n}\n"
    )]
    #[test_case(
        "a.ts",
        "import { x } from './x';\n// note\nexport function f(): number { return x; }\n"
    )]
    #[test_case(
        "a.rs",
        "use std::fmt;\n// note\npub fn f() -> fmt::Result { Ok(()) }\n"
    )]
    #[test_case(
        "b.py",
        "# Copyright 2024 Example Corp. Licensed under the MIT license.\n\ndef f(x):\n    # note\n    return x\n"
    )]
    fn a_code_file_is_parsed_once(path: &str, text: &str) {
        let before = parses();
        let facts = default_facts(path, text.as_bytes());
        assert!(
            facts
                .transforms_applied
                .iter()
                .any(|t| t == "CommentStripper"),
            "{path}: {:?}",
            facts.transforms_applied
        );
        // A licence header stripped before the comments makes a second text,
        // parsed once too.
        let stripped = facts
            .transforms_applied
            .iter()
            .any(|t| t == "LicenseHeaderStripper");
        let texts = if stripped { 2 } else { 1 };
        assert_eq!(
            parses() - before,
            texts,
            "{path}: {:?}",
            facts.transforms_applied
        );
    }
}
