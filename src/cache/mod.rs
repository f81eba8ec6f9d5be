//! The caches of a compile, in front of the database:
//!
//! - [`FileCache`]: the content-addressed per-file cache (scan terms, imports,
//!   FileFacts, the path index), read from rayon workers and written by the
//!   storage writer thread; with the process's [`memo::Memo`] in front of it;
//! - [`spec`]: the key and rows of compiled task specifications.
//!
//! The whole-prompt cache is the pipeline's own
//! ([`crate::pipeline::prompt_cache`]): its entries are compilations.
//!
//! Every cache is an accelerator, never a source of truth: a database that
//! cannot be opened gives one warning and a compile without a cache; a row that
//! does not decode is deleted and recomputed; a failed write is a warning.

pub mod key;
pub mod memo;
pub mod remote;
pub mod spec;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use aic_stages::config::AicConfig;
use aic_stages::content_hash::ContentHash;
use aic_stages::facts::FileFacts;
use aic_stages::fit::tokens::Tokenizer;
use aic_stages::lang::ImportRef;
use aic_stages::language::Language;
use aic_stages::relative_path::RelativePath;
use aic_stages::row_codec::{
    EntryTerms, ScanTerms, decode_facts, decode_imports, decode_scan, encode_facts, encode_imports,
    encode_scan,
};
use aic_storage::{
    CacheReader, CacheWriter, FactsKey, Lookup, PathRecord, Store, TtlLookup, WriterOptions,
};
use dashmap::{DashMap, DashSet};
use serde::Serialize;
use tracing::debug;

use crate::clock::Clock;
use crate::home::DatabaseError;
use key::{RowKind, StageFingerprint, blob_key, row_key};
use memo::Memo;
use remote::RemoteTier;

/// A file modified less than this long before it was hashed is not put in the
/// path index (2 s, git's "racily clean" rule): a write in the same clock tick
/// could leave size and mtime unchanged.
const RACY_NS: i64 = 2_000_000_000;

/// The most recomputed paths a [`CacheReport`] lists.
const RECOMPUTED_LISTED: usize = 100;

/// The payload of a [`RowKind::BlobScan`] row: the file's content hash
/// (16 bytes), its size (u64, little endian) and its scan row's envelope as
/// the local tier stores it.
#[derive(Debug)]
pub struct BlobScanRow<'a> {
    /// xxh3-128 of the file's bytes.
    pub hash: ContentHash,
    /// The file's size in bytes.
    pub size_bytes: u64,
    /// The scan row's envelope.
    pub scan: &'a [u8],
}

impl<'a> BlobScanRow<'a> {
    /// Reads a payload; `None` when it is too short.
    pub fn decode(payload: &'a [u8]) -> Option<Self> {
        let hash = payload.get(..16)?.try_into().ok()?;
        let size = payload.get(16..24)?.try_into().ok()?;
        Some(Self {
            hash: ContentHash(hash),
            size_bytes: u64::from_le_bytes(size),
            scan: payload.get(24..)?,
        })
    }

    /// The payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut payload = Vec::with_capacity(24 + self.scan.len());
        payload.extend_from_slice(&self.hash.0);
        payload.extend_from_slice(&self.size_bytes.to_le_bytes());
        payload.extend_from_slice(self.scan);
        payload
    }
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
    /// Files whose size and mtime matched the path index (not read to be
    /// hashed), as the database holds it or as a saved snapshot copied it
    /// ([`snapshot_seeded`](Self::snapshot_seeded)).
    pub path_index_hits: u64,
    /// Files of a new checkout whose content hash and scan terms came from
    /// the remote tier by their git blob id (not read to be hashed).
    pub blob_index_hits: u64,
    /// Files loaded into the memo from the project's saved resident
    /// snapshot before the walk (a restarted daemon, or a one-shot compile
    /// after `aic precompute`); those whose size and mtime still match are
    /// taken without a database look-up. Left out of the JSON when no file
    /// was loaded (no snapshot, or one not used).
    #[serde(skip_serializing_if = "is_zero")]
    pub snapshot_seeded: u64,
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
    /// What the remote tier did, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteReport>,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// What the remote tier did during one run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteReport {
    /// The store's URL, redacted.
    pub store: String,
    /// Rows read from the store and used (then written to the local tier).
    pub hits: u64,
    /// Rows asked for that the store did not have.
    pub misses: u64,
    /// Entries refused: a wrong format version or key, a missing or wrong
    /// signature, an envelope or payload that does not decode.
    pub rejected: u64,
    /// Bytes read from the store.
    pub bytes_read: u64,
    /// Entries written to the store.
    pub written: u64,
    /// Bytes written to the store.
    pub bytes_written: u64,
    /// Whether the breaker opened (the store stopped being asked).
    pub unavailable: bool,
}

