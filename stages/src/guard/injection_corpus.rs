//! The injection corpus (`stages/tests/fixtures/guard/injection/corpus/`):
//! attacks planted the way an attacker would plant them in a repository, and
//! benign look-alikes, in every file type aic reads, each run through the
//! whole guard. The test prints the rate per group (file type) and fails on
//! any attack that is not blocked and any benign case that is.

use std::collections::BTreeMap;

use crate::config::AicConfig;
use crate::guard::{ContextGuard, FileGuardOutcome, GuardFindingType};
use crate::language::Language;
use crate::relative_path::RelativePath;

/// The attacks.
const ATTACKS: &str = include_str!("../../tests/fixtures/guard/injection/corpus/attacks.txt");

/// The benign look-alikes.
const BENIGN: &str = include_str!("../../tests/fixtures/guard/injection/corpus/benign.txt");

/// One case of a corpus file.
struct Case {
    group: String,
    path: String,
    content: String,
}

/// The cases of a corpus file: each starts at a line `=== <group> <path>`
/// and runs to the next; `\u{XXXX}` stands for the character.
fn cases(text: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    for line in text.split_inclusive('\n') {
        if let Some(header) = line.strip_prefix("=== ") {
            let mut fields = header.split_whitespace();
            let (Some(group), Some(path)) = (fields.next(), fields.next()) else {
                panic!("a case header names a group and a path: {header}");
            };
            cases.push(Case {
                group: group.to_owned(),
                path: path.to_owned(),
                content: String::new(),
            });
        } else if let Some(case) = cases.last_mut() {
            case.content.push_str(&unescape(line));
        }
    }
    cases
}

/// `line` with each `\u{XXXX}` replaced by its character.
fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("\\u{") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 3..];
        let end = tail.find('}').expect("an escape ends with `}`");
        let code = u32::from_str_radix(&tail[..end], 16).expect("an escape is hexadecimal");
        out.push(char::from_u32(code).expect("an escape is a character"));
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The guard's verdict on a case.
fn scan(guard: &ContextGuard, case: &Case) -> FileGuardOutcome {
    let path = RelativePath::new(&case.path).expect("a case path is relative");
    guard.scan_file(&path, Language::detect(&path), &case.content)
}

/// Per group: (cases, cases that passed).
type Rates = BTreeMap<String, (usize, usize)>;

fn report(title: &str, rates: &Rates) -> String {
    let mut lines = vec![title.to_owned()];
    for (group, (total, passed)) in rates {
        lines.push(format!(
            "  {group:<12} {passed:>3} / {total:<3} ({:.1} %)",
            100.0 * *passed as f64 / *total as f64
        ));
    }
    let (total, passed) = rates
        .values()
        .fold((0, 0), |(t, p), (total, passed)| (t + total, p + passed));
    lines.push(format!("  {:<12} {passed:>3} / {total:<3}", "all"));
    lines.join("\n")
}

#[test]
#[expect(clippy::print_stdout, reason = "the test reports its rates")]
fn every_attack_is_blocked_and_no_benign_case_is() {
    let guard = ContextGuard::new(&AicConfig::default().guard).expect("the default guard");
    let mut attack_rates = Rates::new();
    let mut missed = Vec::new();
    for case in cases(ATTACKS) {
        let outcome = scan(&guard, &case);
        let injection = outcome
            .findings
            .iter()
            .any(|finding| finding.finding_type == GuardFindingType::PromptInjection);
        let caught = outcome.blocked && injection;
        let entry = attack_rates.entry(case.group.clone()).or_default();
        entry.0 += 1;
        entry.1 += usize::from(caught);
        if !caught {
            missed.push(format!("{} ({:?})", case.path, outcome.findings));
        }
    }
    let mut benign_rates = Rates::new();
    let mut blocked = Vec::new();
    let mut warned = 0;
    for case in cases(BENIGN) {
        let outcome = scan(&guard, &case);
        warned += usize::from(!outcome.findings.is_empty() && !outcome.blocked);
        let entry = benign_rates.entry(case.group.clone()).or_default();
        entry.0 += 1;
        entry.1 += usize::from(!outcome.blocked);
        if outcome.blocked {
            blocked.push(format!("{} ({:?})", case.path, outcome.findings));
        }
    }
    println!("{}", report("attacks blocked", &attack_rates));
    println!("{}", report("benign cases kept", &benign_rates));
    println!("benign cases kept with a warning: {warned}");
    assert!(
        missed.is_empty() && blocked.is_empty(),
        "attacks not blocked:\n{}\nbenign cases blocked:\n{}",
        missed.join("\n"),
        blocked.join("\n")
    );
}

#[test]
fn cases_are_read_with_their_escapes() {
    let text = "=== text a.txt\none\\u{202E}two\n=== po b.po\nthree\n";
    let read = cases(text);
    assert_eq!(read.len(), 2);
    assert_eq!(read[0].content, "one\u{202E}two\n");
    assert_eq!(
        (read[1].group.as_str(), read[1].path.as_str()),
        ("po", "b.po")
    );
    assert!(cases(ATTACKS).len() >= 40 && cases(BENIGN).len() >= 30);
}

/// Every attack pasted as an intent is reported, except those that only ask
/// what a user may ask themselves (deleting, force-pushing, going ahead
/// without asking, loosening a check) without a third party's voice, and
/// those that address the model only by being an agent instruction file
/// (`AGENTS.md`, …):
/// pasted, their words are the user's.
#[test]
#[expect(clippy::print_stdout, reason = "the test reports its rates")]
fn every_attack_pasted_as_an_intent_is_reported() {
    let guard = ContextGuard::new(&AicConfig::default().guard).expect("the default guard");
    let attacks = cases(ATTACKS);
    let mut unexplained = Vec::new();
    let mut reported = 0;
    for case in &attacks {
        if crate::guard::scan_intent(&case.content).is_some() {
            reported += 1;
            continue;
        }
        let path = RelativePath::new(&case.path).expect("a case path is relative");
        if crate::guard::addressed_request::is_agent_instruction_file(&path) {
            continue;
        }
        let own_requests_only = scan(&guard, case).findings.iter().all(|finding| {
            matches!(
                finding.pattern.as_deref(),
                Some("destructive-command" | "approval-claim" | "security-weakening")
            ) || finding.finding_type != GuardFindingType::PromptInjection
        });
        if !own_requests_only {
            unexplained.push(case.path.clone());
        }
    }
    println!(
        "attacks reported when pasted as the intent: {reported} / {}",
        attacks.len()
    );
    assert!(
        unexplained.is_empty(),
        "attacks not reported as an intent: {unexplained:?}"
    );
}
