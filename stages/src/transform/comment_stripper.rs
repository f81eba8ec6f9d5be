use std::ops::Range;

use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::transform::ContentTransformer;
use crate::transform::source_spans::{self, CommentSyntax, SourceSpans};
use crate::work;

/// ## What it does
/// Removes ordinary comments from source files: TypeScript, JavaScript, Python,
/// Go, Rust and Java (found with their tree-sitter grammars), C, C++ (a
/// hand-written lexer) and CSS (`/* */` only). A comment alone on its lines
/// goes with those lines; a comment after code goes with the whitespace
/// before it; a comment between two pieces of code leaves one space where
/// the tokens would otherwise touch. A blank line left between two blank
/// lines is dropped too.
///
/// It never touches:
/// - string literals of any kind (template literals, Python triple-quoted
///   strings and f-strings, Rust raw strings `r#"…"#`, C++ raw strings, char
///   literals such as `'/'`), nor anything else that is not a comment;
/// - doc comments (`///`, `//!`, `/** */`, `/*! */`; Python docstrings are
///   strings), which the L1 tier renders and readers rely on, nor Go comments
///   that sit directly above a declaration (Go doc comments, the cgo preamble);
/// - shebangs and directives that change what the code means or how tools
///   treat it: `//go:build`, `// +build`, `//export`, `// @ts-…`,
///   `// eslint-…`, `/*#__PURE__*/`, `/* webpackChunkName: … */`,
///   `// NOLINT`, `// fallthrough`, `# type: …`, `# noqa`,
///   `# -*- coding: … -*-`, `# pylint: …` and the like;
/// - files whose parse has an error anywhere, or that are over 2 MiB: those
///   are left as they are.
///
/// ## Why
/// Comments are 15–30% of typical source and the model reads the
/// code; the comments worth keeping for it are the doc comments.
///
/// ## Example
/// `let x = 1; // one\n// note\nlet s = "// kept";\n` becomes
/// `let x = 1;\nlet s = "// kept";\n`.
///
/// ## Known problems
/// Lossy: direct targets and `#raw` bypass it. Comments inside a
/// template literal's `${…}` are kept. Other languages (C#, Kotlin, Swift,
/// Ruby, shell, SQL, …) are left alone for now.
#[derive(Clone, Copy, Debug, Default)]
pub struct CommentStripper;

impl ContentTransformer for CommentStripper {
    fn id(&self) -> &'static str {
        "CommentStripper"
    }

    fn applies(&self, path: &RelativePath, language: Language, content: &str) -> bool {
        source_spans::supported(path, language) && (content.contains('/') || content.contains('#'))
    }

    fn lossy(&self) -> bool {
        true
    }

    fn transform(&self, path: &RelativePath, content: &str) -> String {
        let language = Language::detect(path);
        let Some(spans) = source_spans::scan_cached(path, language, content) else {
            return content.to_owned();
        };
        let removed = removable(content, &spans);
        if removed.is_empty() {
            return content.to_owned();
        }
        let (out, checkpoints) = strip_comments(content, &removed);
        // The strings and kept comments are copied unchanged; their new
        // offsets spare the next transformer a parse of the output.
        let map = |position: usize| {
            let index = checkpoints.partition_point(|&(from, _)| from <= position) - 1;
            let (from, to) = checkpoints[index];
            to + (position - from)
        };
        let kept = spans.moved(
            |comment| {
                removed
                    .binary_search_by_key(&comment.start, |r| r.start)
                    .is_err()
            },
            |_| true,
            map,
        );
        source_spans::remember(path, language, &out, kept);
        out
    }
}

/// The comments to remove: every comment but doc comments, directives, Go doc
/// comments and a shebang.
fn removable(content: &str, spans: &SourceSpans) -> Vec<Range<usize>> {
    let syntax = spans.syntax.unwrap_or(CommentSyntax::Slashes);
    spans
        .comments
        .iter()
        .filter(|comment| {
            let text = &content[comment.range.clone()];
            !(comment.above_declaration
                || (comment.range.start == 0 && text.starts_with("#!"))
                || source_spans::is_doc_comment(text, syntax)
                || source_spans::is_directive(text, syntax))
        })
        .map(|comment| comment.range.clone())
        .collect()
}

