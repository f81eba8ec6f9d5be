//! The per-file facts cache: content-addressed rows shared by every project, a per-project path
//! index, least-recently-used bookkeeping, the writer actor, and export/import.
//!
//! The model (the user's view is in `docs/cache.md`):
//!
//! - `file_facts-v2`: [`FactsKey`] (32 bytes) → "last used" (unix seconds, u64 little endian,
//!   for least-recently-used eviction) followed by an envelope around an opaque payload that
//!   the caller encodes (the binary stores `aic_stages` FileFacts there). The envelope is one
//!   codec byte, the xxh3-64 checksum of the payload (u64, little endian), then for
//!   [`Codec::Zstd`] the uncompressed length (u32, little endian) and the zstd frame, for
//!   [`Codec::Plain`] the payload itself. [`unseal`] verifies the checksum before it hands the
//!   payload out, so a flipped bit anywhere is a damaged row, never a wrong value (envelopes of
//!   [`ENVELOPE_VERSION`] 1 had no checksum and are refused). Payloads of [`COMPRESS_FROM_BYTES`] or
//!   more are compressed, on the caller's thread, so that rayon workers share that cost. A hit
//!   refreshes "last used" at most once per [`TOUCH_INTERVAL_SECS`], so a warm compile
//!   normally writes nothing; keeping the stamp in the row makes a look-up one read.
//! - `cache_totals-v1`: `"bytes"` and `"entries"` → u64, kept in step with the two tables above
//!   inside every write transaction, so the size check costs one read.
//! - `path_index-v1`: project id (16 bytes) ‖ relative path (UTF-8) → [`PathRecord`] (33 bytes):
//!   lets an unchanged file skip its read and hash.
//!
//! Writes go through a [`CacheWriter`]: one thread owns the write transactions, fed by a
//! crossbeam channel, and commits in batches of [`BATCH_OPS`] operations (intermediate batches
//! with [`redb::Durability::None`], the last one durably). Other processes may commit between
//! two batches; a row another process already wrote is replaced by the same value (keys are
//! content addressed) and counted as present.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use redb::{Durability, ReadTransaction, ReadableTable, TableDefinition, WriteTransaction};

use crate::store::{open_read, open_write};
use crate::{StorageError, Store};

/// Content-addressed facts: [`FactsKey`] → envelope.
const FACTS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("file_facts-v2");
/// Bytes of the "last used" stamp in front of each facts row's envelope.
const STAMP: usize = 8;
/// Running totals of the facts tables.
const TOTALS: TableDefinition<&str, u64> = TableDefinition::new("cache_totals-v1");
/// Named running counts (the remote tier's hits, misses, rejected entries,
/// bytes moved) → u64, for `aic cache stats`.
const COUNTERS: TableDefinition<&str, u64> = TableDefinition::new("cache_counters-v1");
/// Project id ‖ relative path → [`PathRecord`].
const PATH_INDEX: TableDefinition<&[u8], &[u8]> = TableDefinition::new("path_index-v1");

/// Payloads of this many bytes or more are stored zstd-compressed.
pub const COMPRESS_FROM_BYTES: usize = 256;
/// zstd level. Level 1 against zstd's default 3, on babel's 100k rows: the
/// database 76 MB instead of 75 MB, `aic precompute` about 2 % less CPU.
const ZSTD_LEVEL: i32 = 1;
/// A hit refreshes the row's "last used" time only when it is older than this (1 hour).
pub const TOUCH_INTERVAL_SECS: u64 = 3600;
/// Operations per write transaction. Every commit, even one that is not
/// durable, costs redb page bookkeeping: a new checkout's compile (55k rows on
/// babel) took 0.54 s wall with 4,096 and 0.47 s with 16,384.
pub const BATCH_OPS: usize = 16384;
/// Operations the writer's channel holds: senders wait beyond it, which bounds
/// the memory of rows not yet written.
const CHANNEL_OPS: usize = 16384;
/// Eviction shrinks the cache to this share of `cache.maxBytes` (in percent), so that it does
/// not run on every compile once the cache is full.
const EVICT_TO_PERCENT: u64 = 90;
/// Largest envelope an import accepts (64 MiB): no file aic caches comes near it.
const MAX_ROW_BYTES: usize = 64 << 20;
/// First bytes of an export file.
const EXPORT_MAGIC: &[u8; 8] = b"AICCACHE";
/// Version of the export format (and of the envelope inside it).
pub const EXPORT_FORMAT_VERSION: u32 = 2;

/// The key of a facts row: xxh3-128 of the file's bytes, then xxh3-128 of everything else the
/// row depends on (stage fingerprint, path, language, flags), both big endian. Rows of one
/// content sort together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FactsKey(pub [u8; 32]);

impl FactsKey {
    /// Builds a key from the content hash and the variant hash.
    pub fn new(content_hash: u128, variant: u128) -> Self {
        let mut key = [0u8; 32];
        key[..16].copy_from_slice(&content_hash.to_be_bytes());
        key[16..].copy_from_slice(&variant.to_be_bytes());
        Self(key)
    }
}

/// How a payload is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Codec {
    /// As is, after the checksum.
    Plain = 2,
    /// zstd, after the checksum and a u32 of the uncompressed length.
    Zstd = 3,
}

/// The envelope format: 2 since every envelope carries the xxh3-64 checksum
/// of its payload. Cache keys include it, so rows of another format are never
/// looked up.
pub const ENVELOPE_VERSION: u8 = 2;

/// Bytes of the checksum after the codec byte.
const CHECKSUM: usize = 8;

