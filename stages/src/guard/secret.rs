//! Credentials in file content: cloud keys, tokens and private keys.

use std::collections::BTreeSet;

use aho_corasick::AhoCorasick;
use regex::Regex;

use crate::guard::{GuardFinding, GuardFindingType, GuardScanner, GuardSeverity, LineIndex};
use crate::repo_map::{Language, RelativePath};

/// One secret pattern: its id, the finding message, the literal keywords that any
/// match must contain (the prefilter) and the regex run on candidate lines.
struct SecretPattern {
    id: &'static str,
    message: &'static str,
    keywords: &'static [&'static str],
    regex: &'static str,
    check: Check,
}

/// The extra test a regex match must pass before it is reported.
#[derive(Clone, Copy)]
enum Check {
    /// The regex is enough.
    None,
    /// [`plausible_api_key`].
    GenericApiKey,
    /// [`plausible_private_key`].
    PrivateKey,
}

/// The seed's six secret patterns (§8.4 "Secret patterns"), tightened as described
/// on [`SecretScanner`].
const SECRET_PATTERNS: &[SecretPattern] = &[
    SecretPattern {
        id: "aws-access-key",
        message: "Possible AWS access key",
        keywords: &["AKIA"],
        regex: r"\bAKIA[0-9A-Z]{16}\b",
        check: Check::None,
    },
    SecretPattern {
        id: "github-token",
        message: "Possible GitHub token",
        keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        regex: r"\bgh[pousr]_[A-Za-z0-9]{36,}",
        check: Check::None,
    },
    SecretPattern {
        id: "stripe-secret-key",
        message: "Possible Stripe secret key",
        keywords: &["sk_live_", "sk_test_"],
        regex: r"\bsk_(?:live|test)_[0-9a-zA-Z]{24,}",
        check: Check::None,
    },
    SecretPattern {
        id: "generic-api-key",
        message: "Possible API key assignment",
        keywords: &["api_key", "apikey", "api-key"],
        regex: r#"(?i)api[_-]?key["'`]?\s*(?::=|=>|[:=])\s*(?P<quote>["'`]?)(?P<value>[A-Za-z0-9_\-]{20,})"#,
        check: Check::GenericApiKey,
    },
    SecretPattern {
        id: "jwt",
        message: "Possible JSON Web Token",
        keywords: &["eyJ"],
        regex: r"eyJ[A-Za-z0-9\-_=]+\.eyJ[A-Za-z0-9\-_=]+\.[A-Za-z0-9\-_.+/=]+",
        check: Check::None,
    },
    SecretPattern {
        id: "private-key",
        message: "Possible private key",
        keywords: &["PRIVATE KEY"],
        regex: r"-----BEGIN (?:(?:RSA|EC|OPENSSH|DSA|ENCRYPTED) ?)?PRIVATE KEY-----",
        check: Check::PrivateKey,
    },
];

/// Lower-case fragments that mark a generic API key value as a placeholder.
const PLACEHOLDER_FRAGMENTS: &[&str] = &[
    "xxxx",
    "****",
    "your",
    "placeholder",
    "changeme",
    "change_me",
    "replace_me",
    "example",
];

