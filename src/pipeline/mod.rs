//! The compile pipeline: one intent and one project in, one prompt out, as a
//! list of phases with typed hand-offs (`docs/architecture.md` draws them):
//!
//! | phase | module | produces |
//! | --- | --- | --- |
//! | prepare | [`prepare`] | [`Plan`]: project settings, task class, rule packs, budget, selector |
//! | scan | [`scan`] | [`Snapshot`]: the RepoMap with cached per-file terms and git recency |
//! | select | [`select`] | [`Selection`]: named targets, the import graph, the ranking |
//! | facts | [`facts`] | [`SelectedFacts`]: guard verdicts, transforms, tier renders |
//! | fit | [`fit`] | [`Fitted`]: a tier per file within the budget and size limit |
//! | assemble | [`assemble`] | [`Prompt`]: the prompt text |
//! | account | [`account`] | [`Compilation`]: meta, trace, cache writes |
//!
//! The per-file work of `scan`, `select` and `facts` runs in parallel on the
//! rayon pool and is sorted by path before anything reads it, so the prompt is
//! the same bytes on one thread or many. Each phase runs in a tracing span of
//! its name; `-v` prints what it decided and how long it took, and the trace
//! keeps the times ([`PipelineTrace::phase_times`]).
//!
//! [`Plan`]: prepare::Plan
//! [`Snapshot`]: scan::Snapshot
//! [`Selection`]: select::Selection
//! [`SelectedFacts`]: facts::SelectedFacts
//! [`Fitted`]: fit::Fitted
//! [`Prompt`]: assemble::Prompt

pub mod account;
pub mod assemble;
pub mod compilation;
pub mod diff;
pub mod facts;
pub mod fit;
pub mod precompute;
pub mod prepare;
pub mod prompt_cache;
pub mod request;
pub mod scan;
pub mod select;
pub mod spec;
pub mod tree;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use aic_stages::relative_path::RelativePath;
use tracing::{info, info_span, warn};

pub use compilation::{
    Compilation, CompilationMeta, ExclusionSummary, PhaseTime, PipelineTrace, SelectedFileTrace,
    SelectionEntry, ShownFile, TokenSummary,
};
pub use request::{CompilationRequest, PreviousFile, SessionInput, SizeLimit, SizeScope};

use crate::cache::FileCache;
use crate::error::CompileError;
use crate::host::Host;
use prompt_cache::CachedPrompt;

/// The most source bytes whose parse trees one compile keeps between its
/// select and facts phases (see [`aic_stages::lang::KeptTrees`]).
const KEPT_TREE_BYTES: usize = 4 << 20;

/// Runs one compile.
///
/// # Errors
///
/// [`CompileError`] for an empty intent, a bad root, an invalid config, no
/// relevant file, a guard that blocks everything, a budget too small for any
/// file, or a cancelled compile.
pub fn compile(request: &CompilationRequest, host: &Host) -> Result<Compilation, CompileError> {
    let started = Instant::now();
    // A secret pasted into the intent is redacted before anything uses or
    // stores it: the prompt's `## Task`, meta, the trace, the caches, the log.
    let redacted;
    let request = match aic_stages::guard::redact_secrets(&request.intent) {
        Some(intent) => {
            redacted = CompilationRequest {
                intent,
                ..request.clone()
            };
            &redacted
        }
        None => request,
    };
    let cancel = Cancel(request.cancel.as_deref());
    let mut times = PhaseTimes::default();
    let plan = times.run("prepare", || prepare::prepare(request))?;
    let mut warnings = plan.warnings.clone();
    let project = &plan.project;
    let cache = open_file_cache(host, project, request.no_cache, &mut warnings);
    let (snapshot, resident) = times.run("scan", || {
        if let Some(index) = host.resident() {
            let (snapshot, report) =
                index.snapshot(project, cache.as_ref(), cancel.0, !request.warm_up);
            return (snapshot, Some(report));
        }
        let prior = cache
            .as_ref()
            .and_then(|cache| saved_prior(host, project, cache));
        (
            std::sync::Arc::new(scan::scan(
                project,
                cache.as_ref(),
                cancel.0,
                prior.as_ref(),
            )),
            None,
        )
    });
    let snapshot = &*snapshot;
    cancel.check()?;
    let prompt_key = (request.use_prompt_cache && cache.is_some())
        .then(|| prompt_cache::key_for(request, &plan, snapshot));
    let hit = prompt_key
        .as_ref()
        .zip(cache.as_ref())
        .and_then(|(key, cache)| cache.prompt(key, host.clock()))
        .and_then(|bytes| serde_json::from_slice::<CachedPrompt>(&bytes).ok());
    if let Some(cached) = hit {
        return Ok(account::reused(request, &plan, cached, cache, started));
    }
    // The import graph parses the best candidates; the facts phase then
    // parses those selected again unless their trees are kept.
    let kept_trees = aic_stages::lang::keep_trees(KEPT_TREE_BYTES);
    let selection = times.run("select", || {
        select::select(
            &plan,
            snapshot,
            &request.related_files,
            cache.as_ref(),
            cancel,
            &mut warnings,
        )
    })?;
    let facts = times.run("facts", || {
        facts::facts(
            &plan,
            snapshot,
            &selection,
            cache.as_ref(),
            cancel,
            &mut warnings,
        )
    })?;
    let kept = kept_trees.report();
    drop(kept_trees);
    tracing::debug!(
        "kept trees: {} ({} bytes of source), {} parses saved",
        kept.trees,
        kept.source_bytes,
        kept.reused
    );
    if facts.blocks_everything(&selection) {
        let mut trace = account::blocked_trace(
            account::Blocked {
                request,
                plan,
                snapshot,
                selection: &selection,
                facts: &facts,
            },
            warnings,
        );
        trace.phase_times = times.0;
        trace.resident = resident;
        return Err(CompileError::GuardBlockedAll {
            blocked: facts.blocked_files(),
            trace: Some(Box::new(trace)),
        });
    }
    let options = fit::FitOptions {
        session: &request.session,
        limit: request.size_limit,
        memo: host.memo().map(AsRef::as_ref),
    };
    let fitted = times.run("fit", || {
        fit::fit(
            &plan,
            snapshot,
            &selection,
            &facts,
            options,
            cancel,
            &mut warnings,
        )
    })?;
    let prompt = times.run("assemble", || {
        assemble::assemble(&plan, &request.session, &fitted)
    });
    let mut compilation = times.run("account", || {
        account::account(
            account::Outcome {
                request,
                plan,
                snapshot,
                selection: &selection,
                facts: &facts,
                fitted: &fitted,
                prompt,
            },
            account::Keep {
                cache,
                prompt_key,
                clock: host.clock(),
                started,
            },
            warnings,
        )
    });
    if let Some(trace) = &mut compilation.trace {
        trace.phase_times = times.0;
        trace.resident = resident;
    }
    Ok(compilation)
}

