//! The detectors that are not one provider's token format and need more than a
//! regex: passwords in URLs, basic-auth values, PuTTY key files and Kubernetes
//! `Secret` manifests.

use std::ops::Range;

use super::plausibility::{is_example_password, is_placeholder};

/// Passwords that documentation writes in URLs (`postgres://user:password@…`).
const URL_PASSWORD_PLACEHOLDERS: &[&str] = &[
    "pass", "password", "passwd", "pwd", "secret", "pw", "p", "x", "pass123", "user", "username",
];

/// How far a PuTTY key file's `Private-MAC` line may be from its header, in bytes.
const PUTTY_SPAN: usize = 16 * 1024;

/// Whether the password part of a URL's user information is a password rather
/// than a placeholder (`password`, `${DB_PASSWORD}`, `<pass>`, `%s`, `***`) or
/// an interpolation.
pub(super) fn plausible_url_password(value: &str) -> bool {
    let decoded = percent_decode(value);
    let lower = decoded.to_ascii_lowercase();
    let classes = [
        decoded.bytes().any(|b| b.is_ascii_lowercase()),
        decoded.bytes().any(|b| b.is_ascii_uppercase()),
        decoded.bytes().any(|b| b.is_ascii_digit()),
        decoded.bytes().any(|b| !b.is_ascii_alphanumeric()),
    ];
    decoded.len() >= 6
        && classes.iter().filter(|&&class| class).count() >= 2
        && !value.contains('\\')
        && !is_example_password(&decoded)
        && !URL_PASSWORD_PLACEHOLDERS.contains(&lower.as_str())
        && !value.starts_with(['$', '{', '<', '%', '[', '(', '*'])
        && !value.contains("${")
        && !value.contains("{{")
        && !value.ends_with(['}', '>'])
        && !is_placeholder(value)
}

/// Whether a basic-auth value is base64 of `user:password` with a password
/// that is not a placeholder.
pub(super) fn is_basic_credentials(value: &str) -> bool {
    let Some(decoded) = decode_base64(value) else {
        return false;
    };
    let Ok(text) = std::str::from_utf8(&decoded) else {
        return false;
    };
    let Some((user, password)) = text.split_once(':') else {
        return false;
    };
    !user.is_empty() && !text.chars().any(char::is_control) && plausible_url_password(password)
}

/// Decodes `%XX` escapes; other text is kept as it is.
fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        let hex = bytes
            .get(index + 1..index + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        if let (b'%', Some(decoded)) = (byte, hex) {
            out.push(decoded);
            index += 3;
        } else {
            out.push(byte);
            index += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Decodes standard base64 (with or without padding); `None` for anything else.
pub(super) fn decode_base64(value: &str) -> Option<Vec<u8>> {
    let digits = value.trim_end_matches('=');
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    let mut buffer = 0_u32;
    let mut bits = 0;
    for byte in digits.bytes() {
        let sextet = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(sextet);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((buffer >> bits) & 0xff).ok()?);
        }
    }
    Some(out)
}

/// The span of a PuTTY private key file whose header starts at `start`: through
/// the end of its `Private-MAC:` line, when a `Private-Lines:` line comes before
/// it.
pub(super) fn putty_block(content: &str, start: usize) -> Option<Range<usize>> {
    let after = content.get(start..)?;
    let window = after.get(..after.floor_char_boundary(PUTTY_SPAN))?;
    let private = window.find("Private-Lines:")?;
    let mac = private + window.get(private..)?.find("Private-MAC:")?;
    let end = window
        .get(mac..)?
        .find('\n')
        .map_or(window.len(), |newline| mac + newline);
    Some(start..start + end)
}

