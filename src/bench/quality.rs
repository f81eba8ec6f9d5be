//! One task's quality run: aic's ranking and compiled prompts, and the
//! baselines' rankings, on a worktree checked out at the task's `base_commit`.
//!
//! aic runs in-process, through the same [`compile`] call `aic inspect` and
//! `aic compile` make: the ranking is the trace of a compile with `maxFiles`
//! set by a scratch config (its selected files, best first, then its near
//! misses), and each manifest budget gets one more compile whose prompt is
//! searched for the gold files' blocks. The prompt cache is off for these
//! compiles (each needs its trace); the per-file cache is on, in the
//! harness's own `AIC_HOME`, as an editor would use it.
//!
//! When the task has a fix ([`edit_sites::task_patch`]), each budget's
//! prompt is also measured by its [edit sites](edit_sites), and so is the
//! `chunk-bm25` baseline's prompt at the same budget ([`chunks`](crate::bench::chunks); at
//! `default`, aic's prompt tokens at that budget).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use aic_stages::fit::tokens::TokenCount;
use serde::{Deserialize, Serialize};

use crate::bench::baselines;
use crate::bench::checkout::Checkout;
use crate::bench::chunks::ChunkIndex;
use crate::bench::edit_sites::{self, EditSites, Hunk};
use crate::bench::manifest::BudgetSpec;
use crate::bench::metrics::{self, GoldInPrompt, RankScores};
use crate::host::Host;
use crate::pipeline::{Compilation, CompilationRequest, compile};

/// How many of a method's ranked files `results.json` keeps (the metrics
/// use the whole ranking through `goldRanks`).
pub const KEPT_RANKED: usize = 30;

/// One line of a task file (`../shared/bench` format; other fields ignored).
#[derive(Clone, Debug, Deserialize)]
pub struct Task {
    /// Unique id.
    pub id: String,
    /// `owner/name`.
    pub repo: String,
    /// The commit to compile against.
    pub base_commit: String,
    /// The intent, verbatim.
    pub intent: String,
    /// The files the task's fix changed (repository-relative paths).
    pub gold_files: Vec<String>,
    /// The fix as a unified diff (a task line's own, or the set's `patches`
    /// file joined by id).
    #[serde(default)]
    pub gold_patch: Option<String>,
    /// The commit that made the fix; its diff is the fix when there is no
    /// `gold_patch`.
    #[serde(default)]
    pub commit: Option<String>,
}

/// One method's ranking of one task.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MethodResult {
    /// The first [`KEPT_RANKED`] ranked files, best first.
    pub ranked: Vec<String>,
    /// Files ranked in all.
    pub ranked_total: usize,
    /// The 1-based rank of each gold file (`null`: not ranked).
    pub gold_ranks: Vec<Option<usize>>,
    /// The metrics of this ranking.
    pub scores: RankScores,
    /// Why aic ranked nothing (a failed compile), when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl MethodResult {
    fn new(gold: &[String], ranked: &[String], error: Option<String>) -> Self {
        let ranked = metrics::normalise(ranked);
        let gold_ranks = metrics::gold_ranks(gold, &ranked);
        Self {
            scores: metrics::rank_scores(&gold_ranks),
            ranked_total: ranked.len(),
            ranked: ranked.into_iter().take(KEPT_RANKED).collect(),
            gold_ranks,
            error,
        }
    }
}

/// One compile of a task at one budget.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetResult {
    /// `default` or the budget in tokens.
    pub budget: String,
    /// Where the gold files stand in the prompt; `null` when the compile failed.
    pub gold: Option<GoldInPrompt>,
    /// Tokens of the compiled prompt (cl100k).
    pub prompt_tokens: Option<u64>,
    /// Tokens of the selected files as read (before transforms and tiers).
    pub selected_tokens: Option<u64>,
    /// `1 − promptTokens ÷ selectedTokens`, in `[0, 1]` (0 when nothing was selected).
    pub reduction: Option<f64>,
    /// The compile's error, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Edit sites per prompt method (`aic`, `chunk-bm25`), when the task has
    /// hunks; a failed compile shows none of them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub edit_sites: BTreeMap<String, EditSites>,
    /// How aic's slices are cut: markers against the definitions they show;
    /// absent when the compile failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_shape: Option<metrics::SliceShape>,
}

