//! Whether a regex match is a secret: the tests that keep placeholders,
//! identifiers, names, slugs and low-entropy values out of the findings.

use regex::Captures;

use super::patterns::Classes;
use crate::language::Language;

/// Lower-case fragments that mark an assigned value as a placeholder.
pub(super) const PLACEHOLDER_FRAGMENTS: &[&str] = &[
    "xxxx",
    "****",
    "your",
    "placeholder",
    "changeme",
    "change_me",
    "replace_me",
    "example",
];

/// `_`-separated words of an environment-style name that mark it as naming a
/// secret (`SECRET_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`).
pub(super) const SECRET_NAME_WORDS: &[&str] = &[
    "SECRET",
    "SECRETS",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "PWD",
    "KEY",
    "APIKEY",
    "CREDENTIAL",
    "CREDENTIALS",
    "AUTH",
];

/// `_`-separated words of an environment-style name that mark its value as not a
/// secret (`PUBLIC_KEY`, `TOKEN_URL`, `SECRET_KEY_FILE`, `TEST_TOKEN`).
pub(super) const NOT_SECRET_NAME_WORDS: &[&str] = &[
    "PUBLIC",
    "PUB",
    "ID",
    "IDS",
    "NAME",
    "NAMES",
    "URL",
    "URI",
    "ENDPOINT",
    "HOST",
    "PORT",
    "PATH",
    "FILE",
    "DIR",
    "ENV",
    "VAR",
    "HEADER",
    "TYPE",
    "FIELD",
    "PREFIX",
    "SUFFIX",
    "LENGTH",
    "LEN",
    "SIZE",
    "COUNT",
    "LIMIT",
    "MAX",
    "MIN",
    "TTL",
    "TIMEOUT",
    "HASH",
    "SHA",
    "CHECKSUM",
    "DIGEST",
    "FINGERPRINT",
    "GPG",
    "PGP",
    "FORMAT",
    "PATTERN",
    "REGEX",
    "KIND",
    "MODE",
    "USER",
    "USERNAME",
    "TEST",
    "TESTS",
    "DUMMY",
    "FAKE",
    "MOCK",
    "EXAMPLE",
    "SAMPLE",
];

/// Published keys of local emulators: documented constants, not secrets.
pub(super) const PUBLIC_EMULATOR_KEYS: &[&str] = &[
    // Azurite and the Azure storage emulator, `devstoreaccount1`.
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
];

/// Length of the rest of the header's line plus the base64 body lines after it,
/// for a private key without a footer.
pub(super) fn base64_lines_len(after: &str) -> usize {
    let mut end = after.find('\n').unwrap_or(after.len());
    while let Some(rest) = after.get(end + 1..) {
        let line = rest.split('\n').next().unwrap_or_default();
        let body = line
            .trim()
            .trim_matches(|c: char| matches!(c, '"' | '\'' | ',' | '+' | ';'))
            .trim_end_matches("\\n");
        let is_body = body.len() >= 16
            && body
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'='));
        if !is_body {
            break;
        }
        end += 1 + line.len();
    }
    end.min(after.len())
}

/// Whether a provider token is more than filler and holds the required classes.
pub(super) fn plausible_token(value: &str, classes: Classes) -> bool {
    if is_filler(value) {
        return false;
    }
    let digit = value.bytes().any(|byte| byte.is_ascii_digit());
    let lower = value.bytes().any(|byte| byte.is_ascii_lowercase());
    let upper = value.bytes().any(|byte| byte.is_ascii_uppercase());
    match classes {
        Classes::Any => true,
        Classes::DigitAndLetter => digit && (lower || upper),
        Classes::DigitLowerUpper => digit && lower && upper,
    }
}

/// Whether a token holds a run of six or more identical characters (ignoring ASCII
/// case), the mark of a documentation placeholder such as `ghp_xxxxxx…`.
pub(super) fn is_filler(value: &str) -> bool {
    let mut run = 0;
    let mut previous = None;
    for byte in value.bytes().map(|byte| byte.to_ascii_lowercase()) {
        run = if Some(byte) == previous { run + 1 } else { 1 };
        if run >= 6 {
            return true;
        }
        previous = Some(byte);
    }
    false
}