fn is_horizontal_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\x0c')
}

fn skip_horizontal_space(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && is_horizontal_space(bytes[at]) {
        at += 1;
    }
    at
}

/// The length of the line break at `at` (`\n` or `\r\n`), 0 when there is none.
fn line_break(bytes: &[u8], at: usize) -> usize {
    match bytes.get(at) {
        Some(b'\n') => 1,
        Some(b'\r') if bytes.get(at + 1) == Some(&b'\n') => 2,
        _ => 0,
    }
}

/// Whether only whitespace and removed comments follow `at` up to the end of
/// its line.
fn rest_is_blank(bytes: &[u8], at: usize, following: &[Range<usize>]) -> bool {
    let mut at = skip_horizontal_space(bytes, at);
    let mut following = following.iter();
    loop {
        if at == bytes.len() || line_break(bytes, at) > 0 {
            return true;
        }
        match following.next() {
            Some(next) if next.start == at => at = skip_horizontal_space(bytes, next.end),
            _ => return false,
        }
    }
}

/// Whether the last complete line of `out` (which ends with a newline) is
/// blank, or `out` is empty.
fn previous_line_blank(out: &str) -> bool {
    let Some(before) = out.strip_suffix('\n') else {
        return out.is_empty();
    };
    // From the end back to the first byte that is not a space: blank when
    // that is the line break before the line (or the start of the text).
    before
        .bytes()
        .rev()
        .find(|&b| !(is_horizontal_space(b) || b == b'\r'))
        .is_none_or(|b| b == b'\n')
}

