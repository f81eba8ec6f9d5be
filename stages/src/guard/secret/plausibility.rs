//! Whether a regex match is a secret: the tests that keep placeholders,
//! identifiers, names, slugs and low-entropy values out of the findings.

use regex::Captures;

use super::patterns::Classes;
use crate::language::Language;

/// Lower-case fragments that mark an assigned value as a placeholder
/// wherever they stand in it.
pub(super) const PLACEHOLDER_FRAGMENTS: &[&str] = &[
    "xxxx",
    "****",
    "change_me",
    "change-me",
    "replace_me",
    "replace-me",
    "<",
    "${",
    "{{",
];

/// Lower-case words that mark an assigned value as a placeholder when they
/// begin it or stand in it as a word of their own (`your-api-key`,
/// `sk_live_YOUR_KEY`, `dummyToken`), not as letters inside a random value
/// (`…qYour8…`, `…Dummyx…`). See [`holds_placeholder_word`].
pub(super) const PLACEHOLDER_WORDS: &[&str] = &[
    "your",
    "placeholder",
    "changeme",
    "replaceme",
    "redacted",
    "dummy",
    "insert",
    "example",
];

/// Words of a name that mark it as naming a secret (`SECRET_KEY`, `githubToken`,
/// `db-password`). A word that ends with one of the first six (`accesstoken`,
/// `clientsecret`, `dbpassword`) names a secret too.
pub(super) const SECRET_NAME_WORDS: &[&str] = &[
    "secret",
    "token",
    "password",
    "passwd",
    "apikey",
    "passphrase",
    "secrets",
    "pass",
    "pwd",
    "credential",
    "credentials",
    "creds",
    "auth",
];

/// Words that make `key` name a secret (`api_key`, `privateKey`,
/// `ENCRYPTION_KEY`). In an upper-case, environment-style name any `KEY` does.
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "secret",
    "private",
    "access",
    "auth",
    "encryption",
    "signing",
    "master",
    "client",
    "app",
    "account",
    "service",
    "session",
    "license",
    "consumer",
    "hmac",
    "jwt",
    "webhook",
    "subscription",
    "admin",
    "storage",
    "shared",
    "crypt",
    "cipher",
    "aes",
    "sign",
    "bot",
];

/// Words of a name that mark its value as not a secret (`PUBLIC_KEY`, `TOKEN_URL`,
/// `SECRET_KEY_FILE`, `TEST_TOKEN`, `max_tokens`).
pub(super) const NOT_SECRET_NAME_WORDS: &[&str] = &[
    "public",
    "pub",
    "id",
    "ids",
    "name",
    "names",
    "url",
    "uri",
    "endpoint",
    "host",
    "port",
    "path",
    "file",
    "dir",
    "env",
    "var",
    "header",
    "type",
    "field",
    "prefix",
    "suffix",
    "length",
    "len",
    "size",
    "count",
    "limit",
    "max",
    "min",
    "ttl",
    "timeout",
    "hash",
    "sha",
    "checksum",
    "digest",
    "fingerprint",
    "gpg",
    "pgp",
    "format",
    "pattern",
    "regex",
    "kind",
    "mode",
    "user",
    "username",
    "test",
    "tests",
    "dummy",
    "fake",
    "mock",
    "example",
    "sample",
    "label",
    "description",
    "placeholder",
    "hint",
    "message",
    "error",
    "prompt",
    "policy",
    "reset",
    "forgot",
    "expires",
    "expiry",
    "expiration",
    "usage",
    "budget",
    "index",
    "position",
    "class",
    "style",
    "icon",
    "link",
    "query",
    "param",
    "location",
    "method",
    "provider",
    "strategy",
    "validator",
    "validation",
    "strength",
    "input",
    "column",
    "table",
    "tokens",
    "tokenizer",
    "counter",
    "manager",
    "store",
    "helper",
    "handler",
    "config",
    "option",
    "options",
    "enabled",
    "required",
    "rotation",
    "cmd",
    "command",
    "version",
];

/// Parts of the passwords that documentation and defaults use
/// (`password123`, `P@ssw0rd`, `changeit`): not worth a redaction.
const COMMON_PASSWORDS: &[&str] = &[
    "password", "passw0rd", "p@ssw0rd", "p@ssword", "secret", "changeit", "letmein", "qwerty",
    "123456", "admin", "default",
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
    !is_filler(value) && has_classes(value, classes)
}

