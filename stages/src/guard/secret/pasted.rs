//! The tests of the rules for pasted text (the intent) that need more than a
//! value: a token random enough to be a credential, the secret's name a few
//! words before it, and a password written right after `pass`.
//!
//! A person pasting a key into a request does not always name it the way a
//! config file does (`here is the key: …`, `the aws secret access key … breaks
//! the upload`, `pass … to the login function`). What gives such a key away is
//! its shape: a long run of the base64 alphabets with upper- and lower-case
//! letters and digits that no words explain. Issue reports hold long runs
//! too — commit ids, hashes, UUIDs, paths, identifiers, base64 of text,
//! certificates — and these tests keep them out.

use std::ops::Range;

use super::plausibility::{
    is_example_password, is_filler, is_placeholder, is_slug, name_words, plausible_prose_secret,
    shannon_entropy,
};

/// Characters of a token before its padding, near a secret's name.
const NEARBY_LENGTH: usize = 24;

/// Characters of a token before its padding, with no name before it.
const ALONE_LENGTH: usize = 40;

/// How many words may stand between a secret's name and its value.
const NEARBY_WORDS: usize = 6;

/// How far before a value its name is looked for, in bytes.
const NEARBY_BYTES: usize = 320;

/// Words of prose that name a secret (`key`, `token`, `pass`, …); a word of a
/// longer name that ends with one of [`SECRET_WORD_ENDS`] does too
/// (`accesstoken`, `clientsecret`, `dbpassword`).
const SECRET_WORDS: &[&str] = &[
    "key",
    "keys",
    "secret",
    "secrets",
    "token",
    "password",
    "passwords",
    "passwd",
    "pass",
    "pwd",
    "passphrase",
    "credential",
    "credentials",
    "creds",
    "apikey",
];

/// See [`SECRET_WORDS`].
const SECRET_WORD_ENDS: &[&str] = &["password", "passwd", "token", "secret", "apikey"];

/// Words that, in the secret's name or just before it, say the value is not
/// a secret: `public key`, `primary key`, `cache key`, `KeyError`, `key_id`,
/// `token_url`, `max_tokens`.
const NOT_SECRET_WORDS: &[&str] = &[
    "public",
    "pub",
    "primary",
    "foreign",
    "sort",
    "cache",
    "cached",
    "partition",
    "dict",
    "map",
    "lookup",
    "composite",
    "unique",
    "row",
    "idempotency",
    "index",
    "registry",
    "host",
    "gpg",
    "pgp",
    "ssh",
    "example",
    "sample",
    "dummy",
    "fake",
    "mock",
    "placeholder",
    "error",
    "id",
    "ids",
    "url",
    "uri",
    "path",
    "file",
    "name",
    "length",
    "size",
    "count",
    "max",
    "min",
    "type",
    "field",
    "prefix",
    "env",
    "var",
    "format",
    "tokens",
    "tokenizer",
];

/// Words that say the value after them is a hash, an id or a public key,
/// not the secret named before them (`the token hash is …`, `key
/// fingerprint …`, `pubkey256 = …`).
const HASH_WORDS: &[&str] = &[
    "pubkey",
    "hash",
    "hashes",
    "hashed",
    "digest",
    "checksum",
    "fingerprint",
    "integrity",
    "sha",
    "sha1",
    "sha256",
    "sha384",
    "sha512",
    "md5",
    "commit",
    "uuid",
    "etag",
];

/// Lower-case text right before a value that makes it a hash or inline data:
/// an SSH fingerprint (`SHA256:…`), a Go module sum (`h1:…`), a data URI.
const HASH_PREFIXES: &[&str] = &[
    "sha1:", "sha256:", "sha384:", "sha512:", "md5:", "h1:", "base64,",
];