/// What the path index knows of one file of one project.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathRecord {
    /// File size in bytes when it was hashed.
    pub size: u64,
    /// Modification time in nanoseconds since the Unix epoch when it was hashed.
    pub mtime_ns: i64,
    /// xxh3-128 of its bytes.
    pub content_hash: u128,
    /// Whether the file was found to be binary (then there is no facts row for it).
    pub binary: bool,
}

impl PathRecord {
    const LEN: usize = 33;

    fn encode(&self) -> [u8; Self::LEN] {
        let mut out = [0u8; Self::LEN];
        out[..8].copy_from_slice(&self.size.to_le_bytes());
        out[8..16].copy_from_slice(&self.mtime_ns.to_le_bytes());
        out[16..32].copy_from_slice(&self.content_hash.to_le_bytes());
        out[32] = u8::from(self.binary);
        out
    }

    fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != Self::LEN {
            return None;
        }
        Some(Self {
            size: u64::from_le_bytes(bytes[..8].try_into().ok()?),
            mtime_ns: i64::from_le_bytes(bytes[8..16].try_into().ok()?),
            content_hash: u128::from_le_bytes(bytes[16..32].try_into().ok()?),
            binary: bytes[32] == 1,
        })
    }
}

/// The path index key of `path` in project `project`.
fn path_key(project: &[u8; 16], path: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(16 + path.len());
    key.extend_from_slice(project);
    key.extend_from_slice(path.as_bytes());
    key
}

/// Wraps a payload in its envelope, compressing it when it is large enough.
pub fn seal(payload: &[u8]) -> Vec<u8> {
    // One compression context per thread: creating one (about 2% of a
    // precompute's CPU when made per row) costs more than compressing a
    // typical row.
    thread_local! {
        static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    let compress = |payload: &[u8]| {
        COMPRESSOR.with(|cell| {
            let mut slot = cell.try_borrow_mut().ok()?;
            if slot.is_none() {
                *slot = zstd::bulk::Compressor::new(ZSTD_LEVEL).ok();
            }
            slot.as_mut()?.compress(payload).ok()
        })
    };
    let checksum = xxhash_rust::xxh3::xxh3_64(payload).to_le_bytes();
    if payload.len() >= COMPRESS_FROM_BYTES
        && let Ok(length) = u32::try_from(payload.len())
        && let Some(frame) = compress(payload)
        && frame.len() + 4 < payload.len()
    {
        let mut out = Vec::with_capacity(1 + CHECKSUM + 4 + frame.len());
        out.push(Codec::Zstd as u8);
        out.extend_from_slice(&checksum);
        out.extend_from_slice(&length.to_le_bytes());
        out.extend_from_slice(&frame);
        return out;
    }
    let mut out = Vec::with_capacity(1 + CHECKSUM + payload.len());
    out.push(Codec::Plain as u8);
    out.extend_from_slice(&checksum);
    out.extend_from_slice(payload);
    out
}

/// A facts row: the "last used" stamp, then the envelope.
fn stamped(now_secs: u64, envelope: &[u8]) -> Vec<u8> {
    let mut row = Vec::with_capacity(STAMP + envelope.len());
    row.extend_from_slice(&now_secs.to_le_bytes());
    row.extend_from_slice(envelope);
    row
}

/// Opens an envelope; `None` when it is damaged (its payload does not match
/// its checksum), of an unknown codec, or of the format before checksums.
pub fn unseal(envelope: &[u8]) -> Option<Vec<u8>> {
    let (&codec, rest) = envelope.split_first()?;
    let checksum = u64::from_le_bytes(rest.get(..CHECKSUM)?.try_into().ok()?);
    let rest = rest.get(CHECKSUM..)?;
    let payload = match codec {
        2 => Some(rest.to_vec()),
        3 => {
            let length = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
            // One decompression context per thread: creating one costs more than
            // decompressing a typical row.
            thread_local! {
                static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
                    const { std::cell::RefCell::new(None) };
            }
            let frame = rest.get(4..)?;
            let payload = DECOMPRESSOR.with(|cell| {
                let mut slot = cell.borrow_mut();
                if slot.is_none() {
                    *slot = zstd::bulk::Decompressor::new().ok();
                }
                slot.as_mut()?.decompress(frame, length).ok()
            })?;
            (payload.len() == length).then_some(payload)
        }
        _ => None,
    }?;
    (xxhash_rust::xxh3::xxh3_64(&payload) == checksum).then_some(payload)
}

/// The outcome of one facts look-up.
#[derive(Debug)]
pub enum Lookup {
    /// The row exists and its envelope opened.
    Hit {
        /// The payload, as given to [`CacheWriter::put_facts`].
        payload: Vec<u8>,
        /// Whether its "last used" time is due a refresh ([`CacheWriter::touch`]).
        touch: bool,
    },
    /// No row.
    Miss,
    /// A row whose envelope does not open: delete it ([`CacheWriter::remove`]) and recompute.
    Corrupt,
}

/// A read snapshot of the cache, shareable across threads.
pub struct CacheReader {
    path: std::path::PathBuf,
    facts: Option<redb::ReadOnlyTable<&'static [u8], &'static [u8]>>,
    paths: Option<redb::ReadOnlyTable<&'static [u8], &'static [u8]>>,
    now_secs: u64,
    _transaction: ReadTransaction,
}

impl std::fmt::Debug for CacheReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheReader")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl CacheReader {
    /// Opens a snapshot of the cache tables of `store`. `now_secs` is the caller's clock (unix
    /// seconds), used to decide which hits are due a "last used" refresh.
    ///
    /// # Errors
    ///
    /// [`StorageError::Transaction`] or [`StorageError::Table`] when the snapshot or a table
    /// cannot be opened (a table written with other types counts as damage).
    pub fn open(store: &Store, now_secs: u64) -> Result<Self, StorageError> {
        let transaction = store.begin_read()?;
        let path = store.path();
        Ok(Self {
            path: path.to_path_buf(),
            facts: open_read(&transaction, FACTS, path)?,
            paths: open_read(&transaction, PATH_INDEX, path)?,
            now_secs,
            _transaction: transaction,
        })
    }

    /// Looks a facts row up.
    ///
    /// # Errors
    ///
    /// [`StorageError::Storage`] when redb fails to read the row.
    pub fn get(&self, key: &FactsKey) -> Result<Lookup, StorageError> {
        let Some(facts) = &self.facts else {
            return Ok(Lookup::Miss);
        };
        let envelope = facts
            .get(key.0.as_slice())
            .map_err(|error| StorageError::storage(&self.path, error))?;
        let Some(envelope) = envelope else {
            return Ok(Lookup::Miss);
        };
        let row = envelope.value();
        let Some(payload) = row.get(STAMP..).and_then(unseal) else {
            return Ok(Lookup::Corrupt);
        };
        let last_used = u64::from_le_bytes(row[..STAMP].try_into().unwrap_or_default());
        Ok(Lookup::Hit {
            payload,
            touch: self.now_secs.saturating_sub(last_used) >= TOUCH_INTERVAL_SECS,
        })
    }

    /// Whether a facts row is stored under `key` (its envelope is not opened).
    ///
    /// # Errors
    ///
    /// [`StorageError::Storage`] when redb fails to read the row.
    pub fn contains(&self, key: &FactsKey) -> Result<bool, StorageError> {
        Ok(self.envelope(key)?.is_some())
    }

    /// The envelope of the facts row under `key`, as stored (not opened).
    ///
    /// # Errors
    ///
    /// [`StorageError::Storage`] when redb fails to read the row.
    pub fn envelope(&self, key: &FactsKey) -> Result<Option<Vec<u8>>, StorageError> {
        let Some(facts) = &self.facts else {
            return Ok(None);
        };
        let row = facts
            .get(key.0.as_slice())
            .map_err(|error| StorageError::storage(&self.path, error))?;
        Ok(row.and_then(|row| row.value().get(STAMP..).map(<[u8]>::to_vec)))
    }

    /// Whether the path index holds any file of `project` (a project this
    /// database has not scanned before holds none).
    ///
    /// # Errors
    ///
    /// [`StorageError::Storage`] when redb fails to read the table.
    pub fn has_project_paths(&self, project: &[u8; 16]) -> Result<bool, StorageError> {
        let Some(paths) = &self.paths else {
            return Ok(false);
        };
        let mut rows = paths
            .range::<&[u8]>(project.as_slice()..)
            .map_err(|error| StorageError::storage(&self.path, error))?;
        let first = rows
            .next()
            .transpose()
            .map_err(|error| StorageError::storage(&self.path, error))?;
        Ok(first.is_some_and(|(key, _)| key.value().starts_with(project)))
    }

    /// The path index record of `path` in `project`, if any and readable.
    ///
    /// # Errors
    ///
    /// [`StorageError::Storage`] when redb fails to read the row.
    pub fn path_record(
        &self,
        project: &[u8; 16],
        path: &str,
    ) -> Result<Option<PathRecord>, StorageError> {
        let Some(paths) = &self.paths else {
            return Ok(None);
        };
        let row = paths
            .get(path_key(project, path).as_slice())
            .map_err(|error| StorageError::storage(&self.path, error))?;
        Ok(row.and_then(|row| PathRecord::decode(row.value())))
    }
}

