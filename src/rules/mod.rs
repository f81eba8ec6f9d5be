//! RulesAnalysis: the agents' standing instructions of a project, audited.
//!
//! A repository carries instructions that an agent pays for on every prompt
//! (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`, `.cursorrules`,
//! `.cursor/rules/*.mdc`, `.github/copilot-instructions.md`,
//! `.windsurfrules`, and the user-level ones under the home directory) and
//! hooks that run on every event (editor settings, git hooks). This module
//! finds them, says what each costs in tokens and when it is
//! paid, and reports what a reviewer would flag ([`analyze`]):
//!
//! - `error` **contradiction**: two instructions that set the same subject to
//!   different values (tabs and 4 spaces, pnpm and npm, jest and vitest), or
//!   "always X" beside "never X";
//! - `warn` **duplicate**: the same instruction twice, also reworded slightly
//!   (the same content words, whatever their order and small words);
//! - `warn` **dead-glob**: a `.mdc` rule whose `globs` match no file of the
//!   project, so it never applies;
//! - `warn` **narrow-always-apply**: a `.mdc` rule applied to every prompt
//!   whose paths all lie under one directory;
//! - `warn` **doubled-hook**: one command registered twice for the same event,
//!   or two handlers of one event that do the same aic work: two aic
//!   handlers, or an aic handler beside a script that calls aic itself;
//! - `info` **repeats-aic**: an instruction that says what aic's own
//!   constraints already inject.
//!
//! Deterministic, no model call: files in path order, findings in file and
//! line order. The rules are stated in `docs/rules-analysis.md`.

mod claims;
mod discover;
pub mod fix;
mod hooks;
mod text;

use std::collections::BTreeMap;
use std::path::Path;

use aic_stages::fit::tokens::TokenCounter;
use serde::Serialize;

pub use discover::{Applies, RuleFile, RuleFileKind};

use crate::rules::discover::discover;

use crate::rules::claims::{Claim, claims_of};
use crate::rules::text::{Instruction, content_words, instructions, similar};

/// Who reads an instruction and when: its file's client, when the file
/// applies, whether the file is personal (a user-level file or
/// `CLAUDE.local.md`, which the team does not share), and the file's real
/// path (a symlinked `CLAUDE.md` is the file it points at).
#[derive(Clone, Debug)]
struct Scope {
    /// The file's display path.
    file: String,
    client: &'static str,
    applies: Applies,
    personal: bool,
    real: Option<std::path::PathBuf>,
}

impl Scope {
    /// Whether one agent reads an instruction under `other` whenever it
    /// reads one under `self`: the same client, a scope `self` covers, and
    /// not the same file through a link.
    fn covers(&self, other: &Self) -> bool {
        self.client == other.client && self.applies.covers(&other.applies) && !self.same_file(other)
    }

    /// Whether some agent reads both: the same client and one scope within
    /// the other.
    fn overlaps(&self, other: &Self) -> bool {
        self.client == other.client
            && (self.applies.covers(&other.applies) || other.applies.covers(&self.applies))
            && !self.same_file(other)
    }

    /// Whether the two are one file under two names (a link): a file is
    /// not a copy of itself, but one file's lines may repeat each other.
    fn same_file(&self, other: &Self) -> bool {
        self.file != other.file && self.real.is_some() && self.real == other.real
    }
}

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Two instructions the agent cannot both follow.
    Error,
    /// Tokens paid for nothing, or a rule that never applies.
    Warn,
    /// Worth knowing; nothing is wrong.
    Info,
}

impl Severity {
    /// The word printed for it.
    pub fn word(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warn => "warn",
            Self::Info => "info",
        }
    }
}

/// A place in a rule file: its display path and one-based line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Place {
    /// The file, relative to the project root, or under `~/` for a user file.
    pub path: String,
    /// One-based line.
    pub line: usize,
}

/// One finding of the analysis.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// How serious it is.
    pub severity: Severity,
    /// What kind of finding: `contradiction`, `duplicate`, `dead-glob`,
    /// `narrow-always-apply`, `doubled-hook`, `repeats-aic`,
    /// `repeated-across-clients`.
    pub code: &'static str,
    /// One sentence saying what is wrong and what to do.
    pub message: String,
    /// The places involved, first the one to keep.
    pub places: Vec<Place>,
}