/// `content` without the `removed` byte ranges (sorted, not overlapping),
/// each taken out with the layout around it as [`CommentStripper`] describes,
/// and checkpoints `(offset in content, offset in the output)`, sorted, from
/// which every byte outside the removed ranges and the whitespace next to them
/// is copied unchanged up to the next checkpoint.
fn strip_comments(content: &str, removed: &[Range<usize>]) -> (String, Vec<(usize, usize)>) {
    let bytes = content.as_bytes();
    let mut out = String::with_capacity(content.len());
    let mut checkpoints = vec![(0, 0)];
    let mut at = 0;
    for (index, range) in removed.iter().enumerate() {
        if range.start < at {
            continue;
        }
        out.push_str(&content[at..range.start]);
        work::tick((range.start - at) as u64);
        // Read back only over trailing spaces: a long line with many
        // comments must not be read again for each of them.
        let blank_tail = out
            .bytes()
            .rev()
            .take_while(|&b| is_horizontal_space(b))
            .count();
        let line_start = out.len() - blank_tail;
        let before_blank = line_start == 0 || out.as_bytes()[line_start - 1] == b'\n';
        let rest_blank = rest_is_blank(bytes, range.end, &removed[index + 1..]);
        let after = skip_horizontal_space(bytes, range.end);
        if before_blank && rest_blank {
            out.truncate(line_start);
            at = after;
            let newline = line_break(bytes, at);
            if newline > 0 || at == bytes.len() {
                at += newline;
                let next_line_end = skip_horizontal_space(bytes, at);
                let next_newline = line_break(bytes, next_line_end);
                if previous_line_blank(&out) && next_newline > 0 {
                    at = next_line_end + next_newline;
                }
            }
        } else if rest_blank {
            let kept = out.trim_end_matches([' ', '\t', '\x0c']).len();
            out.truncate(kept);
            at = after;
        } else if before_blank {
            at = after;
        } else {
            let left = out.chars().next_back();
            let right = content[range.end..].chars().next();
            let left_space = left.is_some_and(char::is_whitespace);
            let right_space = right.is_some_and(char::is_whitespace);
            if left_space {
                at = after;
            } else {
                let bracket = left.is_some_and(|c| "([{".contains(c))
                    || right.is_some_and(|c| ")]},;".contains(c));
                if !right_space && !bracket {
                    out.push(' ');
                }
                at = range.end;
            }
        }
        checkpoints.push((at, out.len()));
    }
    out.push_str(&content[at..]);
    (out, checkpoints)
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    fn strip(path: &str, content: &str) -> String {
        CommentStripper.transform(&RelativePath::new(path).unwrap(), content)
    }

    #[test_case("tricky.rs", fixture!("comment_stripper/rust/tricky.rs"), fixture!("comment_stripper/rust/tricky.rs.expected"))]
    #[test_case("tricky.py", fixture!("comment_stripper/python/tricky.py"), fixture!("comment_stripper/python/tricky.py.expected"))]
    #[test_case("tricky.ts", fixture!("comment_stripper/typescript/tricky.ts"), fixture!("comment_stripper/typescript/tricky.ts.expected"))]
    #[test_case("component.tsx", fixture!("comment_stripper/typescript/component.tsx"), fixture!("comment_stripper/typescript/component.tsx.expected"))]
    #[test_case("tricky.js", fixture!("comment_stripper/javascript/tricky.js"), fixture!("comment_stripper/javascript/tricky.js.expected"))]
    #[test_case("tricky.go", fixture!("comment_stripper/go/tricky.go"), fixture!("comment_stripper/go/tricky.go.expected"))]
    #[test_case("Tricky.java", fixture!("comment_stripper/java/Tricky.java"), fixture!("comment_stripper/java/Tricky.java.expected"))]
    #[test_case("tricky.c", fixture!("comment_stripper/c/tricky.c"), fixture!("comment_stripper/c/tricky.c.expected"))]
    #[test_case("tricky.cpp", fixture!("comment_stripper/cpp/tricky.cpp"), fixture!("comment_stripper/cpp/tricky.cpp.expected"))]
    #[test_case("tricky.css", fixture!("comment_stripper/css/tricky.css"), fixture!("comment_stripper/css/tricky.css.expected"))]
    fn strips_ordinary_comments_only(file_name: &str, input: &str, expected: &str) {
        let out = strip(file_name, input);
        assert_eq!(out, expected, "{file_name}");
        assert_eq!(strip(file_name, &out), out, "{file_name} is idempotent");
    }

    #[test]
    fn layout_around_removed_comments() {
        assert_eq!(
            strip("a.js", "a(/*x*/b);\ntypeof/*y*/c;\nd /* z */ + e;\n"),
            "a(b);\ntypeof c;\nd + e;\n"
        );
        assert_eq!(
            strip("a.rs", "fn a() {}\n\n// one\n\nfn b() {}\n"),
            "fn a() {}\n\nfn b() {}\n"
        );
        assert_eq!(strip("a.rs", "// head\n\nfn a() {}\n"), "fn a() {}\n");
        assert_eq!(
            strip("a.rs", "let a = 1; /* x */ /* y */\nlet b = 2;\n"),
            "let a = 1;\nlet b = 2;\n"
        );
    }

    #[test]
    fn long_python_comment_runs_are_stripped_like_short_ones() {
        // Runs of 16 or more comment lines are hidden from the parser and
        // found by a lexer instead; the result must be the same as for the
        // parsed fixture, which has only short runs.
        let input = fixture!("comment_stripper/python/tricky.py");
        let expected = fixture!("comment_stripper/python/tricky.py.expected");
        let run = (0..40)
            .map(|i| format!("    # note {i}: 'quote\" #\n"))
            .collect::<Vec<_>>()
            .concat();
        let anchor = "    # whole-line comment goes\n";
        assert!(input.contains(anchor));
        let long = input.replace(anchor, &format!("{anchor}{run}"));
        assert_eq!(strip("tricky.py", &long), expected);
        let top_anchor = "# An ordinary comment goes.\n";
        assert!(input.contains(top_anchor));
        let at_top = input.replace(
            top_anchor,
            &format!("{top_anchor}{}", run.replace("    #", "#")),
        );
        assert_eq!(strip("tricky.py", &at_top), expected);
    }

    #[test]
    fn files_with_parse_errors_are_left_alone() {
        let text = "fn broken( {\n    // comment\n}\n";
        assert_eq!(strip("a.rs", text), text);
    }
}
