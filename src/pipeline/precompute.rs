//! `aic precompute`: fills the per-file cache for a whole repository with what
//! any later compile would compute — the scan terms, the imports of code files
//! and the FileFacts at the default settings (no `#raw`, no bypass) — so that a
//! CI job can hand a warm cache to a fleet of machines.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use aic_stages::facts::compute_facts;
use rayon::prelude::*;
use serde::Serialize;

use crate::cache::CacheReport;
use crate::error::CompileError;
use crate::host::Host;
use crate::pipeline::account::elapsed_ms;
use crate::pipeline::prepare::Project;
use crate::pipeline::scan::scan;
use crate::pipeline::select::graph::{ParsedImports, parse_imports};
use crate::pipeline::{file_cache, isolate};

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

/// Fills the per-file cache for every file of a repository, in parallel; a
/// file whose rows are missing is read once for all of them. `on_total` is
/// called once with the number of files; `progress` with the number of files
/// done, from rayon workers.
///
/// # Errors
///
/// [`CompileError`] for a bad root or config, and [`CompileError::Internal`]
/// when the database cannot be opened (precompute without a cache is useless).
pub fn precompute(
    request: &PrecomputeRequest,
    host: &Host,
    on_total: &dyn Fn(u64),
    progress: &(dyn Fn(u64) + Sync),
) -> Result<PrecomputeReport, CompileError> {
    let started = Instant::now();
    let project = Project::load(&request.project_root, request.config_path.as_deref())?;
    let mut warnings = project.warnings.clone();
    let mut cache = file_cache(host, &project).map_err(|error| CompileError::Internal {
        message: format!("The per-file cache cannot be opened: {}", error.with_hint()),
    })?;
    let snapshot = scan(&project, Some(&cache), None);
    let repo = &snapshot.repo;
    on_total(repo.files.len() as u64);
    let context = project.facts_context(false);
    let done = AtomicU64::new(0);
    repo.files.par_iter().for_each(|file| {
        let hash = file.content_hash;
        let ParsedImports { bytes, .. } =
            parse_imports(&project.root, &file.path, file.language, hash, Some(&cache));
        if cache
            .facts(hash, &file.path, file.language, false, false)
            .is_none()
        {
            let bytes = bytes.or_else(|| fs_err::read(project.root.join(file.path.as_str())).ok());
            if let Some(bytes) = bytes
                && let Some(facts) = isolate(&file.path, || {
                    compute_facts(&context, &file.path, file.language, &bytes, false)
                })
            {
                cache.put_facts(&facts, false, false);
            }
        }
        let count = done.fetch_add(1, Ordering::Relaxed) + 1;
        progress(count);
    });
    let (report, warning) = cache.finish();
    warnings.extend(warning);
    Ok(PrecomputeReport {
        project_root: project.root.clone(),
        files: repo.files.len(),
        bytes: repo.files.iter().map(|f| f.size_bytes).sum(),
        duration_ms: elapsed_ms(started),
        cache: report,
        warnings,
    })
}
