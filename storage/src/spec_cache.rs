//! The specification compile cache (`spec_compile_cache`, seed §2.7 "Shipped — `aic_compile_spec`
//! cross-call cache"): compiled specifications keyed by a hash of their input and budget, so that
//! a planning agent asking twice for the same briefing gets the stored one without a recompile.
//!
//! The model:
//!
//! - `spec_compile_cache-v1`: [`SpecCacheKey`] (16 bytes) → "created at" (unix seconds, u64
//!   little endian) followed by the [`seal`](crate::seal) envelope of an opaque payload. The
//!   caller computes the key (xxh3-128 over a canonical encoding of the input, the budget and
//!   everything else the result depends on) and encodes the payload (the binary stores the
//!   serialised `SpecCompilationResult` there); this module knows neither.
//! - Expiry is decided on read from the caller's clock and time to live: a row is fresh while
//!   `now − created < ttl`. A row stamped in the future (a clock set back) counts as just
//!   written. An expired row reads as a miss and is replaced by the next put, which also deletes
//!   every other expired row, so the table never outgrows what one time to live writes.
//! - A row this module cannot open (too short, a damaged envelope) is deleted on read and reads as
//!   a miss. A row whose *payload* the caller cannot decode is the caller's to delete, with
//!   [`Store::spec_cache_remove`].
//!
//! What it leaves out: size-based eviction (rows are small and bounded by the time to live) and
//! statistics.

use redb::{ReadTransaction, ReadableTable, TableDefinition, TableError, WriteTransaction};

use crate::{StorageError, Store, seal, unseal};

/// Compiled specifications: [`SpecCacheKey`] → created-at stamp ‖ envelope.
const SPEC_CACHE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("spec_compile_cache-v1");
/// Bytes of the "created at" stamp in front of each row's envelope.
const STAMP: usize = 8;

/// The key of a specification cache row: xxh3-128 of the caller's canonical encoding of
/// everything the compiled result depends on, big endian.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SpecCacheKey(pub [u8; 16]);

impl SpecCacheKey {
    /// Builds a key from an xxh3-128 digest.
    pub fn new(digest: u128) -> Self {
        Self(digest.to_be_bytes())
    }
}

/// The outcome of one specification cache look-up.
#[derive(Debug, PartialEq, Eq)]
pub enum SpecCacheLookup {
    /// A fresh row: its payload, as given to [`Store::spec_cache_put`].
    Hit(Vec<u8>),
    /// No row, or a row that was damaged (and is now deleted).
    Miss,
    /// A row older than the time to live; the next put replaces it.
    Expired,
}

/// The table opened for reading.
type ReadTable = redb::ReadOnlyTable<&'static [u8], &'static [u8]>;

/// Opens the table for reading; a table that does not exist yet reads as empty.
fn open_read(
    transaction: &ReadTransaction,
    path: &std::path::Path,
) -> Result<Option<ReadTable>, StorageError> {
    match transaction.open_table(SPEC_CACHE) {
        Ok(table) => Ok(Some(table)),
        Err(TableError::TableDoesNotExist(_)) => Ok(None),
        Err(error) => Err(StorageError::table(path, &SPEC_CACHE.to_string(), error)),
    }
}

/// Opens the table for writing, creating it when needed.
fn open_write<'txn>(
    transaction: &'txn WriteTransaction,
    path: &std::path::Path,
) -> Result<redb::Table<'txn, &'static [u8], &'static [u8]>, StorageError> {
    transaction
        .open_table(SPEC_CACHE)
        .map_err(|error| StorageError::table(path, &SPEC_CACHE.to_string(), error))
}

/// Whether a row created at `created` is still fresh at `now` for a time to live of `ttl_secs`.
fn fresh(created: u64, now_secs: u64, ttl_secs: u64) -> bool {
    now_secs.saturating_sub(created) < ttl_secs
}

/// The created-at stamp of a row, when it has one.
fn created_at(row: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(row.get(..STAMP)?.try_into().ok()?))
}

impl Store {
    /// Looks a compiled specification up. `now_secs` is the caller's clock (unix seconds) and
    /// `ttl_secs` the time to live (`cache.ttlMinutes` × 60); a time to live of 0 makes every row
    /// expired.
    ///
    /// A row that cannot be opened is deleted (in its own write transaction) and reported as
    /// [`SpecCacheLookup::Miss`].
    ///
    /// # Errors
    ///
    /// [`StorageError`] when a read fails, or when deleting a damaged row fails.
    pub fn spec_cache_get(
        &self,
        key: &SpecCacheKey,
        now_secs: u64,
        ttl_secs: u64,
    ) -> Result<SpecCacheLookup, StorageError> {
        let path = self.path();
        let read = self.begin_read()?;
        let Some(table) = open_read(&read, path)? else {
            return Ok(SpecCacheLookup::Miss);
        };
        let row = table
            .get(key.0.as_slice())
            .map_err(|error| StorageError::storage(path, error))?;
        let Some(row) = row else {
            return Ok(SpecCacheLookup::Miss);
        };
        let row = row.value();
        let opened = created_at(row).zip(row.get(STAMP..).and_then(unseal));
        drop(table);
        drop(read);
        match opened {
            Some((created, payload)) if fresh(created, now_secs, ttl_secs) => {
                Ok(SpecCacheLookup::Hit(payload))
            }
            Some(_) => Ok(SpecCacheLookup::Expired),
            None => {
                self.spec_cache_remove(key)?;
                Ok(SpecCacheLookup::Miss)
            }
        }
    }