/// Whether the token at `span` of `content` (pasted text) is a secret named a
/// few words before it: it [`looks_random`] with 24 characters or more, stands
/// apart as a token of its own, and a secret's name (`key`, `secret`,
/// `token`, `password`, `pass`, `pwd`, `credential`, `api key`, …) comes
/// within six words before it, in the same sentence, with no hash's name
/// (`hash`, `fingerprint`, `commit`) in between and no word that makes the
/// name not a secret's (`public key`, `cache key`, `primary key`, `key_id`).
pub(super) fn plausible_nearby_secret(content: &str, span: Range<usize>) -> bool {
    let Some(value) = content.get(span.clone()) else {
        return false;
    };
    looks_random(value, NEARBY_LENGTH, 3.5, -0.2)
        && stands_alone(content, span.clone(), true)
        && named_before(content, span.start)
}

/// Whether the token at `span` of `content` (pasted text) is a secret with no
/// name before it: it [`looks_random`] with 40 characters or more and a
/// stricter score, and stands apart as a token of its own, not in a URL.
pub(super) fn plausible_random_token(content: &str, span: Range<usize>) -> bool {
    let Some(value) = content.get(span.clone()) else {
        return false;
    };
    looks_random(value, ALONE_LENGTH, 4.2, -0.1)
        && stands_alone(content, span.clone(), false)
        && !named_not_secret_before(content, span.start)
}

/// How many words before a value with no secret's name are searched for a
/// hash's name.
const ALONE_WORDS: usize = 3;

/// Whether one of the [`ALONE_WORDS`] words before `start`, in the same
/// sentence, names a hash or a public key (`Public key pin-sha256: …`,
/// `const pubkey256 = …`, `the checksum is …`).
fn named_not_secret_before(content: &str, start: usize) -> bool {
    let before = content.get(..start).unwrap_or_default();
    let window = before
        .get(before.floor_char_boundary(before.len().saturating_sub(NEARBY_BYTES))..)
        .unwrap_or_default();
    for word in window.split_whitespace().rev().take(ALONE_WORDS) {
        if name_is_secret(word) == Named::NotSecret {
            return true;
        }
        if word.ends_with(['.', '!', '?']) {
            break;
        }
    }
    false
}

/// Whether a value written right after `pass`, `password`, `pwd`, … with no
/// `is`, `=` or `:` (`pass … to the login function`) is a password rather
/// than an argument: [`plausible_prose_secret`], three letters or more, not
/// a keyword argument, a path, an e-mail address, a time, a dotted name, a
/// hex number or a key chord (`Ctrl+Shift+P`), and either a symbol other
/// than `_`, `-` and `.` or letters and digits that change class often
/// (`Tr0ub4dor3x`, not `parameter1` or `Python311`).
pub(super) fn plausible_bare_password(value: &str) -> bool {
    let letters = value.bytes().filter(u8::is_ascii_alphabetic).count();
    let symbol = value
        .bytes()
        .any(|byte| !byte.is_ascii_alphanumeric() && !matches!(byte, b'_' | b'-' | b'.'));
    let email = value
        .split_once('@')
        .is_some_and(|(_, domain)| domain.contains('.'));
    let hex_number = value.starts_with("0x") || value.starts_with("0X") || is_hex(value);
    plausible_prose_secret(value)
        && value.len() <= 64
        && letters >= 3
        && !value.contains(['=', '/', ':', '[', ']', '{', '}', '<', '>'])
        && !email
        && !hex_number
        && !is_dotted_name(value)
        && !is_key_chord(value)
        && (symbol || class_switch_rate(value) >= 0.4)
}

