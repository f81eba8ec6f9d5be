//! `aic rules [--root DIR] [--json] [--fix [--dry-run]]`: the audit of the
//! agents' rule and hook files ([`crate::rules`]), and the removal of
//! duplicate instructions ([`crate::rules::fix`]).

use std::fmt::Write as _;

use anyhow::Context;

use crate::args::RulesArgs;
use crate::host::Host;
use crate::printer::print_stdout;
use crate::rules::{Applies, RulesAnalysis, analyze};

/// Analyzes the project's rule and hook files (and the user's, under
/// `HOME`) and prints the files with their cost and the findings, or the
/// analysis as JSON; returns the number of `error` findings (`--check`
/// turns any into exit code 1).
pub fn run(args: &RulesArgs, host: &Host) -> anyhow::Result<usize> {
    let given = crate::root::given_or_discovered(args.project.root.as_deref());
    let root = crate::root::resolve_root(&given)?;
    let home = crate::root::home();
    let analysis = analyze(&root, home.as_deref());
    let errors = analysis.summary().findings.error;
    if args.fix {
        fix(&analysis, &root, args.dry_run, host)?;
        return Ok(errors);
    }
    let text = if args.project.output.json {
        let mut json =
            serde_json::to_string_pretty(&analysis).context("Failed to serialise the analysis")?;
        json.push('\n');
        json
    } else {
        render(&analysis)
    };
    print_stdout(&text).context("Failed to write to stdout")?;
    Ok(errors)
}

/// `--fix`: prints the diff of taking out the duplicate instructions, and
/// writes it unless `dry_run`.
fn fix(
    analysis: &RulesAnalysis,
    root: &std::path::Path,
    dry_run: bool,
    host: &Host,
) -> anyhow::Result<()> {
    let edits = crate::rules::fix::plan(analysis, root);
    let mut out = String::new();
    for edit in &edits {
        out.push_str(&edit.unified_diff());
    }
    let removed: usize = edits.iter().map(|e| e.removed.len()).sum();
    if edits.is_empty() {
        out.push_str("No duplicate instruction to take out.\n");
    } else if dry_run {
        let _ = writeln!(
            out,
            "Would take out {removed} duplicate instruction{} from {} file{}; nothing was written (run without --dry-run to write).",
            if removed == 1 { "" } else { "s" },
            edits.len(),
            if edits.len() == 1 { "" } else { "s" }
        );
    } else {
        let backups = host.home().map(|home| home.dir().join("rules-backups"));
        crate::rules::fix::apply(&edits, backups.as_deref())?;
        let _ = writeln!(
            out,
            "Took out {removed} duplicate instruction{} from {} file{}{}.",
            if removed == 1 { "" } else { "s" },
            edits.len(),
            if edits.len() == 1 { "" } else { "s" },
            backups.map_or_else(String::new, |dir| format!(
                "; the originals are in `{}`",
                dir.display()
            ))
        );
    }
    print_stdout(&out).context("Failed to write to stdout")
}

/// The analysis in words: one line per file, then one per finding.
pub fn render(analysis: &RulesAnalysis) -> String {
    let mut out = String::new();
    if analysis.files.is_empty() {
        out.push_str("No rule or hook files found (CLAUDE.md, AGENTS.md, GEMINI.md, .cursorrules, .cursor/rules/*.mdc, .github/copilot-instructions.md, .windsurfrules, editor hook settings, git hooks).\n");
        return out;
    }
    let _ = writeln!(
        out,
        "Rule and hook files ({}; {} tokens of instructions on every prompt{})",
        analysis.files.len(),
        aic_stages::fit::slice::thousands(
            usize::try_from(analysis.always_applied_tokens).unwrap_or(usize::MAX)
        ),
        crate::rules::heaviest_always_applied(&analysis.files)
            .map(|(client, _)| format!(" for {client}, the client paying most"))
            .unwrap_or_default()
    );
    let width = analysis
        .files
        .iter()
        .map(|f| f.path.chars().count())
        .max()
        .unwrap_or(0);
    for file in &analysis.files {
        let when = match &file.applies {
            Applies::Always => "every prompt".to_owned(),
            Applies::Directory(directory) => format!("under {directory}/"),
            Applies::Globs(globs) => format!("files matching {}", globs.join(", ")),
            Applies::Manual => "when asked for".to_owned(),
            Applies::Never => "hooks".to_owned(),
        };
        let _ = writeln!(
            out,
            "  {:<width$}  {:<8}  {:<7}  {:>7}  {when}",
            file.path,
            file.client,
            file.scope,
            aic_stages::fit::slice::thousands(usize::try_from(file.tokens).unwrap_or(usize::MAX)),
        );
    }
    if analysis.findings.is_empty() {
        out.push_str("\nNo findings.\n");
        return out;
    }
    let _ = writeln!(out, "\nFindings ({})", analysis.findings.len());
    for finding in &analysis.findings {
        let places: Vec<String> = finding
            .places
            .iter()
            .map(|p| format!("{}:{}", p.path, p.line))
            .collect();
        let _ = writeln!(
            out,
            "  {} {} ({}): {}",
            finding.severity.word(),
            finding.code,
            places.join(", "),
            finding.message
        );
    }
    out
}