/// Whether a value assigned to an API key name looks like a real key; `next` is the
/// character after the value (see [`SecretScanner`], "Known problems").
pub(super) fn plausible_api_key(
    value: &str,
    quoted: bool,
    next: Option<char>,
    language: Language,
) -> bool {
    if is_placeholder(value) {
        return false;
    }
    let has_digit = value.bytes().any(|byte| byte.is_ascii_digit());
    if quoted {
        let looks_like_name = !has_digit && value.contains(['_', '-']);
        ends_cleanly(next) && !looks_like_name
    } else {
        let has_letter = value.bytes().any(|byte| byte.is_ascii_alphabetic());
        literal_allowed(language) && !continues_as_expression(next) && has_letter && has_digit
    }
}

/// Whether an environment-style assignment holds a random-looking secret (see
/// [`SecretScanner`], "Known problems").
pub(super) fn plausible_secret_assignment(
    captures: &Captures<'_>,
    next: Option<char>,
    language: Language,
) -> bool {
    let (Some(name), Some(quote), Some(value)) = (
        captures.name("name"),
        captures.name("quote"),
        captures.name("value"),
    ) else {
        return false;
    };
    let words: Vec<&str> = name.as_str().split('_').collect();
    let names_secret = words.iter().any(|word| SECRET_NAME_WORDS.contains(word));
    let names_other = words
        .iter()
        .any(|word| NOT_SECRET_NAME_WORDS.contains(word));
    if !names_secret || names_other {
        return false;
    }
    let value = value.as_str();
    let has_digit = value.bytes().any(|byte| byte.is_ascii_digit());
    let has_letter = value.bytes().any(|byte| byte.is_ascii_alphabetic());
    let random = has_digit
        && has_letter
        && !is_placeholder(value)
        && !value.contains("://")
        && !value.starts_with(['/', '.', '~'])
        && !is_slug(value)
        && shannon_entropy(value) >= 3.5;
    let literal = if quote.as_str().is_empty() {
        literal_allowed(language) && !continues_as_expression(next)
    } else {
        ends_cleanly(next)
    };
    random && literal
}

/// Whether an unquoted value can be a literal in this language: in code files
/// other than shell scripts an unquoted value is an identifier or an expression.
pub(super) fn literal_allowed(language: Language) -> bool {
    !language.is_code() || language == Language::Shell
}

/// Whether an unquoted value continues as an expression (a call, a member access).
pub(super) fn continues_as_expression(next: Option<char>) -> bool {
    matches!(next, Some('(' | '.' | '[' | '{'))
}

/// Whether a quoted value ends at its quote or a token character, not at the start
/// of interpolation or prose.
pub(super) fn ends_cleanly(next: Option<char>) -> bool {
    !matches!(next, Some('$' | '{' | '<' | '%' | ' ' | '\t'))
}

/// Whether a value is made of words and numbers joined by `-`, `_`, `.` or `/`
/// (`v2-user-profile-2024`, `prod.eu-west-1`): a name, not a random secret.
pub(super) fn is_slug(value: &str) -> bool {
    let parts: Vec<&str> = value
        .split(['-', '_', '.', '/'])
        .filter(|part| !part.is_empty())
        .collect();
    parts.len() >= 2
        && parts.iter().all(|part| {
            part.len() <= 3
                || part.bytes().all(|byte| byte.is_ascii_lowercase())
                || part.bytes().all(|byte| byte.is_ascii_uppercase())
                || part.bytes().all(|byte| byte.is_ascii_digit())
        })
}

/// Shannon entropy of a value's bytes, in bits per byte.
pub(super) fn shannon_entropy(value: &str) -> f64 {
    let mut counts = [0_u32; 256];
    for byte in value.bytes() {
        if let Some(count) = counts.get_mut(usize::from(byte)) {
            *count += 1;
        }
    }
    let length = value.len() as f64;
    counts
        .iter()
        .filter(|&&count| count > 0)
        .map(|&count| {
            let share = f64::from(count) / length;
            -share * share.log2()
        })
        .sum()
}

/// Whether a value is a placeholder rather than a key.
pub(super) fn is_placeholder(value: &str) -> bool {
    let mut bytes = value.bytes();
    let repeated = bytes
        .next()
        .is_some_and(|first| bytes.all(|byte| byte == first));
    let lower = value.to_ascii_lowercase();
    repeated
        || PLACEHOLDER_FRAGMENTS
            .iter()
            .any(|fragment| lower.contains(fragment))
}
