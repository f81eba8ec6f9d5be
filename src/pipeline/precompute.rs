//! `aic precompute`: fills the per-file cache for a whole repository with what
//! any later compile would compute — the scan terms, the imports of code files
//! and the FileFacts at the default settings (no `#raw`, no bypass), and for
//! source code files also with format-specific transforms bypassed (how a
//! compile shows its best-ranked source files) — so that a CI job can hand a
//! warm cache to a fleet of machines.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use aic_stages::facts::compute_facts;
use aic_stages::fit::model::ModelProfile;
use aic_stages::fit::tokens::Tokenizer;
use aic_stages::relative_path::RelativePath;
use aic_stages::repo_map::FileEntry;
use dashmap::DashSet;
use rayon::prelude::*;
use serde::Serialize;

use aic_storage::{CacheReader, FactsKey};

use crate::cache::key::RowKind;
use crate::cache::remote::Stored;
use crate::cache::{BlobScanRow, CacheReport, FileCache};
use crate::error::CompileError;
use crate::host::Host;
use crate::pipeline::account::elapsed_ms;
use crate::pipeline::prepare::Project;
use crate::pipeline::scan::{Bounded, Shard, read_bounded, scan_shard};
use crate::pipeline::select::graph::{imports_from_bytes, parse_imports};
use crate::pipeline::{file_cache, isolate};

/// `aic precompute`'s inputs.
#[derive(Clone, Debug)]
pub struct PrecomputeRequest {
    /// The project root as given.
    pub project_root: PathBuf,
    /// An explicit config file instead of the walk-up search.
    pub config_path: Option<PathBuf>,
    /// Only this shard of the files (`--shard I/N`).
    pub shard: Option<Shard>,
    /// Write the rows the remote tier lacks to it afterwards (`--push`).
    pub push: bool,
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
    /// Megabytes (10^6 bytes) of the files per second of wall time.
    pub mb_per_second: f64,
    /// Files per second of wall time.
    pub files_per_second: f64,
    /// tree-sitter parses done (a code file's imports, comments, strings,
    /// signatures and names all come from one parse).
    pub parses: u64,
    /// The [`SLOWEST_REPORTED`] files whose facts this run computed that
    /// took longest to look up, read, parse and compute, slowest first (ties
    /// by path); empty when every file came from the cache.
    pub slowest: Vec<SlowFile>,
    /// The shard covered, one-based (`2/4`), when sharded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// What `--push` wrote to the remote tier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pushed: Option<Stored>,
}

/// How many of the slowest files a precompute reports.
pub const SLOWEST_REPORTED: usize = 5;

/// One file and the time its per-file work took.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SlowFile {
    /// The file.
    pub path: RelativePath,
    /// Its size in bytes.
    pub bytes: u64,
    /// Milliseconds from its cache look-up to its facts sent to the writer,
    /// rounded to 0.1 ms.
    pub ms: f64,
}

/// Adds `file` to the `SLOWEST_REPORTED` slowest kept, slowest first, ties by
/// path (a statistic gathered from rayon workers; its order is fixed here).
fn note_time(slowest: &Mutex<Vec<SlowFile>>, file: SlowFile) {
    let mut slowest = slowest.lock().unwrap_or_else(PoisonError::into_inner);
    if slowest.len() == SLOWEST_REPORTED && slowest.last().is_some_and(|last| last.ms >= file.ms) {
        return;
    }
    slowest.push(file);
    slowest.sort_by(|a, b| b.ms.total_cmp(&a.ms).then_with(|| a.path.cmp(&b.path)));
    slowest.truncate(SLOWEST_REPORTED);
}

