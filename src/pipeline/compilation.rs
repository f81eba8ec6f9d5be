//! What the pipeline returns: the [`Compilation`] with its [`CompilationMeta`]
//! and, unless it came from the prompt cache, its [`PipelineTrace`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use aic_stages::fit::budget::TokenBudget;
use aic_stages::fit::ladder::InclusionTier;
use aic_stages::fit::tokens::{TokenCount, Tokenizer};
use aic_stages::guard::GuardResult;
use aic_stages::relative_path::RelativePath;
use aic_stages::select::import_graph::ImportGraphStats;
use aic_stages::select::intent::TaskClassification;
use aic_stages::select::selector::{ExcludedFile, ScoredFile, SignalWeights};
use aic_stages::select::targets::ResolvedTarget;
use serde::{Deserialize, Serialize};

use crate::cache::CacheReport;
use crate::pipeline::scan::SkippedFiles;

/// A file whose content is in the prompt, with the hash of that content: what
/// the session layer records so a later step can mark it "previously shown".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShownFile {
    /// The file.
    pub path: RelativePath,
    /// Its tier in the prompt.
    pub tier: InclusionTier,
    /// xxh3-128 of its content, hex.
    pub hash: String,
}

/// Metadata returned with every compiled prompt.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompilationMeta {
    /// The intent, verbatim.
    pub intent: String,
    /// Assigned task class.
    pub task_class: aic_stages::select::intent::TaskClass,
    /// Files whose content is in the prompt.
    pub files_selected: usize,
    /// Files in the RepoMap.
    pub files_total: usize,
    /// Estimated tokens of every file in the RepoMap.
    pub tokens_raw: TokenCount,
    /// Exact tokens of the compiled prompt.
    pub tokens_compiled: TokenCount,
    /// `(tokensRaw − tokensCompiled) / tokensRaw` as a percentage in
    /// `[0, 100]`, to one decimal; 0 when raw is 0. (Every `…Pct` field of
    /// aic's JSON is a percentage; ratios are named `…Ratio`.)
    pub token_reduction_pct: f64,
    /// Whether the prompt came from the prompt cache.
    pub cache_hit: bool,
    /// Wall time of the compile in milliseconds (the only field that varies
    /// between identical runs).
    pub duration_ms: u64,
    /// The model id, or `unknown`.
    pub model_id: String,
    /// Who asked.
    pub editor_id: String,
    /// Tokens removed by content transformers over the files in the prompt.
    pub transform_tokens_saved: TokenCount,
    /// Files per inclusion tier (a sliced file counts at `full`).
    pub summarisation_tiers: BTreeMap<InclusionTier, usize>,
    /// Files shown as a slice of their lines (around the names, trace lines,
    /// hunks or words the task points at).
    #[serde(default)]
    pub files_sliced: usize,
    /// The guard's verdict on the selected files.
    pub guard: GuardResult,
    /// Share of the selected files' full content that reached the prompt, in
    /// `[0, 1]` (a file at names-only counts its names' share, a dropped file 0).
    pub context_completeness: f64,
    /// The total budget the prompt was fitted to, in `tokenizer`'s tokens.
    pub budget: TokenCount,
    /// The encoding every count of the compile was made in (`cl100k_base` or
    /// `o200k_base`), chosen by the model.
    pub tokenizer: Tokenizer,
    /// The context window the budget was computed against: configured, the
    /// model's (when the conversation's size is known), else 128,000.
    pub context_window: TokenCount,
    /// Things the user should know: unknown config keys, skipped rule packs, heavy
    /// truncation.
    pub warnings: Vec<String>,
    /// Files shown unchanged in an earlier step of the agentic session: each is
    /// a one-line "previously shown" marker instead of its body.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub previously_shown: Vec<RelativePath>,
}

/// One file of the prompt, for traces (no content).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectedFileTrace {
    /// The file as the selector scored it: path, language, score, signals,
    /// matched boost and penalize patterns, whether the intent named it.
    #[serde(flatten)]
    pub file: ScoredFile,
    /// Tier in the prompt; `None` when the ladder dropped it or the guard blocked it.
    pub tier: Option<InclusionTier>,
    /// Tokens of the file's block at its tier (0 when not in the prompt).
    pub tokens: TokenCount,
    /// Exact tokens of the content as read.
    pub original_tokens: TokenCount,
    /// Exact tokens after the content transformers (`originalTokens −
    /// transformedTokens` is what they saved on this file).
    pub transformed_tokens: TokenCount,
    /// Transformers applied.
    pub transforms_applied: Vec<String>,
    /// Why the file is in or out: `selected`, `blocked by guard`, `dropped to fit
    /// the budget`.
    pub reason: String,
    /// Whether the file is shown as a slice of its lines (its tier is then
    /// L0 with only the kept lines).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sliced: bool,
}

/// Token totals after each step of the pipeline.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenSummary {
    /// Estimated tokens of the whole RepoMap.
    pub raw: TokenCount,
    /// Exact tokens of the selected files as read.
    pub selected: TokenCount,
    /// Same, less files the guard blocked.
    pub after_guard: TokenCount,
    /// Same, after transforms.
    pub after_transforms: TokenCount,
    /// File blocks chosen by the ladder (headings and fences included).
    pub after_ladder: TokenCount,
    /// The whole prompt.
    pub prompt_total: TokenCount,
    /// `(raw − promptTotal) / raw × 100`.
    pub reduction_pct: f64,
}