/// The spans of the values under `data:` and `stringData:` in the YAML document
/// that holds the `kind: Secret` line starting at byte `kind_line`. The document
/// runs between `---` lines (or the ends of the text).
pub(super) fn kubernetes_secret_values(content: &str, kind_line: usize) -> Vec<Range<usize>> {
    let document_start = content
        .get(..kind_line)
        .and_then(|before| before.rfind("\n---"))
        .map_or(0, |at| at + 1);
    let document_end = content
        .get(kind_line..)
        .and_then(|after| after.find("\n---"))
        .map_or(content.len(), |at| kind_line + at);
    let mut spans = Vec::new();
    let mut offset = document_start;
    // The indentation of the `data:` key whose entries are being read, and
    // whether its values are base64 (`data:`) or plain (`stringData:`).
    let mut block: Option<(usize, bool)> = None;
    // A block scalar being read (`key: |` then indented lines): its key's
    // indentation and the span of its lines so far.
    let mut scalar: Option<(usize, Option<Range<usize>>)> = None;
    let document = content
        .get(document_start..document_end)
        .unwrap_or_default();
    for line in document.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let text = line.trim_end_matches(['\n', '\r']);
        let trimmed = text.trim_start();
        if trimmed.is_empty() {
            continue;
        }
        let indent = text.len() - trimmed.len();
        if let Some((key_indent, lines)) = &mut scalar {
            if indent > *key_indent {
                let line_span = start + indent..start + text.len();
                *lines = Some(
                    lines
                        .as_ref()
                        .map_or(line_span.clone(), |first| first.start..line_span.end),
                );
                continue;
            }
            if let Some(lines) = lines.take() {
                push_scalar(
                    content,
                    lines,
                    block.is_some_and(|(_, encoded)| encoded),
                    &mut spans,
                );
            }
            scalar = None;
        }
        if trimmed.starts_with('#') {
            continue;
        }
        if let Some((parent, encoded)) = block {
            if indent > parent {
                if let Some(span) = entry_value(text)
                    && !(encoded && decodes_to_placeholder(&text[span.clone()]))
                {
                    spans.push(start + span.start..start + span.end);
                } else if is_block_scalar_entry(trimmed) {
                    scalar = Some((indent, None));
                }
                continue;
            }
            block = None;
        }
        match trimmed {
            "data:" => block = Some((indent, true)),
            "stringData:" => block = Some((indent, false)),
            _ => {}
        }
    }
    if let Some((_, Some(lines))) = scalar {
        push_scalar(
            content,
            lines,
            block.is_some_and(|(_, encoded)| encoded),
            &mut spans,
        );
    }
    spans
}

/// Whether a Secret entry opens a block scalar: `key: |`, `key: >-`, …
fn is_block_scalar_entry(entry: &str) -> bool {
    entry.split_once(':').is_some_and(|(key, marker)| {
        !key.is_empty() && matches!(marker.trim(), "|" | "|-" | "|+" | ">" | ">-" | ">+")
    })
}

/// Adds the lines of a block scalar under `data:` or `stringData:` as one
/// span, unless base64 `data:` decodes to nothing worth hiding.
fn push_scalar(content: &str, lines: Range<usize>, encoded: bool, spans: &mut Vec<Range<usize>>) {
    let Some(text) = content.get(lines.clone()) else {
        return;
    };
    let joined: String = text.split_whitespace().collect();
    if joined.len() >= 4
        && !is_placeholder(&joined)
        && !(encoded && decodes_to_placeholder(&joined))
    {
        spans.push(lines);
    }
}

/// The spans of the string values under `"data"` and `"stringData"` of the
/// JSON object that holds the `"kind": "Secret"` member at byte `kind_at`
/// (a manifest written as JSON, as `kubectl get -o json` prints it). The
/// object is found by its braces, strings skipped; the values are judged as
/// in YAML.
pub(super) fn kubernetes_json_secret_values(content: &str, kind_at: usize) -> Vec<Range<usize>> {
    let bytes = content.as_bytes();
    let Some(open) = enclosing_object(bytes, kind_at) else {
        return Vec::new();
    };
    let mut spans = Vec::new();
    let mut at = open + 1;
    let mut depth = 1;
    // The last string read at the object's own level, a key when a colon
    // follows it.
    let mut key: Option<Range<usize>> = None;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'"' => {
                let end = string_end(bytes, at);
                key = (depth == 1).then_some(at + 1..end);
                at = end + 1;
                continue;
            }
            b'{' if depth == 1 => {
                let section = key.take().and_then(|name| content.get(name));
                let close = object_end(bytes, at);
                if let Some(section @ ("data" | "stringData")) = section {
                    json_members(content, at..close, section == "data", &mut spans);
                }
                at = close + 1;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            b',' => key = None,
            _ => {}
        }
        at += 1;
    }
    spans
}