/// One task's record.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskResult {
    /// The task id.
    pub id: String,
    /// `owner/name`.
    pub repo: String,
    /// The commit compiled against.
    pub base_commit: String,
    /// The gold files, repeats dropped.
    pub gold: Vec<String>,
    /// Why the task was not run (`null` when it ran).
    pub skipped: Option<String>,
    /// Gold files absent from the worktree (their blob is missing from the
    /// clone, or they are not in the tree); they stay gold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_gold: Vec<String>,
    /// Where the fix's diff came from: `gold_patch` or `commit`; absent when
    /// the task has no fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Why the fix's diff could not be read, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_error: Option<String>,
    /// The fix's hunks in gold files (`path:first-last`, old lines), the
    /// order of each budget's `editSites.*.covered`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hunks: Vec<String>,
    /// Each method's ranking, by method name (`aic` and the baselines).
    pub methods: BTreeMap<String, MethodResult>,
    /// aic's compiles, one per manifest budget, in manifest order.
    pub budgets: Vec<BudgetResult>,
}

impl TaskResult {
    /// The record of a task that did not run.
    pub fn skipped(task: &Task, reason: String) -> Self {
        Self {
            id: task.id.clone(),
            repo: task.repo.clone(),
            base_commit: task.base_commit.clone(),
            gold: metrics::unique(&task.gold_files),
            skipped: Some(reason),
            missing_gold: Vec::new(),
            patch: None,
            patch_error: None,
            hunks: Vec::new(),
            methods: BTreeMap::new(),
            budgets: Vec::new(),
        }
    }
}

/// What every task of a run shares.
#[derive(Debug)]
pub struct QualitySettings<'a> {
    /// The host aic compiles with.
    pub host: &'a Host,
    /// The scratch config that sets `maxFiles` for the ranking compile.
    pub ranking_config: &'a Path,
    /// The budgets to compile at.
    pub budgets: &'a [BudgetSpec],
    /// The baselines: rankings, and `chunk-bm25` (a prompt baseline).
    pub baselines: &'a [String],
}

/// Runs one task on a worktree already checked out at its `base_commit`;
/// returns its record and the wall time of the ranking compile in seconds.
pub fn run_task(
    settings: &QualitySettings<'_>,
    root: &Path,
    checkout: &Checkout,
    task: &Task,
) -> (TaskResult, f64) {
    let gold = metrics::unique(&task.gold_files);
    let missing_gold = gold
        .iter()
        .filter(|g| checkout.missing.contains(g) || !root.join(g).exists())
        .cloned()
        .collect();
    let mut methods = BTreeMap::new();

    let started = Instant::now();
    let ranking = compile_at(
        settings.host,
        root,
        &task.intent,
        Some(settings.ranking_config),
        None,
    );
    let ranking_seconds = started.elapsed().as_secs_f64();
    let (ranked, error) = match &ranking {
        Ok(compilation) => (aic_ranking(compilation), None),
        Err(error) => (Vec::new(), Some(error.clone())),
    };
    methods.insert("aic".to_owned(), MethodResult::new(&gold, &ranked, error));

    let (patch, patch_error, hunks) = match edit_sites::task_patch(task, root) {
        None => (None, None, Vec::new()),
        Some(Err(error)) => (None, Some(error), Vec::new()),
        Some(Ok((source, text))) => {
            let hunks = edit_sites::gold_hunks(&text, &gold);
            let error = hunks
                .is_empty()
                .then(|| "the fix has no hunk in a gold file".to_owned());
            (Some(source.name().to_owned()), error, hunks)
        }
    };
    let mut budgets: Vec<BudgetResult> = settings
        .budgets
        .iter()
        .map(|budget| {
            let compiled = compile_at(settings.host, root, &task.intent, None, budget.tokens());
            budget_result(&gold, &hunks, *budget, compiled)
        })
        .collect();
    if !hunks.is_empty() && settings.baselines.iter().any(|b| b == CHUNK_BM25) {
        let index = ChunkIndex::build(root, &checkout.files, &task.intent);
        for (spec, result) in settings.budgets.iter().zip(&mut budgets) {
            let (budget, same_as_aic) = match spec.tokens() {
                Some(tokens) => (Some(u64::from(tokens)), false),
                None => (result.prompt_tokens, true),
            };
            let Some(budget) = budget else {
                continue;
            };
            let packed = index.pack(budget);
            if let Some(mut sites) = edit_sites::measure(&hunks, &packed.blocks, packed.tokens) {
                sites.budget_tokens = same_as_aic.then_some(budget);
                result.edit_sites.insert(CHUNK_BM25.to_owned(), sites);
            }
        }
    }

    let last_commit = settings
        .baselines
        .iter()
        .any(|b| b == "recency")
        .then(|| crate::pipeline::scan::git::read_git_recency(root, None, None, None))
        .flatten()
        .map(|recency| recency.last_commit)
        .unwrap_or_default();
    for name in settings.baselines {
        let ranked = match name.as_str() {
            "bm25" => baselines::bm25(root, &checkout.files, &task.intent),
            "path-keywords" => baselines::path_keywords(&checkout.files, &task.intent),
            "recency" => baselines::recency(&checkout.files, &last_commit),
            _ => continue,
        };
        methods.insert(name.clone(), MethodResult::new(&gold, &ranked, None));
    }

    let result = TaskResult {
        id: task.id.clone(),
        repo: task.repo.clone(),
        base_commit: task.base_commit.clone(),
        gold,
        skipped: None,
        missing_gold,
        patch,
        patch_error,
        hunks: hunks.iter().map(Hunk::location).collect(),
        methods,
        budgets,
    };
    (result, ranking_seconds)
}