/// The running counts of a [`RemoteReport`], from any thread.
#[derive(Debug, Default)]
struct RemoteCounts {
    hits: AtomicU64,
    misses: AtomicU64,
    rejected: AtomicU64,
    bytes_read: AtomicU64,
    written: AtomicU64,
    bytes_written: AtomicU64,
}

/// A [`FileCache`]'s use of a remote tier: the envelopes fetched ahead of
/// their look-ups, and the keys known to be in the store.
#[derive(Debug)]
struct RemoteLink {
    tier: Arc<RemoteTier>,
    fetched: DashMap<FactsKey, Vec<u8>>,
    present: DashSet<FactsKey>,
    counts: RemoteCounts,
    recorded: AtomicBool,
}

/// The per-file cache for one run over one project.
///
/// Look-ups and puts take `&self` and may come from any thread; puts go to the
/// storage writer's channel. [`FileCache::finish`] commits what is left.
pub struct FileCache {
    store: Arc<Store>,
    reader: CacheReader,
    writer: Option<CacheWriter>,
    memo: Option<Arc<Memo>>,
    project: [u8; 16],
    fingerprint: StageFingerprint,
    scan_started_ns: i64,
    path_hits: AtomicU64,
    blob_hits: AtomicU64,
    seeded: AtomicU64,
    damaged: AtomicBool,
    /// Rows, local or fetched, whose envelope failed its checksum.
    damaged_rows: AtomicU64,
    scan: Counter,
    imports: Counter,
    facts: Counter,
    recomputed: Mutex<Vec<RelativePath>>,
    remote: Option<RemoteLink>,
}

impl std::fmt::Debug for FileCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileCache")
            .field("database", &self.store.path())
            .finish_non_exhaustive()
    }
}

