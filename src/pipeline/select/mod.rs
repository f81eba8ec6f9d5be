//! The `select` phase: which files the prompt is about. The intent's named
//! targets are resolved against the snapshot, the graph-independent signals
//! are scored once, the import graph is built for the files that can matter
//! ([`graph`]), and the selector ranks every candidate with all signals and
//! cuts at `maxFiles`.

pub mod graph;
pub mod manifests;

use std::collections::HashMap;
use std::sync::Arc;

use aic_stages::fit::budget::BudgetAllocator;
use aic_stages::relative_path::RelativePath;
use aic_stages::select::import_graph::ImportGraphStats;
use aic_stages::select::selector;
use aic_stages::select::targets::{ResolvedTarget, TargetResolution, resolve_targets};
use tracing::{debug, info};

use crate::cache::FileCache;
use crate::error::CompileError;
use crate::pipeline::Cancel;
use crate::pipeline::prepare::Plan;
use crate::pipeline::scan::Snapshot;

/// What the `select` phase decided.
#[derive(Debug)]
pub struct Selection {
    /// Files the intent named, and how each was resolved.
    pub targets: Vec<ResolvedTarget>,
    /// The ranking: selected files best first, the excluded ones with reasons.
    pub ranked: selector::Selection,
    /// The import graph's size.
    pub import_graph: ImportGraphStats,
    /// The file cap in force.
    pub max_files: usize,
    /// Whether the cap came from the automatic rule (`maxFiles: 0`).
    pub max_files_auto: bool,
    /// Bytes of selected files already read from disk (for their imports), by
    /// index in the RepoMap: the facts phase does not read them again.
    pub read: HashMap<usize, Arc<[u8]>>,
    /// For an intent too vague to select on, the map of the top-level
    /// directories that goes with the orienting files.
    pub orientation: Option<String>,
    /// Selected files below the relevance cut-off
    /// ([`crate::pipeline::fit::SHOWN_RATIO`] of the best score), best
    /// first: listed by path in the prompt's notes, never read or shown.
    pub listed: Vec<RelativePath>,
}

/// The note a vague intent's prompt opens with (and its warning).
pub const VAGUE_NOTE: &str = "The task names no file, code name, error or specific word to select on, so this is an orienting context: the README, the manifests, the top-level layout and the entry points. Name a file, a function or the error to get a focused context";

