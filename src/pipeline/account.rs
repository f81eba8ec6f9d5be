//! The `account` phase: what the compile reports and keeps. It turns the
//! earlier phases' outputs into the [`Compilation`] — the meta, the selection
//! without content, the trace and the files shown — commits the per-file
//! cache's writes and stores the prompt in the prompt cache. An answer from the
//! prompt cache is accounted by [`reused`].

use std::collections::BTreeMap;
use std::time::Instant;

use aic_stages::fit::budget::BudgetAllocator;
use aic_stages::fit::ladder::InclusionTier;
use aic_stages::fit::tokens::TokenCount;
use aic_stages::relative_path::RelativePath;
use tracing::{info, warn};

use crate::cache::{CacheReport, FileCache};
use crate::clock::Clock;
use crate::pipeline::assemble::Prompt;
use crate::pipeline::facts::SelectedFacts;
use crate::pipeline::fit::Fitted;
use crate::pipeline::prepare::Plan;
use crate::pipeline::prompt_cache::CachedPrompt;
use crate::pipeline::scan::Snapshot;
use crate::pipeline::select::Selection;
use crate::pipeline::{
    Compilation, CompilationMeta, CompilationRequest, PipelineTrace, SelectedFileTrace,
    SelectionEntry, ShownFile, TokenSummary,
};

/// The most near-miss files listed in a trace.
const NEAR_MISSES: usize = 20;

/// Everything the `account` phase reads.
#[derive(Debug)]
pub struct Outcome<'a> {
    /// The request.
    pub request: &'a CompilationRequest,
    /// The plan.
    pub plan: Plan,
    /// The snapshot.
    pub snapshot: &'a Snapshot,
    /// The selection.
    pub selection: &'a Selection,
    /// The selected files' facts.
    pub facts: &'a SelectedFacts,
    /// The fit.
    pub fitted: &'a Fitted<'a>,
    /// The prompt.
    pub prompt: Prompt,
}

/// Where the compile stores what it keeps.
#[derive(Debug)]
pub struct Keep<'a> {
    /// The per-file cache, committed here.
    pub cache: Option<FileCache>,
    /// The prompt cache key, when the request uses the prompt cache.
    pub prompt_key: Option<[u8; 32]>,
    /// The clock stamping the prompt cache entry.
    pub clock: &'a dyn Clock,
    /// When the compile started.
    pub started: Instant,
}

/// Runs the `account` phase.
pub fn account(outcome: Outcome<'_>, mut keep: Keep<'_>, mut warnings: Vec<String>) -> Compilation {
    let traced = trace_files(outcome.selection, outcome.facts, outcome.fitted);
    let selection_entries: Vec<SelectionEntry> = traced
        .files
        .iter()
        .map(|file| SelectionEntry {
            path: file.file.path.clone(),
            score: file.file.score,
            tier: file.tier,
            tokens: file.tokens,
            reason: file.reason.clone(),
        })
        .collect();
    let cache_report = match &mut keep.cache {
        Some(cache) => {
            let (report, warning) = cache.finish();
            warnings.extend(warning);
            report
        }
        None => CacheReport::default(),
    };
    log_cache(&cache_report);
    for warning in &warnings {
        warn!("{warning}");
    }
    let meta = meta(&outcome, &traced, warnings.clone(), keep.started);
    let repo = &outcome.snapshot.repo;
    let shown: Vec<ShownFile> = traced
        .files
        .iter()
        .filter_map(|f| {
            let index = repo
                .files
                .binary_search_by(|e| e.path.cmp(&f.file.path))
                .ok()?;
            Some(ShownFile {
                path: f.file.path.clone(),
                tier: f.tier?,
                hash: repo.files[index].content_hash.to_hex(),
            })
        })
        .collect();
    let plan = &outcome.plan;
    let classifier_confidence = plan.task.confidence;
    if let (Some(key), Some(cache)) = (&keep.prompt_key, &keep.cache) {
        let cached = CachedPrompt {
            prompt: outcome.prompt.text.clone(),
            meta: meta.clone(),
            selection: selection_entries.clone(),
            classifier_confidence,
            shown: shown.clone(),
        };
        if let Ok(bytes) = serde_json::to_vec(&cached) {
            let ttl_ms = u64::from(plan.project.config.cache.ttl_minutes) * 60_000;
            cache.put_prompt(key, &bytes, ttl_ms, keep.clock);
        }
    }
    let project_root = plan.project.root.clone();
    let config_hash = plan.project.config_hash.clone();
    let config_json = plan.project.config_json.clone();
    let trace = trace(&outcome, traced, cache_report, warnings);
    Compilation {
        prompt: outcome.prompt.text,
        meta,
        selection: selection_entries,
        project_root,
        config_hash,
        config_json,
        classifier_confidence,
        trace: Some(trace),
        shown,
    }
}

