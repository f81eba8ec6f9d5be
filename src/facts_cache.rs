//! The runner's side of the per-file cache: opens the database under
//! `AIC_HOME`, looks rows up from rayon workers and hands misses to the
//! storage writer (ARCHITECTURE.md "Dataflow of one compile").
//!
//! The cache is an accelerator, never a source of truth: a database that cannot
//! be opened gives one warning and a compile without a cache; a row that does
//! not decode is deleted and recomputed; a failed write is a warning.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use aic_stages::config::AicConfig;
use aic_stages::facts::FileFacts;
use aic_stages::facts_codec::{
    RowKind, ScanFacts, StageFingerprint, decode_facts, decode_imports, decode_scan, encode_facts,
    encode_imports, encode_scan, variant_key,
};
use aic_stages::lang::ImportRef;
use aic_stages::repo_map::{ContentHash, Language, RelativePath};
use aic_storage::{
    CacheReader, CacheWriter, FactsKey, Lookup, PathRecord, PromptLookup, Store, WriterOptions,
};
use serde::Serialize;
use tracing::debug;

/// A file modified less than this long before it was hashed is not put in the
/// path index (2 s, git's "racily clean" rule): a write in the same clock tick
/// could leave size and mtime unchanged.
const RACY_NS: i64 = 2_000_000_000;

/// The most recomputed paths a [`CacheReport`] lists.
const RECOMPUTED_LISTED: usize = 100;

/// The key of a [`FactsCache::blob`] row.
fn blob_key(content: &[u8], kind: &str) -> FactsKey {
    FactsKey::new(
        xxhash_rust::xxh3::xxh3_128(content),
        xxhash_rust::xxh3::xxh3_128(kind.as_bytes()),
    )
}

/// The directory aic keeps its state in: `AIC_HOME`, else `~/.aic`.
pub fn aic_home() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("AIC_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(home));
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|home| PathBuf::from(home).join(".aic"))
}

/// The database file: `<aic home>/aic.redb`.
pub fn database_path() -> Option<PathBuf> {
    aic_home().map(|home| home.join("aic.redb"))
}

/// Opens the database, or explains why not.
///
/// # Errors
///
/// A message naming the database and how to reset it.
pub fn open_store() -> Result<Arc<Store>, String> {
    static OPENED: Mutex<Option<(PathBuf, Arc<Store>)>> = Mutex::new(None);
    let Some(path) = database_path() else {
        return Err(
            "No home directory: set `AIC_HOME` to a writable directory to enable the cache"
                .to_owned(),
        );
    };
    // One handle per process and file: a compile opens the cache, then logs
    // the compile, through the same handle (and the same page cache).
    let mut opened = OPENED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((opened_path, store)) = opened.as_ref()
        && *opened_path == path
    {
        return Ok(store.clone());
    }
    let store = open_store_at(&path)?;
    *opened = Some((path, store.clone()));
    Ok(store)
}

/// Opens the database at `path`; see [`open_store`].
fn open_store_at(path: &Path) -> Result<Arc<Store>, String> {
    // redb trusts its pages; a file damaged outside redb can make it panic
    // rather than return an error. Treat that like a corrupt file.
    match std::panic::catch_unwind(|| Store::open_compatible(path)) {
        Ok(Ok((store, warning))) => {
            if let Some(aic_storage::StorageError::SchemaTooNew {
                found, supported, ..
            }) = warning
            {
                warn_once(&format!(
                    "Database schema version ({found}) is newer than this aic version supports ({supported}). Some features may not work correctly."
                ));
            }
            Ok(Arc::new(store))
        }
        Ok(Err(error)) => Err(format!("{error} ({})", error.hint())),
        Err(_) => Err(format!(
            "The aic database `{}` is damaged (remove or move it aside to start with an empty cache)",
            path.display()
        )),
    }
}

/// Opens the database and runs `work` on it for a command that needs it
/// (`cache`, `precompute`, diagnostics): an unopenable or damaged database is
/// a [`crate::error::UserError`] naming the file and the fix (exit 3), even
/// when redb panics on damaged pages.
///
/// # Errors
///
/// `work`'s own errors, and the user errors above.
pub fn with_store<T>(work: impl FnOnce(&Arc<Store>) -> anyhow::Result<T>) -> anyhow::Result<T> {
    let store = open_store().map_err(|message| {
        crate::error::UserError::new(
            message,
            "set `AIC_HOME` to a writable directory, or move the damaged database aside",
        )
    })?;
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&store))) {
        Ok(result) => result,
        Err(_) => Err(crate::error::UserError::new(
            format!("The aic database `{}` is damaged", store.path().display()),
            format!(
                "remove or move `{}` aside; aic recreates it empty (caches and logs are lost)",
                store.path().display()
            ),
        )
        .into()),
    }
}