/// Whether a token (`[A-Za-z0-9+/_-]` with up to two `=` of padding) is
/// random enough to be a credential: `length` characters or more before the
/// padding; upper- and lower-case letters and digits; not hex (a commit id,
/// a hash, a UUID); not one of the base64 alphabets mixed with the other's
/// symbols (`+`/`/` with `-`/`_`: a path or a slug); not filler, a
/// placeholder, an example password, a slug, a snake-case name, a hash in
/// SRI form (`sha512-…`) or base64 of ordinary text; Shannon
/// entropy of `entropy` bits per character or more; and a [`randomness`] of
/// `score` or more.
pub(super) fn looks_random(value: &str, length: usize, entropy: f64, score: f64) -> bool {
    let core = value.trim_end_matches('=');
    let bytes = core.as_bytes();
    let digit = bytes.iter().any(u8::is_ascii_digit);
    let lower = bytes.iter().any(u8::is_ascii_lowercase);
    let upper = bytes.iter().any(u8::is_ascii_uppercase);
    let standard = core.contains(['+', '/']);
    let url_safe = core.contains(['-', '_']);
    let lowered = core.to_ascii_lowercase();
    let sri = ["sha1-", "sha256-", "sha384-", "sha512-"]
        .iter()
        .any(|prefix| lowered.starts_with(prefix));
    core.len() >= length
        && value.len() - core.len() <= 2
        && digit
        && lower
        && upper
        && !(standard && url_safe)
        && !is_hex(core)
        && !sri
        && !is_filler(core)
        && !is_placeholder(core)
        && !is_example_password(core)
        && !is_slug(core)
        && !is_snake_name(core)
        && shannon_entropy(core) >= entropy
        && randomness(core) >= score
        && !decodes_to_text(core)
}

/// How random a token reads, from about -1 (words: `getUserAccessToken2`)
/// to about 1 (`q8Vn2Lr5TzHk3W`): the share of neighbouring letters and
/// digits that change class (lower, upper, digit) less the share of
/// characters in runs of three or more of one class that read as words (a
/// capitalised word counts as one run; five consonants in a row are not a
/// word). Random base62 scores about 0.2, camel-case names about -0.5; a
/// random value of 24 characters scores below -0.2 about once in 35, one of
/// 40 below -0.2 about once in 100 and below -0.1 about once in 30.
pub(super) fn randomness(value: &str) -> f64 {
    class_switch_rate(value) - share_in_runs(value)
}

/// The class of a character for [`randomness`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
    Other,
}

fn class(byte: u8) -> Class {
    if byte.is_ascii_lowercase() {
        Class::Lower
    } else if byte.is_ascii_uppercase() {
        Class::Upper
    } else if byte.is_ascii_digit() {
        Class::Digit
    } else {
        Class::Other
    }
}

/// The share of neighbouring letters and digits of different classes.
fn class_switch_rate(value: &str) -> f64 {
    let (mut pairs, mut switches) = (0_u32, 0_u32);
    for pair in value.as_bytes().windows(2) {
        let (a, b) = (class(pair[0]), class(pair[1]));
        if a != Class::Other && b != Class::Other {
            pairs += 1;
            switches += u32::from(a != b);
        }
    }
    if pairs == 0 {
        0.0
    } else {
        f64::from(switches) / f64::from(pairs)
    }
}

/// The share of characters in runs of three or more letters or digits of one
/// class that read as words or numbers; an upper-case letter followed by
/// lower-case ones starts their run, and a run of letters with five
/// consonants in a row (`Xltbjqtcf`) is not a word.
fn share_in_runs(value: &str) -> f64 {
    let bytes = value.as_bytes();
    let mut in_runs = 0;
    let mut start = 0;
    while start < bytes.len() {
        let mut kind = class(bytes[start]);
        let mut end = start + 1;
        if kind == Class::Upper && bytes.get(end).is_some_and(u8::is_ascii_lowercase) {
            kind = Class::Lower;
        }
        while bytes.get(end).is_some_and(|&byte| class(byte) == kind) {
            end += 1;
        }
        let run = &bytes[start..end];
        let word = match kind {
            Class::Lower | Class::Upper => consonant_streak(run) < 5,
            Class::Digit => true,
            Class::Other => false,
        };
        if word && run.len() >= 3 {
            in_runs += run.len();
        }
        start = end;
    }
    if bytes.is_empty() {
        0.0
    } else {
        in_runs as f64 / bytes.len() as f64
    }
}