/// Blocks files whose content holds a credential.
///
/// ## What it does
///
/// Reports one [`GuardFindingType::Secret`] finding with [`GuardSeverity::Block`] per
/// line and pattern that matches one of the seed's secret patterns:
///
/// | Id | Matches |
/// | --- | --- |
/// | `aws-access-key` | AWS access key id, `AKIA` + 16 upper-case letters or digits |
/// | `github-token` | GitHub token, `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` + 36 or more characters |
/// | `stripe-secret-key` | Stripe secret key, `sk_live_`/`sk_test_` + 24 or more characters |
/// | `generic-api-key` | A value of 20 or more characters assigned to `api_key`, `apiKey` or `api-key` |
/// | `jwt` | A JSON Web Token, `eyJ….eyJ….…` |
/// | `private-key` | A PEM private key header, `-----BEGIN … PRIVATE KEY-----` |
///
/// The finding carries the pattern id and the one-based line, never the matched text.
///
/// An Aho-Corasick automaton over each pattern's literal keywords (ASCII
/// case-insensitive) finds the candidate lines in one pass; only those lines are run
/// through the pattern's regex, so files without a keyword cost one scan.
///
/// ## Why
///
/// A credential that reaches a prompt leaves the machine: it is sent to a model
/// provider and may be echoed back into code, logs or commits.
///
/// ## Example
///
/// ```text
/// # settings.yaml: blocked, finding `generic-api-key` on line 2
/// service:
///   api_key: 0123456789abcdefFAKE4567
/// ```
///
/// Use instead: read the key from the environment or a secret manager, and commit a
/// placeholder (`api_key: ${API_KEY}`).
///
/// ## Known problems
///
/// To keep ordinary code from being blocked, `generic-api-key` is tighter than the
/// seed's regex:
///
/// - The key name may be followed by a closing quote (`"apiKey": "…"`) and the
///   assignment may be `:`, `=`, `:=` or `=>`.
/// - An unquoted value must contain both a letter and a digit and must not continue
///   as an expression (`(`, `.`, `[`, `{`). In code files other than shell scripts an
///   unquoted value is an identifier, never a literal, so it is not reported
///   (`api_key = get_api_key_from_env()`, `apiKey: process.env.API_KEY`).
/// - A quoted value must end at its closing quote or a token character (not at `$`,
///   `{`, `<`, `%` or a space, which start interpolation or prose), and a quoted
///   value without digits that is made of `_`/`-`-separated words is a name
///   (`"OPENAI_API_KEY_FOR_PRODUCTION"`).
/// - Placeholders are not secrets: one repeated character, or a value containing
///   `xxxx`, `****`, `your`, `placeholder`, `changeme`, `replace_me` or `example`.
///   `<…>` and `${…}` never match the value's character class.
///
/// A `private-key` header in a code file that ends a string literal on the same line
/// (`"-----BEGIN RSA PRIVATE KEY-----"`) is a constant of a PEM parser, not a key,
/// and is not reported. Only the seed's six patterns are shipped: temporary AWS keys
/// (`ASIA…`), fine-grained GitHub tokens (`github_pat_…`), restricted Stripe keys
/// and PGP private key blocks are not detected.
pub struct SecretScanner {
    prefilter: AhoCorasick,
    /// For each prefilter keyword, the index of its pattern in [`SECRET_PATTERNS`].
    keyword_owners: Vec<usize>,
    /// The compiled regex of each pattern, in [`SECRET_PATTERNS`] order.
    regexes: Vec<Regex>,
}

impl SecretScanner {
    /// Compiles the prefilter and the patterns.
    ///
    /// # Panics
    ///
    /// Never in practice: the keywords and patterns are constants, compiled by the
    /// unit tests.
    pub fn new() -> Self {
        let (keywords, keyword_owners): (Vec<&str>, Vec<usize>) = SECRET_PATTERNS
            .iter()
            .enumerate()
            .flat_map(|(index, pattern)| {
                pattern
                    .keywords
                    .iter()
                    .map(move |keyword| (*keyword, index))
            })
            .unzip();
        let prefilter = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(keywords)
            .expect("the secret keywords are a small constant set");
        let regexes = SECRET_PATTERNS
            .iter()
            .map(|pattern| {
                Regex::new(pattern.regex).expect("the secret patterns are valid regexes")
            })
            .collect();
        Self {
            prefilter,
            keyword_owners,
            regexes,
        }
    }

    /// Whether `line` holds a match of pattern `index` that passes the pattern's check.
    fn line_matches(&self, index: usize, line: &str, language: Language) -> bool {
        let (Some(pattern), Some(regex)) = (SECRET_PATTERNS.get(index), self.regexes.get(index))
        else {
            return false;
        };
        match pattern.check {
            Check::None => regex.is_match(line),
            Check::GenericApiKey => regex.captures_iter(line).any(|captures| {
                let (Some(quote), Some(value)) = (captures.name("quote"), captures.name("value"))
                else {
                    return false;
                };
                let next = line.get(value.end()..).and_then(|rest| rest.chars().next());
                plausible_api_key(value.as_str(), !quote.as_str().is_empty(), next, language)
            }),
            Check::PrivateKey => regex.find_iter(line).any(|found| {
                let next = line.get(found.end()..).and_then(|rest| rest.chars().next());
                plausible_private_key(next, language)
            }),
        }
    }
}

