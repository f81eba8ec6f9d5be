//! The answer of `aic inspect`: the PipelineTrace (what each stage decided)
//! as a readable report, or as JSON without file contents. When the guard
//! blocks every selected file the trace is answered all the same — its
//! findings are what the user needs to see — with the error
//! [`CompileError::GuardBlockedAll`] (exit code 5).

use std::fmt::Write;

use aic_stages::select::selector::ExclusionReason;
use anyhow::Context;

use super::{Answer, Outcome};
use crate::error::CompileError;
use crate::host::Host;
use crate::pipeline::{Compilation, CompilationRequest, PipelineTrace, compile};

/// Runs a compile for `aic inspect` in this process: the trace's text, and
/// the error the command ends with (a compile blocked by the guard has both).
pub fn answer(request: &CompilationRequest, json: bool, host: &Host) -> Outcome {
    let (trace, error) = match compile(request, host) {
        Ok(compilation) => (compilation.trace, None),
        Err(CompileError::GuardBlockedAll {
            blocked,
            trace: Some(trace),
        }) => (
            Some(*trace.clone()),
            Some(
                CompileError::GuardBlockedAll {
                    blocked,
                    trace: Some(trace),
                }
                .into(),
            ),
        ),
        Err(error) => return Outcome::failed(error.into()),
    };
    let warnings = trace
        .as_ref()
        .map(|trace| trace.warnings.clone())
        .unwrap_or_default();
    match trace_text(json, trace.as_ref()) {
        Ok(stdout) => Outcome {
            answer: Answer {
                stdout,
                warnings,
                ..Answer::default()
            },
            error,
        },
        Err(failure) => Outcome::failed(failure),
    }
}

/// A trace as JSON or as the report (`None`: an answer from the prompt
/// cache, which has none).
fn trace_text(json: bool, trace: Option<&PipelineTrace>) -> anyhow::Result<String> {
    Ok(if json {
        let mut json =
            serde_json::to_string_pretty(&trace).context("Failed to serialise the trace")?;
        json.push('\n');
        json
    } else {
        trace.map_or_else(
            || String::from("(answered from the prompt cache: no trace)\n"),
            render_trace,
        )
    })
}

/// Renders the trace as a report: classification, named targets, rule packs
/// and budget, the selected files with their signals, tiers and tokens, the
/// guard's findings, the token summary, constraints, warnings and phase times.
pub fn render(compilation: &Compilation) -> String {
    compilation.trace.as_ref().map_or_else(
        || String::from("(answered from the prompt cache: no trace)\n"),
        render_trace,
    )
}

/// [`render`] for a trace.
pub fn render_trace(trace: &PipelineTrace) -> String {
    let mut out = String::new();
    classification(&mut out, trace);
    targets(&mut out, trace);
    packs_and_budget(&mut out, trace);
    selected_files(&mut out, trace);
    guard(&mut out, trace);
    tokens(&mut out, trace);
    phases(&mut out, trace);
    out
}

/// The task classification.
fn classification(out: &mut String, trace: &PipelineTrace) {
    let task = &trace.task_class;
    let _ = writeln!(out, "Task Classification");
    let _ = writeln!(
        out,
        "  Class: {} (confidence: {:.2})",
        task.task_class, task.confidence
    );
    let _ = writeln!(out, "  Keywords: [{}]", task.matched_keywords.join(", "));
    let _ = writeln!(
        out,
        "  Subject tokens: [{}]",
        task.subject_tokens.join(", ")
    );
}

/// The files the intent named and how each resolved.
fn targets(out: &mut String, trace: &PipelineTrace) {
    if !trace.targets.is_empty() {
        let _ = writeln!(out, "\nTargets Named in the Intent");
        for target in &trace.targets {
            let files = target
                .files
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            let candidates = target
                .candidates
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                out,
                "  {} → {:?}{}{}",
                target.reference.raw,
                target.resolution,
                if files.is_empty() {
                    String::new()
                } else {
                    format!(": {files}")
                },
                if candidates.is_empty() {
                    String::new()
                } else {
                    format!(" (candidates: {candidates})")
                }
            );
        }
    }
}

