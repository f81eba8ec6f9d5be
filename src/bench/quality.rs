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

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use aic_stages::fit::tokens::TokenCount;
use serde::{Deserialize, Serialize};

use crate::bench::baselines;
use crate::bench::checkout::Checkout;
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
    /// The baselines to rank with.
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

    let budgets = settings
        .budgets
        .iter()
        .map(|budget| {
            let compiled = compile_at(settings.host, root, &task.intent, None, budget.tokens());
            budget_result(&gold, *budget, compiled)
        })
        .collect();

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
            _ => baselines::recency(&checkout.files, &last_commit),
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

fn budget_result(
    gold: &[String],
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
            BudgetResult {
                budget: budget.name(),
                gold: Some(metrics::gold_in_prompt(gold, &blocks)),
                prompt_tokens: Some(prompt_tokens),
                selected_tokens,
                reduction,
                error: None,
            }
        }
        Err(error) => BudgetResult {
            budget: budget.name(),
            gold: None,
            prompt_tokens: None,
            selected_tokens: None,
            reduction: None,
            error: Some(error),
        },
    }
}