/// The analysis of one project's rule and hook files.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RulesAnalysis {
    /// Every rule and hook file found, in discovery order (project files by
    /// path, then user files).
    pub files: Vec<RuleFile>,
    /// Tokens (`cl100k_base`) of the instruction files applied to every
    /// prompt, for the client that pays the most
    /// ([`heaviest_always_applied`]).
    pub always_applied_tokens: u64,
    /// The findings, errors first, then by place.
    pub findings: Vec<Finding>,
    /// The real path (links resolved) of each instruction file, by display
    /// path, for `--fix` to leave alone a file that is another rule file
    /// through a link; not serialised.
    #[serde(skip)]
    pub real_paths: BTreeMap<String, std::path::PathBuf>,
}

/// The analysis in a few numbers, for `aic status` and the MCP tool
/// `aic_status`: the details are `aic rules` and the resource
/// `aic://rules-analysis`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RulesSummary {
    /// Rule and hook files found (project and user).
    pub files: usize,
    /// Tokens (`cl100k_base`) of the instruction files applied to every
    /// prompt, for the client that pays the most.
    pub always_applied_tokens: u64,
    /// The findings by severity.
    pub findings: FindingCounts,
    /// Where the findings are listed.
    pub details: &'static str,
}

/// Findings counted by severity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FindingCounts {
    /// `error` findings (contradictions).
    pub error: usize,
    /// `warn` findings.
    pub warn: usize,
    /// `info` findings.
    pub info: usize,
}

/// Where [`RulesSummary::details`] points.
pub const RULES_DETAILS: &str = "`aic rules` (MCP resource `aic://rules-analysis`)";

impl RulesAnalysis {
    /// The analysis in a few numbers ([`RulesSummary`]).
    pub fn summary(&self) -> RulesSummary {
        let mut findings = FindingCounts::default();
        for finding in &self.findings {
            match finding.severity {
                Severity::Error => findings.error += 1,
                Severity::Warn => findings.warn += 1,
                Severity::Info => findings.info += 1,
            }
        }
        RulesSummary {
            files: self.files.len(),
            always_applied_tokens: self.always_applied_tokens,
            findings,
            details: RULES_DETAILS,
        }
    }
}

/// Analyzes the rule and hook files of the project at `root`, with the user
/// files under `home` when given.
///
/// Unreadable files are listed with 0 tokens and otherwise skipped: the
/// analysis never fails on a project's content.
pub fn analyze(root: &Path, home: Option<&Path>) -> RulesAnalysis {
    let started = std::time::Instant::now();
    let found = discover(root, home);
    let discovered = started.elapsed();
    let tokens = TokenCounter::cl100k();
    let mut files = Vec::with_capacity(found.files.len());
    let mut all: Vec<(Instruction, Scope)> = Vec::new();
    let mut real_paths = BTreeMap::new();
    let mut findings = Vec::new();
    for (file, text) in found.files.into_iter().zip(found.texts) {
        let mut file = file;
        file.tokens = tokens.count(&text).get();
        if file.kind == RuleFileKind::Instructions {
            let full = match file.path.strip_prefix("~/") {
                Some(relative) => home.map(|home| home.join(relative)),
                None => Some(root.join(&file.path)),
            };
            let real = full.and_then(|full| fs_err::canonicalize(full).ok());
            if let Some(real) = &real {
                real_paths.insert(file.path.clone(), real.clone());
            }
            let scope = Scope {
                file: file.path.clone(),
                client: file.client,
                applies: file.applies.clone(),
                personal: file.scope == "user" || file.path.ends_with("CLAUDE.local.md"),
                real,
            };
            all.extend(
                instructions(&file.path, &text)
                    .into_iter()
                    .map(|instruction| (instruction, scope.clone())),
            );
            if let Applies::Globs(globs) = &file.applies
                && !globs.is_empty()
                && !found.tracked.is_empty()
                && !any_match(globs, &found.tracked)
            {
                findings.push(Finding {
                    severity: Severity::Warn,
                    code: "dead-glob",
                    message: format!(
                        "its globs ({}) match no file of the project, so the rule never applies; fix or remove them",
                        globs.join(", ")
                    ),
                    places: vec![Place {
                        path: file.path.clone(),
                        line: key_line(&text, "globs:"),
                    }],
                });
            }
        }
        if file.applies == Applies::Always
            && Path::new(&file.path)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("mdc"))
            && let Some(directory) = only_directory(&text)
        {
            findings.push(Finding {
                severity: Severity::Warn,
                code: "narrow-always-apply",
                message: format!(
                    "applied to every prompt, but every path it names is under `{directory}/`: give it `globs: {directory}/**` and `alwaysApply: false` so it is paid only there"
                ),
                places: vec![Place {
                    path: file.path.clone(),
                    line: key_line(&text, "alwaysApply:"),
                }],
            });
        }
        files.push(file);
    }
    findings.extend(duplicates(&all));
    findings.extend(repeated_across_clients(&all));
    findings.extend(contradictions(&all));
    findings.extend(repeats_aic(&all));
    findings.extend(found.hook_findings);
    findings.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then_with(|| a.places.cmp(&b.places))
            .then_with(|| a.code.cmp(b.code))
    });
    let always_applied_tokens = heaviest_always_applied(&files).map_or(0, |(_, tokens)| tokens);
    tracing::debug!(
        "Analyzed {} rule and hook files in {:?} (found among {} files in {discovered:?})",
        files.len(),
        started.elapsed(),
        found.tracked.len()
    );
    RulesAnalysis {
        files,
        always_applied_tokens,
        findings,
        real_paths,
    }
}