/// Rule packs, budget and what the scan left out.
fn packs_and_budget(out: &mut String, trace: &PipelineTrace) {
    let _ = writeln!(out, "\nRule Packs Applied");
    for (index, pack) in trace.rule_packs.iter().enumerate() {
        let _ = writeln!(out, "  {}. {pack}", index + 1);
    }
    let _ = writeln!(
        out,
        "\nTotal budget: {} {} tokens ({}) | Overhead: {} | Code budget: {} tokens",
        thousands(trace.budget.total.get()),
        trace.tokenizer,
        trace.budget.source.describe(),
        thousands(trace.overhead.get()),
        thousands(trace.code_budget.get())
    );
    let skipped = &trace.files_skipped;
    let _ = writeln!(
        out,
        "Scan: {} files in scope; skipped {} binary, {} too large, {} unreadable, {} symlinks",
        trace.files_total, skipped.binary, skipped.too_large, skipped.unreadable, skipped.symlinks
    );
    if !trace.left_out_tracked.is_empty() {
        let _ = writeln!(
            out,
            "Tracked by git but not in scope: {} files{}",
            trace.left_out_tracked.len(),
            if trace.left_out_tracked.len() > SHOWN_LEFT_OUT {
                " (the first shown; `aic tree` lists them all)"
            } else {
                ""
            }
        );
        for file in trace.left_out_tracked.iter().take(SHOWN_LEFT_OUT) {
            let _ = writeln!(out, "  - {}", file.reason);
        }
    }
}

/// Tracked files left out of scope that the text report names.
const SHOWN_LEFT_OUT: usize = 5;

/// The selected files, one row each, and the exclusion counts.
fn selected_files(out: &mut String, trace: &PipelineTrace) {
    let _ = writeln!(
        out,
        "\nSelected Files ({} of {} candidates; maxFiles {}{})",
        trace.selected_files.len(),
        trace.candidates,
        trace.max_files,
        if trace.max_files_auto { " auto" } else { "" }
    );
    let width = trace
        .selected_files
        .iter()
        .map(|f| f.file.path.as_str().len())
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(
        out,
        "  {:>3} | {:<width$} | {:>5} | {:>7} | {:<15} | path  imp   sym   text  rec   size | note",
        "#", "File", "Score", "Tokens", "Tier"
    );
    for (index, file) in trace.selected_files.iter().enumerate() {
        let s = &file.file.signals;
        let tier = match file.tier {
            Some(_) if file.sliced => "sliced",
            Some(tier) => tier.name(),
            None => "-",
        };
        let mut note = file.reason.clone();
        if s.mention > 0.0 {
            let _ = write!(note, "; names in the intent {:.2}", s.mention);
        }
        if s.trace > 0.0 {
            let _ = write!(note, "; in a pasted trace or the diff {:.2}", s.trace);
        }
        if !file.file.boosted_by.is_empty() {
            let _ = write!(note, "; boosted by {}", file.file.boosted_by.join(", "));
        }
        if !file.file.penalized_by.is_empty() {
            let _ = write!(note, "; penalized by {}", file.file.penalized_by.join(", "));
        }
        let _ = writeln!(
            out,
            "  {:>3} | {:<width$} | {:>5.2} | {:>7} | {:<15} | {:.2}  {:.2}  {:.2}  {:.2}  {:.2}  {:.2} | {note}",
            index + 1,
            file.file.path.as_str(),
            file.file.score,
            thousands(file.tokens.get()),
            tier,
            s.path_relevance,
            s.import_proximity,
            s.symbol_relevance,
            s.content_relevance,
            s.recency,
            s.size_penalty,
        );
    }
    let excluded = &trace.excluded;
    let _ = writeln!(
        out,
        "  Excluded: {} by excludePatterns, {} not in includePatterns, {} with no path, import, symbol or content signal, {} below the maxFiles cut",
        excluded.exclude_pattern,
        excluded.not_included,
        excluded.zero_semantic_signal,
        excluded.max_files
    );
    if let Some(files) = &trace.excluded_files {
        for file in files {
            let score = file
                .score
                .map_or_else(|| "    -".to_owned(), |s| format!("{s:>5.2}"));
            let reason = match &file.reason {
                ExclusionReason::ExcludePattern { pattern } => {
                    format!("excludePatterns `{pattern}`")
                }
                ExclusionReason::NotIncluded => "not in includePatterns".to_owned(),
                ExclusionReason::ZeroSemanticSignal => {
                    "no path, import, symbol or content signal".to_owned()
                }
                ExclusionReason::MaxFiles { max_files } => {
                    format!("below the maxFiles cut ({max_files})")
                }
                ExclusionReason::VagueIntent => {
                    "the intent is too vague to select on: orienting context instead".to_owned()
                }
            };
            let _ = writeln!(out, "    {score} | {} | {reason}", file.path);
        }
    }
}