/// Fills the per-file cache for every file of a repository, in parallel. A
/// file is read once for all its rows: a file the scan reads (new or changed)
/// gets its imports and facts from those bytes as the scan goes; a file the
/// path index answers is read afterwards only when a row is missing.
/// `on_total` is called once with the number of files, after the scan;
/// `progress` with the number of files done, from rayon workers.
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
    // Rows for the configured model's encoding: the one its compiles read.
    let tokens = ModelProfile::for_model(project.config.model.id.as_deref()).counter();
    let context = project.facts_context(false, tokens);
    let max_file_bytes = project.config.repo_map.max_file_bytes;
    let done = AtomicU64::new(0);
    let parses = AtomicU64::new(0);
    let slowest: Mutex<Vec<SlowFile>> = Mutex::new(Vec::new());
    // Imports and facts of one file, from `bytes` when the scan has just read
    // them, else read here when a row is missing.
    let process = |file: &FileEntry, bytes: Option<&[u8]>| {
        let started = Instant::now();
        let setup_before = aic_stages::work::setup_ns();
        let parses_before = aic_stages::work::parses();
        let hash = file.content_hash;
        let mut read = None;
        match bytes {
            Some(bytes) => {
                imports_from_bytes(&file.path, file.language, hash, bytes, Some(&cache));
            }
            None => {
                read = parse_imports(
                    &project.root,
                    max_file_bytes,
                    &file.path,
                    file.language,
                    hash,
                    Some(&cache),
                )
                .bytes;
            }
        }
        let computed = fill_facts(
            &cache,
            &context,
            &project.root,
            max_file_bytes,
            file,
            bytes.or(read.as_deref()),
        );
        progress(done.fetch_add(1, Ordering::Relaxed) + 1);
        parses.fetch_add(
            aic_stages::work::parses() - parses_before,
            Ordering::Relaxed,
        );
        // A file answered from the cache is no candidate for the slowest.
        if !computed {
            return;
        }
        note_time(
            &slowest,
            SlowFile {
                path: file.path.clone(),
                bytes: file.size_bytes,
                ms: own_ms(started, setup_before),
            },
        );
    };
    // The files the scan reads are processed as it reads them (one read per
    // file); the rest (answered from the path index) afterwards.
    // With a remote tier the rows it holds are fetched in batches first, so
    // every file is processed after the scan.
    let remote = cache.remote().is_some();
    let handled: DashSet<RelativePath> = DashSet::new();
    let on_read = |file: &FileEntry, bytes: &[u8]| {
        process(file, Some(bytes));
        handled.insert(file.path.clone());
    };
    let on_read: Option<&crate::pipeline::scan::OnRead<'_>> = (!remote).then_some(&on_read);
    let walk_started_ns = host.clock().now_ns();
    let snapshot = scan_shard(&project, Some(&cache), on_read, request.shard);
    let repo = &snapshot.repo;
    // The whole project's snapshot is saved as a daemon saves it, so the
    // first daemon or MCP server on a precomputed project starts warm.
    if request.shard.is_none()
        && let Some(home) = host.home()
    {
        let path = crate::resident::saved_snapshot_path(home, &project);
        let saved = (repo, snapshot.file_tree_hash);
        if let Err(error) =
            crate::resident::persist::save(&path, cache.fingerprint(), saved, walk_started_ns)
        {
            warnings.push(format!(
                "The project's snapshot could not be saved to `{}`: {error}",
                path.display()
            ));
        }
    }
    on_total(repo.files.len() as u64);
    let mut keys = project_keys(&cache, &repo.files, tokens.tokenizer());
    // The git history row goes with the files' rows (shard 1 reads it).
    keys.extend(crate::pipeline::scan::git::history_row_keys(
        &project.root,
        request.shard,
    ));
    if remote {
        cache.prefetch(keys.iter().copied());
    }
    repo.files
        .par_iter()
        .filter(|file| !handled.contains(&file.path))
        .for_each(|file| process(file, None));
    let slowest = slowest.into_inner().unwrap_or_else(PoisonError::into_inner);
    let (mut report, warning) = cache.finish();
    warnings.extend(warning);
    let pushed = request.push.then(|| {
        let now_secs = host.clock().now_secs();
        let built = blob_scan_rows(&cache, &project.root, &repo.files, now_secs);
        keys.extend(built.keys());
        push_rows(&cache, &keys, &built, now_secs)
    });
    if let (Some(pushed), Some(remote)) = (pushed, &mut report.remote) {
        remote.written += pushed.written;
        remote.bytes_written += pushed.bytes;
    }
    let bytes: u64 = repo.files.iter().map(|f| f.size_bytes).sum();
    let seconds = started.elapsed().as_secs_f64().max(0.001);
    let round1 = |value: f64| (value * 10.0).round() / 10.0;
    Ok(PrecomputeReport {
        project_root: project.root.clone(),
        files: repo.files.len(),
        bytes,
        duration_ms: elapsed_ms(started),
        cache: report,
        warnings,
        mb_per_second: round1(bytes as f64 / 1_000_000.0 / seconds),
        files_per_second: round1(repo.files.len() as f64 / seconds),
        parses: parses.into_inner(),
        slowest,
        shard: request
            .shard
            .map(|shard| format!("{}/{}", shard.index + 1, shard.count)),
        pushed,
    })
}

