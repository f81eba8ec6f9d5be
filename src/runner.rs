//! The runner: one compile from request to prompt (ARCHITECTURE.md "Dataflow of
//! one compile"). It owns all I/O — resolving the root, loading config and rule
//! packs, the RepoMap scan, reading the selected files — and calls the pure stages
//! of `aic-stages` in the seed's order.
//!
//! The per-file stage runs as a rayon `par_iter` over the selected files; its
//! results are sorted by path before anything reads them, so the prompt is the
//! same bytes on one thread or many.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use aic_stages::assembler::{ContextFile, PromptAssembler, PromptParts};
use aic_stages::budget::{BudgetAllocator, BudgetInputs, TokenBudget};
use aic_stages::config::AicConfig;
use aic_stages::facts::{FactsContext, FileFacts, compute_facts};
use aic_stages::guard::{ContextGuard, GuardResult};
use aic_stages::import_graph::{ImportGraph, ImportGraphStats, ImportIndex, ProjectLayout};
use aic_stages::intent::{IntentClassifier, TaskClassification};
use aic_stages::ladder::{InclusionTier, LadderFile, SummarisationLadder, TierChoice};
use aic_stages::lang::{ImportRef, provider_for};
use aic_stages::repo_map::{ContentHash, Language, RelativePath, RepoMap, TokenCount};
use aic_stages::rule_pack::{PackSource, RulePackResolver};
use aic_stages::selector::{
    ExcludedFile, ExclusionReason, FirstPass, HeuristicSelector, ScoredFile, SignalWeights,
};
use aic_stages::slice::slice_to_fit;
use aic_stages::targets::{ResolvedTarget, TargetResolution, extract_targets, resolve_targets};
use aic_stages::tokens::TokenCounter;
use aic_stages::transform::ContentTransformerPipeline;
use rayon::prelude::*;
use serde::Serialize;
use tracing::{debug, info, warn};

use crate::config::load_config;
use crate::error::CompileError;
use crate::facts_cache::{CacheReport, FactsCache, open_store};
use crate::layout::read_layout;
use crate::scan::{ScanOptions, SkippedFiles, scan};
use crate::vcs::{GitRecency, read_git_recency};

/// Files scoring above this keep their exact syntax: lossy format-specific
/// transforms are bypassed (seed §8.5 "Transformer Bypass Policy").
const BYPASS_SCORE: f64 = 0.90;

/// The most near-miss files listed in a trace.
const NEAR_MISSES: usize = 20;

/// One compile's inputs (seed §2.2 `CompilationRequest`).
#[derive(Clone, Debug, Default)]
pub struct CompilationRequest {
    /// The user's intent, verbatim.
    pub intent: String,
    /// The project root as given (relative paths are resolved against the
    /// working directory).
    pub project_root: PathBuf,
    /// An explicit config file instead of the walk-up search.
    pub config_path: Option<PathBuf>,
    /// A total budget that overrides config and rule packs.
    pub budget: Option<TokenCount>,
    /// Bypass every content transformer (`--raw`; also `#raw` in the intent).
    pub raw: bool,
    /// The model id, when known.
    pub model_id: Option<String>,
    /// Who asked: `cli`, or an editor id.
    pub editor_id: String,
    /// Files a caller knows are related (seed §2.7 `toolOutputs.relatedFiles`):
    /// each adds a +0.2 boost pattern for that exact path.
    pub related_files: Vec<String>,
    /// Keep every excluded file in the trace, not only counts and near misses.
    pub trace_all: bool,
    /// Neither read nor write the per-file cache or the prompt cache
    /// (`--no-cache`; also `cache.enabled: false`).
    pub no_cache: bool,
    /// Answer from the whole-prompt cache when an identical request was
    /// compiled over the same files and config within `cache.ttlMinutes`, and
    /// store the result otherwise (seed §11). A hit has no
    /// [`Compilation::trace`], so `inspect` leaves this off.
    pub use_prompt_cache: bool,
    /// Extra key material for the prompt cache: a session and step (seed §2.7
    /// "Cache Keying for Sessions"), empty when there is none.
    pub session_key: String,
    /// What the agentic session layer adds (seed §2.7); empty for a
    /// single-shot compile.
    pub session: SessionInput,
    /// Set by the caller to stop the compile between stages: the compile then
    /// returns [`CompileError::Cancelled`] and caches nothing.
    pub cancel: Option<Arc<AtomicBool>>,
    /// An upper bound on the allocated total budget, in tokens, applied after
    /// config, rule packs and the session clamp (the MCP server keeps a reply
    /// within the client's result-size limit with it).
    pub budget_cap: Option<TokenCount>,
}

/// What the agentic session layer hands the pipeline (seed §2.7): the
/// `## Session context` header, the files already shown in the session, and the
/// tokens the conversation already holds.
#[derive(Clone, Debug, Default)]
pub struct SessionInput {
    /// Body of the `## Session context` section (the ConversationCompressor's
    /// step list), when the session has recorded steps.
    pub header: Option<String>,
    /// Files shown in earlier steps of the session, by path.
    pub previously_shown: BTreeMap<RelativePath, PreviousFile>,
    /// Tokens already in the agent's context window: the BudgetAllocator clamps
    /// the budget to the window's headroom (seed §2.7 "Budget allocation").
    pub conversation_tokens: Option<TokenCount>,
}

/// A file an earlier step of the session showed (seed §2.7 `PreviousFile`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviousFile {
    /// xxh3-128 of the content that was shown, hex.
    pub hash: String,
    /// The tier it was shown at.
    pub tier: InclusionTier,
    /// The step that showed it.
    pub step: u32,
}

/// A file whose content is in the prompt, with the hash of that content: what
/// the session layer records so a later step can mark it "previously shown".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShownFile {
    /// The file.
    pub path: RelativePath,
    /// Its tier in the prompt.
    pub tier: InclusionTier,
    /// xxh3-128 of its content, hex.
    pub hash: String,
}