/// Opens the per-file cache for a compile unless `no_cache` or `cache.enabled:
/// false` turns it off; a database that cannot be used is a warning and a
/// compile without the cache.
fn open_file_cache(
    host: &Host,
    project: &prepare::Project,
    no_cache: bool,
    warnings: &mut Vec<String>,
) -> Option<FileCache> {
    if no_cache || !project.config.cache.enabled {
        return None;
    }
    match file_cache(host, project) {
        Ok(cache) => Some(cache),
        Err(error) => {
            warnings.push(format!(
                "Compiling without the per-file cache: {}",
                error.with_hint()
            ));
            None
        }
    }
}

/// The per-file cache of `project` in `host`'s database, with its memo.
///
/// # Errors
///
/// [`DatabaseError`](crate::home::DatabaseError) when the database cannot be
/// opened or read.
pub(crate) fn file_cache(
    host: &Host,
    project: &prepare::Project,
) -> Result<FileCache, crate::home::DatabaseError> {
    let store = host.database()?;
    let cache = FileCache::open(
        store,
        &project.root,
        &project.config,
        host.memo().cloned(),
        host.clock(),
    )?;
    Ok(match host.remote_tier(&project.config.cache) {
        Some(tier) => cache.with_remote(tier),
        None => cache,
    })
}

/// The files of the project's saved resident snapshot (written by `aic
/// precompute` and the daemon) when there is one made under `cache`'s
/// settings: the walk then takes each unchanged file's hash and terms from it
/// instead of two database look-ups. `None` without a usable snapshot (why is
/// logged at debug level: a missing, foreign or damaged snapshot only costs
/// the look-ups it would have saved). Counted in the "scan" phase.
fn saved_prior(
    host: &Host,
    project: &prepare::Project,
    cache: &FileCache,
) -> Option<scan::prior::PriorFiles> {
    let saved = crate::resident::saved_snapshot_path(host.home()?, project);
    if !saved.is_file() {
        return None;
    }
    let started = Instant::now();
    match crate::resident::persist::load(&saved, cache.fingerprint()) {
        Ok((prior, _)) => {
            tracing::debug!(
                "Read {} files from `{}` ({:?})",
                prior.len(),
                saved.display(),
                started.elapsed()
            );
            cache.note_snapshot_loaded(prior.len());
            Some(prior)
        }
        Err(error) => {
            tracing::debug!(
                "The saved snapshot `{}` was not used: {error}",
                saved.display()
            );
            None
        }
    }
}

/// The caller's cancel flag, checked between phases and inside the scan.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cancel<'a>(pub Option<&'a AtomicBool>);

impl Cancel<'_> {
    /// `Err(Cancelled)` once the flag is set.
    ///
    /// # Errors
    ///
    /// [`CompileError::Cancelled`].
    pub fn check(&self) -> Result<(), CompileError> {
        match self.0 {
            Some(flag) if flag.load(Ordering::Relaxed) => Err(CompileError::Cancelled),
            _ => Ok(()),
        }
    }
}

/// The wall time of each phase, in the order they ran.
#[derive(Debug, Default)]
struct PhaseTimes(Vec<PhaseTime>);

impl PhaseTimes {
    /// Runs `work` as the phase `name`: inside its tracing span, timed, with
    /// its time logged at `-v`.
    fn run<T>(&mut self, name: &'static str, work: impl FnOnce() -> T) -> T {
        let _span = info_span!("phase", name).entered();
        let started = Instant::now();
        let result = work();
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        info!("{name} done in {ms:.1} ms");
        self.0.push(PhaseTime {
            phase: name,
            ms: round_us(ms),
        });
        result
    }
}

fn round_us(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

/// Runs one file's work so that a panic in it (a bug in a stage, a parser
/// failure) costs that file only: it is reported and left out, and the compile
/// goes on.
pub(crate) fn isolate<T>(path: &RelativePath, work: impl FnOnce() -> T) -> Option<T> {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    if outcome.is_err() {
        warn!("Internal error while processing `{path}`; the file was left out (please report it)");
    }
    outcome.ok()
}