/// Computes and caches `file`'s facts at the default settings when its row
/// is missing, and for a source code file (an edit candidate when it ranks
/// high) its facts with format-specific transforms bypassed too, from
/// `bytes` when the caller has them, else read here once (up to
/// `max_file_bytes`); true when any were computed.
fn fill_facts(
    cache: &FileCache,
    context: &aic_stages::facts::FactsSettings<'_>,
    root: &std::path::Path,
    max_file_bytes: u64,
    file: &FileEntry,
    bytes: Option<&[u8]>,
) -> bool {
    let tokenizer = context.tokens.tokenizer();
    let missing: Vec<bool> = facts_variants(file)
        .iter()
        .copied()
        .filter(|&bypass| {
            cache
                .facts(
                    file.content_hash,
                    &file.path,
                    file.language,
                    false,
                    bypass,
                    tokenizer,
                )
                .is_none()
        })
        .collect();
    if missing.is_empty() {
        return false;
    }
    let read = match bytes {
        Some(_) => None,
        None => match read_bounded(&root.join(file.path.as_str()), max_file_bytes) {
            Ok(Bounded::Bytes(bytes)) => Some(bytes),
            _ => None,
        },
    };
    let Some(bytes) = bytes.or(read.as_deref()) else {
        return false;
    };
    let mut computed = false;
    for bypass in missing {
        let Some(facts) = isolate(&file.path, || {
            compute_facts(context, &file.path, file.language, bytes, bypass)
        }) else {
            continue;
        };
        cache.put_facts(&facts, false, bypass, tokenizer);
        computed = true;
    }
    computed
}

/// The facts rows a precompute keeps for `file`, by whether format-specific
/// transforms are bypassed: the default settings for every file, and the
/// bypassed ones too for a source code file, which a compile shows with its
/// exact text when it is one of the best-ranked
/// ([`crate::pipeline::facts::EDIT_CANDIDATES`]); without that row a new
/// intent's first answer would compute it (a parse of a large file, the
/// slowest part of a warm daemon answer on a monorepo).
fn facts_variants(file: &FileEntry) -> &'static [bool] {
    if crate::pipeline::facts::may_be_edit_candidate(file.language, file.kind()) {
        &[false, true]
    } else {
        &[false]
    }
}

/// Milliseconds (to a tenth) since `started`, less the setup of the
/// process's shared tables (queries, tokenizer) done meanwhile: those are
/// not this file's cost, whichever file needed them first.
fn own_ms(started: Instant, setup_before: u64) -> f64 {
    let setup = (aic_stages::work::setup_ns() - setup_before) as f64 / 1e9;
    ((started.elapsed().as_secs_f64() - setup).max(0.0) * 10_000.0).round() / 10.0
}