/// Whether a value holds the required character classes.
pub(super) fn has_classes(value: &str, classes: Classes) -> bool {
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
    if is_placeholder(value) || is_filler(value) {
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

/// The words of a name, lower-cased: split on `_`, `-`, `.`, spaces, case
/// changes (`clientSecret`) and between letters and digits (`TOKEN2`).
pub(super) fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous: Option<char> = None;
    for c in name.chars() {
        let boundary = match previous {
            _ if !c.is_ascii_alphanumeric() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                previous = None;
                continue;
            }
            Some(p) => {
                (p.is_ascii_lowercase() && c.is_ascii_uppercase())
                    || (p.is_ascii_digit() != c.is_ascii_digit())
            }
            None => false,
        };
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        word.push(c.to_ascii_lowercase());
        previous = Some(c);
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// How a name says it holds a secret.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum SecretName {
    /// Not a secret name.
    No,
    /// A password (`password`, `DB_PASS`, `pwd`): a shorter value may be one.
    Password,
    /// A token, key or secret.
    Token,
}

/// Whether a name says it holds a secret (see [`SecretScanner`](super::SecretScanner),
/// "Known problems").
pub(super) fn secret_name(name: &str) -> SecretName {
    let words = name_words(name);
    if words
        .iter()
        .any(|word| NOT_SECRET_NAME_WORDS.contains(&word.as_str()))
    {
        return SecretName::No;
    }
    let env_style = name.bytes().any(|b| b.is_ascii_uppercase())
        && !name.bytes().any(|b| b.is_ascii_lowercase());
    let mut kind = SecretName::No;
    for (index, word) in words.iter().enumerate() {
        let word = word.as_str();
        let last = index + 1 == words.len();
        let password = matches!(word, "password" | "passwd" | "pwd" | "passphrase")
            || (word == "pass" && last)
            || ["password", "passwd"].iter().any(|end| word.ends_with(end));
        if password {
            return SecretName::Password;
        }
        let strong = SECRET_NAME_WORDS.contains(&word)
            || SECRET_NAME_WORDS[..6]
                .iter()
                .any(|end| word.len() > end.len() && word.ends_with(end));
        let key = word == "key"
            && (env_style
                || index
                    .checked_sub(1)
                    .and_then(|before| words.get(before))
                    .is_some_and(|before| KEY_QUALIFIERS.contains(&before.as_str())));
        let joined_key = word.len() > 3
            && word.ends_with("key")
            && KEY_QUALIFIERS.contains(&word.get(..word.len() - 3).unwrap_or_default());
        if strong || key || joined_key {
            kind = SecretName::Token;
        }
    }
    kind
}

/// Whether an assignment to a secret-like name holds a secret (see
/// [`SecretScanner`](super::SecretScanner), "Known problems").
pub(super) fn plausible_secret_assignment(
    captures: &Captures<'_>,
    after: &str,
    language: Language,
) -> bool {
    let next = after.chars().next();
    let (Some(name), Some(value)) = (captures.name("name"), captures.name("value")) else {
        return false;
    };
    let quoted = captures
        .name("quote")
        .is_some_and(|quote| !quote.as_str().is_empty());
    let kind = secret_name(name.as_str());
    if kind == SecretName::No {
        return false;
    }
    let value = value.as_str();
    let has_digit = value.bytes().any(|byte| byte.is_ascii_digit());
    let has_letter = value.bytes().any(|byte| byte.is_ascii_alphabetic());
    let has_other = value.bytes().any(|byte| !byte.is_ascii_alphanumeric());
    let shaped = match kind {
        SecretName::Password => {
            !is_example_password(value)
                && value.len() >= 8
                && has_letter
                && (has_digit || has_other)
                && shannon_entropy(value) >= 2.5
                && !is_slug(value)
        }
        _ => {
            value.len() >= 16
                && has_digit
                && has_letter
                && !is_slug(value)
                && shannon_entropy(value) >= 3.3
        }
    };
    let random = shaped
        && !is_placeholder(value)
        && !value.contains("://")
        && !value.starts_with(['/', '.', '~', '$', '%', '@', '&', '*', '!', '#', '-'])
        && !value.contains("${")
        && !value.contains("{{")
        && !value.contains("%(")
        && !value.contains('{')
        && !value.contains('\\')
        && !(value.contains('[') && value.contains(']'))
        && !has_inner_equals(value)
        && !has_version(value)
        && !decodes_to_example(value)
        && !PUBLIC_EMULATOR_KEYS.contains(&value)
        && !looks_like_code(value);
    let literal = if quoted {
        ends_cleanly(next)
    } else {
        literal_allowed(language) && !continues_as_expression(next) && ends_the_line(after)
    };
    random && literal
}

/// Whether a value written in prose after a secret's name (`the password is
/// …`, in pasted text) looks like a secret rather than a word: 8 characters or
/// more, with a letter and a digit or a symbol, or upper- and lower-case
/// letters with high entropy (12 or more, 3.5 bits per character), and none of
/// a placeholder, a well-known example password, a slug of words
/// (`case-sensitive`, `OPENAI_API_KEY`), a path, a URL, a variable, a version
/// or code (`Token::{start,end}` puts a `:` first).
pub(super) fn plausible_prose_secret(value: &str) -> bool {
    let letter = value.bytes().any(|byte| byte.is_ascii_alphabetic());
    let digit = value.bytes().any(|byte| byte.is_ascii_digit());
    let other = value.bytes().any(|byte| !byte.is_ascii_alphanumeric());
    let lower = value.bytes().any(|byte| byte.is_ascii_lowercase());
    let upper = value.bytes().any(|byte| byte.is_ascii_uppercase());
    let entropy = shannon_entropy(value);
    let mixed = letter && (digit || other);
    let random_letters = lower && upper && value.len() >= 12 && entropy >= 3.5;
    value.len() >= 8
        && (mixed || random_letters)
        && entropy >= 2.5
        && !is_placeholder(value)
        && !is_example_password(value)
        && !is_slug(value)
        && !value.contains("://")
        && !value.starts_with([
            '/', '.', '~', '$', '%', '@', '&', '*', '#', '-', '[', '(', '{', '<', ':',
        ])
        && !value.contains('\\')
        && !has_version(value)
        && !looks_like_code(value)
}

/// Whether a value in an env file is a secret: the name says secret (see
/// [`secret_name`]) and the value is not empty, a placeholder, a well-known
/// example, one repeated character, a number or a boolean.
pub(super) fn plausible_env_secret(name: &str, value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    secret_name(name) != SecretName::No
        && value.len() >= 6
        && !value.bytes().all(|byte| byte.is_ascii_digit())
        && !matches!(lower.as_str(), "true" | "false" | "null" | "none")
        && !value.starts_with(['$', '<', '{'])
        && !is_placeholder(value)
        && !COMMON_PASSWORDS.contains(&lower.as_str())
        && !EXAMPLE_PASSWORD_WORDS.contains(&lower.as_str())
}

/// Whether an unquoted value ends its line: nothing but a comment, a separator
/// or a closing bracket follows (`PASS: sha3-256 roundtrip` is prose).
fn ends_the_line(after: &str) -> bool {
    let rest = after.trim_start();
    rest.is_empty() || rest.starts_with(['#', ';', ',', '}', ']', ')', '/', '<'])
}

/// Whether `=` appears inside a value rather than only as base64 padding at its
/// end (`value\nKEY2=value2` is two assignments).
fn has_inner_equals(value: &str) -> bool {
    value.trim_end_matches('=').contains('=')
}

/// Whether a value holds a version number (`npm:^1.0.0`, `v2.3.4`).
fn has_version(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes.windows(5).any(|w| {
        w[0].is_ascii_digit()
            && w[1] == b'.'
            && w[2].is_ascii_digit()
            && (w[3] == b'.' && w[4].is_ascii_digit() || w[3].is_ascii_digit() && w[4] == b'.')
    })
}

/// Whether a value is base64 of text that is itself an example: a
/// placeholder, an example password, or `user:password` credentials whose
/// password a URL would not count (`dXNlcm5hbWU6cGFzc3dvcmQ=` is
/// `username:password`; see [`plausible_url_password`](super::detectors::plausible_url_password)).
fn decodes_to_example(value: &str) -> bool {
    super::detectors::decode_base64(value)
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .is_some_and(|text| {
            !text.chars().any(char::is_control)
                && text.len() >= 4
                && (is_placeholder(&text)
                    || is_example_password(&text)
                    || text.split_once(':').is_some_and(|(user, password)| {
                        !user.is_empty()
                            && !user.contains(char::is_whitespace)
                            && !super::detectors::plausible_url_password(password)
                    }))
        })
}

/// Words that documentation and tests use as passwords, "password" and
/// "secret" in other languages among them (Python's `urllib` docs write
/// `passwd='geheim$parole'`).
const EXAMPLE_PASSWORD_WORDS: &[&str] = &[
    "foo",
    "bar",
    "baz",
    "qux",
    "test",
    "demo",
    "sample",
    "hunter2",
    "passwort",
    "kennwort",
    "geheim",
    "parole",
    "motdepasse",
    "secreto",
    "segreto",
    "contrasena",
    "senha",
    "wachtwoord",
];

/// Whether a password is one that documentation and defaults use
/// (`password123`, `P4$$word`, `changeit`, `foobar`): read with digits and
/// symbols as the letters they stand for, it is made of common password words
/// and nothing else but digits and symbols. A word inside a longer password
/// (`S3cr3tPassw0rdQ`, `Kp9adminQ7`, `hunter2xyz!`) does not make it an
/// example: letters are left once the words are taken out.
pub(super) fn is_example_password(value: &str) -> bool {
    let original: Vec<char> = value.chars().collect();
    let plain: Vec<char> = original
        .iter()
        .map(|c| match c.to_ascii_lowercase() {
            '4' | '@' => 'a',
            '$' | '5' => 's',
            '0' => 'o',
            '1' | '!' => 'i',
            '3' => 'e',
            other => other,
        })
        .collect();
    let lower: Vec<char> = original.iter().map(char::to_ascii_lowercase).collect();
    let mut covered = vec![false; original.len()];
    let mut cover = |text: &[char], word: &str| {
        let word: Vec<char> = word.chars().collect();
        if word.is_empty() || word.len() > text.len() {
            return;
        }
        for start in 0..=text.len() - word.len() {
            if text[start..start + word.len()] == word[..] {
                covered[start..start + word.len()].fill(true);
            }
        }
    };
    for word in COMMON_PASSWORDS.iter().chain(EXAMPLE_PASSWORD_WORDS) {
        cover(&plain, word);
        cover(&lower, word);
    }
    covered.iter().any(|&c| c)
        && original
            .iter()
            .zip(&covered)
            .all(|(c, &covered)| covered || !c.is_alphabetic())
}

/// Whether a value reads as an expression or an identifier path rather than a
/// literal: a call, a member chain of words (`os.environ.get`), an HTML entity.
fn looks_like_code(value: &str) -> bool {
    value.contains('(')
        || value.contains(')')
        || value.contains("()")
        || value.contains("::")
        || value.contains("->")
        || value.ends_with(['(', ')'])
        || (value.contains('.')
            && value.split('.').all(|part| {
                !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')
            }))
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

/// Whether a value is a placeholder rather than a key: one repeated
/// character, a [`PLACEHOLDER_FRAGMENTS`] fragment anywhere, or one of the
/// [`PLACEHOLDER_WORDS`] as a word (see [`holds_placeholder_word`]).
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
        || value.ends_with("EXAMPLE")
        || value.ends_with("EXAMPLEKEY")
        || PLACEHOLDER_WORDS
            .iter()
            .any(|word| holds_placeholder_word(value, &lower, word))
}

/// Whether `word` (lower case) begins `value` in any case, or stands in it
/// as a word of its own — `your`, `Your` or `YOUR`, not glued to letters of
/// the same word (`my-example-token`, `exampleToken`, `myExampleKey`,
/// `YOUR_KEY` count; `…7EXAMPLEq…`, `…pLexample4x…` do not). AWS's
/// documented keys end in `EXAMPLE` or `EXAMPLEKEY` glued to the key; the
/// caller counts those. `lower` is `value` in lower case.
fn holds_placeholder_word(value: &str, lower: &str, word: &str) -> bool {
    if lower.starts_with(word) {
        return true;
    }
    let bytes = value.as_bytes();
    lower.match_indices(word).any(|(start, found)| {
        let end = start + found.len();
        let before = start.checked_sub(1).and_then(|at| bytes.get(at)).copied();
        let after = bytes.get(end).copied();
        let letter = |byte: Option<u8>| byte.is_some_and(|b| b.is_ascii_alphabetic());
        let upper = |byte: Option<u8>| byte.is_some_and(|b| b.is_ascii_uppercase());
        let lower_case = |byte: Option<u8>| byte.is_some_and(|b| b.is_ascii_lowercase());
        let text = value.get(start..end).unwrap_or_default();
        let mut title = word.to_owned();
        title[..1].make_ascii_uppercase();
        if text == word {
            !letter(before) && !lower_case(after)
        } else if text == title {
            !upper(before) && !lower_case(after)
        } else if text == word.to_ascii_uppercase() {
            !upper(before) && !letter(after)
        } else {
            false
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_passwords_are_made_of_common_words_digits_and_symbols() {
        for example in [
            "password123",
            "P4$$word",
            "changeit",
            "foobar",
            "admin",
            "hunter2",
            "S3cr3t!",
            "test-123",
            "geheim$parole",
            "Passwort1!",
            "motdepasse123",
        ] {
            assert!(is_example_password(example), "{example}");
        }
        // A common word inside a longer password leaves letters behind.
        for real in [
            "S3cr3tPassw0rdQ",
            "Secr3tKey99z",
            "Qz8Passw0rd",
            "hunter2xyz!",
            "Kp9adminQ7",
            "Kd83jfQ2x",
        ] {
            assert!(!is_example_password(real), "{real}");
        }
    }

    /// `example` marks a placeholder as a word of its own (or as AWS writes
    /// its documented keys), not as five letters anywhere in a random value.
    /// The random parts are put together here, so this file holds no
    /// secret-shaped literal.
    #[test]
    fn example_is_a_placeholder_only_as_a_word() {
        let random = ["Zq8vR2mK9pL", "4xW7nB3cD"];
        for placeholder in [
            "example".to_owned(),
            "my-example-token".to_owned(),
            "example_api_key_123".to_owned(),
            "EXAMPLE-TOKEN".to_owned(),
            "exampleToken42".to_owned(),
            "myExampleKey".to_owned(),
            ["AKIA", "IOSFODNN7", "EXAMPLE"].concat(),
            ["wJalrXUtnFEMI/K7MDENG/", "bPxRfiCY", "EXAMPLEKEY"].concat(),
            random.join("-example-"),
        ] {
            assert!(is_placeholder(&placeholder), "{placeholder}");
        }
        for secret in [
            random.join("example"),
            random.join("EXAMPLE"),
            random.join("Example").to_ascii_lowercase(),
            ["qexample", random[0], random[1]].concat(),
            [random[0], random[1], "exampleq"].concat(),
        ] {
            assert!(!is_placeholder(&secret), "{secret}");
        }
    }

    /// Base64 of `user:password` credentials is judged as a basic-auth value
    /// is: an example password makes it an example, a real one does not.
    #[test]
    fn base64_credentials_with_an_example_password_are_examples() {
        // `username:password`, `user:pass`, `admin:secret`, `foo:bar123`.
        for example in [
            "dXNlcm5hbWU6cGFzc3dvcmQ=",
            "dXNlcjpwYXNz",
            "YWRtaW46c2VjcmV0",
            "Zm9vOmJhcjEyMw==",
        ] {
            assert!(decodes_to_example(example), "{example}");
        }
        // `deploy:Tr0ub4dor3` and a random value that is not credentials.
        assert!(!decodes_to_example("ZGVwbG95OlRyMHViNGRvcjM="));
        assert!(!decodes_to_example("WnE4dlIybUs5cEw0eFc3bkIzY0Q="));
    }

    /// The other placeholder words follow the same rule as `example`: a word
    /// of its own, or the start of the value.
    #[test]
    fn placeholder_words_count_only_as_words() {
        let random = ["Zq8vR2mK9pL", "4xW7nB3cD"];
        for placeholder in [
            "your-api-key-here".to_owned(),
            "yourapikey".to_owned(),
            "sk_live_YOUR_KEY".to_owned(),
            "dummyToken42".to_owned(),
            "my_dummy_secret".to_owned(),
            "REDACTED".to_owned(),
            "insert-token-here".to_owned(),
            random.join("_your_"),
        ] {
            assert!(is_placeholder(&placeholder), "{placeholder}");
        }
        for secret in [
            random.join("your"),
            random.join("Your"),
            random.join("YOURq"),
            random.join("dummy"),
            random.join("Dummyx"),
            random.join("insert"),
        ] {
            assert!(!is_placeholder(&secret), "{secret}");
        }
    }
}