/// One operation for the writer thread.
enum WriteOp {
    Facts { key: FactsKey, envelope: Vec<u8> },
    Path { key: Vec<u8>, record: PathRecord },
    Touch { key: FactsKey },
    Remove { key: FactsKey },
}

impl WriteOp {
    /// The table the operation writes (0: facts, 1: path index) and its key,
    /// the order [`apply`] writes a batch in.
    fn table_key(&self) -> (u8, &[u8]) {
        match self {
            Self::Facts { key, .. } | Self::Touch { key } | Self::Remove { key } => {
                (0, key.0.as_slice())
            }
            Self::Path { key, .. } => (1, key.as_slice()),
        }
    }
}

/// Settings of a [`CacheWriter`].
#[derive(Clone, Copy, Debug)]
pub struct WriterOptions {
    /// `cache.maxBytes`: stored bytes of the facts table above which the least recently used
    /// rows are evicted, when the writer finishes.
    pub max_bytes: u64,
    /// The caller's clock (unix seconds), stamped on new and refreshed rows.
    pub now_secs: u64,
}

/// What a [`CacheWriter`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteReport {
    /// Facts rows inserted.
    pub facts_written: u64,
    /// Facts rows skipped because another writer had stored them first.
    pub facts_present: u64,
    /// Path index rows written.
    pub paths_written: u64,
    /// Rows removed as corrupt.
    pub removed: u64,
    /// Rows evicted as least recently used.
    pub evicted: u64,
    /// Write transactions committed.
    pub commits: u64,
}

/// The storage writer actor: one thread that owns the write transactions.
///
/// Senders never block for long: the channel holds 16,384 operations. Call
/// [`CacheWriter::finish`] to commit what is left and learn the outcome; dropping the writer
/// also commits, but loses the report.
pub struct CacheWriter {
    sender: Option<Sender<WriteOp>>,
    handle: Option<JoinHandle<Result<WriteReport, StorageError>>>,
}

