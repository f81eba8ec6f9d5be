//! The generated corpus: every secret rule's positive samples written in the
//! syntaxes people write secrets in, as gitleaks' rule generator does for its
//! own rules, and its negative samples in the same syntaxes.
//!
//! A sample is made from the rule's own templates (generated values of the
//! rule's alphabet and length, with its prefix; see the `coverage` module),
//! seeded by the rule id, so every run sees the same fakes. Each single-line
//! sample is assigned to a name made from the rule (`{i}Token`, `{I}_TOKEN`)
//! in each syntax of [`SYNTAXES`] (gitleaks' 27, then TOML, HCL,
//! `.properties`, Dockerfile `ENV`, GitHub Actions `env:` and shell `export`); a sample that carries its own identity (a
//! rule keyword in the value, matched in its own case) is also written under
//! neutral names and with no name at all ([`ANYWHERE`]). The test prints the
//! redaction rate per syntax and per kind, and fails when any positive
//! reaches the output whole or any negative is touched. Messages show a
//! masked sample only, never a whole value.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::coverage::{Fakes, expand, judge};
use super::patterns::{Check, RULE_FILES, RuleSpec, parse};
use crate::config::AicConfig;
use crate::guard::ContextGuard;

/// The assignment syntaxes: (name, path, template). `{i}` is the rule's
/// identifier in lower case, `{I}` in upper case, `{s}` the sample.
const SYNTAXES: &[(&str, &str, &str)] = &[
    ("ini-quoted", "config/app.ini", "{i}Token=\"{s}\"\n"),
    (
        "ini-quoted-spaced",
        "config/app.ini",
        "{i}Token = \"{s}\"\n",
    ),
    ("ini-unquoted", "config/app.ini", "{i}Token={s}\n"),
    ("ini-unquoted-spaced", "config/app.ini", "{i}Token = {s}\n"),
    (
        "json-string",
        "config/app.json",
        "{\n    \"{i}_token\": \"{s}\"\n}\n",
    ),
    (
        "json-embedded-ini",
        "config/app.json",
        "{\"config.ini\": \"{I}_TOKEN={s}\\nBACKUP_ENABLED=true\"}\n",
    ),
    (
        "xml-element-multiline",
        "config/app.xml",
        "<{i}Token>\n    {s}\n</{i}Token>\n",
    ),
    ("yaml-plain", "config/app.yaml", "{i}_token: {s}\n"),
    (
        "yaml-single-quoted",
        "config/app.yaml",
        "{i}_token: '{s}'\n",
    ),
    (
        "yaml-double-quoted",
        "config/app.yaml",
        "{i}_token: \"{s}\"\n",
    ),
    ("csharp", "src/Settings.cs", "string {i}Token = \"{s}\";\n"),
    ("go-var", "config.go", "var {i}Token string = \"{s}\"\n"),
    ("go-short", "config.go", "{i}Token := \"{s}\"\n"),
    ("go-backticks", "config.go", "{i}Token := `{s}`\n"),
    ("java", "src/Settings.java", "String {i}Token = \"{s}\";\n"),
    ("kotlin", "src/Settings.kt", "var {i}Token = \"{s}\"\n"),
    ("php-concat", "config.php", "${i}Token .= \"{s}\"\n"),
    ("python-single-quoted", "settings.py", "{i}Token = '{s}'\n"),
    (
        "python-double-quoted",
        "settings.py",
        "{i}Token = \"{s}\"\n",
    ),
    (
        "comma-operator",
        "src/Main.java",
        "System.setProperty(\"{I}_TOKEN\", \"{s}\")\n",
    ),
    (
        "logstash",
        "pipeline/main.conf",
        "  \"{i}Token\" => \"{s}\"\n",
    ),
    ("make-recursive", "Makefile", "{i}_TOKEN = \"{s}\"\n"),
    ("make-simple", "Makefile", "{i}_TOKEN := \"{s}\"\n"),
    ("make-posix-simple", "Makefile", "{i}_TOKEN ::= \"{s}\"\n"),
    ("make-immediate", "Makefile", "{i}_TOKEN :::= \"{s}\"\n"),
    ("make-conditional", "Makefile", "{i}_TOKEN ?= \"{s}\"\n"),
    ("make-shell", "Makefile", "{i}_TOKEN != \"{s}\"\n"),
    // Beyond gitleaks' generator: the configuration formats the reader knows.
    (
        "toml",
        "config/app.toml",
        "[service]\n{i}_token = \"{s}\"\n",
    ),
    (
        "hcl",
        "infra/main.tf",
        "provider \"x\" {\n  {i}_token = \"{s}\"\n}\n",
    ),
    (
        "properties",
        "src/main/resources/app.properties",
        "{i}.token={s}\n",
    ),
    (
        "properties-colon",
        "src/main/resources/app.properties",
        "{i}.token: {s}\n",
    ),
    (
        "dockerfile-env",
        "Dockerfile",
        "FROM alpine\nENV {I}_TOKEN {s}\n",
    ),
    (
        "dockerfile-env-equals",
        "Dockerfile",
        "FROM alpine\nENV {I}_TOKEN={s}\n",
    ),
    (
        "github-actions-env",
        ".github/workflows/ci.yml",
        "jobs:\n  build:\n    env:\n      {I}_TOKEN: {s}\n",
    ),
    (
        "shell-export",
        "scripts/deploy.sh",
        "export {I}_TOKEN=\"{s}\"\n",
    ),
];

