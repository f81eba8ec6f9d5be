//! Tables of values that expire: the whole-prompt cache and the compiled-specification cache.
//!
//! The model: a [`TtlTable`] maps a caller-computed key (a [`CacheKeyHasher`] digest) to
//! `created ms (8, BE) ‖ expires ms (8, BE) ‖ envelope`, where the envelope is the
//! [`seal`](crate::seal)ed payload (zstd-compressed from
//! [`COMPRESS_FROM_BYTES`](crate::COMPRESS_FROM_BYTES)). Times come from the caller's clock.
//!
//! - A row is fresh while `now < expires`. A reader may also give a maximum age (the spec cache
//!   passes its current time to live, so a shorter `cache.ttlMinutes` applies to rows written
//!   before it changed); a row stamped in the future (a clock set back) counts as just written.
//! - A row this module cannot open (too short, a damaged envelope) is deleted on read and
//!   reported as [`TtlLookup::Damaged`]; a row whose *payload* the caller cannot decode is the
//!   caller's to delete, with [`TtlTable::remove`].
//! - Expired rows are deleted by [`TtlTable::put_and_sweep`] and by retention
//!   ([`Store::prune`]), never on read: a read takes no write lock.
//!
//! What it leaves out: size-based eviction (rows are bounded by the time to live) and per-project
//! clearing.
//!
//! [`CacheKeyHasher`]: crate::CacheKeyHasher

use redb::{ReadableTable, ReadableTableMetadata, TableDefinition, WriteTransaction};

use crate::store::{open_read, open_write};
use crate::{StorageError, Store, seal, unseal};

/// Bytes in front of each row's envelope: created ms and expires ms.
const STAMPS: usize = 16;

/// A table of expiring values: a caller-computed key → created ms ‖ expires
/// ms ‖ the sealed payload. Fresh while `now < expires` (and younger than a
/// reader's maximum age); damaged rows are deleted on read.
#[derive(Clone, Copy)]
pub struct TtlTable {
    definition: TableDefinition<'static, &'static [u8], &'static [u8]>,
}

impl std::fmt::Debug for TtlTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TtlTable").field(&self.name()).finish()
    }
}

/// Compiled prompts by prompt key (32 bytes).
pub const PROMPT_CACHE: TtlTable = TtlTable::new("prompt_cache-v2");

/// Compiled specifications by spec key (16 bytes).
pub const SPEC_CACHE: TtlTable = TtlTable::new("spec_compile_cache-v2");

/// The outcome of one look-up.
#[derive(Debug, PartialEq, Eq)]
pub enum TtlLookup {
    /// A fresh row.
    Hit {
        /// The payload, as given to [`TtlTable::put`].
        payload: Vec<u8>,
        /// When it was written, by the writer's clock (unix ms).
        created_ms: u64,
    },
    /// No row.
    Miss,
    /// A row past its expiry or maximum age (left for the next sweep).
    Expired,
    /// A row that could not be opened; it was deleted.
    Damaged,
}

impl TtlTable {
    /// A table named `name` (with its version suffix).
    pub const fn new(name: &'static str) -> Self {
        Self {
            definition: TableDefinition::new(name),
        }
    }

    /// The table's name.
    pub fn name(&self) -> String {
        self.definition.to_string()
    }

    /// Looks `key` up at `now_ms`; with `max_age_ms`, a row older than that is expired too.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the read, or the deletion of a damaged row, fails.
    pub fn get(
        &self,
        store: &Store,
        key: &[u8],
        now_ms: u64,
        max_age_ms: Option<u64>,
    ) -> Result<TtlLookup, StorageError> {
        let path = store.path();
        let read = store.begin_read()?;
        let Some(table) = open_read(&read, self.definition, path)? else {
            return Ok(TtlLookup::Miss);
        };
        let row = table
            .get(key)
            .map_err(|error| StorageError::storage(path, error))?;
        let Some(row) = row else {
            return Ok(TtlLookup::Miss);
        };
        let opened = open_row(row.value());
        drop(row);
        drop(table);
        drop(read);
        let Some((created_ms, expires_ms, payload)) = opened else {
            self.remove(store, key)?;
            return Ok(TtlLookup::Damaged);
        };
        let too_old = max_age_ms.is_some_and(|age| now_ms.saturating_sub(created_ms) >= age);
        if expires_ms <= now_ms.max(created_ms) || too_old {
            return Ok(TtlLookup::Expired);
        }
        Ok(TtlLookup::Hit {
            payload,
            created_ms,
        })
    }