/// The keys of every row a precompute stores for `files`: scan terms,
/// imports (code files) and FileFacts at the default settings (and with
/// format-specific transforms bypassed, for source code files), counted in
/// `tokenizer`; sorted.
pub fn project_keys(cache: &FileCache, files: &[FileEntry], tokenizer: Tokenizer) -> Vec<FactsKey> {
    let mut keys = Vec::with_capacity(files.len() * 4);
    for file in files {
        let key = |kind| cache.row_key(file.content_hash, kind, &file.path, file.language);
        keys.push(key(RowKind::Scan));
        if file.language.is_code() {
            keys.push(key(RowKind::Imports));
        }
        for &bypass in facts_variants(file) {
            keys.push(key(RowKind::Facts {
                raw: false,
                bypass,
                tokenizer,
            }));
        }
    }
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// The [`RowKind::BlobScan`] rows of the files git's index vouches for (as
/// it recorded them), built from their scan rows in the local tier, sealed:
/// what a new checkout finds its files' content hashes and scan terms by
/// without reading them. Empty outside git. Call after
/// [`FileCache::finish`].
pub fn blob_scan_rows(
    cache: &FileCache,
    root: &std::path::Path,
    files: &[FileEntry],
    now_secs: u64,
) -> BTreeMap<FactsKey, Vec<u8>> {
    let Some(index) = crate::pipeline::scan::git::BlobIndex::read(root) else {
        return BTreeMap::new();
    };
    let Ok(reader) = CacheReader::open(cache.store(), now_secs) else {
        return BTreeMap::new();
    };
    files
        .iter()
        .filter_map(|file| {
            let blob =
                index.recorded(file.path.as_str(), file.size_bytes, file.last_modified_ns)?;
            let scan_key =
                cache.row_key(file.content_hash, RowKind::Scan, &file.path, file.language);
            let scan = reader.envelope(&scan_key).ok()??;
            let row = BlobScanRow {
                hash: file.content_hash,
                size_bytes: file.size_bytes,
                scan: &scan,
            };
            let key = cache.blob_scan_key(blob, &file.path, file.language);
            Some((key, aic_storage::seal(&row.encode())))
        })
        .collect()
}

/// Rows written to the remote tier per round of a push, bounding the
/// memory the push holds.
const PUSH_ROUND: usize = 4096;

/// Writes to the remote tier the rows of `keys` that the local tier holds
/// and the remote tier lacks (those it answered during this run are known to
/// be there; the rest are asked for in batches), or that `built` holds
/// (rows made for the push, sealed). Call after [`FileCache::finish`], so
/// that this run's rows are committed. The counts are added to the
/// database's running counts.
pub fn push_rows(
    cache: &FileCache,
    keys: &[FactsKey],
    built: &BTreeMap<FactsKey, Vec<u8>>,
    now_secs: u64,
) -> Stored {
    let mut stored = Stored::default();
    let Some(tier) = cache.remote() else {
        return stored;
    };
    if tier.read_only() {
        return stored;
    }
    let Ok(reader) = CacheReader::open(cache.store(), now_secs) else {
        return stored;
    };
    let unknown: Vec<FactsKey> = keys
        .iter()
        .filter(|key| !cache.remote_has(key))
        .copied()
        .collect();
    for round in unknown.chunks(PUSH_ROUND) {
        let Some(missing) = tier.missing(round) else {
            stored.failed += round.len() as u64;
            continue;
        };
        let lacking = missing.len() as u64;
        let rows: Vec<(FactsKey, Vec<u8>)> = missing
            .into_iter()
            .filter_map(|key| match built.get(&key) {
                Some(envelope) => Some((key, envelope.clone())),
                None => Some((key, reader.envelope(&key).ok()??)),
            })
            .collect();
        stored.not_local += lacking - rows.len() as u64;
        let done = tier.store(&rows);
        stored.written += done.written;
        stored.bytes += done.bytes;
        stored.failed += done.failed;
    }
    let counts = [
        ("remote.written", stored.written),
        ("remote.bytesWritten", stored.bytes),
    ];
    if stored.written > 0
        && let Err(error) = cache.store().add_counters(&counts)
    {
        tracing::debug!("Remote counts not recorded: {error}");
    }
    stored
}