impl std::fmt::Debug for CacheWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheWriter").finish_non_exhaustive()
    }
}

impl CacheWriter {
    /// Starts the writer thread on `store`.
    pub fn spawn(store: Arc<Store>, options: WriterOptions) -> Self {
        let (sender, receiver) = crossbeam_channel::bounded(CHANNEL_OPS);
        let handle = std::thread::Builder::new()
            .name("aic-cache-writer".to_owned())
            .spawn(move || write_loop(&store, &receiver, options))
            .ok();
        Self {
            sender: handle.is_some().then_some(sender),
            handle,
        }
    }

    fn send(&self, op: WriteOp) {
        if let Some(sender) = &self.sender {
            // A writer that stopped on an error drops its receiver; the cache is then only
            // not written, which costs speed, never correctness.
            let _ = sender.send(op);
        }
    }

    /// Stores a facts row (sealed on this thread).
    pub fn put_facts(&self, key: FactsKey, payload: &[u8]) {
        self.send(WriteOp::Facts {
            key,
            envelope: seal(payload),
        });
    }

    /// Stores a facts row whose envelope is already sealed (by [`seal`], on
    /// this machine or another).
    pub fn put_sealed(&self, key: FactsKey, envelope: Vec<u8>) {
        self.send(WriteOp::Facts { key, envelope });
    }

    /// Records what the path index knows of `path` in `project`.
    pub fn put_path(&self, project: &[u8; 16], path: &str, record: PathRecord) {
        self.send(WriteOp::Path {
            key: path_key(project, path),
            record,
        });
    }

    /// Refreshes a row's "last used" time.
    pub fn touch(&self, key: FactsKey) {
        self.send(WriteOp::Touch { key });
    }

    /// Deletes a row that failed to decode.
    pub fn remove(&self, key: FactsKey) {
        self.send(WriteOp::Remove { key });
    }

    /// Commits the remaining operations, evicts if the cache is over its size, and reports.
    ///
    /// # Errors
    ///
    /// The first [`StorageError`] of a transaction or commit; operations after it were dropped.
    pub fn finish(mut self) -> Result<WriteReport, StorageError> {
        self.sender = None;
        match self.handle.take() {
            Some(handle) => handle.join().unwrap_or_else(|_| Ok(WriteReport::default())),
            None => Ok(WriteReport::default()),
        }
    }
}