    /// Stores `payload` under `key`, written at `now_ms` and living `ttl_ms`, replacing any row
    /// there.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails; then nothing was written.
    pub fn put(
        &self,
        store: &Store,
        key: &[u8],
        payload: &[u8],
        now_ms: u64,
        ttl_ms: u64,
    ) -> Result<(), StorageError> {
        let write = store.begin_write()?;
        self.insert(&write, store, key, payload, now_ms, ttl_ms)?;
        store.commit(write)
    }

    /// As [`TtlTable::put`], and deletes every row expired at `now_ms` in the same transaction,
    /// so a table written on every call never outgrows one time to live.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails; then nothing was written.
    pub fn put_and_sweep(
        &self,
        store: &Store,
        key: &[u8],
        payload: &[u8],
        now_ms: u64,
        ttl_ms: u64,
    ) -> Result<(), StorageError> {
        let write = store.begin_write()?;
        self.sweep(&write, store.path(), now_ms)?;
        self.insert(&write, store, key, payload, now_ms, ttl_ms)?;
        store.commit(write)
    }

    fn insert(
        &self,
        write: &WriteTransaction,
        store: &Store,
        key: &[u8],
        payload: &[u8],
        now_ms: u64,
        ttl_ms: u64,
    ) -> Result<(), StorageError> {
        let path = store.path();
        let envelope = seal(payload);
        let mut row = Vec::with_capacity(STAMPS + envelope.len());
        row.extend_from_slice(&now_ms.to_be_bytes());
        row.extend_from_slice(&now_ms.saturating_add(ttl_ms).to_be_bytes());
        row.extend_from_slice(&envelope);
        open_write(write, self.definition, path)?
            .insert(key, row.as_slice())
            .map_err(|error| StorageError::storage(path, error))?;
        Ok(())
    }

    /// Deletes the rows expired at `now_ms` (and rows that cannot be opened) inside `write`;
    /// returns how many.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the table cannot be read or written.
    pub(crate) fn sweep(
        &self,
        write: &WriteTransaction,
        path: &std::path::Path,
        now_ms: u64,
    ) -> Result<u64, StorageError> {
        let storage = |error| StorageError::storage(path, error);
        let mut table = open_write(write, self.definition, path)?;
        let mut expired = Vec::new();
        for entry in table.iter().map_err(storage)? {
            let (key, value) = entry.map_err(storage)?;
            let expiry = value
                .value()
                .get(8..STAMPS)
                .and_then(|bytes| bytes.try_into().ok())
                .map_or(0, u64::from_be_bytes);
            if expiry <= now_ms {
                expired.push(key.value().to_vec());
            }
        }
        for key in &expired {
            table.remove(key.as_slice()).map_err(storage)?;
        }
        Ok(expired.len() as u64)
    }

    /// Deletes the row under `key`, if any.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails.
    pub fn remove(&self, store: &Store, key: &[u8]) -> Result<(), StorageError> {
        let path = store.path();
        let write = store.begin_write()?;
        open_write(&write, self.definition, path)?
            .remove(key)
            .map_err(|error| StorageError::storage(path, error))?;
        store.commit(write)
    }

    /// Deletes every row (`aic cache clear`).
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails; then nothing was deleted.
    pub fn clear(&self, store: &Store) -> Result<(), StorageError> {
        let path = store.path();
        let write = store.begin_write()?;
        write
            .delete_table(self.definition)
            .map_err(|error| StorageError::table(path, &self.name(), error))?;
        store.commit(write)
    }