    /// Stores a compiled specification under `key`, stamped `now_secs`, replacing any row there,
    /// and deletes every row that is expired at `now_secs` for `ttl_secs`, in one durable write
    /// transaction. Payloads of [`COMPRESS_FROM_BYTES`](crate::COMPRESS_FROM_BYTES) or more are
    /// stored zstd-compressed.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails; then nothing was written.
    pub fn spec_cache_put(
        &self,
        key: &SpecCacheKey,
        payload: &[u8],
        now_secs: u64,
        ttl_secs: u64,
    ) -> Result<(), StorageError> {
        let path = self.path();
        let storage = |error| StorageError::storage(path, error);
        let envelope = seal(payload);
        let mut row = Vec::with_capacity(STAMP + envelope.len());
        row.extend_from_slice(&now_secs.to_le_bytes());
        row.extend_from_slice(&envelope);
        let write = self.begin_write()?;
        {
            let mut table = open_write(&write, path)?;
            let mut expired = Vec::new();
            for entry in table.iter().map_err(storage)? {
                let (stored_key, value) = entry.map_err(storage)?;
                if created_at(value.value())
                    .is_none_or(|created| !fresh(created, now_secs, ttl_secs))
                {
                    expired.push(stored_key.value().to_vec());
                }
            }
            for stale in expired {
                table.remove(stale.as_slice()).map_err(storage)?;
            }
            table
                .insert(key.0.as_slice(), row.as_slice())
                .map_err(storage)?;
        }
        self.commit(write)
    }

    /// Deletes the row under `key`, if any: for a payload the caller could not decode.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails.
    pub fn spec_cache_remove(&self, key: &SpecCacheKey) -> Result<(), StorageError> {
        let path = self.path();
        let write = self.begin_write()?;
        open_write(&write, path)?
            .remove(key.0.as_slice())
            .map_err(|error| StorageError::storage(path, error))?;
        self.commit(write)
    }

    /// Deletes every compiled specification (`aic cache clear`).
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails; then nothing was deleted.
    pub fn clear_spec_cache(&self) -> Result<(), StorageError> {
        let path = self.path();
        let write = self.begin_write()?;
        write
            .delete_table(SPEC_CACHE)
            .map_err(|error| StorageError::table(path, &SPEC_CACHE.to_string(), error))?;
        self.commit(write)
    }

    /// Rows in the specification cache, expired ones included.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the read fails.
    pub fn spec_cache_rows(&self) -> Result<u64, StorageError> {
        use redb::ReadableTableMetadata;
        let path = self.path();
        let read = self.begin_read()?;
        match open_read(&read, path)? {
            Some(table) => table
                .len()
                .map_err(|error| StorageError::storage(path, error)),
            None => Ok(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(&home.path().join("aic.redb")).unwrap();
        (home, store)
    }

    const HOUR: u64 = 3600;

    #[test]
    fn a_stored_result_is_read_back_until_it_expires() {
        let (_home, store) = store();
        let key = SpecCacheKey::new(42);
        assert_eq!(
            store.spec_cache_get(&key, 1000, HOUR).unwrap(),
            SpecCacheLookup::Miss
        );
        let large = "compiled spec ".repeat(100).into_bytes();
        store.spec_cache_put(&key, &large, 1000, HOUR).unwrap();
        assert_eq!(
            store.spec_cache_get(&key, 1000 + HOUR - 1, HOUR).unwrap(),
            SpecCacheLookup::Hit(large.clone())
        );
        assert_eq!(
            store.spec_cache_get(&key, 1000 + HOUR, HOUR).unwrap(),
            SpecCacheLookup::Expired
        );
        // A clock set back does not expire a row.
        assert_eq!(
            store.spec_cache_get(&key, 10, HOUR).unwrap(),
            SpecCacheLookup::Hit(large)
        );
        // A time to live of zero expires everything.
        assert_eq!(
            store.spec_cache_get(&key, 1000, 0).unwrap(),
            SpecCacheLookup::Expired
        );
    }

    #[test]
    fn a_put_replaces_the_row_and_deletes_expired_ones() {
        let (_home, store) = store();
        store
            .spec_cache_put(&SpecCacheKey::new(1), b"old", 0, HOUR)
            .unwrap();
        store
            .spec_cache_put(&SpecCacheKey::new(2), b"recent", HOUR, HOUR)
            .unwrap();
        store
            .spec_cache_put(&SpecCacheKey::new(2), b"newer", HOUR + 5, HOUR)
            .unwrap();
        assert_eq!(store.spec_cache_rows().unwrap(), 1, "row 1 expired");
        assert_eq!(
            store
                .spec_cache_get(&SpecCacheKey::new(2), HOUR + 5, HOUR)
                .unwrap(),
            SpecCacheLookup::Hit(b"newer".to_vec())
        );
        store.clear_spec_cache().unwrap();
        assert_eq!(store.spec_cache_rows().unwrap(), 0);
        store.clear_spec_cache().unwrap();
    }

    #[test]
    fn a_damaged_row_is_deleted_on_read() {
        let (_home, store) = store();
        let key = SpecCacheKey::new(7);
        for damaged in [
            &[1u8, 2, 3][..],
            &[0, 0, 0, 0, 0, 0, 0, 0, 1, 200, 0, 0, 0, 9],
        ] {
            let write = store.begin_write().unwrap();
            write
                .open_table(SPEC_CACHE)
                .unwrap()
                .insert(key.0.as_slice(), damaged)
                .unwrap();
            store.commit(write).unwrap();
            assert_eq!(
                store.spec_cache_get(&key, 0, HOUR).unwrap(),
                SpecCacheLookup::Miss
            );
            assert_eq!(store.spec_cache_rows().unwrap(), 0);
        }
        store.spec_cache_put(&key, b"fine", 0, HOUR).unwrap();
        store.spec_cache_remove(&key).unwrap();
        assert_eq!(
            store.spec_cache_get(&key, 0, HOUR).unwrap(),
            SpecCacheLookup::Miss
        );
    }
}