/// Counts of files left out of the selection, by reason.
pub use aic_stages::select::selector::ExclusionSummary;

/// The full record of one compile, without file contents: what `aic inspect`
/// shows.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineTrace {
    /// The intent, verbatim.
    pub intent: String,
    /// The project root (absolute; traces are for the user, not the prompt).
    pub project_root: PathBuf,
    /// Classification.
    pub task_class: TaskClassification,
    /// Rule packs merged, in order.
    pub rule_packs: Vec<String>,
    /// The allocated budget.
    pub budget: TokenBudget,
    /// The encoding the budget and every count are in, chosen by the model.
    pub tokenizer: Tokenizer,
    /// Tokens of everything but file blocks.
    pub overhead: TokenCount,
    /// Budget left for file blocks.
    pub code_budget: TokenCount,
    /// The file cap in force, and whether it was automatic.
    pub max_files: usize,
    /// Whether `max_files` came from the automatic rule (`maxFiles: 0`).
    pub max_files_auto: bool,
    /// Signal weights used.
    pub weights: Option<SignalWeights>,
    /// Import graph size.
    pub import_graph: ImportGraphStats,
    /// Files in the RepoMap.
    pub files_total: usize,
    /// Files left out of the RepoMap by the scan.
    pub files_skipped: SkippedFiles,
    /// Candidates after rule-pack patterns.
    pub candidates: usize,
    /// The selected files, best first, with their fate.
    pub selected_files: Vec<SelectedFileTrace>,
    /// Files left out of the selection, by reason.
    pub excluded: ExclusionSummary,
    /// The best-scored files that missed the cut.
    pub near_misses: Vec<ExcludedFile>,
    /// Every file left out of the selection with its reason and score, when the
    /// request asked for it ([`CompilationRequest::trace_all`](super::CompilationRequest::trace_all)): rule exclusions
    /// and zero-signal files in path order, then the `maxFiles` cut in rank order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded_files: Option<Vec<ExcludedFile>>,
    /// Files git tracks that the scan left out (the built-in ignore list,
    /// the size cap, binary, ignore files or guard path rules), each with
    /// why and the fix, when the request asked for it
    /// ([`CompilationRequest::explain_left_out`](super::CompilationRequest::explain_left_out)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out_tracked: Vec<crate::pipeline::tree::LeftOutFile>,
    /// The guard's verdict.
    pub guard: GuardResult,
    /// Files per tier.
    pub summarisation_tiers: BTreeMap<InclusionTier, usize>,
    /// Files the intent named, and how each was resolved.
    pub targets: Vec<ResolvedTarget>,
    /// Merged constraints.
    pub constraints: Vec<String>,
    /// Token totals per step.
    pub token_summary: TokenSummary,
    /// xxh3-128 of the RepoMap's `path:size:mtime` lines.
    pub file_tree_hash: String,
    /// Config files read, nearest first.
    pub config_files: Vec<PathBuf>,
    /// Warnings, as in the meta.
    pub warnings: Vec<String>,
    /// What the per-file cache did.
    pub cache: CacheReport,
    /// Wall time of each phase, in the order they ran.
    pub phase_times: Vec<PhaseTime>,
    /// How a resident index answered the scan (a long-lived process: the
    /// MCP server, the daemon); absent for a one-shot compile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resident: Option<crate::resident::ResidentReport>,
}

/// How long one phase of a compile took.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseTime {
    /// The phase: `prepare`, `scan`, `select`, `facts`, `fit`, `assemble`,
    /// `account`.
    pub phase: &'static str,
    /// Wall time in milliseconds, to a microsecond.
    pub ms: f64,
}

/// One file of the selection as logged and cached: no content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectionEntry {
    /// The file.
    pub path: RelativePath,
    /// Its score in `[0, 1]`.
    pub score: f64,
    /// Its tier in the prompt, if it made it.
    pub tier: Option<InclusionTier>,
    /// Tokens of its block (0 when not in the prompt).
    pub tokens: TokenCount,
    /// Why it is in or out.
    pub reason: String,
}

/// A finished compile.
#[derive(Clone, Debug)]
pub struct Compilation {
    /// The compiled prompt.
    pub prompt: String,
    /// Its metadata.
    pub meta: CompilationMeta,
    /// The selected files, best first, with their fate (no content).
    pub selection: Vec<SelectionEntry>,
    /// The canonical project root.
    pub project_root: PathBuf,
    /// xxh3-128 of the resolved config's canonical JSON, hex.
    pub config_hash: String,
    /// The resolved config's canonical JSON (for `config_history`).
    pub config_json: String,
    /// The classifier's confidence in the task class, in `[0, 1]`.
    pub classifier_confidence: f64,
    /// The decision record; `None` for an answer from the prompt cache.
    pub trace: Option<PipelineTrace>,
    /// The files whose content (or marker) is in the prompt, with content hashes.
    pub shown: Vec<ShownFile>,
}