/// The longest streak of consonants in a run of letters (`y` counts as a
/// vowel): a word has fewer than five, random letters often more.
fn consonant_streak(run: &[u8]) -> usize {
    let (mut longest, mut streak) = (0, 0);
    for byte in run {
        if matches!(
            byte.to_ascii_lowercase(),
            b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
        ) {
            streak = 0;
        } else {
            streak += 1;
            longest = longest.max(streak);
        }
    }
    longest
}

/// Whether a value is made of hex digits (and `-`, as a UUID).
fn is_hex(value: &str) -> bool {
    value
        .bytes()
        .all(|byte| byte.is_ascii_hexdigit() || byte == b'-')
}

/// Whether a value is a name of words joined by `_`
/// (`COLOR_10b_R10G10B10A2_XR`, `__vite__cjsExportL_5d57d39e`): two parts
/// or more, at least half of them in one case (with digits).
fn is_snake_name(value: &str) -> bool {
    let parts: Vec<&str> = value.split('_').filter(|part| !part.is_empty()).collect();
    let one_case = parts
        .iter()
        .filter(|part| {
            !(part.bytes().any(|b| b.is_ascii_lowercase())
                && part.bytes().any(|b| b.is_ascii_uppercase()))
        })
        .count();
    parts.len() >= 2 && one_case * 2 >= parts.len()
}

/// Whether a value is a dotted name (`np.float64`, `self.config_2`): parts
/// that start with a letter or `_` and hold letters, digits and `_`.
fn is_dotted_name(value: &str) -> bool {
    value.contains('.')
        && value.split('.').all(|part| {
            part.bytes()
                .next()
                .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
                && part
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
        })
}

/// Whether a value is a key chord (`Ctrl+Shift+P`, `Cmd+Alt+F12`): keys
/// joined by `+`, each a word, a function key or one character.
fn is_key_chord(value: &str) -> bool {
    value.contains('+')
        && value.split('+').all(|key| {
            key.len() == 1
                || key.bytes().all(|byte| byte.is_ascii_alphabetic())
                || (key.starts_with(['F', 'f']) && key[1..].bytes().all(|b| b.is_ascii_digit()))
        })
}

/// Whether a token is base64 (either alphabet) of ordinary text: printable
/// text with a space, or JSON or markup (`eyJ…` of `{"…`).
fn decodes_to_text(value: &str) -> bool {
    let standard: String = value
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            other => other,
        })
        .collect();
    super::detectors::decode_base64(&standard)
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .is_some_and(|text| {
            let printable = text
                .chars()
                .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'));
            printable
                && text.len() >= 8
                && (text.contains(' ') || text.starts_with(['{', '[', '<', '"']))
        })
}

/// Whether the token at `span` stands apart in `content`: not part of a
/// dotted name, a file name, a path after a host, an e-mail address, a call
/// or a variable; not a hash after its algorithm (`SHA256:…`, `h1:…`), an
/// SSH public key (after `ssh-ed25519`) or inline data (`base64,…`); not in
/// a certificate or public key block. In a URL, only a query value named as
/// a secret counts (`?access_token=…`), and only when `in_url` allows it.
fn stands_alone(content: &str, span: Range<usize>, in_url: bool) -> bool {
    let before = content.get(..span.start).unwrap_or_default();
    let after = content.get(span.end..).unwrap_or_default();
    let previous = before.chars().next_back();
    let mut rest = after.chars();
    let next = rest.next();
    let next_continues = rest
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let joined_before = previous.is_some_and(|c| {
        c.is_alphanumeric() || matches!(c, '.' | '/' | '@' | '\\' | '$' | '%' | '~' | '=' | '#')
    });
    let joined_after = next.is_some_and(|c| {
        c.is_alphanumeric()
            || matches!(c, '@' | '\\' | '(' | '[' | '$' | '%' | '#' | '=')
            || (c == '.' && next_continues)
    });
    let word_start = before.rfind(char::is_whitespace).map_or(0, |at| {
        at + before[at..].chars().next().map_or(1, char::len_utf8)
    });
    let word_end = after.find(char::is_whitespace).unwrap_or(after.len());
    let prefix = before.get(word_start..).unwrap_or_default();
    let word = content
        .get(word_start..span.end + word_end)
        .unwrap_or_default();
    let lowered_prefix = prefix.to_ascii_lowercase();
    let hash_prefix = HASH_PREFIXES
        .iter()
        .any(|hash| lowered_prefix.ends_with(hash));
    let ssh_key = before
        .trim_end()
        .rsplit(char::is_whitespace)
        .next()
        .is_some_and(|word| {
            ["ssh-", "ecdsa-", "sk-ssh-", "sk-ecdsa-"]
                .iter()
                .any(|kind| word.starts_with(kind))
        });
    let url = word.contains("://");
    let url_secret = url && in_url && query_names_secret(prefix);
    // `key=…` (an assignment) counts: `=` joins only outside a URL query.
    let assigned = previous == Some('=') && !url;
    (!joined_before || assigned || url_secret)
        && !joined_after
        && !hash_prefix
        && !ssh_key
        && (!url || url_secret)
        && !in_public_block(before)
}