impl Default for SecretScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl GuardScanner for SecretScanner {
    fn name(&self) -> &'static str {
        "SecretScanner"
    }

    fn scan(&self, path: &RelativePath, language: Language, content: &str) -> Vec<GuardFinding> {
        let mut keyword_hits = self.prefilter.find_overlapping_iter(content).peekable();
        if keyword_hits.peek().is_none() {
            return Vec::new();
        }
        let lines = LineIndex::new(content);
        let candidates: BTreeSet<(u32, usize)> = keyword_hits
            .filter_map(|hit| {
                let owner = self.keyword_owners.get(hit.pattern().as_usize())?;
                Some((lines.line_number(hit.start()), *owner))
            })
            .collect();
        candidates
            .into_iter()
            .filter(|&(line, index)| self.line_matches(index, lines.line(line), language))
            .filter_map(|(line, index)| {
                let pattern = SECRET_PATTERNS.get(index)?;
                Some(GuardFinding {
                    severity: GuardSeverity::Block,
                    finding_type: GuardFindingType::Secret,
                    file: path.clone(),
                    line: Some(line),
                    message: pattern.message.to_owned(),
                    pattern: Some(pattern.id.to_owned()),
                })
            })
            .collect()
    }
}

/// Whether a value assigned to an API key name looks like a real key; `next` is the
/// character after the value (see [`SecretScanner`], "Known problems").
fn plausible_api_key(value: &str, quoted: bool, next: Option<char>, language: Language) -> bool {
    if is_placeholder(value) {
        return false;
    }
    let has_digit = value.bytes().any(|byte| byte.is_ascii_digit());
    if quoted {
        let ends_cleanly = !matches!(next, Some('$' | '{' | '<' | '%' | ' ' | '\t'));
        let looks_like_name = !has_digit && value.contains(['_', '-']);
        ends_cleanly && !looks_like_name
    } else {
        let literal_allowed = !language.is_code() || language == Language::Shell;
        let continues_as_expression = matches!(next, Some('(' | '.' | '[' | '{'));
        let has_letter = value.bytes().any(|byte| byte.is_ascii_alphabetic());
        literal_allowed && !continues_as_expression && has_letter && has_digit
    }
}