/// The one-based line of an `.mdc` rule's front matter that sets `key`
/// (`globs:`), else 1 (the opening `---`).
fn key_line(text: &str, key: &str) -> usize {
    text.lines()
        .position(|line| line.trim_start().starts_with(key))
        .map_or(1, |index| index + 1)
}

/// The client that pays the most tokens of instruction files applied to
/// every prompt, with that sum; `None` without such a file. Each agent reads
/// its own client's files (Claude Code its `CLAUDE.md` files, Codex
/// `AGENTS.md`), so the sum over all clients is paid by none of them.
pub fn heaviest_always_applied(files: &[RuleFile]) -> Option<(&'static str, u64)> {
    let mut by_client: BTreeMap<&'static str, u64> = BTreeMap::new();
    for file in files
        .iter()
        .filter(|f| f.kind == RuleFileKind::Instructions && f.applies == Applies::Always)
    {
        *by_client.entry(file.client).or_default() += file.tokens;
    }
    by_client
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
}

/// The one top-level directory every path `text` names is under, when it
/// names at least two: words with a `/` that look like paths (`src/api/x.ts`,
/// `` `src/api/` ``), not URLs.
fn only_directory(text: &str) -> Option<String> {
    let mut directories: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '(' | ')' | ',' | '"' | '\''))
        .filter(|word| word.contains('/') && !word.contains("://") && !word.starts_with('/'))
        .filter_map(|word| word.split('/').next())
        .filter(|first| {
            !first.is_empty()
                && first
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        })
        .collect();
    if directories.len() < 2 {
        return None;
    }
    directories.sort_unstable();
    directories.dedup();
    (directories.len() == 1 && directories[0] != "." && directories[0] != "..")
        .then(|| directories[0].to_owned())
}

/// Whether any of `globs` matches one of `paths` (invalid globs match
/// nothing).
fn any_match(globs: &[String], paths: &[String]) -> bool {
    let mut builder = globset::GlobSetBuilder::new();
    for glob in globs {
        // A glob without a directory part matches at any depth, as the
        // editors read it.
        let glob = if glob.contains('/') {
            glob.clone()
        } else {
            format!("**/{glob}")
        };
        if let Ok(glob) = globset::Glob::new(&glob) {
            builder.add(glob);
        }
    }
    let Ok(set) = builder.build() else {
        return false;
    };
    paths.iter().any(|path| set.is_match(path))
}