/// Runs the `select` phase; its warnings (unresolved targets, related files
/// out of scope) go to `warnings`.
///
/// # Errors
///
/// [`CompileError::NoRelevantFiles`] when no candidate has a signal, and
/// [`CompileError::Cancelled`] when `cancel` is set by the end of the graph.
pub fn select(
    plan: &Plan,
    snapshot: &Snapshot,
    related_files: &[String],
    cache: Option<&FileCache>,
    cancel: Cancel<'_>,
    warnings: &mut Vec<String>,
) -> Result<Selection, CompileError> {
    let repo = &snapshot.repo;
    let root = &plan.project.root;
    let config = &plan.project.config;
    let max_files_auto = config.context_selector.max_files == 0;
    let max_files = if max_files_auto {
        BudgetAllocator.auto_max_files(repo.total_files(), plan.budget.context_window)
    } else {
        config.context_selector.max_files as usize
    };
    let started = std::time::Instant::now();
    let targets = resolve_targets(&plan.targets, repo, &root.to_string_lossy());
    let resolved_at = started.elapsed();
    let warned = warnings.len();
    let pinned = pinned_targets(&targets, root, config.repo_map.max_file_bytes, warnings);
    let target_warnings: Vec<String> = warnings[warned..].to_vec();
    // The graph-independent signals are computed once, for both the selection
    // that picks the files to parse imports of and the final one.
    let first_pass = plan.selector.first_pass(repo, &plan.task, &pinned);
    let first_pass_at = started.elapsed();
    let built = graph::build(
        root,
        config.repo_map.max_file_bytes,
        snapshot,
        &plan.selector,
        (&first_pass, {
            let mut also = graph::possible_importers(repo, &changed_files(&targets));
            if plan.orient {
                also.extend(graph::shallow_code_files(repo));
            }
            also
        }),
        max_files,
        cache,
    );
    let graph_at = started.elapsed();
    info!(
        "imports: {} files read, {} imports, {} resolved to repository files, {} edges",
        built.parsed, built.stats.imports, built.stats.resolved, built.stats.edges
    );
    let mut related: Vec<RelativePath> = Vec::new();
    for hint in related_files {
        match RelativePath::new(hint.trim_start_matches("./"))
            .filter(|p| repo.files.binary_search_by(|f| f.path.cmp(p)).is_ok())
        {
            Some(path) => related.push(path),
            None => warnings.push(format!(
                "Related file `{hint}` is not in scope; it was ignored"
            )),
        }
    }
    cancel.check()?;
    let has_related = !related.is_empty();
    let mut ranked = plan.selector.clone().with_related(related).finish(
        repo,
        &first_pass,
        max_files,
        Some(&built.graph),
    );
    debug!(
        "select: targets {resolved_at:?}, first pass {:?}, graph {:?}, ranking {:?}",
        first_pass_at.saturating_sub(resolved_at),
        graph_at.saturating_sub(first_pass_at),
        started.elapsed().saturating_sub(graph_at)
    );
    info!(
        "Scanned {} files, {} candidates, selected {} (maxFiles {}{})",
        repo.total_files(),
        ranked.candidates,
        ranked.files.len(),
        max_files,
        if max_files_auto { " auto" } else { "" }
    );
    for file in &ranked.files {
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
    let mut orientation = None;
    let vague = aic_stages::select::orientation::is_vague(
        &plan.task,
        // Any file the intent names, found or not, makes it specific.
        !plan.targets.is_empty() || has_related,
        (!ranked.files.is_empty()).then_some(&ranked.files[..]),
    );
    if (plan.orient || vague) && orient(&mut ranked, repo, &plan.selector, &built.graph) {
        if !plan.orient {
            warnings.push(VAGUE_NOTE.to_owned());
        }
        orientation = Some(aic_stages::select::orientation::directory_map(repo));
    }
    if ranked.files.is_empty() {
        return Err(CompileError::NoRelevantFiles {
            files_total: repo.total_files(),
            subject_tokens: plan.task.subject_tokens.clone(),
            unresolved_targets: target_warnings,
        });
    }
    let mut read = built.read;
    let selected: std::collections::HashSet<usize> = ranked
        .files
        .iter()
        .filter_map(|file| repo.files.binary_search_by(|f| f.path.cmp(&file.path)).ok())
        .collect();
    read.retain(|index, _| selected.contains(index));
    let listed = below_cutoff(&ranked.files);
    Ok(Selection {
        targets,
        ranked,
        import_graph: built.stats,
        max_files,
        max_files_auto,
        read,
        listed,
        orientation,
    })
}

/// The files below the relevance cut-off, best first: neither named, nor
/// related, nor orienting, and scoring under
/// [`crate::pipeline::fit::SHOWN_RATIO`] of the best file the intent does
/// not name.
fn below_cutoff(files: &[selector::ScoredFile]) -> Vec<RelativePath> {
    let best = files
        .iter()
        .filter(|f| !f.target)
        .map(|f| f.score)
        .fold(0.0, f64::max);
    files
        .iter()
        .filter(|f| {
            !f.target
                && f.boosted_by.iter().all(|b| {
                    b != selector::RELATED_FILE && b != aic_stages::select::orientation::ORIENTING
                })
        })
        .filter(|f| best > 0.0 && f.score < crate::pipeline::fit::SHOWN_RATIO * best)
        .map(|f| f.path.clone())
        .collect()
}

/// Replaces the ranking with the orienting files the selector's patterns
/// admit; the files it had go to the excluded ones. Returns false (and
/// changes nothing) when there is no such file.
fn orient(
    ranked: &mut selector::Selection,
    repo: &aic_stages::repo_map::RepoMap,
    selector: &selector::HeuristicSelector,
    graph: &aic_stages::select::import_graph::ImportGraph,
) -> bool {
    let mut files = aic_stages::select::orientation::orienting_files(repo);
    files.extend(aic_stages::select::orientation::central_files(
        repo, graph, &files,
    ));
    // `--include`, `--scope` and `--exclude` hold for the orienting files too.
    files.retain(|file| selector.admits(&file.path));
    if files.is_empty() {
        return false;
    }
    let chosen: std::collections::HashSet<usize> = files
        .iter()
        .filter_map(|f| repo.files.binary_search_by(|e| e.path.cmp(&f.path)).ok())
        .collect();
    ranked.unexclude(repo, &chosen);
    let chosen_paths: std::collections::HashSet<&RelativePath> =
        files.iter().map(|f| &f.path).collect();
    for file in std::mem::take(&mut ranked.files) {
        if !chosen_paths.contains(&file.path) {
            ranked.excluded.push(selector::ExcludedFile {
                path: file.path,
                score: Some(file.score),
                reason: selector::ExclusionReason::VagueIntent,
            });
        }
    }
    ranked.files = files;
    ranked.truncated = false;
    true
}

/// The files a diff changed (targets of [`TargetSyntax::Diff`]): their
/// importers are looked for when the import graph is built.
///
/// [`TargetSyntax::Diff`]: aic_stages::select::targets::TargetSyntax::Diff
fn changed_files(targets: &[ResolvedTarget]) -> Vec<RelativePath> {
    targets
        .iter()
        .filter(|t| t.reference.syntax == aic_stages::select::targets::TargetSyntax::Diff)
        .flat_map(|t| t.files.iter().cloned())
        .collect()
}

/// The files the resolved targets pin, in order; unresolved and ambiguous
/// targets become warnings instead.
fn pinned_targets(
    targets: &[ResolvedTarget],
    root: &std::path::Path,
    max_file_bytes: u64,
    warnings: &mut Vec<String>,
) -> Vec<RelativePath> {
    let mut pinned: Vec<RelativePath> = Vec::new();
    // The tracked files, read once and only for a guessed target.
    let mut tracked: Option<Vec<String>> = None;
    for target in targets {
        let named = target.reference.raw.trim_start_matches("./");
        if target.resolution == TargetResolution::Inferred
            && target.reference.syntax != aic_stages::select::targets::TargetSyntax::Diff
        {
            // A guess for a file that exists but is out of scope (too large,
            // ignored) would show another file: say why the named one is not
            // there instead.
            let tracked = tracked.get_or_insert_with(|| {
                crate::pipeline::scan::git::tracked_files(root).unwrap_or_default()
            });
            let on_disk = if RelativePath::new(named).is_some() && root.join(named).is_file() {
                Some(named.to_owned())
            } else {
                tracked
                    .iter()
                    .find(|path| {
                        (path.as_str() == named || path.ends_with(&format!("/{named}")))
                            && !target.files.iter().any(|f| f.as_str() == path.as_str())
                            && root.join(path.as_str()).is_file()
                    })
                    .cloned()
            };
            if let Some(path) = on_disk {
                warnings.push(
                    crate::pipeline::scan::walk::builtin_exclusion(root, &path, max_file_bytes)
                        .unwrap_or_else(|| {
                            format!(
                                "`{path}` exists but is not in scope (ignored by the project's ignore files, binary, or kept out by the guard)"
                            )
                        })
                        + "; it was not swapped for a similar name",
                );
                continue;
            }
            // A close spelling, not a path ending: say which file it became.
            if let Some(file) = target
                .files
                .iter()
                .find(|f| f.as_str() != named && !f.as_str().ends_with(&format!("/{named}")))
            {
                warnings.push(format!(
                    "`{named}` matches no file; it was taken to mean `{file}`"
                ));
            }
        }
        match target.resolution {
            TargetResolution::Unresolved => warnings.push(
                crate::pipeline::scan::walk::builtin_exclusion(
                    root,
                    target.reference.raw.trim_start_matches("./"),
                    max_file_bytes,
                )
                .unwrap_or_else(|| {
                    format!(
                        "Target `{}` matches no file in scope; it was not guessed",
                        target.reference.raw
                    )
                }),
            ),
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
            "target {} → {:?} {}",
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
    pinned
}