/// The string values of the flat JSON object in `object` (from `{` to
/// `}`): every `"key": "value"` member's value, unless it is empty, a
/// placeholder or (for base64 `data`) decodes to nothing worth hiding.
fn json_members(content: &str, object: Range<usize>, encoded: bool, spans: &mut Vec<Range<usize>>) {
    let bytes = content.as_bytes();
    let mut at = object.start + 1;
    let mut after_colon = false;
    while at < object.end {
        match bytes.get(at) {
            Some(b'"') => {
                let end = string_end(bytes, at);
                if after_colon
                    && let Some(value) = content.get(at + 1..end)
                    && worth_hiding(value, encoded)
                {
                    spans.push(at + 1..end);
                }
                after_colon = false;
                at = end + 1;
                continue;
            }
            Some(b':') => after_colon = true,
            Some(b',') => after_colon = false,
            _ => {}
        }
        at += 1;
    }
}

/// Whether a Secret's value is worth hiding: four characters or more, not
/// an escape, a placeholder or (for base64 `data`) base64 of nothing worth
/// hiding.
fn worth_hiding(value: &str, encoded: bool) -> bool {
    let hidden = value.len() < 4
        || value.contains('\\')
        || is_placeholder(value)
        || (encoded && decodes_to_placeholder(value));
    !hidden
}

/// The byte of the closing quote of the JSON string opening at `open`
/// (the text's end when it is not closed).
fn string_end(bytes: &[u8], open: usize) -> usize {
    let mut at = open + 1;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'\\' => at += 2,
            b'"' => return at,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// The byte of the `}` closing the object opening at `open` (the text's
/// end when it is not closed), strings skipped.
fn object_end(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0_usize;
    let mut at = open;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'"' => at = string_end(bytes, at),
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return at;
                }
            }
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

/// The byte of the `{` opening the JSON object around byte `at`: the
/// nearest brace before it that is not closed before `at`, strings skipped
/// by reading the text from its start.
fn enclosing_object(bytes: &[u8], at: usize) -> Option<usize> {
    let mut open: Vec<usize> = Vec::new();
    let mut index = 0;
    while index < at {
        match bytes.get(index)? {
            b'"' => index = string_end(bytes, index),
            b'{' | b'[' => open.push(index),
            b'}' | b']' => {
                open.pop();
            }
            _ => {}
        }
        index += 1;
    }
    open.into_iter()
        .rev()
        .find(|&brace| bytes.get(brace) == Some(&b'{'))
}

/// Whether a `data:` value of a Secret is base64 of nothing worth hiding:
/// empty, a placeholder (`changeme`, `${PASSWORD}`) or a well-known example
/// password. A value that is not base64 of text is judged as it is.
fn decodes_to_placeholder(value: &str) -> bool {
    let Some(decoded) = decode_base64(value) else {
        return false;
    };
    let Ok(text) = std::str::from_utf8(&decoded) else {
        return false;
    };
    let text = text.trim();
    // A template (`{{ .Values.password }}`, `{password}`), not a JSON
    // document (a `.dockerconfigjson` starts with `{"auths"`).
    let template = text.starts_with('{') && !text.starts_with("{\"") && !text.starts_with("{\n");
    text.is_empty()
        || is_placeholder(text)
        || is_example_password(text)
        || template
        || text.starts_with(['$', '<', '%'])
}

