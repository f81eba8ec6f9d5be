//! The redb database behind aic's caches, logs and sessions.
//!
//! One database file (by default `~/.aic/aic.redb`; the binary decides the path) holds every
//! table aic persists. This crate opens it and keeps its layout versioned; it knows redb and byte
//! encodings, never pipeline semantics.
//!
//! - [`Store`] is the opened database. [`Store::open`] creates the file and its directories
//!   (mode 0700) if needed, opens it in redb's multi-writer mode so that the MCP server, hook
//!   processes and the CLI can share it, and brings it to [`SCHEMA_VERSION`].
//! - [`StorageError`] is every failure. Each variant names the database file, and
//!   [`StorageError::hint`] says how to fix it: usually, move the file aside, since it is a cache.
//! - Every key is built with a [`CacheKeyHasher`] over typed [`CacheKey`] fields.
//! - The per-file cache is read through a [`CacheReader`] and written by one [`CacheWriter`]
//!   thread; the whole-prompt and compiled-specification caches are [`TtlTable`]s
//!   ([`PROMPT_CACHE`], [`SPEC_CACHE`]).
//!
//! Table names carry a version suffix (`file_facts-v1`) that changes whenever the table's
//! encoding does; the old table is then ignored rather than migrated. `schema_version` is the one
//! table without a suffix: it records [`SCHEMA_VERSION`], which changes only for a change to the
//! database as a whole. A database written by a newer aic is refused with
//! [`StorageError::SchemaTooNew`] without a transaction being written to it.
//!
//! # Example
//!
//! ```
//! use aic_storage::{SCHEMA_VERSION, Store};
//! use redb::{ReadableDatabase, TableDefinition};
//!
//! const NOTES: TableDefinition<&str, &str> = TableDefinition::new("notes-v1");
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let home = tempfile::tempdir()?;
//! let path = home.path().join("aic").join("aic.redb");
//! let store = Store::open(&path)?;
//! assert_eq!(store.schema_version(), SCHEMA_VERSION);
//!
//! let write = store.begin_write()?;
//! write.open_table(NOTES)?.insert("greeting", "hello")?;
//! store.commit(write)?;
//! drop(store);
//!
//! let store = Store::open(&path)?;
//! let read = store.database().begin_read()?;
//! let greeting = read.open_table(NOTES)?.get("greeting")?.map(|value| value.value().to_owned());
//! assert_eq!(greeting.as_deref(), Some("hello"));
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

mod cache;
mod error;
mod key;
mod records;
mod schema;
mod store;
mod ttl;

pub use cache::{
    BATCH_OPS, COMPRESS_FROM_BYTES, CacheReader, CacheStats, CacheWriter, Codec, ENVELOPE_VERSION,
    EXPORT_FORMAT_VERSION, ExchangeError, FactsKey, ImportReport, Lookup, PathRecord,
    TOUCH_INTERVAL_SECS, WriteReport, WriterOptions, seal, unseal,
};
pub use error::StorageError;
pub use key::{CacheKey, CacheKeyHasher};
pub use records::{
    Archiver, Id, LogKey, LogRow, LogTable, ProjectRecord, PruneReport, id_string, new_id, parse_id,
};
pub use schema::SCHEMA_VERSION;
pub use store::{PAGE_CACHE_BYTES, Store};
pub use ttl::{PROMPT_CACHE, SPEC_CACHE, TtlLookup, TtlTable};