/// The forms a self-identifying sample is written in besides [`SYNTAXES`]:
/// a neutral name, a comment, a log line, a list, a URL's query. `{s}` is the
/// sample.
const ANYWHERE: &[(&str, &str, &str)] = &[
    (
        "neutral-name",
        "src/config.ts",
        "export const X1 = \"{s}\";\n",
    ),
    (
        "comment",
        "scripts/deploy.sh",
        "# the old one was {s} (rotated)\n",
    ),
    (
        "log-line",
        "logs/app.log",
        "2024-05-01T10:00:00Z INFO client started with {s} for uploads\n",
    ),
    (
        "list",
        "data/items.json",
        "[\"alpha\", \"{s}\", \"beta\"]\n",
    ),
    (
        "url-query",
        "docs/usage.md",
        "See <https://api.example.net/v1/items?page=2&access={s}&sort=asc>.\n",
    ),
];

/// The identifier a rule's samples are assigned to: its first keyword made a
/// name, for a keyed rule (the name must hold it); else the first word of its
/// id (`sendgrid` for `sendgrid-api-key`).
fn identifier(spec: &RuleSpec) -> String {
    let raw = if spec.check == Check::Keyed || spec.any_case {
        spec.sample_name
            .clone()
            .unwrap_or_else(|| spec.keywords[0].clone())
    } else {
        spec.id.split('-').next().unwrap_or("x").to_owned()
    };
    let name: String = raw
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let name = name.trim_matches('_').to_ascii_lowercase();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("k{name}")
    } else {
        name
    }
}

/// Whether a sample carries its own identity: the rule needs no name
/// (it is not keyed) and the sample holds one of its keywords (in the
/// keyword's own case unless the rule ignores case).
fn self_identifying(spec: &RuleSpec, sample: &str) -> bool {
    let lower = sample.to_ascii_lowercase();
    spec.check != Check::Keyed
        && spec.keywords.iter().any(|keyword| {
            if spec.any_case {
                lower.contains(&keyword.to_ascii_lowercase())
            } else {
                sample.contains(keyword.as_str())
            }
        })
}

/// A sample's first characters and its length, for messages.
fn masked(secret: &str) -> String {
    let shown: String = secret.chars().take(4).collect();
    format!("{shown}… ({} chars)", secret.chars().count())
}

/// Passed and total counts.
#[derive(Default)]
struct Rate {
    passed: usize,
    total: usize,
}

impl Rate {
    fn add(&mut self, passed: bool) {
        self.total += 1;
        self.passed += usize::from(passed);
    }

    fn percent(&self) -> f64 {
        if self.total == 0 {
            100.0
        } else {
            100.0 * self.passed as f64 / self.total as f64
        }
    }
}