/// Prints a warning once per process.
fn warn_once(message: &str) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| tracing::warn!("{message}"));
}

/// Current time in unix milliseconds.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Current time in unix seconds.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Hits and computations of one kind of row.
#[derive(Debug, Default)]
struct Counter {
    hits: AtomicU64,
    computed: AtomicU64,
}

impl Counter {
    fn snapshot(&self) -> StageCounts {
        StageCounts {
            hits: self.hits.load(Ordering::Relaxed),
            computed: self.computed.load(Ordering::Relaxed),
        }
    }
}

/// Hits and computations of one stage in one compile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StageCounts {
    /// Rows found in the cache.
    pub hits: u64,
    /// Rows computed (cache misses, or every row without a cache).
    pub computed: u64,
}

/// What the cache did during one run, for the trace (`inspect --json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheReport {
    /// Whether a database was used.
    pub enabled: bool,
    /// The database file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<PathBuf>,
    /// Files whose size and mtime matched the path index (not read to be hashed).
    pub path_index_hits: u64,
    /// The RepoMap scan (symbol terms, term statistics).
    pub scan: StageCounts,
    /// Import parsing.
    pub imports: StageCounts,
    /// Guard, transforms and tier renders.
    pub facts: StageCounts,
    /// Files whose scan or facts were computed, sorted (at most 100).
    pub recomputed: Vec<RelativePath>,
    /// Rows written to the database.
    pub rows_written: u64,
}

/// The per-file cache for one run over one project.
pub struct FactsCache {
    store: Arc<Store>,
    reader: CacheReader,
    writer: Mutex<Option<CacheWriter>>,
    project: [u8; 16],
    fingerprint: StageFingerprint,
    scan_started_ns: i64,
    path_hits: AtomicU64,
    damaged: AtomicBool,
    scan: Counter,
    imports: Counter,
    facts: Counter,
    recomputed: Mutex<Vec<RelativePath>>,
}

impl std::fmt::Debug for FactsCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FactsCache")
            .field("database", &self.store.path())
            .finish_non_exhaustive()
    }
}

impl FactsCache {
    /// Opens the cache for the project at `root` (canonical) with `config`'s
    /// stage settings.
    ///
    /// # Errors
    ///
    /// A message for a database that cannot be opened or read.
    pub fn open(store: Arc<Store>, root: &Path, config: &AicConfig) -> Result<Self, String> {
        let describe = |error: aic_storage::StorageError| format!("{error} ({})", error.hint());
        let project = store
            .project_id(&root.to_string_lossy(), now_ms())
            .map_err(describe)?;
        let now = now_secs();
        let reader = CacheReader::open(&store, now).map_err(describe)?;
        let writer = CacheWriter::spawn(
            store.clone(),
            WriterOptions {
                max_bytes: config.cache.max_bytes,
                now_secs: now,
            },
        );
        let scan_started_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Ok(Self {
            store,
            reader,
            writer: Mutex::new(Some(writer)),
            project,
            fingerprint: StageFingerprint::new(&config.guard, &config.content_transformers),
            scan_started_ns,
            path_hits: AtomicU64::new(0),
            damaged: AtomicBool::new(false),
            scan: Counter::default(),
            imports: Counter::default(),
            facts: Counter::default(),
            recomputed: Mutex::new(Vec::new()),
        })
    }