impl Drop for CacheWriter {
    fn drop(&mut self) {
        self.sender = None;
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

fn write_loop(
    store: &Store,
    receiver: &Receiver<WriteOp>,
    options: WriterOptions,
) -> Result<WriteReport, StorageError> {
    let mut report = WriteReport::default();
    let mut batch = Vec::with_capacity(BATCH_OPS);
    while let Ok(op) = receiver.recv() {
        batch.push(op);
        while batch.len() < BATCH_OPS {
            match receiver.try_recv() {
                Ok(op) => batch.push(op),
                Err(_) => break,
            }
        }
        if batch.len() >= BATCH_OPS {
            apply(store, &mut batch, options, false, &mut report)?;
        }
    }
    apply(store, &mut batch, options, true, &mut report)?;
    Ok(report)
}

/// Applies a batch in one write transaction; the last batch also evicts and commits durably.
fn apply(
    store: &Store,
    batch: &mut Vec<WriteOp>,
    options: WriterOptions,
    last: bool,
    report: &mut WriteReport,
) -> Result<(), StorageError> {
    // Nothing to write, nothing grew: no transaction (a warm compile commits
    // nothing and takes no write lock).
    if batch.is_empty() {
        return Ok(());
    }
    let path = store.path();
    let mut transaction = store.begin_write()?;
    if !last {
        // The last batch commits durably, and makes these durable with it.
        let _ = transaction.set_durability(Durability::None);
    }
    let mut over_budget = false;
    {
        let mut facts = open_write(&transaction, FACTS, path)?;
        let mut totals = open_write(&transaction, TOTALS, path)?;
        let mut paths = open_write(&transaction, PATH_INDEX, path)?;
        let storage = |error| StorageError::storage(path, error);
        let mut bytes = totals
            .get("bytes")
            .map_err(storage)?
            .map_or(0, |v| v.value());
        let mut entries = totals
            .get("entries")
            .map_err(storage)?
            .map_or(0, |v| v.value());
        // Keys are hashes: in arrival order each insert lands on another
        // leaf of the B-tree. In key order consecutive inserts share their
        // path. The sort is stable, so operations on one key keep their order
        // and the batch leaves the same tables.
        batch.sort_by(|a, b| a.table_key().cmp(&b.table_key()));
        for op in batch.drain(..) {
            match op {
                WriteOp::Facts { key, envelope } => {
                    // One B-tree walk: a row another process wrote under the
                    // same key holds the same value (keys are content
                    // addressed), so replacing it only refreshes its stamp.
                    let row = stamped(options.now_secs, &envelope);
                    let replaced = facts
                        .insert(key.0.as_slice(), row.as_slice())
                        .map_err(storage)?
                        .map(|old| old.value().len() as u64);
                    bytes += row.len() as u64;
                    if let Some(old) = replaced {
                        bytes = bytes.saturating_sub(old);
                        report.facts_present += 1;
                    } else {
                        entries += 1;
                        report.facts_written += 1;
                    }
                }
                WriteOp::Path { key, record } => {
                    paths
                        .insert(key.as_slice(), record.encode().as_slice())
                        .map_err(storage)?;
                    report.paths_written += 1;
                }
                WriteOp::Touch { key } => {
                    let envelope = facts
                        .get(key.0.as_slice())
                        .map_err(storage)?
                        .and_then(|row| row.value().get(STAMP..).map(<[u8]>::to_vec));
                    if let Some(envelope) = envelope {
                        let row = stamped(options.now_secs, &envelope);
                        facts
                            .insert(key.0.as_slice(), row.as_slice())
                            .map_err(storage)?;
                    }
                }
                WriteOp::Remove { key } => {
                    let removed = facts
                        .remove(key.0.as_slice())
                        .map_err(storage)?
                        .map(|row| row.value().len() as u64);
                    if let Some(stored) = removed {
                        bytes = bytes.saturating_sub(stored);
                        entries = entries.saturating_sub(1);
                        report.removed += 1;
                    }
                }
            }
        }
        if last && bytes > options.max_bytes {
            over_budget = true;
        }
        totals.insert("bytes", bytes).map_err(storage)?;
        totals.insert("entries", entries).map_err(storage)?;
    }
    if over_budget {
        report.evicted += evict(&transaction, path, options.max_bytes)?;
    }
    store.commit(transaction)?;
    report.commits += 1;
    Ok(())
}

/// Deletes least recently used rows (oldest "last used" first, then by key) until the facts
/// table holds at most [`EVICT_TO_PERCENT`] of `max_bytes`. Returns the rows deleted.
fn evict(transaction: &WriteTransaction, path: &Path, max_bytes: u64) -> Result<u64, StorageError> {
    let storage = |error| StorageError::storage(path, error);
    let mut facts = open_write(transaction, FACTS, path)?;
    let mut totals = open_write(transaction, TOTALS, path)?;
    let mut rows: Vec<(u64, [u8; 32], u64)> = Vec::new();
    for row in facts.iter().map_err(storage)? {
        let (key, value) = row.map_err(storage)?;
        let Ok(key) = <[u8; 32]>::try_from(key.value()) else {
            continue;
        };
        let value = value.value();
        let last_used = value
            .get(..STAMP)
            .and_then(|stamp| stamp.try_into().ok())
            .map_or(0, u64::from_le_bytes);
        rows.push((last_used, key, value.len() as u64));
    }
    rows.sort_unstable();
    let mut bytes = totals
        .get("bytes")
        .map_err(storage)?
        .map_or(0, |v| v.value());
    let mut entries = totals
        .get("entries")
        .map_err(storage)?
        .map_or(0, |v| v.value());
    let target = (u128::from(max_bytes) * u128::from(EVICT_TO_PERCENT) / 100) as u64;
    let mut evicted = 0;
    for (_, key, stored) in rows {
        if bytes <= target {
            break;
        }
        facts.remove(key.as_slice()).map_err(storage)?;
        bytes = bytes.saturating_sub(stored);
        entries = entries.saturating_sub(1);
        evicted += 1;
    }
    totals.insert("bytes", bytes).map_err(storage)?;
    totals.insert("entries", entries).map_err(storage)?;
    Ok(evicted)
}

/// Sizes of the cache, for `aic cache stats`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Facts rows.
    pub entries: u64,
    /// Bytes of their envelopes (compressed payloads).
    pub stored_bytes: u64,
    /// Path index rows, per project id (hex).
    pub path_rows: BTreeMap<String, u64>,
    /// Size of the database file on disk, in bytes.
    pub file_bytes: u64,
}

/// What an import did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Rows added.
    pub imported: u64,
    /// Rows already present.
    pub present: u64,
    /// Rows skipped because their envelope or payload did not decode.
    pub skipped: u64,
    /// Whether the file ended in the middle of a row (it was cut short); the
    /// rows before the cut were imported.
    pub truncated: bool,
}