    /// Rows in the table, expired ones included.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the read fails.
    pub fn rows(&self, store: &Store) -> Result<u64, StorageError> {
        let path = store.path();
        let read = store.begin_read()?;
        match open_read(&read, self.definition, path)? {
            Some(table) => table
                .len()
                .map_err(|error| StorageError::storage(path, error)),
            None => Ok(0),
        }
    }
}

/// A row's created and expiry stamps and its payload, when it opens.
fn open_row(row: &[u8]) -> Option<(u64, u64, Vec<u8>)> {
    let created = u64::from_be_bytes(row.get(..8)?.try_into().ok()?);
    let expires = u64::from_be_bytes(row.get(8..STAMPS)?.try_into().ok()?);
    Some((created, expires, unseal(row.get(STAMPS..)?)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(&home.path().join("aic.redb")).unwrap();
        (home, store)
    }

    const HOUR: u64 = 3_600_000;
    const TABLE: TtlTable = TtlTable::new("test_ttl-v1");

    #[test]
    fn a_stored_value_is_read_back_until_it_expires() {
        let (_home, store) = store();
        let key = [42u8; 16];
        assert_eq!(
            TABLE.get(&store, &key, 1000, None).unwrap(),
            TtlLookup::Miss
        );
        let large = "compiled spec ".repeat(100).into_bytes();
        TABLE.put(&store, &key, &large, 1000, HOUR).unwrap();
        let hit = TtlLookup::Hit {
            payload: large.clone(),
            created_ms: 1000,
        };
        assert_eq!(TABLE.get(&store, &key, 1000 + HOUR - 1, None).unwrap(), hit);
        assert_eq!(
            TABLE.get(&store, &key, 1000 + HOUR, None).unwrap(),
            TtlLookup::Expired
        );
        // A clock set back does not expire a row.
        assert_eq!(TABLE.get(&store, &key, 10, None).unwrap(), hit);
        // A maximum age shorter than the time to live applies, and zero expires everything.
        assert_eq!(
            TABLE.get(&store, &key, 1500, Some(500)).unwrap(),
            TtlLookup::Expired
        );
        assert_eq!(
            TABLE.get(&store, &key, 1000, Some(0)).unwrap(),
            TtlLookup::Expired
        );
    }

    #[test]
    fn a_sweeping_put_replaces_the_row_and_deletes_expired_ones() {
        let (_home, store) = store();
        TABLE.put(&store, &[1], b"old", 0, HOUR).unwrap();
        TABLE.put(&store, &[2], b"recent", HOUR, HOUR).unwrap();
        TABLE
            .put_and_sweep(&store, &[2], b"newer", HOUR + 5, HOUR)
            .unwrap();
        assert_eq!(TABLE.rows(&store).unwrap(), 1, "row 1 expired");
        assert_eq!(
            TABLE.get(&store, &[2], HOUR + 5, None).unwrap(),
            TtlLookup::Hit {
                payload: b"newer".to_vec(),
                created_ms: HOUR + 5
            }
        );
        TABLE.clear(&store).unwrap();
        assert_eq!(TABLE.rows(&store).unwrap(), 0);
        TABLE.clear(&store).unwrap();
    }

    #[test]
    fn a_damaged_row_is_deleted_on_read() {
        let (_home, store) = store();
        let key = [7u8; 32];
        for damaged in [
            &[1u8, 2, 3][..],
            &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 9, 1],
            &[0, 0, 0, 0, 0, 0, 0, 0, 1, 200, 0, 0, 0, 9],
        ] {
            let write = store.begin_write().unwrap();
            write
                .open_table(TABLE.definition)
                .unwrap()
                .insert(key.as_slice(), damaged)
                .unwrap();
            store.commit(write).unwrap();
            assert_eq!(
                TABLE.get(&store, &key, 0, None).unwrap(),
                TtlLookup::Damaged
            );
            assert_eq!(TABLE.rows(&store).unwrap(), 0);
        }
        TABLE.put(&store, &key, b"fine", 0, HOUR).unwrap();
        TABLE.remove(&store, &key).unwrap();
        assert_eq!(TABLE.get(&store, &key, 0, None).unwrap(), TtlLookup::Miss);
    }
}