/// Duplicate and near-duplicate instructions: each later copy is a finding
/// naming the first.
fn duplicates(all: &[(Instruction, Scope)]) -> Vec<Finding> {
    // Widest scope first (every prompt, then directories outer to inner),
    // the team's shared files before personal ones, then file order: the
    // copy kept is the one read wherever the others are, and never a
    // personal copy when the team's file says it too.
    let width = |scope: &Scope| {
        let width = match &scope.applies {
            Applies::Always => 0,
            Applies::Directory(directory) => 1 + directory.matches('/').count(),
            _ => usize::MAX,
        };
        (width, scope.personal)
    };
    // A copy goes only when it says nothing the kept one does not: "keep
    // commits small" is a copy of "keep commits small and focused", not the
    // other way round.
    let takes = |kept: (&Instruction, &Scope), copy: (&Instruction, &Scope)| {
        kept.1.covers(copy.1)
            && copy
                .0
                .words
                .iter()
                .all(|w| kept.0.words.contains(w) || EMPHASIS.contains(&w.as_str()))
    };
    copies_of(all, width, takes)
        .into_iter()
        .map(|group| {
            let (kept, _) = &all[group[0]];
            let copies = group.len() - 1;
            // The most copies one agent reads: those whose scope covers one
            // member's (the root's, its directory's and its own).
            let reads = group
                .iter()
                .map(|&j| {
                    group
                        .iter()
                        .filter(|&&i| all[i].1.applies.covers(&all[j].1.applies))
                        .count()
                })
                .max()
                .unwrap_or(1);
            let exact = group[1..]
                .iter()
                .all(|&j| all[j].0.normalized == kept.normalized);
            Finding {
                severity: Severity::Warn,
                code: "duplicate",
                message: format!(
                    "{} \"{}\"{}; the agent reads it {}: keep the first",
                    if exact { "repeats" } else { "rewords" },
                    kept.text,
                    if copies > 1 {
                        format!(" in {copies} more places")
                    } else {
                        String::new()
                    },
                    match reads {
                        0..=2 => "twice".to_owned(),
                        n => format!("up to {n} times"),
                    }
                ),
                places: group.iter().map(|&i| all[i].0.place()).collect(),
            }
        })
        .collect()
}

/// Words that add emphasis, not content, as content words are stemmed
/// (`always` → `alway`): a copy that differs from the kept instruction only
/// by them says nothing more ("Always use pnpm").
const EMPHASIS: &[&str] = &["alway", "every", "each", "really", "do"];

/// Groups of similar instructions (indices into `all`, the kept one first),
/// taken in `order_key` order: each group is an instruction and the later
/// ones it `takes` that no earlier group took.
fn copies_of<K: Ord>(
    all: &[(Instruction, Scope)],
    order_key: impl Fn(&Scope) -> K,
    takes: impl Fn((&Instruction, &Scope), (&Instruction, &Scope)) -> bool,
) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by(|&a, &b| {
        order_key(&all[a].1)
            .cmp(&order_key(&all[b].1))
            .then(a.cmp(&b))
    });
    let mut reported = vec![false; all.len()];
    let mut groups = Vec::new();
    for &i in &order {
        if reported[i] {
            continue;
        }
        let (kept, scope) = &all[i];
        let copies: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&j| {
                j != i
                    && !reported[j]
                    && takes((kept, scope), (&all[j].0, &all[j].1))
                    && similar(&kept.words, &all[j].0.words)
            })
            .collect();
        if copies.is_empty() {
            continue;
        }
        reported[i] = true;
        let mut group = vec![i];
        for j in copies {
            reported[j] = true;
            group.push(j);
        }
        groups.push(group);
    }
    groups
}

/// Instructions that files of different clients repeat (`CLAUDE.md` and
/// `AGENTS.md`): no one agent reads them twice, so nothing is taken out,
/// but a change to one must be made to the others.
fn repeated_across_clients(all: &[(Instruction, Scope)]) -> Vec<Finding> {
    copies_of(
        all,
        |scope| (scope.personal, scope.client),
        |kept, other| kept.1.client != other.1.client && !kept.1.same_file(other.1),
    )
    .into_iter()
    .map(|group| {
        let (kept, _) = &all[group[0]];
        let mut clients: Vec<&str> = group.iter().map(|&i| all[i].1.client).collect();
        clients.sort_unstable();
        clients.dedup();
        Finding {
            severity: Severity::Info,
            code: "repeated-across-clients",
            message: format!(
                "\"{}\" is written for {} separately: no one agent reads these copies together, so nothing is taken out, but a change must be made in every copy",
                kept.text,
                clients.join(", ")
            ),
            places: group.iter().map(|&i| all[i].0.place()).collect(),
        }
    })
    .collect()
}