/// Whether `prefix` (the text of a URL before a value) ends with a query
/// parameter that names a secret (`?access_token=`, `&sig=`).
fn query_names_secret(prefix: &str) -> bool {
    let Some(name) = prefix.strip_suffix('=') else {
        return false;
    };
    let name = name.rsplit(['?', '&', ';']).next().unwrap_or_default();
    name_is_secret(name) == Named::Secret || name.eq_ignore_ascii_case("sig")
}

/// Whether `before` ends inside a PEM block that holds no private key (a
/// certificate, a public key): its body is public.
fn in_public_block(before: &str) -> bool {
    let Some(begin) = before.rfind("-----BEGIN ") else {
        return false;
    };
    let block = &before[begin..];
    let header = block.lines().next().unwrap_or_default();
    !block.contains("-----END ") && !header.contains("PRIVATE")
}

/// What a word says of the value after it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Named {
    /// A secret's name: `key`, `API_TOKEN`, `password:`.
    Secret,
    /// A name of something that is not a secret: `public_key`, `KeyError`,
    /// a hash (`fingerprint`).
    NotSecret,
    /// Any other word.
    Other,
}

/// What a word of prose names (see [`Named`]).
fn name_is_secret(word: &str) -> Named {
    let words = name_words(word);
    let hash = words.iter().any(|part| HASH_WORDS.contains(&part.as_str()));
    let secret = words.iter().any(|part| {
        SECRET_WORDS.contains(&part.as_str())
            || SECRET_WORD_ENDS
                .iter()
                .any(|end| part.len() > end.len() && part.ends_with(end))
    });
    let not_secret = words
        .iter()
        .any(|part| NOT_SECRET_WORDS.contains(&part.as_str()));
    if hash || (secret && not_secret) {
        Named::NotSecret
    } else if secret {
        Named::Secret
    } else {
        Named::Other
    }
}