/// The byte range of the value of a `key: value` line, without quotes; `None`
/// when it is empty, a placeholder or a block scalar marker.
fn entry_value(line: &str) -> Option<Range<usize>> {
    let colon = line.find(": ")?;
    let raw = line.get(colon + 2..)?;
    let value = raw.trim();
    let lead = raw.len() - raw.trim_start().len();
    let quoted = value.len() >= 2 && (value.starts_with('"') || value.starts_with('\''));
    let (inner, skip) = if quoted {
        (value.get(1..value.len() - 1)?, 1)
    } else {
        (value, 0)
    };
    if inner.len() < 4 || inner.starts_with(['|', '>', '$', '{', '<']) || is_placeholder(inner) {
        return None;
    }
    let start = colon + 2 + lead + skip;
    Some(start..start + inner.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_passwords_and_placeholders() {
        assert!(plausible_url_password("Tr0ub4dor3"));
        for placeholder in [
            "xyz",
            "foobar",
            "p%40ss",
            "somepassword",
            "pass\\r",
            "password",
            "PASS",
            "${DB_PASSWORD}",
            "<password>",
            "%s",
            "****",
            "{password}",
        ] {
            assert!(!plausible_url_password(placeholder), "{placeholder}");
        }
    }

    #[test]
    fn basic_credentials_decode() {
        // `deploy:Tr0ub4dor3`, `user:password` and `foo:bar`.
        assert!(is_basic_credentials("ZGVwbG95OlRyMHViNGRvcjM="));
        assert!(!is_basic_credentials("dXNlcjpwYXNzd29yZA=="));
        assert!(!is_basic_credentials("Zm9vOmJhcg=="));
        assert!(!is_basic_credentials("realm"));
        assert_eq!(decode_base64("aGk="), Some(b"hi".to_vec()));
    }

    #[test]
    fn kubernetes_values_are_found_in_their_document() {
        let yaml = "kind: ConfigMap\ndata:\n  mode: fast\n---\napiVersion: v1\nkind: Secret\ndata:\n  password: UzNjcjN0UGFzcw==\n  token: \"dG9rZW4tdmFsdWU=\"\nmetadata:\n  name: db\n";
        let kind = yaml.find("kind: Secret").unwrap();
        let values: Vec<&str> = kubernetes_secret_values(yaml, kind)
            .into_iter()
            .map(|span| &yaml[span])
            .collect();
        assert_eq!(values, vec!["UzNjcjN0UGFzcw==", "dG9rZW4tdmFsdWU="]);
    }

    #[test]
    fn kubernetes_block_scalars_are_one_value() {
        // A Docker config JSON with one registry's `auth` in base64, folded
        // over two lines; then `changeme` as a literal block.
        let yaml = "kind: Secret\ndata:\n  .dockerconfigjson: >-\n    eyJhdXRocyI6eyJyZWcuYWNtZS5pbyI6eyJhdXRoIjoi\n    WTJrNlZISXdkV0kwWkc5eU13PT0ifX19\n  other: |\n    Y2hhbmdlbWU=\nmetadata:\n  name: pull\n";
        let values: Vec<&str> = kubernetes_secret_values(yaml, 0)
            .into_iter()
            .map(|span| &yaml[span])
            .collect();
        assert_eq!(
            values,
            vec![
                "eyJhdXRocyI6eyJyZWcuYWNtZS5pbyI6eyJhdXRoIjoi\n    WTJrNlZISXdkV0kwWkc5eU13PT0ifX19"
            ]
        );
    }

    #[test]
    fn kubernetes_json_values_are_those_of_the_secret_object() {
        let json = "{\"kind\":\"List\",\"items\":[{\"kind\":\"ConfigMap\",\"data\":{\"mode\":\"fastest\"}},{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"db\",\"labels\":{\"tier\":\"backend\"}},\"data\":{\"password\":\"UzNjcjN0UGFzcw==\",\"user\":\"Y2hhbmdlbWU=\",\"note\":\"a\\\"b\"},\"stringData\":{\"api-key\":\"k3y-V4lue-9\"}}]}";
        let kind = json.find("\"kind\":\"Secret\"").unwrap();
        let values: Vec<&str> = kubernetes_json_secret_values(json, kind)
            .into_iter()
            .map(|span| &json[span])
            .collect();
        assert_eq!(values, vec!["UzNjcjN0UGFzcw==", "k3y-V4lue-9"]);
    }

    #[test]
    fn kubernetes_data_that_decodes_to_a_placeholder_stays() {
        // `changeme`, `${DB_PASSWORD}` and `password` under `data:`; the same
        // text under `stringData:` is not base64 and is judged as written.
        let yaml = "kind: Secret\ndata:\n  a: Y2hhbmdlbWU=\n  b: JHtEQl9QQVNTV09SRH0=\n  c: cGFzc3dvcmQ=\n  d: UzNjcjN0UGFzcw==\nstringData:\n  e: Y2hhbmdlbWU=\n";
        let values: Vec<&str> = kubernetes_secret_values(yaml, 0)
            .into_iter()
            .map(|span| &yaml[span])
            .collect();
        assert_eq!(values, vec!["UzNjcjN0UGFzcw==", "Y2hhbmdlbWU="]);
    }
}
