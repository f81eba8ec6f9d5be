//! Long runs of comment lines in Python, which the parser is not shown.
//!
//! tree-sitter-python's indentation scanner looks ahead over every comment
//! line that follows a line break inside an indented block to find the next
//! line's indentation, and does so again at the next line break: a run of
//! `k` comment lines costs `O(k²)` (10,000 comment lines in a function took
//! 23 s of CPU). The parser is therefore given the file with the comment lines
//! of every long run replaced by spaces — same length, same line breaks, so
//! every other node keeps its bytes and positions — and the comments of those
//! runs are reported here instead of as tree nodes.
//!
//! Runs shorter than [`MIN_RUN`] comment lines are left alone, so ordinary
//! files parse exactly as written. Finding the comments needs to know where
//! strings are: [`long_comment_runs`] lexes strings (prefixes, triple quotes,
//! escapes, f-string replacement fields with nested strings) and gives up —
//! no masking at all — on anything it cannot read with confidence.

use std::ops::Range;

use crate::work;

/// Comment lines a run must hold before its comments are masked.
pub(crate) const MIN_RUN: usize = 16;

/// The comments (from `#` to the end of the line, line break excluded) of
/// every run of at least [`MIN_RUN`] comment-only lines, blank lines inside a
/// run included, sorted. Empty when there is none or the lexer gave up.
pub(crate) fn long_comment_runs(content: &str) -> Vec<Range<usize>> {
    // Most files have too few `#` for a long run: no lexing for them (this
    // runs before every Python parse and again for the comment stripper).
    if memchr::memchr_iter(b'#', content.as_bytes())
        .nth(MIN_RUN - 1)
        .is_none()
    {
        return Vec::new();
    }
    let Some(own_line) = own_line_comments(content.as_bytes()) else {
        return Vec::new();
    };
    let bytes = content.as_bytes();
    let mut masked = Vec::new();
    let mut run: Vec<Range<usize>> = Vec::new();
    let mut flush = |run: &mut Vec<Range<usize>>| {
        if run.len() >= MIN_RUN {
            masked.append(run);
        }
        run.clear();
    };
    for comment in own_line {
        // Only blank lines may lie between this comment and the previous one.
        let joined = run.last().is_some_and(|previous| {
            bytes[previous.end..comment.start]
                .iter()
                .all(u8::is_ascii_whitespace)
        });
        if !joined {
            flush(&mut run);
        }
        run.push(comment);
    }
    flush(&mut run);
    masked
}

/// `content` with the bytes of `ranges` replaced by spaces.
pub(crate) fn mask(content: &str, ranges: &[Range<usize>]) -> String {
    let mut bytes = content.as_bytes().to_vec();
    for range in ranges {
        bytes[range.clone()].fill(b' ');
    }
    // Only whole comments (from `#` to a line break or the end) become
    // spaces, so the text stays valid UTF-8.
    String::from_utf8(bytes).unwrap_or_else(|_| content.to_owned())
}