/// Contradictions: claims on one subject with values that exclude each other.
fn contradictions(all: &[(Instruction, Scope)]) -> Vec<Finding> {
    let mut by_subject: BTreeMap<&'static str, Vec<(&Instruction, &Scope, Claim)>> =
        BTreeMap::new();
    for (instruction, scope) in all {
        for claim in claims_of(&instruction.text) {
            by_subject
                .entry(claim.subject)
                .or_default()
                .push((instruction, scope, claim));
        }
    }
    let mut findings = Vec::new();
    for (subject, claims) in by_subject {
        // Only what one agent reads at once meets: two sibling directories'
        // files, or two clients' files, never do.
        let read_together = |a: usize, b: usize| claims[a].1.overlaps(claims[b].1);
        let clash = |a: usize, b: usize| {
            claims[a].2.contradicts(&claims[b].2)
                && claims[a].0.place() != claims[b].0.place()
                && read_together(a, b)
        };
        for members in conflicts(claims.len(), clash, read_together) {
            let mut places: Vec<Place> = Vec::new();
            let mut said: Vec<String> = Vec::new();
            for &i in &members {
                let (instruction, _, claim) = &claims[i];
                let place = instruction.place();
                if !places.contains(&place) {
                    places.push(place);
                    said.push(format!("\"{}\" ({})", instruction.text, claim.describe()));
                }
            }
            let both = if places.len() > 2 { "all" } else { "both" };
            findings.push(Finding {
                severity: Severity::Error,
                code: "contradiction",
                message: format!(
                    "{subject}: {}; the agent cannot follow {both}: keep one",
                    said.join(" against ")
                ),
                places,
            });
        }
    }
    findings
}

/// The conflicts among `count` claims, one per finding: a claim with the
/// claims that `clash` with it, every two of them `read_together`, each
/// pair reported once however many files take part.
fn conflicts(
    count: usize,
    clash: impl Fn(usize, usize) -> bool,
    read_together: impl Fn(usize, usize) -> bool,
) -> Vec<Vec<usize>> {
    let mut seen = vec![vec![false; count]; count];
    let mut groups = Vec::new();
    for a in 0..count {
        loop {
            let mut members = vec![a];
            for (b, reported) in seen[a].iter().enumerate() {
                if b != a
                    && !reported
                    && clash(a, b)
                    && members[1..].iter().all(|&m| read_together(m, b))
                {
                    members.push(b);
                }
            }
            if members.len() < 2 {
                break;
            }
            for &x in &members {
                for &y in &members {
                    if x == a || y == a || clash(x, y) {
                        seen[x][y] = true;
                    }
                }
            }
            groups.push(members);
        }
    }
    groups
}

/// Instructions that say what aic's built-in constraints already inject.
fn repeats_aic(all: &[(Instruction, Scope)]) -> Vec<Finding> {
    // Only the default pack's constraints are in every prompt; a task
    // class's (bugfix: "fix the root cause") are not.
    let constraints: Vec<(String, Vec<String>)> =
        aic_stages::rule_pack::built_in_pack_constraints("default")
            .into_iter()
            .map(|c| {
                let words = content_words(&c);
                (c, words)
            })
            .collect();
    all.iter()
        .filter_map(|(instruction, _)| {
            let (constraint, _) = constraints
                .iter()
                .find(|(_, words)| similar(words, &instruction.words))?;
            Some(Finding {
                severity: Severity::Info,
                code: "repeats-aic",
                message: format!(
                    "aic's prompts already carry the constraint \"{constraint}\"; this instruction can go where aic is used"
                ),
                places: vec![instruction.place()],
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
