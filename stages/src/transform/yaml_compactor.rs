use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::transform::ContentTransformer;

/// ## What it does
/// Compacts a YAML file line by line: removes comment-only lines, trims
/// trailing whitespace, collapses each run of blank lines into one and drops
/// blank lines at the start and end. Keys, values, order, anchors, tags,
/// document markers and trailing `# comments` after a value stay exactly as
/// written.
///
/// It never touches the lines of a block scalar (`key: |`, `key: >-`, `- |2`,
/// …: every following line that is blank or indented deeper than the line
/// that opened it) nor the continuation lines of a quoted scalar that spans
/// lines, so a `#` inside them and their whitespace survive. A `#` inside a
/// quoted value is not a comment.
///
/// ## Why
/// Configuration files (CI workflows, Helm values, OpenAPI specs) are often
/// half comments; the model needs the values (typically ~30–50% savings).
///
/// ## Example
/// `# Build settings\nbuild:\n\n\n  # the target\n  target: x86  \n` becomes
/// `build:\n\n  target: x86\n`.
///
/// ## Known problems
/// Lossy only in what it removes (comments, which some tools read:
/// `# yaml-language-server: $schema=…` goes too). The file is never parsed or
/// re-serialised, so collapsing single-value maps and normalising indentation
/// are left out: both would change how the file reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct YamlCompactor;

impl ContentTransformer for YamlCompactor {
    fn id(&self) -> &'static str {
        "YamlCompactor"
    }

    fn applies(&self, _path: &RelativePath, language: Language, _content: &str) -> bool {
        language == Language::Yaml
    }

    fn transform(&self, _path: &RelativePath, content: &str) -> String {
        compact(content)
    }
}

/// Where a line leaves the scanner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Ordinary YAML.
    Plain,
    /// Inside a block scalar opened by a line with this indentation.
    Block(usize),
    /// Inside a quoted scalar left open at the end of a line.
    Quoted(u8),
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// What a line of ordinary YAML leaves open at its end, and where its
/// comment starts (`None` when it has none). `open` is the quote still open
/// when the line started inside a quoted scalar.
fn scan_line(line: &str, mut open: Option<u8>) -> (Option<u8>, Option<usize>) {
    let bytes = line.as_bytes();
    let mut index = 0;
    // The previous significant character, to tell a quote that opens a scalar
    // from one inside a plain scalar (`it's`).
    let mut previous: Option<u8> = None;
    while index < bytes.len() {
        let byte = bytes[index];
        match open {
            Some(b'"') => {
                if byte == b'\\' {
                    index += 2;
                    continue;
                }
                if byte == b'"' {
                    open = None;
                    previous = Some(b'"');
                }
            }
            Some(quote) => {
                if byte == quote {
                    if bytes.get(index + 1) == Some(&quote) {
                        index += 2;
                        continue;
                    }
                    open = None;
                    previous = Some(quote);
                }
            }
            None => match byte {
                b'#' if index == 0 || matches!(bytes[index - 1], b' ' | b'\t') => {
                    return (None, Some(index));
                }
                b'"' | b'\''
                    if matches!(
                        previous,
                        None | Some(b':' | b'-' | b'[' | b'{' | b',' | b'?')
                    ) && (index == 0
                        || matches!(bytes[index - 1], b' ' | b'\t' | b'[' | b'{' | b',')) =>
                {
                    open = Some(byte);
                }
                b' ' | b'\t' => {}
                other => previous = Some(other),
            },
        }
        index += 1;
    }
    (open, None)
}

/// Whether a line's value (comment removed) ends with a block scalar header:
/// `|` or `>` with optional chomping and indentation indicators, as its own
/// token.
fn opens_block_scalar(value: &str) -> bool {
    let value = value.trim_end();
    let header_start = value
        .rfind(|c: char| !(c == '-' || c == '+' || c.is_ascii_digit()))
        .unwrap_or(0);
    let header = &value[header_start..];
    if !(header.starts_with('|') || header.starts_with('>')) {
        return false;
    }
    let before = &value[..header_start];
    before.is_empty() || before.ends_with([' ', '\t'])
}

fn compact(content: &str) -> String {
    let mut out = String::with_capacity(content.len());
    let mut state = State::Plain;
    let mut pending_blank = false;
    for raw_line in content.split_inclusive('\n') {
        let line = raw_line.trim_end_matches(['\n', '\r']);
        match state {
            State::Block(parent) => {
                if line.trim().is_empty() || indentation(line) > parent {
                    if pending_blank {
                        out.push('\n');
                        pending_blank = false;
                    }
                    out.push_str(line);
                    out.push('\n');
                    continue;
                }
                state = State::Plain;
            }
            State::Quoted(quote) => {
                if pending_blank {
                    out.push('\n');
                    pending_blank = false;
                }
                out.push_str(line);
                out.push('\n');
                let (open, _) = scan_line(line, Some(quote));
                state = open.map_or(State::Plain, State::Quoted);
                continue;
            }
            State::Plain => {}
        }
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            pending_blank = !out.is_empty();
            continue;
        }
        let (open, comment) = scan_line(trimmed, None);
        if comment.is_some_and(|at| trimmed[..at].trim().is_empty()) {
            continue;
        }
        if pending_blank {
            out.push('\n');
            pending_blank = false;
        }
        out.push_str(trimmed);
        out.push('\n');
        if let Some(quote) = open {
            state = State::Quoted(quote);
        } else {
            let value = comment.map_or(trimmed, |at| &trimmed[..at]);
            if opens_block_scalar(value) {
                state = State::Block(indentation(line));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    #[test_case(fixture!("yaml_compactor/workflow.yaml"), fixture!("yaml_compactor/workflow.yaml.expected"))]
    #[test_case(fixture!("yaml_compactor/values.yml"), fixture!("yaml_compactor/values.yml.expected"))]
    fn removes_comments_and_blank_runs_but_keeps_values(input: &str, expected: &str) {
        let out = compact(input);
        assert_eq!(out, expected);
        assert_eq!(compact(&out), out, "idempotent");
    }

    #[test]
    fn block_scalar_headers() {
        assert!(opens_block_scalar("key: |"));
        assert!(opens_block_scalar("key: >-"));
        assert!(opens_block_scalar("- |2"));
        assert!(opens_block_scalar("key: !!str |+"));
        assert!(!opens_block_scalar("key: a|"));
        assert!(!opens_block_scalar("key: value"));
        assert!(!opens_block_scalar("key: -1"));
    }
}
