use std::fmt::Write as _;

use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::transform::ContentTransformer;
use crate::transform::source_spans;

/// String literals whose text between the quotes is longer than this many
/// characters (Unicode scalar values) are shortened.
pub const MAX_STRING_CHARS: usize = 256;

/// Characters of a shortened literal's text that are kept. Smaller than
/// [`MAX_STRING_CHARS`] minus the marker, so a shortened literal is never
/// shortened again, and under the 200-character run that
/// [`InlineDataStripper`](super::InlineDataStripper) replaces, so the two never
/// undo each other.
pub const KEPT_STRING_CHARS: usize = 160;

/// ## What it does
/// Shortens every string literal whose text is longer than
/// [`MAX_STRING_CHARS`] (256) characters to its first [`KEPT_STRING_CHARS`]
/// (160) characters followed by `…[truncated N chars]`, inside the quotes, so
/// the line still reads as code: `"aaaa…"` becomes
/// `"aaaa…[truncated 1234 chars]"`. `N` counts characters (Unicode scalar
/// values) of the literal's source text. The cut never splits a backslash
/// escape.
///
/// It never touches: comments, Python docstrings (a string that is a whole
/// statement), strings that interpolate code (template literals with `${…}`,
/// f-strings, Java string templates), strings in Rust attributes
/// (`#[doc = "…"]`), C and C++ character literals, and literals of languages
/// without a scanner (see [`CommentStripper`](super::CommentStripper) for the
/// list), nor files whose parse has an error.
///
/// ## Why
/// Embedded SQL, HTML, prompts, fixtures and long messages cost tokens in
/// proportion to their length while the code around them is what the model
/// needs; their start says what they are.
///
/// ## Example
/// `const SQL = "SELECT … (900 characters)";` becomes
/// `const SQL = "SELECT … (160 characters)…[truncated 740 chars]";`.
///
/// ## Known problems
/// Lossy: direct targets and `#raw` bypass it. In byte-string literals
/// (`b"…"`) the marker's `…` is not valid syntax; the line still reads as
/// code.
#[derive(Clone, Copy, Debug, Default)]
pub struct LongStringTruncator;

impl ContentTransformer for LongStringTruncator {
    fn id(&self) -> &'static str {
        "LongStringTruncator"
    }

    fn applies(&self, path: &RelativePath, language: Language, content: &str) -> bool {
        content.len() > MAX_STRING_CHARS && source_spans::supported(path, language)
    }

    fn lossy(&self) -> bool {
        true
    }

    fn transform(&self, path: &RelativePath, content: &str) -> String {
        let language = Language::detect(path);
        let Some(spans) = source_spans::scan_cached(path, language, content) else {
            return content.to_owned();
        };
        let mut out = String::with_capacity(content.len());
        let mut at = 0;
        for literal in spans.strings.iter().filter(|s| s.truncatable) {
            let text = &content[literal.content.clone()];
            let chars = text.chars().count();
            if chars <= MAX_STRING_CHARS {
                continue;
            }
            let cut = cut_point(text);
            let truncated = text[cut..].chars().count();
            out.push_str(&content[at..literal.content.start + cut]);
            let _ = write!(out, "…[truncated {truncated} chars]");
            at = literal.content.end;
        }
        if at == 0 {
            return content.to_owned();
        }
        out.push_str(&content[at..]);
        out
    }
}

/// The byte offset in `text` after its first [`KEPT_STRING_CHARS`]
/// characters, moved back before a backslash escape that would straddle it.
fn cut_point(text: &str) -> usize {
    let mut cut = text
        .char_indices()
        .nth(KEPT_STRING_CHARS)
        .map_or(text.len(), |(index, _)| index);
    // The longest escapes (`\u{10FFFF}`, `\U0010FFFF`) span ten characters.
    let window_start = text[..cut]
        .char_indices()
        .rev()
        .nth(9)
        .map_or(0, |(index, _)| index);
    let bytes = text.as_bytes();
    let mut index = window_start;
    while index < cut {
        if bytes[index] == b'\\' {
            // Count the run of backslashes: an escape starts at every other one.
            let run_start = index;
            while index < cut && bytes[index] == b'\\' {
                index += 1;
            }
            let run = index - run_start;
            let run_before = bytes[..run_start]
                .iter()
                .rev()
                .take_while(|&&b| b == b'\\')
                .count();
            if (run_before + run) % 2 == 1 {
                // The last backslash of the run opens an escape that may reach
                // past the cut.
                cut = index - 1;
                break;
            }
            continue;
        }
        index += 1;
    }
    cut
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    fn truncate(path: &str, content: &str) -> String {
        LongStringTruncator.transform(&RelativePath::new(path).unwrap(), content)
    }

    #[test_case("queries.py", fixture!("long_string_truncator/queries.py"), fixture!("long_string_truncator/queries.py.expected"))]
    #[test_case("messages.ts", fixture!("long_string_truncator/messages.ts"), fixture!("long_string_truncator/messages.ts.expected"))]
    #[test_case("data.rs", fixture!("long_string_truncator/data.rs"), fixture!("long_string_truncator/data.rs.expected"))]
    #[test_case("Texts.java", fixture!("long_string_truncator/Texts.java"), fixture!("long_string_truncator/Texts.java.expected"))]
    fn shortens_long_literals_inside_their_quotes(file_name: &str, input: &str, expected: &str) {
        let out = truncate(file_name, input);
        assert_eq!(out, expected, "{file_name}");
        assert_eq!(truncate(file_name, &out), out, "{file_name} is idempotent");
    }

    #[test]
    fn the_cut_never_splits_an_escape() {
        let text = format!("{}\\u{{1F600}}tail", "a".repeat(KEPT_STRING_CHARS - 3));
        assert_eq!(cut_point(&text), KEPT_STRING_CHARS - 3);
        let text = format!(
            "{}\\\\{}",
            "a".repeat(KEPT_STRING_CHARS - 4),
            "b".repeat(50)
        );
        assert_eq!(cut_point(&text), KEPT_STRING_CHARS);
        let text = "é".repeat(300);
        assert_eq!(cut_point(&text), KEPT_STRING_CHARS * 2);
    }
}
