//! The `select` phase: which files the prompt is about. The intent's named
//! targets are resolved against the snapshot, the graph-independent signals
//! are scored once, the import graph is built for the files that can matter
//! ([`graph`]), and the selector ranks every candidate with all signals and
//! cuts at `maxFiles`.

pub mod graph;
pub mod manifests;

use std::collections::HashMap;
use std::sync::Arc;

use aic_stages::budget::BudgetAllocator;
use aic_stages::import_graph::ImportGraphStats;
use aic_stages::relative_path::RelativePath;
use aic_stages::selector;
use aic_stages::targets::{ResolvedTarget, TargetResolution, resolve_targets};
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
}

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
    let targets = resolve_targets(&plan.targets, repo, &root.to_string_lossy());
    let pinned = pinned_targets(&targets, warnings);
    let layout = manifests::read_layout(root, repo);
    // The graph-independent signals are computed once, for both the selection
    // that picks the files to parse imports of and the final one.
    let first_pass = plan.selector.first_pass(repo, &plan.task, &pinned);
    let built = graph::build(
        root,
        config.repo_map.max_file_bytes,
        repo,
        &layout,
        &plan.selector,
        first_pass.clone(),
        cache,
    );
    info!(
        "imports: {} files parsed, {} imports, {} resolved to repository files, {} edges",
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
    let ranked = plan.selector.clone().with_related(related).finish(
        repo,
        first_pass,
        max_files,
        Some(&built.graph),
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
    if ranked.files.is_empty() {
        return Err(CompileError::NoRelevantFiles {
            files_total: repo.total_files(),
            subject_tokens: plan.task.subject_tokens.clone(),
        });
    }
    let mut read = built.read;
    let selected: std::collections::HashSet<usize> = ranked
        .files
        .iter()
        .filter_map(|file| repo.files.binary_search_by(|f| f.path.cmp(&file.path)).ok())
        .collect();
    read.retain(|index, _| selected.contains(index));
    Ok(Selection {
        targets,
        ranked,
        import_graph: built.stats,
        max_files,
        max_files_auto,
        read,
    })
}

/// The files the resolved targets pin, in order; unresolved and ambiguous
/// targets become warnings instead.
fn pinned_targets(targets: &[ResolvedTarget], warnings: &mut Vec<String>) -> Vec<RelativePath> {
    let mut pinned: Vec<RelativePath> = Vec::new();
    for target in targets {
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