/// What a compile the guard stopped has to show: everything up to the
/// `facts` phase.
#[derive(Debug)]
pub struct Blocked<'a> {
    /// The request.
    pub request: &'a CompilationRequest,
    /// The plan.
    pub plan: Plan,
    /// The snapshot.
    pub snapshot: &'a Snapshot,
    /// The selection.
    pub selection: &'a Selection,
    /// The selected files' facts, every one blocked or unread.
    pub facts: &'a SelectedFacts,
}

/// The [`PipelineTrace`] of a compile in which the guard blocked every
/// selected file: classification, budget, selection and the guard's findings
/// (never a matched value) as in any trace, each selected file `blocked by
/// guard` (or unread), and no prompt — no tier, 0 prompt tokens, 0% reduction.
/// Nothing is cached or committed.
pub fn blocked_trace(blocked: Blocked<'_>, warnings: Vec<String>) -> PipelineTrace {
    let fitted = Fitted {
        listed: blocked.selection.listed.clone(),
        ..Fitted::default()
    };
    let outcome = Outcome {
        request: blocked.request,
        plan: blocked.plan,
        snapshot: blocked.snapshot,
        selection: blocked.selection,
        facts: blocked.facts,
        fitted: &fitted,
        prompt: Prompt {
            text: String::new(),
            tokens: TokenCount::ZERO,
        },
    };
    let traced = trace_files(outcome.selection, outcome.facts, &fitted);
    let mut trace = trace(&outcome, traced, CacheReport::default(), warnings);
    trace.token_summary.reduction_pct = 0.0;
    trace
}

/// Files per inclusion tier in the prompt.
fn tier_counts(fitted: &Fitted<'_>) -> BTreeMap<InclusionTier, usize> {
    let mut counts = BTreeMap::new();
    for tier in fitted.files.iter().filter_map(|f| f.tier) {
        *counts.entry(tier).or_default() += 1;
    }
    counts
}

/// Files shown as a slice of their lines (counted at `full` in the tiers).
fn sliced_count(fitted: &Fitted<'_>) -> usize {
    fitted
        .files
        .iter()
        .filter(|f| f.tier == Some(InclusionTier::L0))
        .filter(|f| {
            fitted.slices.contains_key(&f.file.path) || fitted.sliced.as_ref() == Some(&f.file.path)
        })
        .count()
}

/// `(raw − prompt) / raw`, in `[0, 1]`; 0 for an empty RepoMap.
fn reduction(outcome: &Outcome<'_>) -> f64 {
    let raw = outcome.snapshot.repo.total_tokens;
    if raw.0 == 0 {
        0.0
    } else {
        (1.0 - f64::from(outcome.prompt.tokens.0) / f64::from(raw.0)).max(0.0)
    }
}

/// The compile's [`CompilationMeta`].
fn meta(
    outcome: &Outcome<'_>,
    traced: &TracedFiles,
    warnings: Vec<String>,
    started: Instant,
) -> CompilationMeta {
    let (request, plan, fitted) = (outcome.request, &outcome.plan, outcome.fitted);
    let repo = &outcome.snapshot.repo;
    CompilationMeta {
        intent: request.intent.clone(),
        task_class: plan.task.task_class,
        files_selected: fitted.files.iter().filter(|f| f.tier.is_some()).count(),
        files_total: repo.total_files(),
        tokens_raw: repo.total_tokens,
        tokens_compiled: outcome.prompt.tokens,
        token_reduction_pct: round1(reduction(outcome) * 100.0),
        cache_hit: false,
        duration_ms: elapsed_ms(started),
        model_id: model_id(request, plan),
        editor_id: request.editor_id.clone(),
        transform_tokens_saved: TokenCount::from_u64(traced.transform_saved),
        summarisation_tiers: tier_counts(fitted),
        files_sliced: sliced_count(fitted),
        guard: outcome.facts.guard.clone(),
        context_completeness: aic_stages::rounded::round(
            traced.completeness / outcome.selection.ranked.files.len() as f64,
        ),
        budget: plan.budget.total,
        tokenizer: plan.tokens().tokenizer(),
        context_window: plan.budget.context_window,
        warnings,
        previously_shown: traced
            .files
            .iter()
            .filter(|f| f.tier.is_some_and(|t| fitted.is_marker(&f.file.path, t)))
            .map(|f| f.file.path.clone())
            .collect(),
    }
}