/// Whether a secret's name comes within [`NEARBY_WORDS`] words before the
/// value starting at `start`, in the same sentence, with no hash's name in
/// between, and not qualified as something else (`public key`).
fn named_before(content: &str, start: usize) -> bool {
    let before = content.get(..start).unwrap_or_default();
    let window = before
        .get(before.floor_char_boundary(before.len().saturating_sub(NEARBY_BYTES))..)
        .unwrap_or_default();
    let words: Vec<&str> = window.split_whitespace().rev().collect();
    // A prefix glued to the value (`key:` in `key:…`) is one more word.
    let glued = usize::from(!window.ends_with(char::is_whitespace) && !window.is_empty());
    for (index, word) in words.iter().enumerate().take(NEARBY_WORDS + 1 + glued) {
        // A sentence ends before the value, unless the name ends it right
        // before the value (`here is my key.` and the key on the next line).
        let trimmed = word.trim_end_matches(['"', '\'', '`', ')', ']', '*', '_']);
        if index > glued && trimmed.ends_with(['.', '!', '?']) {
            return false;
        }
        match name_is_secret(word) {
            Named::NotSecret => return false,
            Named::Secret => {
                let qualified = words.get(index + 1).is_some_and(|qualifier| {
                    name_words(qualifier)
                        .last()
                        .is_some_and(|last| NOT_SECRET_WORDS.contains(&last.as_str()))
                });
                return !qualified;
            }
            Named::Other => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::guard::secret::coverage::{Fakes, base64};

    const BASE62: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const BASE64_URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    fn mixed(value: &str) -> bool {
        value.bytes().any(|b| b.is_ascii_digit())
            && value.bytes().any(|b| b.is_ascii_lowercase())
            && value.bytes().any(|b| b.is_ascii_uppercase())
    }

    /// Most random values of each alphabet and length pass: the thresholds
    /// cost a few per cent of the shortest, fewer of the longer.
    #[test]
    fn random_values_look_random() {
        let mut fakes = Fakes::seeded(7);
        for (alphabet, length, nearby, alone) in [
            (BASE62, 24, 0.93, 0.0),
            (BASE64, 24, 0.93, 0.0),
            (BASE64_URL, 24, 0.88, 0.0),
            (BASE62, 32, 0.95, 0.0),
            (BASE62, 40, 0.97, 0.93),
            (BASE64, 40, 0.97, 0.93),
            (BASE64_URL, 43, 0.92, 0.88),
            (BASE62, 64, 0.98, 0.95),
        ] {
            let values: Vec<String> = std::iter::repeat_with(|| fakes.string(alphabet, length))
                .filter(|value| mixed(value))
                .take(2000)
                .collect();
            let share = |length, entropy, score| {
                values
                    .iter()
                    .filter(|value| looks_random(value, length, entropy, score))
                    .count() as f64
                    / values.len() as f64
            };
            let near = share(NEARBY_LENGTH, 3.5, -0.2);
            let far = share(ALONE_LENGTH, 4.2, -0.1);
            assert!(near >= nearby, "{length} near a name: {near}");
            assert!(far >= alone, "{length} alone: {far}");
        }
    }

    #[test]
    fn words_hashes_and_names_do_not_look_random() {
        let base64_text = base64(b"the quick brown fox jumps over it");
        let json = base64(br#"{"oid":"1234-5678","n":2}"#);
        for value in [
            // Hex: commit ids, hashes, UUIDs.
            "0123456789abcdef0123456789abcdef01234567",
            "0123456789ABCDEF0123456789ABCDEF01234567",
            "123e4567-e89b-12d3-a456-426614174000",
            // Names.
            "getUserAccessTokenFromCache2",
            "testGetUserByIdReturns404WhenUserDoesNotExist",
            "AbstractSingletonProxyFactoryBean2",
            "COLOR_10b_R10G10B10A2_XR",
            "__vite__cjsExportL_5d57d39e",
            "PBESv2SHA256AndAES256CBC",
            "ID3D11VideoDeviceVtbl2",
            "Trina_Solar_TSM_300DEG5C_07_II_",
            "v2-user-profile-2024-final-Release",
            // Paths.
            "/Users/name/code/project2/venv/lib/Python3",
            "src/components/HelloWorld2/index",
            // Base64 of ordinary text and of JSON.
            &base64_text,
            &json,
            // Placeholders and filler.
            "AKIAIOSFODNN7EXAMPLE0123456789abcdefGHIJ",
            "your-api-key-0123456789-ABCDEFGHIJKLMNOP",
            "Xy9aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ] {
            assert!(!looks_random(value, 24, 3.5, -0.2), "{value}");
        }
        let mut fakes = Fakes::seeded(3);
        let sri = ["sha512-", &fakes.string(BASE64, 86), "=="].concat();
        assert!(!looks_random(&sri, 24, 3.5, -0.2));
    }

    #[test]
    fn names_before_a_value() {
        for (prose, named) in [
            ("here is the key: ", true),
            ("the aws secret access key ", true),
            ("pass ", true),
            ("my GitHub token for the CI is\n\n", true),
            ("api_key=", true),
            ("the credentials I use (staging) ", true),
            ("the public key ", false),
            ("the cache key ", false),
            ("KeyError: ", false),
            ("the key fingerprint ", false),
            ("the token hash is ", false),
            ("I rotated the token. The build id is ", false),
            ("the token is valid for one of the builds at ", false),
            ("fix the upload of ", false),
        ] {
            let text = format!("{prose}VALUE");
            assert_eq!(named_before(&text, prose.len()), named, "{prose:?}");
        }
    }

    #[test]
    fn a_token_stands_apart_or_not() {
        let value = "Q8vN2xLr5TzHk3Wm9Yp1Cd7Fs4Gx";
        for (prose, alone) in [
            ("the key {V} breaks", true),
            ("the key: \"{V}\".", true),
            ("key={V}", true),
            ("(`{V}`)", true),
            ("see docs.example.com/{V}", false),
            ("com.acme.{V}.run", false),
            ("{V}.py", false),
            ("{V}(x)", false),
            ("user@{V}", false),
            ("SHA256:{V}", false),
            ("h1:{V}", false),
            ("data:image/png;base64,{V}", false),
            ("ssh-ed25519 {V} me@host", false),
            ("https://host/cb?state={V}", false),
            ("-----BEGIN CERTIFICATE-----\n{V}\n", false),
            (
                "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n{V}",
                true,
            ),
        ] {
            let text = prose.replace("{V}", value);
            let start = text.find(value).unwrap();
            assert_eq!(
                stands_alone(&text, start..start + value.len(), true),
                alone,
                "{prose}"
            );
        }
        let url = format!("https://host/cb?access_token={value}&x=1");
        let start = url.find(value).unwrap();
        assert!(stands_alone(&url, start..start + value.len(), true));
        assert!(!stands_alone(&url, start..start + value.len(), false));
    }

    #[test]
    fn bare_passwords_are_not_arguments() {
        for password in [
            ["Tr0ub4", "dor&3x"].concat(),
            ["Summer", "2024!q"].concat(),
            ["Tr0ub4", "dor3xQ"].concat(),
        ] {
            assert!(plausible_bare_password(&password), "{password}");
        }
        for argument in [
            "np.float64",
            "self.config_2",
            "dtype=float32",
            "parameter1",
            "Python311",
            "john.doe2@corp.com",
            "0x7fff5fbff8c8",
            "2024-01-01T00:00:00Z",
            "Ctrl+Shift+F12",
            "src/app/main2.ts",
            "--workers=4",
            "kwargs['x2y']",
            "password123",
            "hunter2",
        ] {
            assert!(!plausible_bare_password(argument), "{argument}");
        }
    }

    /// The three forms a verification found leaking, each with 200
    /// generated values: at most a few random values per cent are too
    /// regular to tell from a name, and stay.
    #[test]
    fn secrets_pasted_without_a_name_the_rules_know_are_redacted() {
        let redact = crate::guard::redact_secrets;
        let mut fakes = Fakes::seeded(41);
        let (mut key, mut access_key, mut pass, mut long_pass) = (0, 0, 0, 0);
        for _ in 0..200 {
            let aws = fakes.string(BASE64, 40);
            let password = [
                fakes.string(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 4),
                fakes.string(b"0123456789", 2),
                fakes.string(b"!#%&*?", 1),
                fakes.string(BASE62, 5),
            ]
            .concat();
            let token = fakes.string(BASE62, 32);
            for (text, value, count) in [
                (format!("here is the key: {aws}"), &aws, &mut key),
                (
                    format!("the aws secret access key {aws} breaks the upload"),
                    &aws,
                    &mut access_key,
                ),
                (
                    format!("pass {password} to the login function"),
                    &password,
                    &mut pass,
                ),
                (
                    format!("pass {token} to the login function"),
                    &token,
                    &mut long_pass,
                ),
            ] {
                let redacted = redact(&text).unwrap_or_default();
                if !redacted.is_empty() && !redacted.contains(value.as_str()) {
                    *count += 1;
                }
            }
        }
        assert!(key >= 196, "key: {key}/200");
        assert!(access_key >= 196, "access key: {access_key}/200");
        assert_eq!(pass, 200, "pass: {pass}/200");
        assert!(long_pass >= 194, "pass (32): {long_pass}/200");
        // One of each, exactly.
        let aws = ["q8Vn2+Lr5Tz", "/Hk3Wm9Yp1Cd", "7Fs4Gx6Jb0Nv", "aE2uR"].concat();
        assert_eq!(
            redact(&format!("here is the key: {aws}")).as_deref(),
            Some("here is the key: [REDACTED prose-secret-nearby #1]")
        );
        assert_eq!(
            redact(&format!(
                "the aws secret access key {aws} breaks the upload"
            ))
            .as_deref(),
            Some("the aws secret access key [REDACTED prose-secret-nearby #1] breaks the upload")
        );
        assert_eq!(
            redact(&format!("the upload fails: {aws}")).as_deref(),
            Some("the upload fails: [REDACTED random-token #1]")
        );
        let password = ["Tr0ub4", "dor&3x"].concat();
        assert_eq!(
            redact(&format!("pass {password} to the login function")).as_deref(),
            Some("pass [REDACTED prose-secret #1] to the login function")
        );
    }

    /// What issue reports and tracebacks hold, with a secret's name nearby:
    /// none of it is redacted.
    #[test]
    fn issue_text_with_ids_hashes_and_names_is_left_alone() {
        let mut fakes = Fakes::seeded(5);
        let hex40 = fakes.string(b"0123456789abcdef", 40);
        let hex64 = fakes.string(b"0123456789abcdef", 64);
        let text = base64(b"hello world, this is only a test");
        let aws_example = ["wJalrXUtnFEMI/K7MDENG/", "bPxRfiCY", "EXAMPLEKEY"].concat();
        for intent in [
            format!("the cache key {hex40} is wrong after the rebase"),
            format!("the key {hex64} does not match, fix the regression from commit {hex40}"),
            "the api key id 123e4567-e89b-12d3-a456-426614174000 is rejected".to_owned(),
            "token refresh fails in /home/dev/project2/src/auth/TokenStore2Refresh.ts:42".to_owned(),
            "key rotation: https://github.com/Acme/app2/blob/main/docs/KeyRotationGuide2024Final.md"
                .to_owned(),
            "the token comes from settings.Auth0ClientSecretKey2.get".to_owned(),
            "the key getUserAccessTokenFromCache2 is missing from the map".to_owned(),
            "pass max_retries_per_host2 to the client".to_owned(),
            "the secret parser broke in 2.31.0-beta.4+build.20240101".to_owned(),
            format!("the secret decodes to text: {text}"),
            "pass Ctrl+Shift+P to open the palette, key binding Ctrl+Alt+Shift+F12".to_owned(),
            "the cache key vite-deps-react-dom-client-2024 changed".to_owned(),
            "the key user:1234:profile:v2 is evicted".to_owned(),
            "here is the key: <your-key>".to_owned(),
            "the token xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx fails".to_owned(),
            format!("the secret key {aws_example} from the docs works"),
            "KeyError: 'TestGetUserByIdReturns404WhenUserDoesNotExist'".to_owned(),
            "File \"/Users/me/code/marvin-python/venv/lib/python3.9/site-packages/astroid/nodes2.py\", line 4"
                .to_owned(),
        ] {
            assert_eq!(crate::guard::redact_secrets(&intent), None, "{intent}");
        }
    }
}