/// Metadata returned with every compiled prompt (seed §2.2 `CompilationMeta`).
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompilationMeta {
    /// The intent, verbatim.
    pub intent: String,
    /// Assigned task class.
    pub task_class: aic_stages::intent::TaskClass,
    /// Files whose content is in the prompt.
    pub files_selected: usize,
    /// Files in the RepoMap.
    pub files_total: usize,
    /// Estimated tokens of every file in the RepoMap.
    pub tokens_raw: TokenCount,
    /// Exact tokens of the compiled prompt.
    pub tokens_compiled: TokenCount,
    /// `(tokensRaw − tokensCompiled) / tokensRaw`, in `[0, 1]`; 0 when raw is 0.
    pub token_reduction_pct: f64,
    /// Whether the prompt came from the prompt cache (always false until the cache
    /// exists).
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
    /// Files per inclusion tier.
    pub summarisation_tiers: BTreeMap<InclusionTier, usize>,
    /// The guard's verdict on the selected files.
    pub guard: GuardResult,
    /// Share of the selected files' full content that reached the prompt, in
    /// `[0, 1]` (a file at names-only counts its names' share, a dropped file 0).
    pub context_completeness: f64,
    /// The total budget the prompt was fitted to.
    pub budget: TokenCount,
    /// Things the user should know: unknown config keys, skipped rule packs, heavy
    /// truncation.
    pub warnings: Vec<String>,
    /// Files shown unchanged in an earlier step of the agentic session: each is
    /// a one-line "previously shown" marker instead of its body (seed §2.7).
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
}

/// Token totals at each step (seed §2.2 `PipelineTrace.tokenSummary`).
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
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExclusionSummary {
    /// Matched an `excludePatterns` glob.
    pub exclude_pattern: usize,
    /// Did not match `includePatterns`.
    pub not_included: usize,
    /// No path, import or symbol signal.
    pub zero_semantic_signal: usize,
    /// Ranked below the `maxFiles` cut.
    pub max_files: usize,
}

/// The full record of one compile (seed §2.2 `PipelineTrace`), without contents.
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
    /// Tokens of everything but file blocks.
    pub overhead: TokenCount,
    /// Budget left for file blocks.
    pub code_budget: TokenCount,
    /// The file cap in force, and whether it was automatic.
    pub max_files: usize,
    /// Whether `max_files` came from the seed formula.
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
    /// request asked for it ([`CompilationRequest::trace_all`]): rule exclusions
    /// and zero-signal files in path order, then the `maxFiles` cut in rank order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded_files: Option<Vec<ExcludedFile>>,
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
}

/// One file of the selection as logged and cached: no content.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
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

/// What the prompt cache stores for one compile.
#[derive(Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct CachedPrompt {
    prompt: String,
    meta: CompilationMeta,
    selection: Vec<SelectionEntry>,
    classifier_confidence: f64,
    #[serde(default)]
    shown: Vec<ShownFile>,
}