/// One in-process compile, as `aic compile --json` would make it (the prompt
/// cache off, so the trace is there); the error as its first line.
fn compile_at(
    host: &Host,
    root: &Path,
    intent: &str,
    config: Option<&Path>,
    budget: Option<u32>,
) -> Result<Compilation, String> {
    let request = CompilationRequest {
        intent: intent.to_owned(),
        project_root: root.to_path_buf(),
        config_path: config.map(Path::to_path_buf),
        budget: budget.map(TokenCount),
        editor_id: "cli".to_owned(),
        use_prompt_cache: false,
        // Gold bodies are read from the Markdown headings, whatever a
        // repository's `output.format` says.
        format: Some(aic_stages::fit::assembler::PromptFormat::Markdown),
        ..CompilationRequest::default()
    };
    compile(&request, host).map_err(|error| error.to_string())
}

/// The trace's selected files, best first, then its near misses.
fn aic_ranking(compilation: &Compilation) -> Vec<String> {
    compilation.trace.as_ref().map_or_else(Vec::new, |trace| {
        trace
            .selected_files
            .iter()
            .map(|f| f.file.path.as_str().to_owned())
            .chain(trace.near_misses.iter().map(|f| f.path.as_str().to_owned()))
            .collect()
    })
}

/// The name of the prompt baseline ([`chunks`](crate::bench::chunks)).
pub const CHUNK_BM25: &str = "chunk-bm25";

fn budget_result(
    gold: &[String],
    hunks: &[Hunk],
    budget: BudgetSpec,
    compiled: Result<Compilation, String>,
) -> BudgetResult {
    match compiled {
        Ok(compilation) => {
            let blocks = metrics::file_blocks(&compilation.prompt);
            let prompt_tokens = compilation.meta.tokens_compiled.get();
            let selected_tokens = compilation
                .trace
                .as_ref()
                .map(|trace| trace.token_summary.selected.get());
            let reduction = selected_tokens.map(|selected| {
                if selected == 0 {
                    0.0
                } else {
                    (1.0 - prompt_tokens as f64 / selected as f64).clamp(0.0, 1.0)
                }
            });
            let lines = metrics::file_block_lines(&compilation.prompt);
            BudgetResult {
                budget: budget.name(),
                gold: Some(metrics::gold_in_prompt(gold, &blocks)),
                prompt_tokens: Some(prompt_tokens),
                selected_tokens,
                reduction,
                error: None,
                edit_sites: edit_sites::measure(hunks, &lines, prompt_tokens)
                    .map(|sites| BTreeMap::from([("aic".to_owned(), sites)]))
                    .unwrap_or_default(),
                slice_shape: Some(metrics::slice_shape(&compilation.prompt)),
            }
        }
        Err(error) => BudgetResult {
            budget: budget.name(),
            gold: None,
            prompt_tokens: None,
            selected_tokens: None,
            reduction: None,
            error: Some(error),
            edit_sites: edit_sites::measure(hunks, &BTreeMap::new(), 0)
                .map(|sites| BTreeMap::from([("aic".to_owned(), sites)]))
                .unwrap_or_default(),
            slice_shape: None,
        },
    }
}