/// The compile's [`PipelineTrace`].
fn trace(
    outcome: &Outcome<'_>,
    traced: TracedFiles,
    cache: CacheReport,
    warnings: Vec<String>,
) -> PipelineTrace {
    let (request, plan, selection) = (outcome.request, &outcome.plan, outcome.selection);
    let (snapshot, fitted, facts) = (outcome.snapshot, outcome.fitted, outcome.facts);
    let project = &plan.project;
    let repo = &snapshot.repo;
    PipelineTrace {
        intent: request.intent.clone(),
        project_root: project.root.clone(),
        task_class: plan.task.clone(),
        rule_packs: plan.rule_packs.clone(),
        budget: plan.budget,
        tokenizer: plan.tokens().tokenizer(),
        overhead: fitted.overhead,
        code_budget: BudgetAllocator.code_budget(plan.budget.total, fitted.overhead),
        max_files: selection.max_files,
        max_files_auto: selection.max_files_auto,
        weights: selection.ranked.weights,
        import_graph: selection.import_graph,
        files_total: repo.total_files(),
        files_skipped: snapshot.skipped.clone(),
        candidates: selection.ranked.candidates,
        selected_files: traced.files,
        excluded: selection.ranked.exclusion_summary(),
        near_misses: selection
            .ranked
            .past_cap_files(repo)
            .take(NEAR_MISSES)
            .collect(),
        excluded_files: request
            .trace_all
            .then(|| selection.ranked.excluded_files(repo)),
        left_out_tracked: if request.explain_left_out {
            crate::pipeline::tree::left_out_tracked(
                &project.root,
                &snapshot.repo,
                project.config.repo_map.max_file_bytes,
            )
        } else {
            Vec::new()
        },
        guard: facts.guard.clone(),
        summarisation_tiers: tier_counts(fitted),
        targets: selection.targets.clone(),
        constraints: plan.pack.constraints.clone(),
        token_summary: TokenSummary {
            raw: repo.total_tokens,
            selected: TokenCount::from_u64(traced.selected_tokens),
            after_guard: TokenCount::from_u64(traced.after_guard),
            after_transforms: TokenCount::from_u64(traced.after_transforms),
            after_ladder: TokenCount::from_u64(traced.after_ladder),
            prompt_total: outcome.prompt.tokens,
            reduction_pct: round1(reduction(outcome) * 100.0),
        },
        file_tree_hash: snapshot.file_tree_hash.to_hex(),
        config_files: project.config_files.clone(),
        warnings,
        cache,
        // The compile fills these in once this phase is timed too.
        phase_times: Vec::new(),
        resident: None,
    }
}

/// The compilation an entry of the prompt cache answers: the stored prompt and
/// meta, marked as a cache hit, with this request's duration, editor and
/// model, and no trace. The per-file cache is committed first; its warning, if
/// any, joins the stored ones.
pub fn reused(
    request: &CompilationRequest,
    plan: &Plan,
    cached: CachedPrompt,
    cache: Option<FileCache>,
    started: Instant,
) -> Compilation {
    let warning = cache.and_then(|mut cache| cache.finish().1);
    let mut meta = cached.meta;
    meta.cache_hit = true;
    meta.duration_ms = elapsed_ms(started);
    meta.editor_id.clone_from(&request.editor_id);
    meta.model_id = model_id(request, plan);
    meta.tokenizer = plan.tokens().tokenizer();
    meta.context_window = plan.budget.context_window;
    meta.warnings.extend(warning);
    info!("Prompt cache hit");
    for warning in &meta.warnings {
        warn!("{warning}");
    }
    Compilation {
        prompt: cached.prompt,
        meta,
        selection: cached.selection,
        project_root: plan.project.root.clone(),
        config_hash: plan.project.config_hash.clone(),
        config_json: plan.project.config_json.clone(),
        classifier_confidence: cached.classifier_confidence,
        trace: None,
        shown: cached.shown,
    }
}

/// The trace entries of the selected files and the token sums over them.
struct TracedFiles {
    files: Vec<SelectedFileTrace>,
    transform_saved: u64,
    completeness: f64,
    selected_tokens: u64,
    after_guard: u64,
    after_transforms: u64,
    after_ladder: u64,
}