/// The rules the corpus covers: those of files, with single-line samples
/// (whole-file and pasted-text rules have their own samples in the coverage
/// test).
fn corpus_rules() -> Vec<RuleSpec> {
    parse(RULE_FILES)
        .unwrap()
        .into_iter()
        .map(|(_, spec)| spec)
        .filter(|spec| !spec.pasted && spec.sample_path.is_none())
        .collect()
}

#[test]
#[expect(
    clippy::print_stderr,
    reason = "the corpus prints its rates for `cargo test -- --nocapture`"
)]
fn every_rule_is_redacted_in_every_syntax() {
    let guard = ContextGuard::new(&AicConfig::default().guard).unwrap();
    let mut by_syntax: BTreeMap<&str, Rate> = BTreeMap::new();
    let mut by_kind: BTreeMap<String, Rate> = BTreeMap::new();
    let mut negatives = Rate::default();
    let mut failures = Vec::new();
    for spec in corpus_rules() {
        let mut fakes = Fakes::new(&format!("corpus:{}", spec.id));
        let id = identifier(&spec);
        let upper = id.to_ascii_uppercase();
        for template in &spec.positive {
            let (sample, secrets) = expand(template, &mut fakes);
            if sample.contains('\n') {
                continue;
            }
            let mut forms: Vec<&(&str, &str, &str)> = SYNTAXES.iter().collect();
            if self_identifying(&spec, &sample) {
                forms.extend(ANYWHERE);
            }
            for (syntax, path, form) in forms {
                let content = form
                    .replace("{i}", &id)
                    .replace("{I}", &upper)
                    .replace("{s}", &sample);
                let judged = judge(&guard, &spec, path, &content);
                let leaked = secrets
                    .iter()
                    .find(|secret| judged.text.contains(secret.as_str()));
                let passed = !judged.blocked && leaked.is_none();
                by_syntax.entry(syntax).or_default().add(passed);
                by_kind.entry(spec.id.clone()).or_default().add(passed);
                if !passed {
                    failures.push(format!(
                        "{} in {syntax}: {} left whole (found by {:?})",
                        spec.id,
                        masked(leaked.map_or(sample.as_str(), String::as_str)),
                        judged.ids
                    ));
                }
            }
        }
        for template in &spec.negative {
            let (sample, _) = expand(template, &mut fakes);
            if sample.contains('\n') {
                continue;
            }
            for (syntax, path, form) in SYNTAXES {
                let content = form
                    .replace("{i}", &id)
                    .replace("{I}", &upper)
                    .replace("{s}", &sample);
                // As gitleaks' generator does, a negative is the rule's own:
                // another rule may rightly find a random value under a
                // secret's name.
                let found = judge(&guard, &spec, path, &content).ids;
                let own = found.contains(&spec.id);
                negatives.add(!own);
                if own {
                    failures.push(format!(
                        "{} negative in {syntax}: {} found by {found:?}",
                        spec.id,
                        masked(&sample)
                    ));
                }
            }
        }
    }
    let mut report = String::new();
    let total = by_kind.values().fold(Rate::default(), |mut all, rate| {
        all.passed += rate.passed;
        all.total += rate.total;
        all
    });
    writeln!(
        report,
        "positives redacted: {}/{} ({:.1} %), {} kinds; negatives not found by their rule: {}/{}",
        total.passed,
        total.total,
        total.percent(),
        by_kind.len(),
        negatives.passed,
        negatives.total
    )
    .unwrap();
    writeln!(report, "by syntax:").unwrap();
    for (syntax, rate) in &by_syntax {
        writeln!(
            report,
            "  {syntax:<24} {:>5.1} % ({}/{})",
            rate.percent(),
            rate.passed,
            rate.total
        )
        .unwrap();
    }
    let full = by_kind
        .values()
        .filter(|rate| rate.passed == rate.total)
        .count();
    writeln!(report, "by kind: {full}/{} at 100 %", by_kind.len()).unwrap();
    for (kind, rate) in &by_kind {
        writeln!(
            report,
            "  {kind:<36} {:>5.1} % ({}/{})",
            rate.percent(),
            rate.passed,
            rate.total
        )
        .unwrap();
    }
    eprintln!("{report}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