/// Every comment that is alone on its line, or `None` when the lexer met
/// something it cannot read (an unterminated string).
fn own_line_comments(bytes: &[u8]) -> Option<Vec<Range<usize>>> {
    let mut comments = Vec::new();
    let mut at = 0;
    let mut line_blank = true;
    while at < bytes.len() {
        work::tick(1);
        match bytes[at] {
            b'#' => {
                let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
                let end = if end > at && bytes[end - 1] == b'\r' {
                    end - 1
                } else {
                    end
                };
                if line_blank {
                    comments.push(at..end);
                }
                work::tick((end - at) as u64);
                at = end;
            }
            b'\n' => {
                line_blank = true;
                at += 1;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' => at += 1,
            b'\'' | b'"' => {
                at = string_end(bytes, at, prefix_is_f(bytes, at))?;
                line_blank = false;
            }
            _ => {
                line_blank = false;
                at += 1;
            }
        }
    }
    Some(comments)
}

/// Whether the identifier right before the quote at `quote` is a string
/// prefix holding an `f` (`f`, `rf`, `Fr`, …).
fn prefix_is_f(bytes: &[u8], quote: usize) -> bool {
    let mut start = quote;
    while start > 0 && bytes[start - 1].is_ascii_alphanumeric() {
        start -= 1;
    }
    if start > 0 && bytes[start - 1] == b'_' {
        return false;
    }
    let prefix = &bytes[start..quote];
    prefix.len() <= 2
        && prefix
            .iter()
            .all(|b| matches!(b.to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f'))
        && prefix.iter().any(|b| b.eq_ignore_ascii_case(&b'f'))
}

/// The offset just past the string literal opening at `start`, `None` when
/// it is not terminated.
fn string_end(bytes: &[u8], start: usize, formatted: bool) -> Option<usize> {
    let quote = bytes[start];
    let triple = bytes.get(start + 1) == Some(&quote) && bytes.get(start + 2) == Some(&quote);
    let mut at = start + if triple { 3 } else { 1 };
    while at < bytes.len() {
        work::tick(1);
        match bytes[at] {
            b'\\' => at += 2,
            b'\n' if !triple => return None,
            byte if byte == quote => {
                if !triple {
                    return Some(at + 1);
                }
                if bytes.get(at + 1) == Some(&quote) && bytes.get(at + 2) == Some(&quote) {
                    return Some(at + 3);
                }
                at += 1;
            }
            b'{' if formatted => {
                if bytes.get(at + 1) == Some(&b'{') {
                    at += 2;
                } else {
                    at = replacement_field_end(bytes, at + 1)?;
                }
            }
            _ => at += 1,
        }
    }
    None
}

/// The offset just past the `}` closing an f-string replacement field whose
/// expression starts at `start`; strings inside it are lexed in turn.
fn replacement_field_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0_usize;
    let mut at = start;
    while at < bytes.len() {
        work::tick(1);
        match bytes[at] {
            b'(' | b'[' | b'{' => {
                depth += 1;
                at += 1;
            }
            b')' | b']' => {
                depth = depth.checked_sub(1)?;
                at += 1;
            }
            b'}' if depth == 0 => return Some(at + 1),
            b'}' => {
                depth -= 1;
                at += 1;
            }
            b'\'' | b'"' => at = string_end(bytes, at, prefix_is_f(bytes, at))?,
            b'#' => return None,
            _ => at += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: usize, indent: &str) -> String {
        (0..lines)
            .map(|i| format!("{indent}# note {i}\n"))
            .collect::<Vec<_>>()
            .concat()
    }

    #[test]
    fn long_runs_are_found_and_short_ones_left() {
        let text = format!(
            "def f(x):\n{}    y = 1  # trailing\n{}    return x\n",
            run(MIN_RUN, "    "),
            run(MIN_RUN - 1, "    ")
        );
        let found = long_comment_runs(&text);
        assert_eq!(found.len(), MIN_RUN);
        assert!(found.iter().all(|r| text[r.clone()].starts_with("# note")));
        let masked = mask(&text, &found);
        assert_eq!(masked.len(), text.len());
        assert_eq!(masked.lines().count(), text.lines().count());
        assert!(masked.contains("# trailing"));
    }

    #[test]
    fn hashes_inside_strings_are_not_comments() {
        let body = run(MIN_RUN, "");
        let text = format!("s = '''\n{body}'''\nt = f\"{{d[\"#\"]}}\" \nu = r\"\\\"#\"\n{body}");
        let found = long_comment_runs(&text);
        assert_eq!(found.len(), MIN_RUN);
        assert!(found[0].start > text.find("u = ").unwrap());
    }

    #[test]
    fn an_unterminated_string_gives_up() {
        let text = format!("s = 'open\n{}", run(MIN_RUN * 2, "    "));
        assert!(long_comment_runs(&text).is_empty());
    }
}