fn trace_files(selection: &Selection, facts: &SelectedFacts, fitted: &Fitted<'_>) -> TracedFiles {
    let tiers: BTreeMap<&RelativePath, Option<InclusionTier>> = fitted
        .files
        .iter()
        .map(|f| (&f.file.path, f.tier))
        .collect();
    let mut traced = TracedFiles {
        files: Vec::with_capacity(selection.ranked.files.len()),
        transform_saved: 0,
        completeness: 0.0,
        selected_tokens: 0,
        after_guard: 0,
        after_transforms: 0,
        after_ladder: 0,
    };
    for file in &selection.ranked.files {
        let facts = facts.of(&file.path);
        let tier = tiers.get(&file.path).copied().flatten();
        let (tokens_at_tier, reason) = match (facts, tier) {
            (_, None) if fitted.listed.contains(&file.path) => (
                TokenCount::ZERO,
                "below the relevance cut-off: listed by path in the notes".to_owned(),
            ),
            (None, _) => (TokenCount::ZERO, "unreadable".to_owned()),
            (Some(f), _) if f.guard.blocked => (TokenCount::ZERO, "blocked by guard".to_owned()),
            (Some(_), None) => (TokenCount::ZERO, "dropped to fit the budget".to_owned()),
            (Some(_), Some(_)) if fitted.slices.contains_key(&file.path) => {
                let slice = &fitted.slices[&file.path];
                (
                    slice.cost,
                    if slice.glimpse {
                        format!(
                            "an excerpt around the task's words ({} of {} lines)",
                            slice.kept_lines, slice.total_lines
                        )
                    } else {
                        format!(
                            "sliced around what the task points at ({} of {} lines)",
                            slice.kept_lines, slice.total_lines
                        )
                    },
                )
            }
            (Some(_), Some(_)) if fitted.sliced.as_ref() == Some(&file.path) => (
                TokenCount(fitted.tokens.0.saturating_sub(fitted.overhead.0)),
                "sliced to fit the budget: the lines around the intent's words".to_owned(),
            ),
            (Some(f), Some(tier)) => (
                fitted
                    .block_of(&file.path, f, tier)
                    .map_or(TokenCount::ZERO, |(_, cost)| cost),
                if fitted.is_marker(&file.path, tier) {
                    "previously shown in this session, unchanged: a marker instead of the body"
                        .to_owned()
                } else if file.target
                    && selection.targets.iter().all(|t| {
                        t.reference.syntax == aic_stages::select::targets::TargetSyntax::Diff
                            || !t.files.contains(&file.path)
                    })
                {
                    "changed in the diff".to_owned()
                } else if file.target {
                    "named in the intent".to_owned()
                } else if tier == InclusionTier::L0 {
                    "selected".to_owned()
                } else {
                    format!("selected, compressed to {} to fit the budget", tier.name())
                },
            ),
        };
        if let Some(f) = facts {
            traced.selected_tokens += f.original_tokens.get();
            if !f.guard.blocked {
                traced.after_guard += f.original_tokens.get();
                traced.after_transforms += f.transformed_tokens.get();
                if let Some(tier) = tier {
                    traced.after_ladder += tokens_at_tier.get();
                    traced.transform_saved += f
                        .original_tokens
                        .get()
                        .saturating_sub(f.transformed_tokens.get());
                    let full = f
                        .render(InclusionTier::L0)
                        .map_or(1, |r| r.block_tokens.get().max(1));
                    let slice = fitted.slices.get(&file.path);
                    traced.completeness +=
                        if let Some(slice) = slice.filter(|_| tier == InclusionTier::L0) {
                            slice.kept_lines as f64 / slice.total_lines.max(1) as f64
                        } else if tier == InclusionTier::L0
                            && fitted.sliced.as_ref() != Some(&file.path)
                        {
                            1.0
                        } else {
                            (tokens_at_tier.get() as f64 / full as f64).min(1.0)
                        };
                }
            }
        }
        traced.files.push(SelectedFileTrace {
            file: file.clone(),
            tier,
            tokens: tokens_at_tier,
            original_tokens: facts.map_or(TokenCount::ZERO, |f| f.original_tokens),
            transformed_tokens: facts.map_or(TokenCount::ZERO, |f| f.transformed_tokens),
            transforms_applied: facts
                .map(|f| f.transforms_applied.clone())
                .unwrap_or_default(),
            reason,
            sliced: tier.is_some()
                && (fitted.slices.contains_key(&file.path)
                    || fitted.sliced.as_ref() == Some(&file.path)),
        });
    }
    traced
}

fn log_cache(report: &CacheReport) {
    info!(
        "cache: scan {}/{} hits, imports {}/{}, facts {}/{}; {} rows written",
        report.scan.hits,
        report.scan.hits + report.scan.computed,
        report.imports.hits,
        report.imports.hits + report.imports.computed,
        report.facts.hits,
        report.facts.hits + report.facts.computed,
        report.rows_written
    );
}

/// The model id of the request, else of the config, else `unknown`.
fn model_id(request: &CompilationRequest, plan: &Plan) -> String {
    request
        .model_id
        .clone()
        .or_else(|| plan.project.config.model.id.clone())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Milliseconds since `started`.
pub(crate) fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}
