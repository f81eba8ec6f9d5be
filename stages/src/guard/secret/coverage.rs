//! The coverage test of the secret rules: every rule's positive and negative
//! samples (templates in the rule files, expanded here into generated fakes)
//! run through the whole guard in code, config and env syntax.
//!
//! A template is text with generated parts: `{an:32}` is 32 letters and
//! digits, and the other classes are `AN` (upper-case letters and digits),
//! `ln` (lower-case letters and digits), `h`/`H` (hex), `d` (digits), `a`/`A`/`al`
//! (letters), `b64` (base64), `url` (base64url) and `b32` (bech32, upper-case);
//! `{basic:user}` is the base64 of `user:` and a generated password. The part in
//! `[[…]]` is the secret that must be gone after redaction (the whole sample
//! when there is none). Generation is seeded by the rule id, so every run sees
//! the same fakes, and no real-looking key is ever committed as a literal.
//!
//! A rule without `sample_path` has its samples assigned to `sample_name` in
//! three files: TypeScript (`export const NAME = "…";`), YAML (`name: "…"`) and
//! an env file (`NAME=…`); a multi-line sample becomes a template literal, a
//! block scalar and a quoted value with `\n` escapes. A rule with `sample_path`
//! has whole-file samples tested at that path. A rule for pasted text only
//! (`pasted = true`) has its samples redacted as an intent is, by
//! [`redact_secrets`].

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::patterns::{Check, RULE_FILES, RuleSpec, parse};
use crate::config::AicConfig;
use crate::guard::{ContextGuard, GuardFindingType, redact_secrets};
use crate::language::Language;
use crate::relative_path::RelativePath;

/// The rule kinds of the reference scanner, gitleaks (names only).
const REFERENCE_KINDS: &str = include_str!("../../../tests/fixtures/guard/reference_kinds.txt");

/// A deterministic generator (SplitMix64), so no random-looking value is
/// committed as a literal; the guard's other tests use it too.
pub(super) struct Fakes(u64);

impl Fakes {
    /// A generator seeded by a text (a rule id).
    pub(super) fn new(seed: &str) -> Self {
        let mut hash = 0xcbf2_9ce4_8422_2325_u64;
        for byte in seed.bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        Self(hash)
    }

    /// A generator seeded by a number.
    pub(super) fn seeded(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `length` characters drawn from `alphabet`.
    pub(super) fn string(&mut self, alphabet: &[u8], length: usize) -> String {
        (0..length)
            .map(|_| {
                let index = usize::try_from(self.next() % alphabet.len() as u64).unwrap();
                char::from(alphabet[index])
            })
            .collect()
    }
}

fn alphabet(class: &str) -> &'static [u8] {
    match class {
        "an" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        "AN" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        "ln" => b"abcdefghijklmnopqrstuvwxyz0123456789",
        "h" => b"0123456789abcdef",
        "H" => b"0123456789ABCDEF",
        "d" => b"0123456789",
        "a" => b"abcdefghijklmnopqrstuvwxyz",
        "A" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "al" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        "b64" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        "url" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
        "b32" => b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
        other => panic!("unknown template class `{other}`"),
    }
}