    fn with_writer(&self, f: impl FnOnce(&CacheWriter)) {
        if let Some(writer) = self
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            f(writer);
        }
    }

    fn key(
        &self,
        hash: ContentHash,
        kind: RowKind,
        path: &RelativePath,
        language: Language,
    ) -> FactsKey {
        FactsKey::new(
            u128::from_be_bytes(hash.0),
            variant_key(self.fingerprint, kind, path, language),
        )
    }

    /// Looks a row up; a row that does not decode is deleted.
    fn lookup<T>(&self, key: FactsKey, decode: impl FnOnce(&[u8]) -> Option<T>) -> Option<T> {
        let found = self.guarded(|| self.reader.get(&key))?;
        match found {
            Ok(Lookup::Hit { payload, touch }) => {
                let value = decode(&payload);
                if value.is_none() {
                    self.with_writer(|writer| writer.remove(key));
                } else if touch {
                    self.with_writer(|writer| writer.touch(key));
                }
                value
            }
            Ok(Lookup::Corrupt) => {
                self.with_writer(|writer| writer.remove(key));
                None
            }
            Ok(Lookup::Miss) => None,
            Err(error) => {
                debug!("Cache read failed: {error}");
                None
            }
        }
    }

    /// Runs a database read. redb trusts its pages: a file damaged outside
    /// redb can make it panic instead of returning an error. The first such
    /// panic turns the cache off for the rest of the run, with one warning
    /// naming the file and the fix; the run goes on uncached.
    fn guarded<T>(&self, read: impl FnOnce() -> T) -> Option<T> {
        if self.damaged.load(Ordering::Relaxed) {
            return None;
        }
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(read));
        if outcome.is_err() && !self.damaged.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "The aic database `{}` is damaged; compiling without the per-file cache (remove or move it aside to start with an empty cache)",
                self.store.path().display()
            );
        }
        outcome.ok()
    }

    /// Whether a damaged database turned the cache off during this run.
    pub fn is_damaged(&self) -> bool {
        self.damaged.load(Ordering::Relaxed)
    }

    fn note_recomputed(&self, path: &RelativePath) {
        let mut list = self
            .recomputed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        list.push(path.clone());
    }

    /// The content hash the path index has for a file of this size and mtime,
    /// and whether it is binary; `None` when the file must be read.
    pub fn indexed_hash(
        &self,
        path: &RelativePath,
        size: u64,
        mtime_ns: i64,
    ) -> Option<(ContentHash, bool)> {
        let memo = crate::memo::get();
        let record = match memo.and_then(|memo| memo.path(&self.project, path.as_str())) {
            Some(record) if record.size == size && record.mtime_ns == mtime_ns => record,
            _ => {
                let record = self
                    .guarded(|| self.reader.path_record(&self.project, path.as_str()))?
                    .ok()??;
                if let Some(memo) = memo {
                    memo.put_path(&self.project, path.as_str(), record);
                }
                record
            }
        };
        if record.size != size || record.mtime_ns != mtime_ns {
            return None;
        }
        self.path_hits.fetch_add(1, Ordering::Relaxed);
        Some((
            ContentHash(record.content_hash.to_be_bytes()),
            record.binary,
        ))
    }

    /// Records a file's hash in the path index, unless its mtime is too recent to
    /// trust.
    pub fn index_path(
        &self,
        path: &RelativePath,
        size: u64,
        mtime_ns: i64,
        hash: ContentHash,
        binary: bool,
    ) {
        if self.scan_started_ns.saturating_sub(mtime_ns) < RACY_NS {
            return;
        }
        let record = PathRecord {
            size,
            mtime_ns,
            content_hash: u128::from_be_bytes(hash.0),
            binary,
        };
        if let Some(memo) = crate::memo::get() {
            memo.put_path(&self.project, path.as_str(), record);
        }
        self.with_writer(|writer| writer.put_path(&self.project, path.as_str(), record));
    }

    /// The cached scan facts of a file.
    pub fn scan_facts(
        &self,
        hash: ContentHash,
        path: &RelativePath,
        language: Language,
    ) -> Option<ScanFacts> {
        let key = self.key(hash, RowKind::Scan, path, language);
        let memo = crate::memo::get();
        let found = memo.and_then(|memo| memo.scan(&key)).or_else(|| {
            let found = self.lookup(key, |bytes| decode_scan(bytes).ok());
            if let (Some(memo), Some(facts)) = (memo, &found) {
                memo.put_scan(key, facts.clone());
            }
            found
        });
        if found.is_some() {
            self.scan.hits.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    /// Stores freshly computed scan facts.
    pub fn put_scan_facts(
        &self,
        hash: ContentHash,
        path: &RelativePath,
        language: Language,
        facts: &ScanFacts,
    ) {
        self.scan.computed.fetch_add(1, Ordering::Relaxed);
        self.note_recomputed(path);
        let key = self.key(hash, RowKind::Scan, path, language);
        if let Some(memo) = crate::memo::get() {
            memo.put_scan(key, facts.clone());
        }
        let payload = encode_scan(facts);
        self.with_writer(|writer| writer.put_facts(key, &payload));
    }

    /// The cached imports of a file.
    pub fn imports(
        &self,
        hash: ContentHash,
        path: &RelativePath,
        language: Language,
    ) -> Option<Vec<ImportRef>> {
        let key = self.key(hash, RowKind::Imports, path, language);
        let memo = crate::memo::get();
        let found = memo.and_then(|memo| memo.imports(&key)).or_else(|| {
            let found = self.lookup(key, |bytes| decode_imports(bytes).ok());
            if let (Some(memo), Some(imports)) = (memo, &found) {
                memo.put_imports(key, imports.clone());
            }
            found
        });
        if found.is_some() {
            self.imports.hits.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    /// Stores freshly parsed imports.
    pub fn put_imports(
        &self,
        hash: ContentHash,
        path: &RelativePath,
        language: Language,
        imports: &[ImportRef],
    ) {
        self.imports.computed.fetch_add(1, Ordering::Relaxed);
        let key = self.key(hash, RowKind::Imports, path, language);
        if let Some(memo) = crate::memo::get() {
            memo.put_imports(key, imports.to_vec());
        }
        let payload = encode_imports(imports);
        self.with_writer(|writer| writer.put_facts(key, &payload));
    }

    /// The cached facts of a file.
    pub fn facts(
        &self,
        hash: ContentHash,
        path: &RelativePath,
        language: Language,
        raw: bool,
        bypass: bool,
    ) -> Option<FileFacts> {
        let key = self.key(hash, RowKind::Facts { raw, bypass }, path, language);
        let found = self.lookup(key, |bytes| decode_facts(bytes, path, language, hash).ok());
        if found.is_some() {
            self.facts.hits.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    /// Stores freshly computed facts.
    pub fn put_facts(&self, facts: &FileFacts, raw: bool, bypass: bool) {
        self.facts.computed.fetch_add(1, Ordering::Relaxed);
        self.note_recomputed(&facts.path);
        let key = self.key(
            facts.content_hash,
            RowKind::Facts { raw, bypass },
            &facts.path,
            facts.language,
        );
        let payload = encode_facts(facts);
        self.with_writer(|writer| writer.put_facts(key, &payload));
    }

    /// A row of another kind than the per-file ones, keyed by `content` (what
    /// the row is derived from, e.g. a commit id) and `kind` (a name with a
    /// version).
    pub fn blob(&self, content: &[u8], kind: &str) -> Option<Vec<u8>> {
        let key = blob_key(content, kind);
        self.lookup(key, |bytes| Some(bytes.to_vec()))
    }

    /// Stores a row read back by [`FactsCache::blob`].
    pub fn put_blob(&self, content: &[u8], kind: &str, payload: &[u8]) {
        let key = blob_key(content, kind);
        self.with_writer(|writer| writer.put_facts(key, payload));
    }

    /// A live whole-prompt cache entry (seed §11); an undecodable entry is
    /// deleted (a miss).
    pub fn prompt(&self, key: &[u8; 32]) -> Option<Vec<u8>> {
        match self.guarded(|| self.store.prompt_cache_get(key, now_ms()))? {
            Ok(PromptLookup::Hit(entry)) => Some(entry.payload),
            Ok(PromptLookup::Miss | PromptLookup::Corrupt) => None,
            Err(error) => {
                debug!("Prompt cache read failed: {error}");
                None
            }
        }
    }

    /// Stores a whole-prompt cache entry living `ttl_ms`; a failure is logged.
    pub fn put_prompt(&self, key: &[u8; 32], payload: &[u8], ttl_ms: u64) {
        if self.is_damaged() {
            return;
        }
        let now = now_ms();
        if let Err(error) = self.store.prompt_cache_put(
            key,
            &self.project,
            now,
            now.saturating_add(ttl_ms),
            payload,
        ) {
            debug!("Prompt cache write failed: {error}");
        }
    }

    /// The database.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Commits what is left to write and reports. A write failure is returned as
    /// a warning message; the run's results stand.
    pub fn finish(&self) -> (CacheReport, Option<String>) {
        let writer = self
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let mut warning = None;
        let mut rows_written = 0;
        if let Some(writer) = writer {
            match writer.finish() {
                Ok(report) => rows_written = report.facts_written + report.paths_written,
                Err(error) => {
                    warning = Some(format!(
                        "The per-file cache was not updated: {error} ({})",
                        error.hint()
                    ));
                }
            }
        }
        let mut recomputed = self
            .recomputed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        recomputed.sort();
        recomputed.dedup();
        recomputed.truncate(RECOMPUTED_LISTED);
        (
            CacheReport {
                enabled: true,
                database: Some(self.store.path().to_path_buf()),
                path_index_hits: self.path_hits.load(Ordering::Relaxed),
                scan: self.scan.snapshot(),
                imports: self.imports.snapshot(),
                facts: self.facts.snapshot(),
                recomputed,
                rows_written,
            },
            warning,
        )
    }
}