/// An export file that is not one, or of another format version.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// Reading or writing the export file failed.
    #[error("Failed to read or write the cache export")]
    Io(#[from] io::Error),
    /// The file does not start with the export magic.
    #[error("The file is not an aic cache export (it does not start with `AICCACHE`)")]
    NotAnExport,
    /// The file has another format version.
    #[error(
        "The cache export has format version {found}; this aic reads version {EXPORT_FORMAT_VERSION}"
    )]
    Version {
        /// The version in the file.
        found: u32,
    },
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl Store {
    /// Counts the cache's rows and sizes.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when a read fails.
    pub fn cache_stats(&self) -> Result<CacheStats, StorageError> {
        let read = self.begin_read()?;
        let path = self.path();
        let storage = |error| StorageError::storage(path, error);
        let mut stats = CacheStats::default();
        if let Some(totals) = open_read(&read, TOTALS, path)? {
            stats.stored_bytes = totals
                .get("bytes")
                .map_err(storage)?
                .map_or(0, |v| v.value());
        }
        if let Some(facts) = open_read(&read, FACTS, path)? {
            // Every row is visited (not the table's stored length), so a
            // damaged page of the table shows here as damage.
            for row in facts.iter().map_err(storage)? {
                row.map_err(storage)?;
                stats.entries += 1;
            }
        }
        if let Some(paths) = open_read(&read, PATH_INDEX, path)? {
            for row in paths.iter().map_err(storage)? {
                let (key, _) = row.map_err(storage)?;
                let project = key.value().get(..16).map(hex).unwrap_or_default();
                *stats.path_rows.entry(project).or_default() += 1;
            }
        }
        stats.file_bytes = fs_err::metadata(path).map_or(0, |m| m.len());
        Ok(stats)
    }

    /// Deletes every facts row and the path index; other tables are kept.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails; then nothing was deleted.
    pub fn clear_cache(&self) -> Result<(), StorageError> {
        let path = self.path();
        let write = self.begin_write()?;
        for name in [FACTS, PATH_INDEX] {
            write
                .delete_table(name)
                .map_err(|error| StorageError::table(path, &name.to_string(), error))?;
        }
        for name in [TOTALS, COUNTERS] {
            write
                .delete_table(name)
                .map_err(|error| StorageError::table(path, &name.to_string(), error))?;
        }
        self.commit(write)
    }

    /// Adds `counts` to the named running counts, in one transaction.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails; then nothing was added.
    pub fn add_counters(&self, counts: &[(&str, u64)]) -> Result<(), StorageError> {
        let path = self.path();
        let storage = |error| StorageError::storage(path, error);
        let write = self.begin_write()?;
        {
            let mut table = open_write(&write, COUNTERS, path)?;
            for &(name, count) in counts {
                let now = table.get(name).map_err(storage)?.map_or(0, |v| v.value());
                table
                    .insert(name, now.saturating_add(count))
                    .map_err(storage)?;
            }
        }
        self.commit(write)
    }

    /// The named running counts, by name.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when a read fails.
    pub fn counters(&self) -> Result<BTreeMap<String, u64>, StorageError> {
        let read = self.begin_read()?;
        let path = self.path();
        let storage = |error| StorageError::storage(path, error);
        let mut counts = BTreeMap::new();
        if let Some(table) = open_read(&read, COUNTERS, path)? {
            for row in table.iter().map_err(storage)? {
                let (name, count) = row.map_err(storage)?;
                counts.insert(name.value().to_owned(), count.value());
            }
        }
        Ok(counts)
    }

    /// Writes every facts row to `out` as an export file: `AICCACHE`, the format version (u32
    /// LE), then per row the 32-byte key, the envelope length (u32 LE) and the envelope. The path
    /// index is not exported: its modification times mean nothing on another machine. Returns
    /// the rows written.
    ///
    /// # Errors
    ///
    /// [`ExchangeError::Io`] or [`ExchangeError::Storage`].
    pub fn export_cache(&self, out: &mut dyn Write) -> Result<u64, ExchangeError> {
        out.write_all(EXPORT_MAGIC)?;
        out.write_all(&EXPORT_FORMAT_VERSION.to_le_bytes())?;
        let read = self.begin_read()?;
        let path = self.path();
        let mut rows = 0;
        if let Some(facts) = open_read(&read, FACTS, path)? {
            for row in facts
                .iter()
                .map_err(|error| StorageError::storage(path, error))?
            {
                let (key, value) = row.map_err(|error| StorageError::storage(path, error))?;
                let Some(value) = value.value().get(STAMP..) else {
                    continue;
                };
                let Ok(length) = u32::try_from(value.len()) else {
                    continue;
                };
                out.write_all(key.value())?;
                out.write_all(&length.to_le_bytes())?;
                out.write_all(value)?;
                rows += 1;
            }
        }
        out.flush()?;
        Ok(rows)
    }

    /// Reads an export file into the cache. Each row's envelope is opened and its payload given
    /// to `valid`; rows that fail either are skipped; rows already present are counted. A file cut
    /// short keeps the rows before the cut.
    ///
    /// # Errors
    ///
    /// [`ExchangeError::NotAnExport`] and [`ExchangeError::Version`] before anything is written;
    /// [`ExchangeError::Io`] and [`ExchangeError::Storage`] otherwise.
    pub fn import_cache(
        &self,
        input: &mut dyn Read,
        max_bytes: u64,
        now_secs: u64,
        valid: &dyn Fn(&[u8]) -> bool,
    ) -> Result<ImportReport, ExchangeError> {
        let mut magic = [0u8; 8];
        input
            .read_exact(&mut magic)
            .map_err(|_| ExchangeError::NotAnExport)?;
        if &magic != EXPORT_MAGIC {
            return Err(ExchangeError::NotAnExport);
        }
        let mut version = [0u8; 4];
        input
            .read_exact(&mut version)
            .map_err(|_| ExchangeError::NotAnExport)?;
        let found = u32::from_le_bytes(version);
        if found != EXPORT_FORMAT_VERSION {
            return Err(ExchangeError::Version { found });
        }
        let mut report = ImportReport::default();
        let mut batch = Vec::new();
        let options = WriterOptions {
            max_bytes,
            now_secs,
        };
        let mut write_report = WriteReport::default();
        loop {
            let mut key = [0u8; 32];
            // A clean end of file falls between rows; anywhere else the file
            // was cut short.
            match input.read(&mut key[..1]) {
                Ok(0) => break,
                Ok(_) => {}
                Err(error) => return Err(error.into()),
            }
            let mut length = [0u8; 4];
            if input.read_exact(&mut key[1..]).is_err() || input.read_exact(&mut length).is_err() {
                report.truncated = true;
                break;
            }
            let length = u32::from_le_bytes(length) as usize;
            if length > MAX_ROW_BYTES {
                // Not a row this format writes: the rest of the file is not trustworthy.
                report.skipped += 1;
                break;
            }
            let mut envelope = vec![0u8; length];
            if input.read_exact(&mut envelope).is_err() {
                report.truncated = true;
                break;
            }
            if !unseal(&envelope).is_some_and(|payload| valid(&payload)) {
                report.skipped += 1;
                continue;
            }
            batch.push(WriteOp::Facts {
                key: FactsKey(key),
                envelope,
            });
            if batch.len() >= BATCH_OPS {
                apply(self, &mut batch, options, false, &mut write_report)?;
            }
        }
        apply(self, &mut batch, options, true, &mut write_report)?;
        report.imported = write_report.facts_written;
        report.present = write_report.facts_present;
        Ok(report)
    }
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut out, byte| {
        let _ = write!(out, "{byte:02x}");
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Arc<Store>) {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(&home.path().join("aic.redb")).unwrap();
        (home, Arc::new(store))
    }

    fn key(n: u128) -> FactsKey {
        FactsKey::new(n, 7)
    }

    fn options(max_bytes: u64, now_secs: u64) -> WriterOptions {
        WriterOptions {
            max_bytes,
            now_secs,
        }
    }

    #[test]
    fn envelopes_round_trip_and_compress_large_payloads() {
        let small = b"tiny".to_vec();
        assert_eq!(seal(&small)[0], Codec::Plain as u8);
        assert_eq!(unseal(&seal(&small)).unwrap(), small);
        let large = "fn main() {}\n".repeat(200).into_bytes();
        let sealed = seal(&large);
        assert_eq!(sealed[0], Codec::Zstd as u8);
        assert!(sealed.len() < large.len() / 4, "{}", sealed.len());
        assert_eq!(unseal(&sealed).unwrap(), large);
        assert_eq!(unseal(&[9, 1, 2]), None);
        assert_eq!(
            unseal(&[3, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 1, 2, 3]),
            None
        );
        assert_eq!(unseal(&[]), None);
        // The format before checksums (codec 0, the payload as is) is refused.
        assert_eq!(unseal(b"\0tiny"), None);
    }

    #[test]
    fn a_flipped_bit_anywhere_in_an_envelope_never_gives_another_payload() {
        let small = b"a cached row of facts".to_vec();
        let large = "fn main() { println!(\"hi\"); }\n".repeat(64).into_bytes();
        for payload in [small, large] {
            let sealed = seal(&payload);
            for bit in 0..sealed.len() * 8 {
                let mut flipped = sealed.clone();
                flipped[bit / 8] ^= 1 << (bit % 8);
                // A flip zstd ignores (a header flag) still gives the payload;
                // no flip gives another one.
                let opened = unseal(&flipped);
                assert!(
                    opened.is_none() || opened.as_deref() == Some(payload.as_slice()),
                    "bit {bit} of {}",
                    sealed.len()
                );
            }
        }
    }

    #[test]
    fn the_page_cache_stays_bounded_however_much_is_written_and_read() {
        let (_home, store) = store();
        // 1.5 times the page cache in incompressible rows (xorshift bytes).
        let row_bytes = 64 * 1024;
        let rows = crate::store::PAGE_CACHE_BYTES * 3 / 2 / row_bytes;
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut payload = |n: usize| -> Vec<u8> {
            (0..row_bytes)
                .map(|i| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state as u8) ^ (n as u8) ^ (i as u8)
                })
                .collect()
        };
        let writer = CacheWriter::spawn(store.clone(), options(u64::MAX, 1000));
        for n in 0..rows {
            writer.put_facts(key(n as u128), &payload(n));
        }
        assert_eq!(writer.finish().unwrap().facts_written, rows as u64);
        let reader = CacheReader::open(&store, 1000).unwrap();
        for n in 0..rows {
            assert!(matches!(
                reader.get(&key(n as u128)).unwrap(),
                Lookup::Hit { .. }
            ));
        }
        let used = store.page_cache_bytes();
        assert!(used > 0, "redb's cache metrics are on in tests");
        assert!(
            used <= crate::store::PAGE_CACHE_BYTES + crate::store::PAGE_CACHE_BYTES / 8,
            "{used} bytes cached for a bound of {}",
            crate::store::PAGE_CACHE_BYTES
        );
    }

    #[test]
    fn written_rows_are_read_back_and_counted() {
        let (_home, store) = store();
        let writer = CacheWriter::spawn(store.clone(), options(u64::MAX, 1000));
        writer.put_facts(key(1), b"one");
        writer.put_facts(key(2), &vec![b'x'; 4000]);
        writer.put_path(
            &[1; 16],
            "src/a.rs",
            PathRecord {
                size: 3,
                mtime_ns: -5,
                content_hash: 1,
                binary: false,
            },
        );
        let report = writer.finish().unwrap();
        assert_eq!(report.facts_written, 2);
        assert_eq!(report.paths_written, 1);

        let reader = CacheReader::open(&store, 1000).unwrap();
        match reader.get(&key(1)).unwrap() {
            Lookup::Hit { payload, touch } => {
                assert_eq!(payload, b"one");
                assert!(!touch);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(reader.get(&key(3)).unwrap(), Lookup::Miss));
        assert_eq!(
            reader.path_record(&[1; 16], "src/a.rs").unwrap(),
            Some(PathRecord {
                size: 3,
                mtime_ns: -5,
                content_hash: 1,
                binary: false
            })
        );
        assert_eq!(reader.path_record(&[2; 16], "src/a.rs").unwrap(), None);
        assert!(reader.has_project_paths(&[1; 16]).unwrap());
        assert!(!reader.has_project_paths(&[0; 16]).unwrap());
        assert!(!reader.has_project_paths(&[2; 16]).unwrap());
        let later = CacheReader::open(&store, 1000 + TOUCH_INTERVAL_SECS).unwrap();
        assert!(matches!(
            later.get(&key(1)).unwrap(),
            Lookup::Hit { touch: true, .. }
        ));

        let stats = store.cache_stats().unwrap();
        assert_eq!(stats.entries, 2);
        assert!(
            stats.stored_bytes > 3 && stats.stored_bytes < 200,
            "{stats:?}"
        );
        assert_eq!(stats.path_rows.values().sum::<u64>(), 1);
    }

    #[test]
    fn a_corrupt_row_is_reported_and_removed() {
        let (_home, store) = store();
        let write = store.begin_write().unwrap();
        write
            .open_table(FACTS)
            .unwrap()
            .insert(
                key(5).0.as_slice(),
                [0u8, 0, 0, 0, 0, 0, 0, 0, 1, 200, 0, 0, 0, 9, 9].as_slice(),
            )
            .unwrap();
        store.commit(write).unwrap();
        let reader = CacheReader::open(&store, 0).unwrap();
        assert!(matches!(reader.get(&key(5)).unwrap(), Lookup::Corrupt));
        drop(reader);
        let writer = CacheWriter::spawn(store.clone(), options(u64::MAX, 0));
        writer.remove(key(5));
        assert_eq!(writer.finish().unwrap().removed, 1);
        let reader = CacheReader::open(&store, 0).unwrap();
        assert!(matches!(reader.get(&key(5)).unwrap(), Lookup::Miss));
    }

    #[test]
    fn eviction_drops_the_least_recently_used_rows_first() {
        let (_home, store) = store();
        for (n, now) in [(1u128, 10u64), (2, 20), (3, 30)] {
            let writer = CacheWriter::spawn(store.clone(), options(u64::MAX, now));
            writer.put_facts(key(n), &[b'a'; 100]);
            writer.finish().unwrap();
        }
        // Row 1 is used again, so row 2 is now the oldest.
        let writer = CacheWriter::spawn(store.clone(), options(u64::MAX, 40));
        writer.touch(key(1));
        writer.finish().unwrap();
        // A fourth row makes 4 rows of 117 bytes; a budget of 420 keeps at most
        // 378 bytes, i.e. three rows: the oldest, row 2, goes.
        let writer = CacheWriter::spawn(store.clone(), options(420, 50));
        writer.put_facts(key(4), &[b'a'; 100]);
        let report = writer.finish().unwrap();
        assert_eq!(report.evicted, 1);
        let reader = CacheReader::open(&store, 50).unwrap();
        assert!(matches!(reader.get(&key(2)).unwrap(), Lookup::Miss));
        for kept in [1, 3, 4] {
            assert!(matches!(
                reader.get(&key(kept)).unwrap(),
                Lookup::Hit { .. }
            ));
        }
        assert_eq!(store.cache_stats().unwrap().entries, 3);
    }

    #[test]
    fn export_and_import_round_trip_and_skip_bad_rows() {
        let (_home, store) = store();
        let writer = CacheWriter::spawn(store.clone(), options(u64::MAX, 1));
        writer.put_facts(key(1), b"good one");
        writer.put_facts(key(2), &"good two ".repeat(100).into_bytes());
        writer.put_facts(key(3), b"bad");
        writer.finish().unwrap();
        let mut exported = Vec::new();
        assert_eq!(store.export_cache(&mut exported).unwrap(), 3);

        let (_other_home, other) = store_pair();
        let report = other
            .import_cache(&mut exported.as_slice(), u64::MAX, 1, &|payload| {
                payload.starts_with(b"good")
            })
            .unwrap();
        assert_eq!(
            report,
            ImportReport {
                imported: 2,
                present: 0,
                skipped: 1,
                truncated: false,
            }
        );
        let cut = &exported[..exported.len() - 3];
        let (_third_home, third) = store_pair();
        let report = third
            .import_cache(&mut &cut[..], u64::MAX, 1, &|_| true)
            .unwrap();
        assert!(report.truncated);
        assert_eq!(report.imported, 2);
        let again = other
            .import_cache(&mut exported.as_slice(), u64::MAX, 1, &|_| true)
            .unwrap();
        assert_eq!(again.imported, 1);
        assert_eq!(again.present, 2);

        let error = other
            .import_cache(&mut b"NOTCACHE".as_slice(), u64::MAX, 1, &|_| true)
            .unwrap_err();
        assert!(matches!(error, ExchangeError::NotAnExport), "{error}");
        let mut future = EXPORT_MAGIC.to_vec();
        future.extend_from_slice(&99u32.to_le_bytes());
        let error = other
            .import_cache(&mut future.as_slice(), u64::MAX, 1, &|_| true)
            .unwrap_err();
        assert!(
            matches!(error, ExchangeError::Version { found: 99 }),
            "{error}"
        );
    }

    fn store_pair() -> (tempfile::TempDir, Store) {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(&home.path().join("aic.redb")).unwrap();
        (home, store)
    }

    #[test]
    fn clear_removes_facts_and_paths() {
        let (_home, store) = store();
        let writer = CacheWriter::spawn(store.clone(), options(u64::MAX, 1));
        writer.put_facts(key(1), b"x");
        writer.finish().unwrap();
        store.clear_cache().unwrap();
        let stats = store.cache_stats().unwrap();
        assert_eq!((stats.entries, stats.stored_bytes), (0, 0));
        let reader = CacheReader::open(&store, 0).unwrap();
        assert!(matches!(reader.get(&key(1)).unwrap(), Lookup::Miss));
    }

    #[test]
    fn the_reader_is_shareable_across_threads() {
        fn assert_sync<T: Send + Sync>() {}
        assert_sync::<CacheReader>();
    }
}