/// Runs one compile.
///
/// # Errors
///
/// [`CompileError`] for an empty intent, a bad root, an invalid config, no
/// relevant file, a guard that blocks everything, or a budget too small for any
/// file.
pub fn compile(request: &CompilationRequest) -> Result<Compilation, CompileError> {
    let started = Instant::now();
    let check_cancel = || match &request.cancel {
        Some(flag) if flag.load(Ordering::Relaxed) => Err(CompileError::Cancelled),
        _ => Ok(()),
    };
    let intent = request.intent.trim();
    if intent.is_empty() {
        return Err(CompileError::EmptyIntent);
    }
    let raw = request.raw || intent.split_whitespace().any(|word| word == "#raw");
    // `#raw` is a switch, not part of the task.
    let task_text: String = intent
        .split_whitespace()
        .filter(|word| *word != "#raw")
        .collect::<Vec<_>>()
        .join(" ");
    if task_text.is_empty() {
        return Err(CompileError::EmptyIntent);
    }
    let root = resolve_root(&request.project_root)?;
    // Every compile counts its prompt: build the encoder (about 0.15 s of CPU)
    // while the scan waits on the file system.
    if !TokenCounter::is_loaded() {
        std::thread::spawn(TokenCounter::preload);
    }
    let tokens = TokenCounter::cl100k();

    let loaded = load_config(&root, request.config_path.as_deref())?;
    let config = loaded.config;
    let mut warnings = Vec::new();
    if !loaded.unknown_keys.is_empty() {
        warnings.push(format!(
            "Ignoring unknown configuration keys: {}",
            loaded.unknown_keys.join(", ")
        ));
    }
    if config.context_selector.selector_type != "heuristic" {
        warnings.push(format!(
            "contextSelector.type `{}` is not available yet; using `heuristic`",
            config.context_selector.selector_type
        ));
    }

    let (classified_text, target_refs) = extract_targets(&task_text);
    let task = IntentClassifier.classify(&classified_text);
    info!("[classify]  Intent: {intent:?}");
    if !target_refs.is_empty() {
        info!(
            "[targets]   Named: {}",
            target_refs
                .iter()
                .map(|t| t.raw.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    info!(
        "[classify]  → TaskClass: {} (confidence: {:.2}, keywords: [{}]; subject: [{}])",
        task.task_class,
        task.confidence,
        task.matched_keywords.join(", "),
        task.subject_tokens.join(", ")
    );

    let plan = RulePackResolver.plan(task.task_class, &config.rule_packs);
    let resolved = RulePackResolver.resolve(task.task_class, &plan, |path| load_pack(&root, path));
    warnings.extend(resolved.warnings.iter().cloned());
    info!("[rules]     Loaded: {}", resolved.applied.join(", "));
    let pack = resolved.pack;

    let mut budget = BudgetAllocator.allocate(&BudgetInputs {
        // `--budget 0` means auto, like `contextBudget.maxTokens: 0`.
        request_override: request.budget.filter(|b| b.0 > 0),
        rule_pack_override: pack.budget_override_tokens(),
        per_task_class: config
            .context_budget
            .per_task_class
            .get(&task.task_class)
            .copied(),
        max_tokens: config.context_budget.max_tokens,
        context_window: config.context_budget.context_window,
        conversation_tokens: request.session.conversation_tokens,
    });
    if let Some(cap) = request.budget_cap {
        budget.total = budget.total.min(cap);
    }
    info!(
        "[budget]    Resolved: {} tokens ({:?})",
        budget.total, budget.source
    );

    let facts_cache = open_facts_cache(request.no_cache, &root, &config, &mut warnings);
    let cache = facts_cache.as_ref();

    // The git history read is independent of the scan: run it on its own thread
    // while the scan fans out over the rayon pool.
    let scan_started = Instant::now();
    let (scanned, git) = std::thread::scope(|scope| {
        let git = scope.spawn(|| {
            let started = Instant::now();
            let git = read_git_recency(&root, cache);
            debug!("Read git history and index in {:?}", started.elapsed());
            git
        });
        let scanned = scan(
            &root,
            ScanOptions {
                max_file_bytes: config.repo_map.max_file_bytes,
                cancel: request.cancel.as_deref(),
            },
            cache,
        );
        debug!("Scanned files in {:?}", scan_started.elapsed());
        (scanned, git.join().ok().flatten())
    });
    check_cancel()?;
    let mut repo = scanned.repo;
    debug!(
        "Scan and git done in {:?}: {} files (skipped: {:?})",
        scan_started.elapsed(),
        repo.total_files(),
        scanned.skipped
    );
    if let Some(git) = &git {
        apply_git_recency(&root, &mut repo, git);
        info!(
            "[recency]   git: {} commits read, {} files with history",
            git.commits_read,
            git.last_commit.len()
        );
    }

    let config_json = serde_json::to_string(&config).unwrap_or_default();
    let config_hash = ContentHash::of(config_json.as_bytes()).to_hex();
    let prompt_key = (request.use_prompt_cache && facts_cache.is_some()).then(|| {
        prompt_cache_key(&PromptKeyParts {
            intent,
            targets: &target_refs
                .iter()
                .map(|t| t.raw.clone())
                .collect::<Vec<_>>(),
            task_class: task.task_class.as_str(),
            root: &root,
            file_tree_hash: &repo.file_tree_hash().to_hex(),
            config_hash: &config_hash,
            // The allocated total, not only the requested one: conversation
            // tokens, the context window and the caller's cap all move it.
            budget: budget.total.0,
            raw,
            related: &request.related_files,
            session: &request.session_key,
        })
    });
    if let (Some(key), Some(cache)) = (&prompt_key, &facts_cache)
        && let Some(hit) = cache.prompt(key)
        && let Ok(cached) = serde_json::from_slice::<CachedPrompt>(&hit)
    {
        let (_, warning) = cache.finish();
        let mut meta = cached.meta;
        meta.cache_hit = true;
        meta.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        meta.editor_id.clone_from(&request.editor_id);
        meta.model_id = request
            .model_id
            .clone()
            .or_else(|| config.model.id.clone())
            .unwrap_or_else(|| "unknown".to_owned());
        meta.warnings.extend(warning);
        info!("[cache]     Prompt cache hit");
        let shown = cached.shown;
        for warning in &meta.warnings {
            warn!("{warning}");
        }
        return Ok(Compilation {
            prompt: cached.prompt,
            meta,
            selection: cached.selection,
            project_root: root,
            config_hash,
            config_json,
            classifier_confidence: cached.classifier_confidence,
            trace: None,
            shown,
        });
    }

    let max_files_auto = config.context_selector.max_files == 0;
    let max_files = if max_files_auto {
        BudgetAllocator.auto_max_files(repo.total_files(), budget.context_window)
    } else {
        config.context_selector.max_files as usize
    };
    // Packs and config globs are validated when loaded, so these two cannot fail
    // on user input.
    let selector = HeuristicSelector::new(&pack).map_err(|e| CompileError::Internal {
        message: e.to_string(),
    })?;
    let targets = resolve_targets(&target_refs, &repo, &root.to_string_lossy());
    let mut pinned: Vec<RelativePath> = Vec::new();
    for target in &targets {
        match target.resolution {
            TargetResolution::Unresolved => warnings.push(format!(
                "Target `{}` matches no file in scope; it was not guessed",
                target.reference.raw
            )),
            TargetResolution::Ambiguous => warnings.push(format!(
                "Target `{}` is ambiguous; name one of: {}",
                target.reference.raw,
                target
                    .candidates
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            _ => {
                for file in &target.files {
                    if !pinned.contains(file) {
                        pinned.push(file.clone());
                    }
                }
            }
        }
        info!(
            "[targets]   {} → {:?} {}",
            target.reference.raw,
            target.resolution,
            target
                .files
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let layout = read_layout(&root, &repo);
    // The graph-independent signals are computed once, for both the selection
    // that picks the files to parse imports of and the final one.
    let first_pass = selector.first_pass(&repo, &task, &pinned);
    let (graph, graph_stats, parsed) = build_import_graph(
        &root,
        &mut repo,
        &layout,
        &selector,
        first_pass.clone(),
        cache,
    );
    debug!(
        "Stage timing: {} done at {:?}",
        "imports",
        started.elapsed()
    );
    info!(
        "[imports]   {parsed} files parsed, {} imports, {} resolved to repository files, {} edges",
        graph_stats.imports, graph_stats.resolved, graph_stats.edges
    );
    let mut related: Vec<RelativePath> = Vec::new();
    for hint in &request.related_files {
        match RelativePath::new(hint.trim_start_matches("./"))
            .filter(|p| repo.files.binary_search_by(|f| f.path.cmp(p)).is_ok())
        {
            Some(path) => related.push(path),
            None => warnings.push(format!(
                "Related file `{hint}` is not in scope; it was ignored"
            )),
        }
    }
    check_cancel()?;
    let selector = selector.with_related(related);
    let selection = selector.finish(&repo, first_pass, max_files, Some(&graph));
    debug!("Stage timing: {} done at {:?}", "select", started.elapsed());
    info!(
        "[context]   Scanned {} files, {} candidates, selected {} (maxFiles {}{})",
        repo.total_files(),
        selection.candidates,
        selection.files.len(),
        max_files,
        if max_files_auto { " auto" } else { "" }
    );
    for file in &selection.files {
        debug!(
            "HeuristicSelector: {} scored {:.2} (pathRelevance: {:.2}, importProximity: {:.2}, symbolRelevance: {:.2}, contentRelevance: {:.2}, recency: {:.2}, sizePenalty: {:.2})",
            file.path,
            file.score,
            file.signals.path_relevance,
            file.signals.import_proximity,
            file.signals.symbol_relevance,
            file.signals.content_relevance,
            file.signals.recency,
            file.signals.size_penalty
        );
    }
    if selection.files.is_empty() {
        return Err(CompileError::NoRelevantFiles {
            files_total: repo.total_files(),
            subject_tokens: task.subject_tokens.clone(),
        });
    }

    let guard = ContextGuard::new(&config.guard).map_err(|e| CompileError::Internal {
        message: e.to_string(),
    })?;
    let transformers = ContentTransformerPipeline::new(&config.content_transformers);
    let context = FactsContext {
        guard: &guard,
        transformers: &transformers,
        tokens,
        raw,
    };
    let mut facts: Vec<FileFacts> = selection
        .files
        .par_iter()
        .filter_map(|file| {
            let hash = repo
                .files
                .binary_search_by(|f| f.path.cmp(&file.path))
                .ok()
                .map(|i| repo.files[i].content_hash);
            read_facts(&root, &context, file, hash, cache)
        })
        .collect();
    facts.sort_by(|a, b| a.path.cmp(&b.path));
    check_cancel()?;
    let facts_of = |path: &RelativePath| {
        facts
            .binary_search_by(|f| f.path.cmp(path))
            .ok()
            .map(|index| &facts[index])
    };

    let guard_result = ContextGuard::summarize(facts.iter().map(|f| (&f.path, &f.guard)));
    debug!("Stage timing: {} done at {:?}", "facts", started.elapsed());
    info!(
        "[guard]     Scanned {} files | {} blocked, {} findings",
        facts.len(),
        guard_result.files_blocked.len(),
        guard_result.findings.len()
    );
    let transformed = facts
        .iter()
        .filter(|f| !f.transforms_applied.is_empty())
        .count();
    let saved: u64 = facts
        .iter()
        .filter(|f| !f.guard.blocked)
        .map(|f| {
            f.original_tokens
                .get()
                .saturating_sub(f.transformed_tokens.get())
        })
        .sum();
    info!(
        "[transform] {} files | {transformed} transformed | {saved} tokens saved{}",
        facts.len(),
        if raw {
            " (raw: transformers bypassed)"
        } else {
            ""
        }
    );
    let safe: Vec<(&ScoredFile, &FileFacts)> = selection
        .files
        .iter()
        .filter_map(|file| facts_of(&file.path).map(|f| (file, f)))
        .filter(|(_, f)| !f.guard.blocked)
        .collect();
    if !guard_result.files_blocked.is_empty() || !guard_result.files_redacted.is_empty() {
        let list = |files: &[RelativePath]| {
            files
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        if !guard_result.files_blocked.is_empty() {
            parts.push(format!(
                "Context Guard blocked {} selected file(s): {}",
                guard_result.files_blocked.len(),
                list(&guard_result.files_blocked)
            ));
        }
        if !guard_result.files_redacted.is_empty() {
            parts.push(format!(
                "Context Guard redacted secrets in: {}",
                list(&guard_result.files_redacted)
            ));
        }
        let mut message = parts.join("; ");
        message.push_str(" (details: meta.guard, or `aic inspect`)");
        warnings.push(message);
    }
    if safe.is_empty() {
        return Err(CompileError::GuardBlockedAll {
            blocked: guard_result
                .files_blocked
                .iter()
                .map(ToString::to_string)
                .collect(),
        });
    }

    let parts = PromptParts {
        intent,
        classification: Some(&task),
        constraints: &pack.constraints,
        session_context: request.session.header.as_deref(),
        ..PromptParts::default()
    };
    let assembler = PromptAssembler;
    let fixed = format!(
        "{}{}{}",
        assembler.head(&parts),
        assembler.context_heading(),
        assembler.tail(&parts)
    );
    let overhead = tokens.count(&fixed);
    // Session deduplication (seed §2.7): a file an earlier step showed, unchanged
    // since, costs only a one-line marker at the tier it was shown at (and any
    // more compressed tier). A file the intent names is always shown.
    let content_hash_of = |path: &RelativePath| {
        repo.files
            .binary_search_by(|f| f.path.cmp(path))
            .ok()
            .map(|i| repo.files[i].content_hash.to_hex())
    };
    let markers: BTreeMap<RelativePath, PreviousMarker> = safe
        .iter()
        .filter(|(file, _)| !file.target)
        .filter_map(|(file, _)| {
            let previous = request.session.previously_shown.get(&file.path)?;
            (content_hash_of(&file.path)? == previous.hash).then(|| {
                let body = format!(
                    "[previously shown in step {} at {}; unchanged since, not repeated]",
                    previous.step,
                    previous.tier.name()
                );
                let cost = tokens.count(&assembler.file_block(&ContextFile {
                    path: file.path.clone(),
                    language: file.language,
                    tier: previous.tier,
                    body: body.clone(),
                    sliced: false,
                }));
                (
                    file.path.clone(),
                    PreviousMarker {
                        from: previous.tier,
                        body,
                        cost,
                    },
                )
            })
        })
        .collect();
    let block_of =
        |path: &RelativePath, facts: &FileFacts, tier: InclusionTier| match markers.get(path) {
            Some(marker) if tier >= marker.from => Some((marker.body.clone(), marker.cost)),
            _ => facts
                .render(tier)
                .map(|render| (render.body.clone(), render.block_tokens)),
        };
    let ladder_files: Vec<LadderFile> = safe
        .iter()
        .map(|(file, facts)| {
            let mut costs = facts.costs();
            if let Some(marker) = markers.get(&file.path) {
                for (tier, cost) in InclusionTier::ALL.iter().zip(costs.iter_mut()) {
                    if *tier == marker.from {
                        *cost = Some(marker.cost);
                    } else if *tier > marker.from {
                        *cost = None;
                    }
                }
            }
            LadderFile {
                path: file.path.clone(),
                score: file.score,
                costs,
                floor: file.target.then_some(InclusionTier::L0),
            }
        })
        .collect();
    let smallest = ladder_files
        .iter()
        .filter_map(|f| f.costs.iter().flatten().min().copied())
        .min()
        .unwrap_or(TokenCount::ZERO);

    // Fit, assemble, count; if joining blocks cost more than their parts, shrink
    // the code budget by the excess and fit again.
    //
    // The prompt's tokens are the fixed sections' plus each block's exact
    // tokens: every block ends with a fence and a blank line and the next
    // section starts with `#`, where cl100k's pre-tokenizer always splits, and
    // BPE never merges across its pieces. A long-lived process remembers each
    // block's count (by the hash of its text), so a warm compile does not
    // tokenise its prompt again. Debug builds (every test run) recount the
    // whole prompt to check the sum.
    let mut code_budget = BudgetAllocator.code_budget(budget.total, overhead);
    let (mut prompt, mut tiers, mut prompt_tokens) = loop {
        check_cancel()?;
        let (tiers, _) = SummarisationLadder.fit(&ladder_files, code_budget);
        let mut block_tokens = 0u64;
        let blocks: Vec<ContextFile> = safe
            .iter()
            .zip(&tiers)
            .filter_map(|((file, facts), tier)| {
                let tier = (*tier)?;
                let (body, _) = block_of(&file.path, facts, tier)?;
                let block = ContextFile {
                    path: file.path.clone(),
                    language: file.language,
                    tier,
                    body,
                    sliced: false,
                };
                block_tokens += u64::from(exact_block_tokens(assembler, &block, tokens));
                Some(block)
            })
            .collect();
        let prompt = assembler.assemble(&parts, &blocks);
        let prompt_tokens = TokenCount::from_u64(overhead.get() + block_tokens);
        debug_assert_eq!(
            prompt_tokens,
            tokens.count(&prompt),
            "block token counts must add up to the prompt's"
        );
        if prompt_tokens <= budget.total || code_budget.0 == 0 {
            break (prompt, tiers, prompt_tokens);
        }
        let excess = prompt_tokens.0 - budget.total.0;
        code_budget = TokenCount(code_budget.0.saturating_sub(excess.max(1)));
    };
    // The best file does not fit even as signatures (every file is dropped or
    // names only): rather than drop it silently or show only names, keep the
    // lines of the best file around the intent's words that fit the code
    // budget, with a note saying what was cut.
    let mut sliced_path: Option<RelativePath> = None;
    if tiers
        .iter()
        .all(|tier| matches!(tier, None | Some(InclusionTier::L3)))
        && let Some((file, facts)) = safe.first()
        && let Some(full) = facts.render(InclusionTier::L0)
    {
        let wrapper = tokens.count(&assembler.file_block(&ContextFile {
            path: file.path.clone(),
            language: file.language,
            tier: InclusionTier::L0,
            body: String::new(),
            sliced: false,
        }));
        let mut slice_budget = BudgetAllocator
            .code_budget(budget.total, overhead)
            .0
            .saturating_sub(wrapper.0);
        while slice_budget > 0 {
            let Some(sliced) = slice_to_fit(
                &full.body,
                &task.subject_tokens,
                TokenCount(slice_budget),
                tokens,
            ) else {
                break;
            };
            let block = ContextFile {
                path: file.path.clone(),
                language: file.language,
                tier: InclusionTier::L0,
                body: sliced.text.clone(),
                sliced: true,
            };
            let candidate = assembler.assemble(&parts, std::slice::from_ref(&block));
            let candidate_tokens = tokens.count(&candidate);
            if candidate_tokens <= budget.total {
                warnings.push(format!(
                    "`{}` is larger than the budget of {} tokens: only {} of its {} lines, around the intent's words, are in the prompt",
                    file.path,
                    budget.total,
                    sliced.kept.iter().map(|r| r.end() + 1 - r.start()).sum::<usize>(),
                    sliced.total_lines
                ));
                prompt = candidate;
                prompt_tokens = candidate_tokens;
                tiers = vec![None; safe.len()];
                tiers[0] = Some(InclusionTier::L0);
                sliced_path = Some(file.path.clone());
                break;
            }
            slice_budget = slice_budget.saturating_sub(candidate_tokens.0 - budget.total.0);
        }
    }
    let included = tiers.iter().filter(|t| t.is_some()).count();
    if included == 0 || prompt_tokens > budget.total {
        return Err(CompileError::BudgetTooSmall {
            budget: budget.total,
            overhead,
            smallest,
        });
    }

    let mut summarisation_tiers: BTreeMap<InclusionTier, usize> = BTreeMap::new();
    for tier in tiers.iter().flatten() {
        *summarisation_tiers.entry(*tier).or_default() += 1;
    }
    let dropped = tiers.iter().filter(|t| t.is_none()).count();
    let compressed = tiers
        .iter()
        .flatten()
        .filter(|t| **t != InclusionTier::L0)
        .count();
    if dropped > 0 {
        warnings.push(format!(
            "Heavy truncation: {dropped} of {} selected files did not fit the budget of {} tokens even as names; raise the budget or narrow the intent",
            safe.len(),
            budget.total
        ));
    }
    debug!("Stage timing: {} done at {:?}", "ladder", started.elapsed());
    info!(
        "[ladder]    {} files: {} full, {} compressed, {} dropped (code budget {})",
        safe.len(),
        included - compressed,
        compressed,
        dropped,
        code_budget
    );

    let tier_of: BTreeMap<&RelativePath, TierChoice> = safe
        .iter()
        .zip(&tiers)
        .map(|((file, _), tier)| (&file.path, *tier))
        .collect();
    let mut transform_saved = 0u64;
    let mut completeness = 0.0;
    let mut selected_tokens = 0u64;
    let mut after_guard = 0u64;
    let mut after_transforms = 0u64;
    let mut after_ladder = 0u64;
    let mut selected_files = Vec::with_capacity(selection.files.len());
    for file in &selection.files {
        let facts = facts_of(&file.path);
        let tier = tier_of.get(&file.path).copied().flatten();
        let (tokens_at_tier, reason) = match (facts, tier) {
            (None, _) => (TokenCount::ZERO, "unreadable".to_owned()),
            (Some(f), _) if f.guard.blocked => (TokenCount::ZERO, "blocked by guard".to_owned()),
            (Some(_), None) => (TokenCount::ZERO, "dropped to fit the budget".to_owned()),
            (Some(_), Some(_)) if sliced_path.as_ref() == Some(&file.path) => (
                TokenCount(prompt_tokens.0.saturating_sub(overhead.0)),
                "sliced to fit the budget: the lines around the intent's words".to_owned(),
            ),
            (Some(f), Some(tier)) => (
                block_of(&file.path, f, tier).map_or(TokenCount::ZERO, |(_, cost)| cost),
                if markers.get(&file.path).is_some_and(|m| tier >= m.from) {
                    "previously shown in this session, unchanged: a marker instead of the body"
                        .to_owned()
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
            selected_tokens += f.original_tokens.get();
            if !f.guard.blocked {
                after_guard += f.original_tokens.get();
                after_transforms += f.transformed_tokens.get();
                if let Some(tier) = tier {
                    after_ladder += tokens_at_tier.get();
                    transform_saved += f
                        .original_tokens
                        .get()
                        .saturating_sub(f.transformed_tokens.get());
                    let full = f
                        .render(InclusionTier::L0)
                        .map_or(1, |r| r.block_tokens.get().max(1));
                    completeness += if tier == InclusionTier::L0 {
                        1.0
                    } else {
                        (tokens_at_tier.get() as f64 / full as f64).min(1.0)
                    };
                }
            }
        }
        selected_files.push(SelectedFileTrace {
            file: file.clone(),
            tier,
            tokens: tokens_at_tier,
            original_tokens: facts.map_or(TokenCount::ZERO, |f| f.original_tokens),
            transformed_tokens: facts.map_or(TokenCount::ZERO, |f| f.transformed_tokens),
            transforms_applied: facts
                .map(|f| f.transforms_applied.clone())
                .unwrap_or_default(),
            reason,
        });
    }
    let context_completeness = round3(completeness / selection.files.len() as f64);

    let mut excluded = ExclusionSummary::default();
    for file in &selection.excluded {
        match file.reason {
            ExclusionReason::ExcludePattern { .. } => excluded.exclude_pattern += 1,
            ExclusionReason::NotIncluded => excluded.not_included += 1,
            ExclusionReason::ZeroSemanticSignal => excluded.zero_semantic_signal += 1,
            ExclusionReason::MaxFiles { .. } => excluded.max_files += 1,
        }
    }
    let near_misses: Vec<ExcludedFile> = selection
        .excluded
        .iter()
        .filter(|f| matches!(f.reason, ExclusionReason::MaxFiles { .. }))
        .take(NEAR_MISSES)
        .cloned()
        .collect();

    let raw_tokens = repo.total_tokens;
    let reduction = if raw_tokens.0 == 0 {
        0.0
    } else {
        (1.0 - f64::from(prompt_tokens.0) / f64::from(raw_tokens.0)).max(0.0)
    };
    debug!(
        "Stage timing: {} done at {:?}",
        "assemble",
        started.elapsed()
    );
    info!(
        "[assemble]  Compiled prompt: {} tokens (budget {}, overhead {})",
        prompt_tokens, budget.total, overhead
    );
    let selection_entries: Vec<SelectionEntry> = selected_files
        .iter()
        .map(|file| SelectionEntry {
            path: file.file.path.clone(),
            score: file.file.score,
            tier: file.tier,
            tokens: file.tokens,
            reason: file.reason.clone(),
        })
        .collect();
    let cache_report = match &facts_cache {
        Some(cache) => {
            let (report, warning) = cache.finish();
            warnings.extend(warning);
            report
        }
        None => CacheReport::default(),
    };
    info!(
        "[cache]     scan {}/{} hits, imports {}/{}, facts {}/{}; {} rows written",
        cache_report.scan.hits,
        cache_report.scan.hits + cache_report.scan.computed,
        cache_report.imports.hits,
        cache_report.imports.hits + cache_report.imports.computed,
        cache_report.facts.hits,
        cache_report.facts.hits + cache_report.facts.computed,
        cache_report.rows_written
    );
    for warning in &warnings {
        warn!("{warning}");
    }

    let meta = CompilationMeta {
        intent: request.intent.clone(),
        task_class: task.task_class,
        files_selected: included,
        files_total: repo.total_files(),
        tokens_raw: raw_tokens,
        tokens_compiled: prompt_tokens,
        token_reduction_pct: round3(reduction),
        cache_hit: false,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        model_id: request
            .model_id
            .clone()
            .or_else(|| config.model.id.clone())
            .unwrap_or_else(|| "unknown".to_owned()),
        editor_id: request.editor_id.clone(),
        transform_tokens_saved: TokenCount::from_u64(transform_saved),
        summarisation_tiers: summarisation_tiers.clone(),
        guard: guard_result.clone(),
        context_completeness,
        budget: budget.total,
        warnings: warnings.clone(),
        previously_shown: selected_files
            .iter()
            .filter(|f| {
                f.tier
                    .is_some_and(|t| markers.get(&f.file.path).is_some_and(|m| t >= m.from))
            })
            .map(|f| f.file.path.clone())
            .collect(),
    };
    let shown: Vec<ShownFile> = selected_files
        .iter()
        .filter_map(|f| {
            Some(ShownFile {
                path: f.file.path.clone(),
                tier: f.tier?,
                hash: content_hash_of(&f.file.path)?,
            })
        })
        .collect();
    let trace = PipelineTrace {
        intent: request.intent.clone(),
        project_root: root,
        task_class: task,
        rule_packs: resolved.applied,
        budget,
        overhead,
        code_budget: BudgetAllocator.code_budget(budget.total, overhead),
        max_files,
        max_files_auto,
        weights: selection.weights,
        import_graph: graph_stats,
        files_total: repo.total_files(),
        files_skipped: scanned.skipped,
        candidates: selection.candidates,
        selected_files,
        excluded,
        near_misses,
        excluded_files: request.trace_all.then(|| selection.excluded.clone()),
        guard: guard_result,
        summarisation_tiers,
        targets,
        constraints: pack.constraints,
        token_summary: TokenSummary {
            raw: raw_tokens,
            selected: TokenCount::from_u64(selected_tokens),
            after_guard: TokenCount::from_u64(after_guard),
            after_transforms: TokenCount::from_u64(after_transforms),
            after_ladder: TokenCount::from_u64(after_ladder),
            prompt_total: prompt_tokens,
            reduction_pct: round3(reduction * 100.0),
        },
        file_tree_hash: repo.file_tree_hash().to_hex(),
        config_files: loaded.files,
        warnings,
        cache: cache_report,
    };
    let classifier_confidence = trace.task_class.confidence;
    if let (Some(key), Some(cache)) = (&prompt_key, &facts_cache) {
        let cached = CachedPrompt {
            prompt: prompt.clone(),
            meta: meta.clone(),
            selection: selection_entries.clone(),
            classifier_confidence,
            shown: shown.clone(),
        };
        if let Ok(bytes) = serde_json::to_vec(&cached) {
            let ttl_ms = u64::from(config.cache.ttl_minutes) * 60_000;
            cache.put_prompt(key, &bytes, ttl_ms);
        }
    }
    Ok(Compilation {
        prompt,
        meta,
        selection: selection_entries,
        project_root: trace.project_root.clone(),
        config_hash,
        config_json,
        classifier_confidence,
        trace: Some(trace),
        shown,
    })
}

/// The exact tokens of a file's block in the prompt, remembered by the hash of
/// the block's text when the in-process memo is on.
fn exact_block_tokens(
    assembler: PromptAssembler,
    block: &ContextFile,
    tokens: TokenCounter,
) -> u32 {
    let text = assembler.file_block(block);
    let memo = crate::memo::get();
    let hash = memo.map(|_| u128::from_be_bytes(ContentHash::of(text.as_bytes()).0));
    if let (Some(memo), Some(hash)) = (memo, hash)
        && let Some(count) = memo.block_tokens(hash)
    {
        return count;
    }
    let count = tokens.count(&text).0;
    if let (Some(memo), Some(hash)) = (memo, hash) {
        memo.put_block_tokens(hash, count);
    }
    count
}

/// A "previously shown" marker of session deduplication.
struct PreviousMarker {
    /// The tier the file was shown at: this tier and more compressed ones show
    /// the marker.
    from: InclusionTier,
    /// The marker line.
    body: String,
    /// Tokens of the marker's block.
    cost: TokenCount,
}

/// What a prompt cache key is made of (seed §11, §2.7 "Cache Keying for
/// Sessions"). Unlike the seed's key, the normalised intent is part of it: two
/// intents of one task class never share an entry.
struct PromptKeyParts<'a> {
    intent: &'a str,
    targets: &'a [String],
    task_class: &'a str,
    root: &'a Path,
    file_tree_hash: &'a str,
    config_hash: &'a str,
    budget: u32,
    raw: bool,
    related: &'a [String],
    session: &'a str,
}

/// The 32-byte prompt cache key: two xxh3-128 digests (seeds 0 and 1) of the
/// parts, each length-prefixed; the intent with its whitespace collapsed, the
/// targets and related files sorted and deduplicated.
fn prompt_cache_key(parts: &PromptKeyParts<'_>) -> [u8; 32] {
    let intent = parts
        .intent
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut targets = parts.targets.to_vec();
    targets.sort();
    targets.dedup();
    let mut related = parts.related.to_vec();
    related.sort();
    related.dedup();
    let mut material = Vec::new();
    let mut push = |field: &str| {
        material.extend_from_slice(&(field.len() as u64).to_le_bytes());
        material.extend_from_slice(field.as_bytes());
    };
    push("aic-prompt-v1");
    // A new aic (or new stages) may compile differently: never reuse its
    // predecessor's prompts.
    push(env!("CARGO_PKG_VERSION"));
    push(aic_stages::facts_codec::STAGES_SOURCE_HASH);
    push(&intent);
    push(&targets.join("\n"));
    push(parts.task_class);
    push(&parts.root.to_string_lossy());
    push(parts.file_tree_hash);
    push(parts.config_hash);
    push(&parts.budget.to_string());
    push(if parts.raw { "raw" } else { "" });
    push(&related.join("\n"));
    push(parts.session);
    let mut key = [0u8; 32];
    key[..16].copy_from_slice(&xxhash_rust::xxh3::xxh3_128_with_seed(&material, 0).to_be_bytes());
    key[16..].copy_from_slice(&xxhash_rust::xxh3::xxh3_128_with_seed(&material, 1).to_be_bytes());
    key
}

fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// Candidates whose imports are parsed for the import graph: the best of them by
/// every other signal. Files outside this set can only be reached as targets of
/// their imports; they rarely rank in the selection anyway, and parsing every
/// file of a large repository costs more than the rest of a compile.
const IMPORT_PARSE_CANDIDATES: usize = 200;

/// Builds the import graph lazily: parses the imports of the targets and the
/// [`IMPORT_PARSE_CANDIDATES`] best candidates (by every signal but import
/// proximity), then once more for the files those reach within two steps, so
/// the search from the seeds can go on through them. Returns the graph, its
/// statistics and the number of files parsed. Deterministic: which files are
/// parsed depends only on scores and paths.
fn build_import_graph(
    root: &Path,
    repo: &mut RepoMap,
    layout: &ProjectLayout,
    selector: &HeuristicSelector,
    first_pass: FirstPass,
    cache: Option<&FactsCache>,
) -> (ImportGraph, ImportGraphStats, usize) {
    let started = Instant::now();
    let preliminary = selector.finish(repo, first_pass, IMPORT_PARSE_CANDIDATES, None);
    debug!("imports: preliminary selection in {:?}", started.elapsed());
    let index_of = |repo: &RepoMap, path: &RelativePath| {
        repo.files.binary_search_by(|f| f.path.cmp(path)).ok()
    };
    let mut wanted: Vec<usize> = preliminary
        .files
        .iter()
        .filter_map(|f| index_of(repo, &f.path))
        .collect();
    let mut parsed = vec![false; repo.files.len()];
    let mut parsed_count = 0;
    let mut memo = Vec::new();
    // Imports are kept beside the RepoMap while the rounds run, so that one
    // path index serves every round; they move into the RepoMap at the end.
    let mut imports_of: Vec<Vec<ImportRef>> = vec![Vec::new(); repo.files.len()];
    let result = {
        let files: &RepoMap = repo;
        let index = ImportIndex::new(files);
        let mut round = 0;
        loop {
            wanted.sort_unstable();
            wanted.dedup();
            wanted.retain(|&i| !parsed[i]);
            let imports: Vec<(usize, Vec<ImportRef>)> = wanted
                .par_iter()
                .map(|&i| {
                    let file = &files.files[i];
                    (
                        i,
                        parse_imports(root, &file.path, file.language, file.content_hash, cache),
                    )
                })
                .collect();
            for (i, file_imports) in imports {
                parsed[i] = true;
                parsed_count += 1;
                imports_of[i] = file_imports;
                if let Some(slot) = memo.get_mut(i) {
                    *slot = None;
                }
            }
            debug!("imports: round {round} parsed at {:?}", started.elapsed());
            let (graph, stats) =
                ImportGraph::build_indexed(files, layout, &index, &imports_of, &mut memo);
            debug!(
                "imports: round {round} graph built at {:?}",
                started.elapsed()
            );
            round += 1;
            if round == 2 {
                break (graph, stats, parsed_count);
            }
            // Files two steps from a parsed file are parsed in the second round.
            let mut next = Vec::new();
            for (i, done) in parsed.iter().enumerate() {
                if !done {
                    continue;
                }
                for &first in &graph.forward[i] {
                    next.push(first as usize);
                    next.extend(graph.forward[first as usize].iter().map(|&j| j as usize));
                }
            }
            wanted = next;
        }
    };
    for (file, file_imports) in repo.files.iter_mut().zip(imports_of) {
        if !file_imports.is_empty() {
            file.imports = file_imports;
        }
    }
    result
}

/// A file's imports, from the cache by its scanned content hash, else read and
/// parsed with its language provider; no imports when it cannot be read or is
/// not code.
pub(crate) fn parse_imports(
    root: &Path,
    path: &RelativePath,
    language: Language,
    hash: ContentHash,
    cache: Option<&FactsCache>,
) -> Vec<ImportRef> {
    if !language.is_code() {
        return Vec::new();
    }
    if let Some(imports) = cache.and_then(|cache| cache.imports(hash, path, language)) {
        return imports;
    }
    let Ok(bytes) = fs_err::read(root.join(path.as_str())) else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let imports = isolate(path, || {
        provider_for(path, language).parse_imports(&text, path)
    });
    if let (Some(cache), Some(imports)) = (cache, &imports) {
        cache.put_imports(ContentHash::of(&bytes), path, language, imports);
    }
    imports.unwrap_or_default()
}

/// Opens the per-file cache unless the request or config turns it off; a
/// database that cannot be opened is a warning and a compile without a cache.
pub(crate) fn open_facts_cache(
    no_cache: bool,
    root: &Path,
    config: &AicConfig,
    warnings: &mut Vec<String>,
) -> Option<FactsCache> {
    if no_cache || !config.cache.enabled {
        return None;
    }
    // redb can panic on a damaged file instead of returning an error.
    let opened = std::panic::catch_unwind(|| {
        open_store().and_then(|store| FactsCache::open(store, root, config))
    })
    .unwrap_or_else(|_| {
        Err(format!(
            "the aic database under `{}` is damaged (remove or move it aside to start with an empty cache)",
            crate::facts_cache::aic_home()
                .map(|home| home.display().to_string())
                .unwrap_or_default()
        ))
    });
    match opened {
        Ok(cache) => Some(cache),
        Err(message) => {
            warnings.push(format!("Compiling without the per-file cache: {message}"));
            None
        }
    }
}

/// Replaces each file's recency time with what git knows: uncommitted changes are
/// newer than every commit, committed files take their last commit time, and
/// files untouched in the commits read are older than all of those.
fn apply_git_recency(root: &Path, repo: &mut RepoMap, git: &GitRecency) {
    let newest_commit_ms = git.last_commit.values().copied().max().unwrap_or(0) * 1000;
    for file in &mut repo.files {
        let path = file.path.as_str();
        let read = || fs_err::read(root.join(path)).ok();
        file.recency_ms = if git.is_dirty(path, file.size_bytes, file.last_modified_ms, read) {
            file.last_modified_ms.max(newest_commit_ms + 1000)
        } else {
            git.last_commit
                .get(path)
                .map_or(0, |seconds| seconds * 1000)
        };
    }
}

/// Canonicalises the root and checks it is a directory.
///
/// # Errors
///
/// [`CompileError::RootNotFound`], [`CompileError::RootUnreadable`] or
/// [`CompileError::RootNotDirectory`], naming the root as given.
pub fn resolve_root(root: &Path) -> Result<PathBuf, CompileError> {
    if !root.exists() {
        return Err(CompileError::RootNotFound {
            path: root.to_path_buf(),
        });
    }
    let canonical = fs_err::canonicalize(root).map_err(|source| CompileError::RootUnreadable {
        path: root.to_path_buf(),
        source: std::io::Error::new(source.kind(), source.to_string()),
    })?;
    if !canonical.is_dir() {
        return Err(CompileError::RootNotDirectory {
            path: root.to_path_buf(),
        });
    }
    fs_err::read_dir(&canonical).map_err(|source| CompileError::RootUnreadable {
        path: root.to_path_buf(),
        source: std::io::Error::new(source.kind(), source.to_string()),
    })?;
    Ok(canonical)
}

/// Reads a project rule pack for the resolver.
fn load_pack(root: &Path, relative: &str) -> PackSource {
    let path = root.join(relative);
    match fs_err::read_to_string(&path) {
        Ok(text) => PackSource::Text(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => PackSource::Missing,
        Err(error) => PackSource::Unreadable(error.to_string()),
    }
}

/// One selected file's facts: from the cache by its scanned content hash, else
/// read and computed; `None` when it can no longer be read (deleted since the
/// scan), which the trace reports.
fn read_facts(
    root: &Path,
    context: &FactsContext<'_>,
    file: &ScoredFile,
    hash: Option<ContentHash>,
    cache: Option<&FactsCache>,
) -> Option<FileFacts> {
    let bypass = file.target || file.score > BYPASS_SCORE;
    if let (Some(cache), Some(hash)) = (cache, hash)
        && let Some(facts) = cache.facts(hash, &file.path, file.language, context.raw, bypass)
    {
        return Some(facts);
    }
    let bytes = fs_err::read(root.join(file.path.as_str())).ok()?;
    let facts = isolate(&file.path, || {
        compute_facts(context, &file.path, file.language, &bytes, bypass)
    })?;
    if let Some(cache) = cache {
        cache.put_facts(&facts, context.raw, bypass);
    }
    Some(facts)
}

/// Runs one file's work so that a panic in it (a bug in a stage, a parser failure)
/// costs that file only: it is reported and left out, and the compile goes on
/// (STYLE.md §2.3.3, after ruff's `catch_unwind` per file).
fn isolate<T>(path: &RelativePath, work: impl FnOnce() -> T) -> Option<T> {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    if outcome.is_err() {
        warn!("Internal error while processing `{path}`; the file was left out (please report it)");
    }
    outcome.ok()
}

/// `aic precompute`'s inputs.
#[derive(Clone, Debug)]
pub struct PrecomputeRequest {
    /// The project root as given.
    pub project_root: PathBuf,
    /// An explicit config file instead of the walk-up search.
    pub config_path: Option<PathBuf>,
}

/// What a precompute did.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrecomputeReport {
    /// The project root.
    pub project_root: PathBuf,
    /// Files in the RepoMap.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// What the cache did (hits were already cached).
    pub cache: CacheReport,
    /// Warnings (config, cache writes).
    pub warnings: Vec<String>,
}

/// Fills the per-file cache for every file of a repository: the scan facts,
/// the imports of code files and the FileFacts (guard, transforms, tier
/// renders) at the default settings (no `#raw`, no bypass), all in parallel.
/// `progress` is called with the number of files whose facts are done, from
/// rayon workers; `on_total` once with the number of files.
///
/// # Errors
///
/// [`CompileError`] for a bad root or config, and [`CompileError::Internal`]
/// when the database cannot be opened (precompute without a cache is useless).
pub fn precompute(
    request: &PrecomputeRequest,
    on_total: &dyn Fn(u64),
    progress: &(dyn Fn(u64) + Sync),
) -> Result<PrecomputeReport, CompileError> {
    let started = Instant::now();
    let root = resolve_root(&request.project_root)?;
    let loaded = load_config(&root, request.config_path.as_deref())?;
    let config = loaded.config;
    let mut warnings = Vec::new();
    let cache = open_store()
        .and_then(|store| FactsCache::open(store, &root, &config))
        .map_err(|message| CompileError::Internal {
            message: format!("The per-file cache cannot be opened: {message}"),
        })?;
    let scanned = scan(
        &root,
        ScanOptions {
            max_file_bytes: config.repo_map.max_file_bytes,
            cancel: None,
        },
        Some(&cache),
    );
    let repo = scanned.repo;
    on_total(repo.files.len() as u64);
    let guard = ContextGuard::new(&config.guard).map_err(|e| CompileError::Internal {
        message: e.to_string(),
    })?;
    let transformers = ContentTransformerPipeline::new(&config.content_transformers);
    let context = FactsContext {
        guard: &guard,
        transformers: &transformers,
        tokens: TokenCounter::cl100k(),
        raw: false,
    };
    let done = std::sync::atomic::AtomicU64::new(0);
    repo.files.par_iter().for_each(|file| {
        let hash = file.content_hash;
        let _ = parse_imports(&root, &file.path, file.language, hash, Some(&cache));
        if cache
            .facts(hash, &file.path, file.language, false, false)
            .is_none()
            && let Ok(bytes) = fs_err::read(root.join(file.path.as_str()))
            && let Some(facts) = isolate(&file.path, || {
                compute_facts(&context, &file.path, file.language, &bytes, false)
            })
        {
            cache.put_facts(&facts, false, false);
        }
        let count = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        progress(count);
    });
    let (report, warning) = cache.finish();
    warnings.extend(warning);
    Ok(PrecomputeReport {
        project_root: root,
        files: repo.files.len(),
        bytes: repo.files.iter().map(|f| f.size_bytes).sum(),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        cache: report,
        warnings,
    })
}