/// Standard base64 with padding.
pub(super) fn base64(bytes: &[u8]) -> String {
    const DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(DIGITS[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Expands a template into the sample text and its secret parts.
pub(super) fn expand(template: &str, fakes: &mut Fakes) -> (String, Vec<String>) {
    let mut text = String::new();
    let mut secrets = Vec::new();
    let mut secret_start = None;
    let mut rest = template;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("[[") {
            secret_start = Some(text.len());
            rest = after;
        } else if let Some(after) = rest.strip_prefix("]]") {
            let start = secret_start.take().expect("`]]` closes a `[[`");
            secrets.push(text[start..].to_owned());
            rest = after;
        } else if rest.starts_with('{')
            && rest[1..].find('}').is_some_and(|end| {
                let inner = &rest[1..=end];
                inner.contains(':') && !inner.contains(' ') && !inner.contains('"')
            })
        {
            let end = rest.find('}').unwrap();
            let (class, argument) = rest[1..end].split_once(':').unwrap();
            if class == "basic" {
                let password = fakes.string(alphabet("an"), 14);
                text.push_str(&base64(format!("{argument}:{password}").as_bytes()));
            } else {
                text.push_str(&fakes.string(alphabet(class), argument.parse().unwrap()));
            }
            rest = &rest[end + 1..];
        } else {
            let c = rest.chars().next().unwrap();
            text.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if secrets.is_empty() {
        secrets.push(text.clone());
    }
    (text, secrets)
}

/// The files a sample is tested in: (syntax, path, content).
fn embeddings(spec: &RuleSpec, sample: &str) -> Vec<(&'static str, String, String)> {
    if spec.pasted {
        return vec![("intent", "intent.txt".to_owned(), sample.to_owned())];
    }
    if let Some(path) = &spec.sample_path {
        return vec![("file", path.clone(), sample.to_owned())];
    }
    let name = spec.sample_name.clone().unwrap_or_else(|| {
        if spec.check == Check::Keyed {
            format!("{}_key", spec.keywords[0].replace(['-', '.'], "_"))
        } else {
            "x1".to_owned()
        }
    });
    let upper = name.to_ascii_uppercase().replace(['-', '.'], "_");
    let lower = name.to_ascii_lowercase();
    if sample.contains('\n') {
        let indented = sample.lines().fold(String::new(), |mut out, line| {
            writeln!(out, "  {line}").unwrap();
            out
        });
        vec![
            (
                "ts",
                "src/config.ts".to_owned(),
                format!("export const {upper} = `{sample}`;\n"),
            ),
            (
                "yaml",
                "config/app.yaml".to_owned(),
                format!("{lower}: |\n{indented}"),
            ),
            (
                "env",
                "config/app.conf".to_owned(),
                format!("{upper}=\"{}\"\n", sample.replace('\n', "\\n")),
            ),
        ]
    } else {
        vec![
            (
                "ts",
                "src/config.ts".to_owned(),
                format!("export const {upper} = \"{sample}\";\n"),
            ),
            (
                "yaml",
                "config/app.yaml".to_owned(),
                format!("{lower}: \"{sample}\"\n"),
            ),
            (
                "env",
                "config/app.conf".to_owned(),
                format!("{upper}={sample}\n"),
            ),
        ]
    }
}

/// What the guard made of one embedded sample: whether it blocked the file,
/// the text after redaction, and the ids of the secret rules that fired.
pub(super) fn judge(guard: &ContextGuard, spec: &RuleSpec, path: &str, content: &str) -> Judged {
    if spec.pasted {
        let redacted = redact_secrets(content);
        let ids = redacted
            .as_deref()
            .unwrap_or_default()
            .split("[REDACTED ")
            .skip(1)
            .filter_map(|rest| rest.split(" #").next())
            .map(ToOwned::to_owned)
            .collect();
        return Judged {
            blocked: false,
            text: redacted.unwrap_or_else(|| content.to_owned()),
            ids,
        };
    }
    let path = RelativePath::new(path).unwrap();
    let outcome = guard.scan_file(&path, Language::detect(&path), content);
    Judged {
        blocked: outcome.blocked,
        text: outcome.redacted.unwrap_or_else(|| content.to_owned()),
        ids: outcome
            .findings
            .iter()
            .filter(|f| f.finding_type == GuardFindingType::Secret)
            .filter_map(|f| f.pattern.clone())
            .collect(),
    }
}

/// See [`judge`].
pub(super) struct Judged {
    pub(super) blocked: bool,
    pub(super) text: String,
    pub(super) ids: Vec<String>,
}

#[test]
fn every_rule_redacts_its_positives_and_spares_its_negatives() {
    let guard = ContextGuard::new(&AicConfig::default().guard).unwrap();
    let specs = parse(RULE_FILES).unwrap();
    let mut failures = Vec::new();
    let (mut positives, mut positives_passed) = (0, 0);
    let (mut negatives, mut negatives_passed) = (0, 0);
    let mut own_id = 0;
    let mut covered: BTreeSet<String> = BTreeSet::new();
    for (_, spec) in &specs {
        if spec.positive.is_empty() || spec.negative.is_empty() {
            failures.push(format!("{}: needs positive and negative samples", spec.id));
        }
        let mut fakes = Fakes::new(&spec.id);
        let mut all_passed = true;
        for (number, template) in spec.positive.iter().enumerate() {
            let (sample, secrets) = expand(template, &mut fakes);
            for (syntax, path, content) in embeddings(spec, &sample) {
                positives += 1;
                let judged = judge(&guard, spec, &path, &content);
                let leaked = secrets
                    .iter()
                    .any(|secret| judged.text.contains(secret.as_str()));
                if judged.blocked || leaked {
                    all_passed = false;
                    failures.push(format!(
                        "{} positive #{number} in {syntax}: not redacted (blocked: {}, found by {:?})",
                        spec.id, judged.blocked, judged.ids
                    ));
                } else {
                    positives_passed += 1;
                    if judged.ids.contains(&spec.id) {
                        own_id += 1;
                    }
                }
            }
        }
        for (number, template) in spec.negative.iter().enumerate() {
            let (sample, _) = expand(template, &mut fakes);
            for (syntax, path, content) in embeddings(spec, &sample) {
                negatives += 1;
                let found = judge(&guard, spec, &path, &content).ids;
                if found.is_empty() {
                    negatives_passed += 1;
                } else {
                    failures.push(format!(
                        "{} negative #{number} in {syntax}: found by {found:?}",
                        spec.id
                    ));
                }
            }
        }
        if all_passed && !spec.positive.is_empty() {
            if spec.covers.is_empty() {
                covered.insert(spec.id.clone());
            }
            covered.extend(spec.covers.iter().cloned());
        }
    }
    let reference: BTreeSet<&str> = REFERENCE_KINDS.lines().filter(|l| !l.is_empty()).collect();
    let covered_reference: Vec<&str> = reference
        .iter()
        .copied()
        .filter(|kind| covered.contains(*kind))
        .collect();
    let missing: Vec<&str> = reference
        .iter()
        .copied()
        .filter(|kind| !covered.contains(*kind))
        .collect();
    let mut report = String::new();
    writeln!(report, "rules: {}", specs.len()).unwrap();
    writeln!(
        report,
        "positive samples redacted: {positives_passed}/{positives}"
    )
    .unwrap();
    writeln!(report, "  of which by the rule's own id: {own_id}").unwrap();
    writeln!(
        report,
        "negative samples left alone: {negatives_passed}/{negatives}"
    )
    .unwrap();
    writeln!(
        report,
        "reference kinds covered: {}/{}",
        covered_reference.len(),
        reference.len()
    )
    .unwrap();
    writeln!(report, "reference kinds not covered: {}", missing.join(" ")).unwrap();
    insta::assert_snapshot!("secret_rule_coverage", report);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn templates_expand_deterministically() {
    let (first, secrets) = expand("key=[[{h:8}]] {basic:ci}", &mut Fakes::new("a"));
    let (second, _) = expand("key=[[{h:8}]] {basic:ci}", &mut Fakes::new("a"));
    assert_eq!(first, second);
    assert_eq!(secrets.len(), 1);
    assert_eq!(secrets[0].len(), 8);
    assert!(secrets[0].bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(base64(b"hi"), "aGk=");
}
