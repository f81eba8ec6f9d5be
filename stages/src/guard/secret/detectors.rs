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
    let document = content
        .get(document_start..document_end)
        .unwrap_or_default();
    for line in document.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let text = line.trim_end_matches(['\n', '\r']);
        let trimmed = text.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = text.len() - trimmed.len();
        if let Some((parent, encoded)) = block {
            if indent > parent {
                if let Some(span) = entry_value(text)
                    && !(encoded && decodes_to_placeholder(&text[span.clone()]))
                {
                    spans.push(start + span.start..start + span.end);
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
    spans
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
    text.is_empty()
        || is_placeholder(text)
        || is_example_password(text)
        || text.starts_with(['$', '<', '{', '%'])
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