/// Whether a value is a placeholder rather than a key.
fn is_placeholder(value: &str) -> bool {
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

/// Whether a private key header is more than a string constant; `next` is the
/// character after the header.
fn plausible_private_key(next: Option<char>, language: Language) -> bool {
    !(language.is_code() && matches!(next, Some('"' | '\'' | '`')))
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    fn scan(path: &str, language: Language, content: &str) -> Vec<GuardFinding> {
        SecretScanner::new().scan(&RelativePath::new(path).unwrap(), language, content)
    }

    /// The secret a pattern matched on a line (the value, for an assignment), to
    /// check it never leaks.
    fn matched_text(id: &str, line: &str) -> String {
        let pattern = SECRET_PATTERNS
            .iter()
            .find(|pattern| pattern.id == id)
            .unwrap();
        let captures = Regex::new(pattern.regex).unwrap().captures(line).unwrap();
        captures
            .name("value")
            .or_else(|| captures.get(0))
            .unwrap()
            .as_str()
            .to_owned()
    }

    #[test_case("aws-access-key", "settings.py", Language::Python, include_str!("../../tests/fixtures/guard/python/aws_access_key.py"), 4)]
    #[test_case("github-token", "release.sh", Language::Shell, include_str!("../../tests/fixtures/guard/shell/github_token.sh"), 4)]
    #[test_case("stripe-secret-key", "billing.ts", Language::TypeScript, include_str!("../../tests/fixtures/guard/typescript/stripe_secret_key.ts"), 4)]
    #[test_case("generic-api-key", "service.yaml", Language::Yaml, include_str!("../../tests/fixtures/guard/yaml/generic_api_key.yaml"), 5)]
    #[test_case("jwt", "session.json", Language::Json, include_str!("../../tests/fixtures/guard/json/jwt.json"), 4)]
    #[test_case("private-key", "notes/deploy.txt", Language::Unknown, include_str!("../../tests/fixtures/guard/text/private_key.txt"), 3)]
    fn detects_each_secret_kind_on_its_line(
        id: &str,
        path: &str,
        language: Language,
        content: &str,
        line: u32,
    ) {
        let findings = scan(path, language, content);
        assert_eq!(findings.len(), 1, "{findings:?}");
        let finding = &findings[0];
        assert_eq!(finding.pattern.as_deref(), Some(id));
        assert_eq!(finding.line, Some(line));
        assert_eq!(finding.severity, GuardSeverity::Block);
        assert_eq!(finding.finding_type, GuardFindingType::Secret);
        assert!(finding.message.starts_with("Possible "));

        let secret = matched_text(id, content.lines().nth(line as usize - 1).unwrap());
        let debug = format!("{findings:?}");
        let json = serde_json::to_string(&findings).unwrap();
        for rendered in [&debug, &json, &finding.message] {
            assert!(!rendered.contains(&secret), "the secret leaked: {rendered}");
        }
    }

    #[test]
    fn line_numbers_count_crlf_and_repeated_hits_once() {
        let content = include_str!("../../tests/fixtures/guard/text/repeated_secrets.txt");
        let findings = scan(
            "notes.txt",
            Language::Unknown,
            &content.replace('\n', "\r\n"),
        );
        let lines: Vec<_> = findings
            .iter()
            .map(|f| (f.line, f.pattern.as_deref()))
            .collect();
        assert_eq!(
            lines,
            vec![
                (Some(3), Some("aws-access-key")),
                (Some(5), Some("github-token"))
            ]
        );
    }

    /// Tables write the key as `{KEY}` and pass the value apart, so this file holds
    /// no secret-shaped assignment and is not blocked when aic scans itself.
    #[test_case(
        "config.ts",
        Language::TypeScript,
        r#"const config = { apiKey: "{KEY}" };"#,
        "0123456789abcdefABCDEF0123"
    )]
    #[test_case(
        "config.json",
        Language::Json,
        r#"{ "api_key": "{KEY}" }"#,
        "0123456789abcdefABCDEF0123"
    )]
    #[test_case(
        "main.go",
        Language::Go,
        r#"apiKey := "{KEY}""#,
        "0123456789abcdefABCDEF0123"
    )]
    #[test_case(
        "config.rb",
        Language::Ruby,
        "{ api_key => '{KEY}' }",
        "0123456789abcdefABCDEF0123"
    )]
    #[test_case(
        ".env.example",
        Language::Unknown,
        "OPENAI_API_KEY={KEY}",
        "0123456789abcdefABCDEF0123"
    )]
    #[test_case(
        "deploy.sh",
        Language::Shell,
        "export API_KEY={KEY}",
        "0123456789abcdefABCDEF0123"
    )]
    #[test_case(
        "client.py",
        Language::Python,
        r#"API_KEY = "{KEY}""#,
        "ThisIsARealLookingKeyWithoutDigits"
    )]
    fn detects_generic_api_keys(path: &str, language: Language, template: &str, key: &str) {
        let line = template.replace("{KEY}", key);
        let findings = scan(path, language, &line);
        assert_eq!(findings.len(), 1, "{line}");
        assert_eq!(findings[0].pattern.as_deref(), Some("generic-api-key"));
    }

    #[test_case("client.py", Language::Python, "api_key = get_api_key_from_env()")]
    #[test_case("client.py", Language::Python, "api_key = settings_v2_api_key_value")]
    #[test_case("client.ts", Language::TypeScript, "apiKey: process.env.API_KEY,")]
    #[test_case(
        "client.ts",
        Language::TypeScript,
        "const apiKey = config.credentials.apiKeyForTheService;"
    )]
    #[test_case(
        "config.yaml",
        Language::Yaml,
        r#"api_key: "xxxxxxxxxxxxxxxxxxxxxxxx""#
    )]
    #[test_case("config.yaml", Language::Yaml, "api_key: your_api_key_here_0123456789")]
    #[test_case("config.yaml", Language::Yaml, "api_key: <your-api-key-goes-here-123>")]
    #[test_case(
        "config.yaml",
        Language::Yaml,
        "api_key: ${API_KEY_FROM_THE_ENVIRONMENT_1}"
    )]
    #[test_case(
        "config.yaml",
        Language::Yaml,
        r#"api_key: "${API_KEY_FROM_THE_ENVIRONMENT_1}""#
    )]
    #[test_case(
        "config.yaml",
        Language::Yaml,
        "api_key: DEFAULT_API_KEY_FROM_SETTINGS"
    )]
    #[test_case(".env", Language::Unknown, "API_KEY=aaaaaaaaaaaaaaaaaaaaaaaaaaaa")]
    #[test_case(".env", Language::Unknown, "API_KEY=0000000000000000000000000")]
    #[test_case(
        "config.py",
        Language::Python,
        r#"API_KEY_ENV = "OPENAI_API_KEY_FOR_PRODUCTION""#
    )]
    #[test_case(
        "config.py",
        Language::Python,
        r#"api_key = "OPENAI_API_KEY_FOR_PRODUCTION""#
    )]
    #[test_case(
        "client.js",
        Language::JavaScript,
        "const url = `${base}?api_key=${encodeURIComponent(apiKeyValue0123)}`;"
    )]
    #[test_case(
        "config.py",
        Language::Python,
        r#"api_key = "REPLACE_ME_WITH_A_REAL_KEY_1""#
    )]
    #[test_case(
        "docs.md",
        Language::Markdown,
        "Set `api_key` to the key from your dashboard."
    )]
    fn ignores_api_key_lookalikes(path: &str, language: Language, line: &str) {
        assert_eq!(scan(path, language, line), Vec::new(), "{line}");
    }

    #[test]
    fn private_key_header_constant_in_code_is_not_a_key() {
        let line = r#"const RSA_HEADER: &str = "-----BEGIN RSA PRIVATE KEY-----";"#;
        assert_eq!(scan("pem.rs", Language::Rust, line), Vec::new());
        let header = ["-----BEGIN ", "PRIVATE KEY-----"].concat();
        let embedded = format!(r#"KEY = "{header}\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC""#);
        assert_eq!(scan("keys.py", Language::Python, &embedded).len(), 1);
    }

    #[test_case("-----BEGIN PRIVATE KEY-----")]
    #[test_case("-----BEGIN EC PRIVATE KEY-----")]
    #[test_case("-----BEGIN OPENSSH PRIVATE KEY-----")]
    #[test_case("-----BEGIN DSA PRIVATE KEY-----")]
    #[test_case("-----BEGIN ENCRYPTED PRIVATE KEY-----")]
    fn detects_every_private_key_header(line: &str) {
        assert_eq!(scan("key.txt", Language::Unknown, line).len(), 1);
    }

    #[test_case("rust/api_key_fields.rs", Language::Rust, include_str!("../../tests/fixtures/guard/rust/api_key_fields.rs"))]
    #[test_case("typescript/template_literals.ts", Language::TypeScript, include_str!("../../tests/fixtures/guard/typescript/template_literals.ts"))]
    #[test_case("python/annotations_and_fstrings.py", Language::Python, include_str!("../../tests/fixtures/guard/python/annotations_and_fstrings.py"))]
    #[test_case("shell/pipes_and_substitutions.sh", Language::Shell, include_str!("../../tests/fixtures/guard/shell/pipes_and_substitutions.sh"))]
    #[test_case(".github/workflows/ci.yaml", Language::Yaml, include_str!("../../tests/fixtures/guard/yaml/ci_workflow.yaml"))]
    fn ordinary_files_have_no_secrets(path: &str, language: Language, content: &str) {
        assert_eq!(scan(path, language, content), Vec::new());
    }

    #[test]
    fn empty_content_has_no_secrets() {
        assert_eq!(scan("empty.txt", Language::Unknown, ""), Vec::new());
    }
}