/// The guard's verdict.
fn guard(out: &mut String, trace: &PipelineTrace) {
    let guard = &trace.guard;
    let _ = writeln!(out, "\nGuard");
    if guard.findings.is_empty() {
        let _ = writeln!(out, "  Status: clean (0 files blocked)");
    } else {
        let _ = writeln!(
            out,
            "  Status: {} files blocked, {} findings",
            guard.files_blocked.len(),
            guard.findings.len()
        );
        for finding in &guard.findings {
            let line = finding.line.map(|l| format!(":{l}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "  - {:?} {}{line}: {} [{}]",
                finding.severity,
                finding.file,
                finding.message,
                finding.pattern.as_deref().unwrap_or("-")
            );
        }
    }
}

/// The token summary, constraints and warnings.
fn tokens(out: &mut String, trace: &PipelineTrace) {
    let summary = &trace.token_summary;
    let _ = writeln!(out, "\nToken Summary");
    let _ = writeln!(
        out,
        "  Raw (all {} files, estimated): {}",
        trace.files_total,
        thousands(summary.raw.get())
    );
    let _ = writeln!(
        out,
        "  Selected:          {}",
        thousands(summary.selected.get())
    );
    let _ = writeln!(
        out,
        "  After guard:       {}",
        thousands(summary.after_guard.get())
    );
    let _ = writeln!(
        out,
        "  After transforms:  {}",
        thousands(summary.after_transforms.get())
    );
    let _ = writeln!(
        out,
        "  After ladder:      {}",
        thousands(summary.after_ladder.get())
    );
    let _ = writeln!(
        out,
        "  Prompt total:      {}",
        thousands(summary.prompt_total.get())
    );
    let _ = writeln!(out, "  Reduction:         {:.1}%", summary.reduction_pct);
    let _ = writeln!(out, "\nConstraints ({})", trace.constraints.len());
    for constraint in &trace.constraints {
        let _ = writeln!(out, "  - {constraint}");
    }
    if !trace.warnings.is_empty() {
        let _ = writeln!(out, "\nWarnings");
        for warning in &trace.warnings {
            let _ = writeln!(out, "  - {warning}");
        }
    }
}

/// How long each phase took.
fn phases(out: &mut String, trace: &PipelineTrace) {
    if trace.phase_times.is_empty() {
        return;
    }
    let times: Vec<String> = trace
        .phase_times
        .iter()
        .map(|phase| format!("{} {:.1} ms", phase.phase, phase.ms))
        .collect();
    let _ = writeln!(out, "\nPhases: {}", times.join(" | "));
}

/// `1234567` → `1,234,567`.
pub(crate) fn thousands(value: u64) -> String {
    aic_stages::fit::slice::thousands(usize::try_from(value).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn groups_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(123_500), "123,500");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