impl FileCache {
    /// Opens the cache for the project at `root` (canonical) with `config`'s
    /// stage settings, the memo in front of it when there is one.
    ///
    /// # Errors
    ///
    /// [`DatabaseError`] for a database that cannot be read, or that redb
    /// panics on.
    pub fn open(
        store: Arc<Store>,
        root: &Path,
        config: &AicConfig,
        memo: Option<Arc<Memo>>,
        clock: &dyn Clock,
    ) -> Result<Self, DatabaseError> {
        let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let project = store.project_id(&root.to_string_lossy(), clock.now_ms())?;
            let reader = CacheReader::open(&store, clock.now_secs())?;
            Ok::<_, aic_storage::StorageError>((project, reader))
        }));
        let (project, reader) = match opened {
            Ok(result) => result?,
            Err(_) => {
                return Err(DatabaseError::Damaged {
                    path: store.path().to_path_buf(),
                });
            }
        };
        let writer = CacheWriter::spawn(
            store.clone(),
            WriterOptions {
                max_bytes: config.cache.max_bytes,
                now_secs: clock.now_secs(),
            },
        );
        Ok(Self {
            store,
            reader,
            writer: Some(writer),
            memo,
            project,
            fingerprint: StageFingerprint::new(&config.guard, &config.content_transformers),
            scan_started_ns: clock.now_ns(),
            path_hits: AtomicU64::new(0),
            blob_hits: AtomicU64::new(0),
            seeded: AtomicU64::new(0),
            damaged: AtomicBool::new(false),
            damaged_rows: AtomicU64::new(0),
            scan: Counter::default(),
            imports: Counter::default(),
            facts: Counter::default(),
            recomputed: Mutex::new(Vec::new()),
            remote: None,
        })
    }

    /// This cache with `tier` behind the local tier: rows fetched with
    /// [`FileCache::prefetch`] answer look-ups the local tier misses, and are
    /// then written to the local tier.
    #[must_use]
    pub fn with_remote(mut self, tier: Arc<RemoteTier>) -> Self {
        self.remote = Some(RemoteLink {
            tier,
            fetched: DashMap::new(),
            present: DashSet::new(),
            counts: RemoteCounts::default(),
            recorded: AtomicBool::new(false),
        });
        self
    }

    /// This cache with `memo` in front of it (a one-shot compile seeded from
    /// a saved resident snapshot, see [`crate::resident::persist`]).
    #[must_use]
    pub fn with_memo(mut self, memo: Arc<Memo>) -> Self {
        self.memo = Some(memo);
        self
    }

    /// The remote tier, when there is one and its breaker is closed.
    pub fn remote(&self) -> Option<&Arc<RemoteTier>> {
        self.remote
            .as_ref()
            .map(|link| &link.tier)
            .filter(|tier| tier.is_available())
    }

    /// The stage fingerprint of this cache's settings: rows (and saved
    /// snapshots) made under another are not this cache's.
    pub fn fingerprint(&self) -> u128 {
        self.fingerprint.0
    }

    /// Puts a file known from elsewhere (a saved resident snapshot) into the
    /// memo, as if its path record and scan row had been read from the
    /// database: a walk that finds the file with this `size` and `mtime_ns`
    /// takes its hash and terms without a look-up. Does nothing without a
    /// memo.
    pub fn seed(
        &self,
        path: &RelativePath,
        language: Language,
        size: u64,
        mtime_ns: i64,
        hash: ContentHash,
        terms: EntryTerms,
    ) {
        let Some(memo) = &self.memo else {
            return;
        };
        let record = PathRecord {
            size,
            mtime_ns,
            content_hash: u128::from_be_bytes(hash.0),
            binary: false,
        };
        memo.put_path(&self.project, path, record);
        memo.put_scan(self.row_key(hash, RowKind::Scan, path, language), terms);
        self.seeded.fetch_add(1, Ordering::Relaxed);
    }

    /// The key of a per-file row of this cache's settings.
    pub fn row_key(
        &self,
        hash: ContentHash,
        kind: RowKind,
        path: &RelativePath,
        language: Language,
    ) -> FactsKey {
        row_key(self.fingerprint, hash, kind, path, language)
    }

    /// Fetches from the remote tier, in batches, the rows of `keys` that
    /// neither tier in front of it holds, so that their look-ups find them.
    /// Does nothing without a remote tier or once its breaker opened.
    pub fn prefetch(&self, keys: impl IntoIterator<Item = FactsKey>) {
        let Some(link) = &self.remote else {
            return;
        };
        if !link.tier.is_available() {
            return;
        }
        let mut wanted: Vec<FactsKey> = keys
            .into_iter()
            .filter(|key| !link.fetched.contains_key(key) && !link.present.contains(key))
            .filter(|key| {
                !self
                    .guarded(|| self.reader.contains(key))
                    .and_then(Result::ok)
                    .unwrap_or(false)
            })
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        if wanted.is_empty() {
            return;
        }
        let fetched = link.tier.fetch(&wanted);
        let counts = &link.counts;
        counts.misses.fetch_add(fetched.misses, Ordering::Relaxed);
        counts
            .rejected
            .fetch_add(fetched.rejected, Ordering::Relaxed);
        counts
            .bytes_read
            .fetch_add(fetched.bytes, Ordering::Relaxed);
        for (key, envelope) in fetched.entries {
            link.present.insert(key);
            link.fetched.insert(key, envelope);
        }
    }

    /// A fetched remote row under `key`, decoded and written to the local
    /// tier; a row that does not open or decode is counted as rejected.
    fn remote_row<T>(&self, key: FactsKey, decode: impl FnOnce(&[u8]) -> Option<T>) -> Option<T> {
        let link = self.remote.as_ref()?;
        let (_, envelope) = link.fetched.remove(&key)?;
        let opened = aic_storage::unseal(&envelope);
        if opened.is_none() {
            self.note_damaged_row();
        }
        let value = opened.and_then(|payload| decode(&payload));
        if value.is_some() {
            link.counts.hits.fetch_add(1, Ordering::Relaxed);
            self.send(|writer| writer.put_sealed(key, envelope));
        } else {
            link.counts.rejected.fetch_add(1, Ordering::Relaxed);
        }
        value
    }

    /// Writes every row fetched ahead and not looked up to the local tier,
    /// when its envelope opens and `valid` accepts its payload; the others
    /// count as rejected. Returns the rows kept.
    pub fn keep_fetched(&self, valid: &dyn Fn(&[u8]) -> bool) -> u64 {
        let Some(link) = &self.remote else {
            return 0;
        };
        let keys: Vec<FactsKey> = link.fetched.iter().map(|entry| *entry.key()).collect();
        let mut kept = 0;
        for key in keys {
            if self
                .remote_row(key, |payload| valid(payload).then_some(()))
                .is_some()
            {
                kept += 1;
            }
        }
        kept
    }

    /// Whether the remote tier is known to hold `key` (it answered a fetch
    /// of it during this run).
    pub fn remote_has(&self, key: &FactsKey) -> bool {
        self.remote
            .as_ref()
            .is_some_and(|link| link.present.contains(key))
    }

    /// Counts entries written to the remote tier by a push.
    pub fn note_pushed(&self, written: u64, bytes: u64) {
        if let Some(link) = &self.remote {
            link.counts.written.fetch_add(written, Ordering::Relaxed);
            link.counts
                .bytes_written
                .fetch_add(bytes, Ordering::Relaxed);
        }
    }

    /// The store behind this cache (for pushes that read it back).
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Adds a run's remote counts to the database's running counts (shown by
    /// `aic cache stats`), once; a failure is logged.
    fn record_remote(&self, report: &RemoteReport) {
        let counts = [
            ("remote.hits", report.hits),
            ("remote.misses", report.misses),
            ("remote.rejected", report.rejected),
            ("remote.bytesRead", report.bytes_read),
            ("remote.written", report.written),
            ("remote.bytesWritten", report.bytes_written),
        ];
        let first = self
            .remote
            .as_ref()
            .is_some_and(|link| !link.recorded.swap(true, Ordering::Relaxed));
        if !first || counts.iter().all(|(_, count)| *count == 0) || self.is_damaged() {
            return;
        }
        if let Err(error) = self.store.add_counters(&counts) {
            debug!("Remote counts not recorded: {error}");
        }
    }

    fn remote_report(&self) -> Option<RemoteReport> {
        let link = self.remote.as_ref()?;
        let counts = &link.counts;
        Some(RemoteReport {
            store: link.tier.shown().to_owned(),
            hits: counts.hits.load(Ordering::Relaxed),
            misses: counts.misses.load(Ordering::Relaxed),
            rejected: counts.rejected.load(Ordering::Relaxed),
            bytes_read: counts.bytes_read.load(Ordering::Relaxed),
            written: counts.written.load(Ordering::Relaxed),
            bytes_written: counts.bytes_written.load(Ordering::Relaxed),
            unavailable: !link.tier.is_available(),
        })
    }

    fn send(&self, op: impl FnOnce(&CacheWriter)) {
        if let Some(writer) = &self.writer {
            op(writer);
        }
    }

    /// Looks a row up in the local tier, then among the rows fetched from
    /// the remote tier; a local row that does not decode is deleted.
    fn lookup<T>(&self, key: FactsKey, decode: impl Fn(&[u8]) -> Option<T>) -> Option<T> {
        self.lookup_local(key, &decode)
            .or_else(|| self.remote_row(key, &decode))
    }

    fn lookup_local<T>(&self, key: FactsKey, decode: impl FnOnce(&[u8]) -> Option<T>) -> Option<T> {
        let found = self.guarded(|| self.reader.get(&key))?;
        match found {
            Ok(Lookup::Hit { payload, touch }) => {
                let value = decode(&payload);
                if value.is_none() {
                    self.send(|writer| writer.remove(key));
                } else if touch {
                    self.send(|writer| writer.touch(key));
                }
                value
            }
            Ok(Lookup::Corrupt) => {
                self.note_damaged_row();
                self.send(|writer| writer.remove(key));
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
                "The aic database `{}` is damaged; compiling without the per-file cache (`aic cache clear` moves it aside and starts an empty one)",
                self.store.path().display()
            );
        }
        outcome.ok()
    }

    /// Counts a row whose envelope failed its checksum (it is then deleted
    /// or refused, and recomputed); the first one of a run is reported.
    fn note_damaged_row(&self) {
        if self.damaged_rows.fetch_add(1, Ordering::Relaxed) == 0 {
            tracing::warn!(
                "A cached row of `{}` or of the remote cache failed its checksum; it is recomputed (each such row is counted; `aic cache clear` starts an empty local cache)",
                self.store.path().display()
            );
        }
    }

    /// Rows, local or fetched, whose envelope failed its checksum during this
    /// run; each was recomputed.
    pub fn damaged_rows(&self) -> u64 {
        self.damaged_rows.load(Ordering::Relaxed)
    }

    /// Whether a damaged database turned the cache off during this run.
    pub fn is_damaged(&self) -> bool {
        self.damaged.load(Ordering::Relaxed)
    }

    fn note_recomputed(&self, path: &RelativePath) {
        self.recomputed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(path.clone());
    }

    /// The content hash the path index has for a file of this size and mtime,
    /// and whether it is binary; `None` when the file must be read.
    pub fn indexed_hash(
        &self,
        path: &RelativePath,
        size: u64,
        mtime_ns: i64,
    ) -> Option<(ContentHash, bool)> {
        let memo = self.memo.as_deref();
        let record = match memo.and_then(|memo| memo.path(&self.project, path)) {
            Some(record) if record.size == size && record.mtime_ns == mtime_ns => record,
            _ => {
                let record = self
                    .guarded(|| self.reader.path_record(&self.project, path.as_str()))?
                    .ok()??;
                if let Some(memo) = memo {
                    memo.put_path(&self.project, path, record);
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
        if let Some(memo) = &self.memo {
            memo.put_path(&self.project, path, record);
        }
        self.send(|writer| writer.put_path(&self.project, path.as_str(), record));
    }

    /// The cached scan facts of a file.
    pub fn scan_terms(
        &self,
        hash: ContentHash,
        path: &RelativePath,
        language: Language,
    ) -> Option<EntryTerms> {
        let key = self.row_key(hash, RowKind::Scan, path, language);
        let memo = self.memo.as_deref();
        let found = memo.and_then(|memo| memo.scan(&key)).or_else(|| {
            let found = self.lookup(key, |bytes| {
                decode_scan(bytes)
                    .ok()
                    .map(|facts| EntryTerms::from(&facts))
            });
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
    pub fn put_scan_terms(
        &self,
        hash: ContentHash,
        path: &RelativePath,
        language: Language,
        facts: &ScanTerms,
    ) {
        self.scan.computed.fetch_add(1, Ordering::Relaxed);
        self.note_recomputed(path);
        let key = self.row_key(hash, RowKind::Scan, path, language);
        if let Some(memo) = &self.memo {
            memo.put_scan(key, EntryTerms::from(facts));
        }
        let payload = encode_scan(facts);
        self.send(|writer| writer.put_facts(key, &payload));
    }

    /// The key of a file's [`RowKind::BlobScan`] row; `blob` is its git blob
    /// id (SHA-1 or SHA-256).
    pub fn blob_scan_key(
        &self,
        blob: &gix::oid,
        path: &RelativePath,
        language: Language,
    ) -> FactsKey {
        let mut first = [0u8; 16];
        first.copy_from_slice(&blob.as_bytes()[..16]);
        self.row_key(ContentHash(first), RowKind::BlobScan, path, language)
    }

    /// Whether this database has scanned the project before (its path index
    /// holds a file of it). A damaged or unreadable index counts as known.
    pub fn knows_project(&self) -> bool {
        self.guarded(|| self.reader.has_project_paths(&self.project))
            .and_then(Result::ok)
            .unwrap_or(true)
    }

    /// A file's content hash and scan terms from its [`RowKind::BlobScan`]
    /// row fetched ahead from the remote tier, when the row was made from a
    /// file of `size_bytes` (a checkout filter that changes the bytes changes
    /// the size: the file is then read). The scan row goes to the local tier
    /// under the content hash, and the path index learns the file.
    pub fn blob_scan(
        &self,
        blob: &gix::oid,
        path: &RelativePath,
        language: Language,
        size_bytes: u64,
        mtime_ns: i64,
    ) -> Option<(ContentHash, EntryTerms)> {
        let link = self.remote.as_ref()?;
        let key = self.blob_scan_key(blob, path, language);
        let (_, envelope) = link.fetched.remove(&key)?;
        let outer = aic_storage::unseal(&envelope);
        if outer.is_none() {
            self.note_damaged_row();
        }
        let opened = outer.and_then(|payload| {
            let row = BlobScanRow::decode(&payload)?;
            if row.size_bytes != size_bytes {
                return Some(None);
            }
            let terms = EntryTerms::from(&decode_scan(&aic_storage::unseal(row.scan)?).ok()?);
            Some(Some((row.hash, row.scan.to_vec(), terms)))
        });
        let Some(found) = opened else {
            link.counts.rejected.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        let (hash, scan_envelope, terms) = found?;
        link.counts.hits.fetch_add(1, Ordering::Relaxed);
        self.scan.hits.fetch_add(1, Ordering::Relaxed);
        self.blob_hits.fetch_add(1, Ordering::Relaxed);
        let scan_key = self.row_key(hash, RowKind::Scan, path, language);
        if let Some(memo) = &self.memo {
            memo.put_scan(scan_key, terms.clone());
        }
        self.send(|writer| writer.put_sealed(scan_key, scan_envelope));
        self.index_path(path, size_bytes, mtime_ns, hash, false);
        Some((hash, terms))
    }

    /// The cached imports of a file.
    pub fn imports(
        &self,
        hash: ContentHash,
        path: &RelativePath,
        language: Language,
    ) -> Option<Vec<ImportRef>> {
        let key = self.row_key(hash, RowKind::Imports, path, language);
        let memo = self.memo.as_deref();
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
        let key = self.row_key(hash, RowKind::Imports, path, language);
        if let Some(memo) = &self.memo {
            memo.put_imports(key, imports.to_vec());
        }
        let payload = encode_imports(imports);
        self.send(|writer| writer.put_facts(key, &payload));
    }

    /// The cached facts of a file.
    pub fn facts(
        &self,
        hash: ContentHash,
        path: &RelativePath,
        language: Language,
        raw: bool,
        bypass: bool,
        tokenizer: Tokenizer,
    ) -> Option<FileFacts> {
        let kind = RowKind::Facts {
            raw,
            bypass,
            tokenizer,
        };
        let key = self.row_key(hash, kind, path, language);
        let found = self.lookup(key, |bytes| decode_facts(bytes, path, language, hash).ok());
        if found.is_some() {
            self.facts.hits.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    /// Stores freshly computed facts, their counts made in `tokenizer`.
    pub fn put_facts(&self, facts: &FileFacts, raw: bool, bypass: bool, tokenizer: Tokenizer) {
        self.facts.computed.fetch_add(1, Ordering::Relaxed);
        self.note_recomputed(&facts.path);
        let key = self.row_key(
            facts.content_hash,
            RowKind::Facts {
                raw,
                bypass,
                tokenizer,
            },
            &facts.path,
            facts.language,
        );
        let payload = encode_facts(facts);
        self.send(|writer| writer.put_facts(key, &payload));
    }

    /// A row of another kind than the per-file ones (see [`blob_key`]).
    pub fn blob(&self, content: &[u8], kind: &str) -> Option<Vec<u8>> {
        self.lookup(blob_key(content, kind), |bytes| Some(bytes.to_vec()))
    }

    /// Stores a row read back by [`FileCache::blob`].
    pub fn put_blob(&self, content: &[u8], kind: &str, payload: &[u8]) {
        let key = blob_key(content, kind);
        self.send(|writer| writer.put_facts(key, payload));
    }

    /// A live whole-prompt cache entry under `key`; an entry that cannot be
    /// opened is deleted (a miss).
    pub fn prompt(&self, key: &[u8; 32], clock: &dyn Clock) -> Option<Vec<u8>> {
        let found =
            self.guarded(|| aic_storage::PROMPT_CACHE.get(&self.store, key, clock.now_ms(), None))?;
        match found {
            Ok(TtlLookup::Hit { payload, .. }) => Some(payload),
            Ok(TtlLookup::Miss | TtlLookup::Expired | TtlLookup::Damaged) => None,
            Err(error) => {
                debug!("Prompt cache read failed: {error}");
                None
            }
        }
    }

    /// Stores a whole-prompt cache entry living `ttl_ms`; a failure is logged.
    pub fn put_prompt(&self, key: &[u8; 32], payload: &[u8], ttl_ms: u64, clock: &dyn Clock) {
        if self.is_damaged() {
            return;
        }
        let stored =
            aic_storage::PROMPT_CACHE.put(&self.store, key, payload, clock.now_ms(), ttl_ms);
        if let Err(error) = stored {
            debug!("Prompt cache write failed: {error}");
        }
    }

    /// Commits what is left to write and reports. A write failure is returned
    /// as a warning message; the run's results stand. A second call reports
    /// the counts again and writes nothing.
    pub fn finish(&mut self) -> (CacheReport, Option<String>) {
        let mut warning = None;
        let mut rows_written = 0;
        if let Some(writer) = self.writer.take() {
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
        let remote = self.remote_report();
        if let Some(remote) = &remote {
            self.record_remote(remote);
            if remote.rejected > 0 && warning.is_none() {
                warning = Some(format!(
                    "{} entries of the remote cache `{}` were refused (a signature that does not verify, another format, or an entry under another key's name) and computed here; check that AIC_CACHE_HMAC_KEY matches the key the cache was filled with",
                    remote.rejected, remote.store
                ));
            }
        }
        (
            CacheReport {
                enabled: true,
                database: Some(self.store.path().to_path_buf()),
                path_index_hits: self.path_hits.load(Ordering::Relaxed),
                blob_index_hits: self.blob_hits.load(Ordering::Relaxed),
                snapshot_seeded: self.seeded.load(Ordering::Relaxed),
                scan: self.scan.snapshot(),
                imports: self.imports.snapshot(),
                facts: self.facts.snapshot(),
                recomputed,
                rows_written,
                remote,
            },
            warning,
        )
    }
}
