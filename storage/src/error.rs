//! [`StorageError`]: every way the store can fail, each naming the database file.
//!
//! The model: only failing to open the database is a user-facing error. Every
//! variant carries the database path, keeps redb's error as its `#[source]`, and
//! [`StorageError::hint`] says how to fix it. An unreadable *row* is not an error at this layer:
//! table modules treat it as a cache miss.

use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// An error from opening or using the aic database.
///
/// Messages name the database file; the cause is attached as the error's `source` and left out of
/// the message, so the binary's chain renderer prints it once. [`StorageError::hint`] gives the
/// fix to print after it.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StorageError {
    /// A directory on the way to the database file could not be created.
    #[error("Failed to create the directory `{}` for the aic database", path.display())]
    CreateDirectory {
        /// The directory that could not be created (the database file's parent).
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: io::Error,
    },

    /// The database file could not be opened or created, for a reason other than corruption or
    /// another program holding it: permissions, a full disk, an old redb file format.
    #[error("Failed to open the aic database `{}`", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// redb's error.
        #[source]
        source: redb::DatabaseError,
    },

    /// Another program holds the database in a mode this build cannot share: a redb writer in
    /// exclusive mode, or a build of aic whose redb speaks another multi-process lock protocol.
    #[error("The aic database `{}` is in use by another program that does not share it", path.display())]
    InUse {
        /// The database file.
        path: PathBuf,
        /// redb's error (`DatabaseAlreadyOpen` or `LockProtocolMismatch`).
        #[source]
        source: redb::DatabaseError,
    },

    /// The file is not a redb database, is truncated, or its contents are damaged, or the
    /// `schema_version` table does not hold what aic writes there.
    #[error("The aic database `{}` is corrupt or is not a redb database", path.display())]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What redb found wrong (boxed: redb's error is large).
        #[source]
        source: Box<redb::Error>,
    },

    /// A newer aic wrote the database: its schema version is above the one this build supports.
    /// No transaction is written to it (redb's own header bookkeeping on open and close aside).
    #[error(
        "The aic database `{}` has schema version {found}, newer than version {supported} that this aic supports",
        path.display()
    )]
    SchemaTooNew {
        /// The database file.
        path: PathBuf,
        /// The schema version recorded in the file.
        found: u32,
        /// [`SCHEMA_VERSION`](crate::SCHEMA_VERSION) of this build.
        supported: u32,
    },

    /// A read or write transaction could not begin.
    #[error("Failed to begin a transaction on the aic database `{}`", path.display())]
    Transaction {
        /// The database file.
        path: PathBuf,
        /// redb's error.
        #[source]
        source: redb::TransactionError,
    },

    /// A table could not be opened.
    #[error("Failed to open table `{table}` in the aic database `{}`", path.display())]
    Table {
        /// The database file.
        path: PathBuf,
        /// The table's name, with its version suffix.
        table: String,
        /// redb's error (boxed: it is large).
        #[source]
        source: Box<redb::TableError>,
    },

    /// A write transaction could not be committed.
    #[error("Failed to commit to the aic database `{}`", path.display())]
    Commit {
        /// The database file.
        path: PathBuf,
        /// redb's error.
        #[source]
        source: redb::CommitError,
    },

    /// Reading or writing a row failed in the storage layer (I/O, a value too large, damage).
    #[error("Failed to read or write the aic database `{}`", path.display())]
    Storage {
        /// The database file.
        path: PathBuf,
        /// redb's error.
        #[source]
        source: redb::StorageError,
    },
}

impl StorageError {
    /// Whether the error says the file is damaged (not a redb database, a
    /// checksum or a page that does not add up), rather than busy, unwritable
    /// or written by a newer aic: the cases `aic cache clear` recovers from by
    /// moving the file aside.
    pub fn is_damage(&self) -> bool {
        let corrupted =
            |error: &redb::StorageError| matches!(error, redb::StorageError::Corrupted(_));
        match self {
            Self::Corrupt { .. } => true,
            Self::Storage { source, .. } => corrupted(source),
            // Damage in the middle of the file shows when a table's pages are
            // read, a transaction begins or a commit writes.
            Self::Table { source, .. } => {
                matches!(source.as_ref(), redb::TableError::Storage(error) if corrupted(error))
            }
            Self::Transaction { source, .. } => {
                matches!(source, redb::TransactionError::Storage(error) if corrupted(error))
            }
            Self::Commit { source, .. } => {
                matches!(source, redb::CommitError::Storage(error) if corrupted(error))
            }
            _ => false,
        }
    }

    /// The database file (or, for [`StorageError::CreateDirectory`], the directory) the error is
    /// about.
    pub fn path(&self) -> &Path {
        match self {
            Self::CreateDirectory { path, .. }
            | Self::Open { path, .. }
            | Self::InUse { path, .. }
            | Self::Corrupt { path, .. }
            | Self::SchemaTooNew { path, .. }
            | Self::Transaction { path, .. }
            | Self::Table { path, .. }
            | Self::Commit { path, .. }
            | Self::Storage { path, .. } => path,
        }
    }

    /// How the user can fix the error, for the binary to print as `hint: …`.
    ///
    /// Every variant has a hint. The database is a cache, so for a file that cannot be opened or
    /// read the fix is to move it aside: aic recreates it empty on the next run.
    pub fn hint(&self) -> String {
        let path = self.path().display();
        let start_empty =
            format!("remove or move `{path}` aside to start with an empty cache; aic recreates it");
        if self.is_damage() {
            return format!(
                "run `aic cache clear`: it moves the damaged `{path}` aside and creates an empty one (caches and logs start over)"
            );
        }
        match self {
            Self::CreateDirectory { .. } => format!(
                "check that `{path}` can be created and written by this user, or set `AIC_HOME` to a writable directory"
            ),
            Self::InUse { .. } => format!(
                "close the other program (perhaps an older or newer aic) that has `{path}` open, then retry; or {start_empty}"
            ),
            Self::SchemaTooNew { .. } => {
                format!("upgrade aic to the version that wrote it; or {start_empty}")
            }
            Self::Open { .. }
            | Self::Corrupt { .. }
            | Self::Transaction { .. }
            | Self::Table { .. }
            | Self::Commit { .. }
            | Self::Storage { .. } => start_empty,
        }
    }

    /// Classifies an error from opening the database file.
    pub(crate) fn from_open(path: &Path, error: redb::DatabaseError) -> Self {
        let path = path.to_path_buf();
        match error {
            redb::DatabaseError::DatabaseAlreadyOpen
            | redb::DatabaseError::LockProtocolMismatch => Self::InUse {
                path,
                source: error,
            },
            redb::DatabaseError::Storage(redb::StorageError::Corrupted(_)) => Self::Corrupt {
                path,
                source: Box::new(error.into()),
            },
            // redb reports a file without its magic number as an I/O error of kind InvalidData,
            // and one shorter than its header as UnexpectedEof.
            redb::DatabaseError::Storage(redb::StorageError::Io(ref io))
                if matches!(
                    io.kind(),
                    io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof
                ) =>
            {
                Self::Corrupt {
                    path,
                    source: Box::new(error.into()),
                }
            }
            error => Self::Open {
                path,
                source: error,
            },
        }
    }

    /// Wraps an error from beginning a transaction.
    pub fn transaction(path: &Path, source: redb::TransactionError) -> Self {
        Self::Transaction {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Wraps an error from opening the table named `table`.
    pub fn table(path: &Path, table: &str, source: redb::TableError) -> Self {
        Self::Table {
            path: path.to_path_buf(),
            table: table.to_owned(),
            source: Box::new(source),
        }
    }

    /// Wraps an error from committing a write transaction.
    pub fn commit(path: &Path, source: redb::CommitError) -> Self {
        Self::Commit {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Wraps an error from reading or writing a row.
    pub fn storage(path: &Path, source: redb::StorageError) -> Self {
        Self::Storage {
            path: path.to_path_buf(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_error_is_send_sync_and_small() {
        fn assert_send_sync<T: Send + Sync + 'static>() {}
        assert_send_sync::<StorageError>();
        assert!(
            size_of::<StorageError>() <= 64,
            "{}",
            size_of::<StorageError>()
        );
    }

    #[test]
    fn open_and_corrupt_hints_say_to_move_the_file_aside() {
        let path = Path::new("/home/someone/.aic/aic.redb");
        let not_a_database = io::Error::new(io::ErrorKind::InvalidData, "not a redb file");
        let error = StorageError::from_open(path, not_a_database.into());
        assert!(matches!(error, StorageError::Corrupt { .. }), "{error:?}");
        assert_eq!(
            error.hint(),
            "run `aic cache clear`: it moves the damaged `/home/someone/.aic/aic.redb` aside and creates an empty one (caches and logs start over)"
        );

        let denied = io::Error::new(io::ErrorKind::PermissionDenied, "denied");
        let error = StorageError::from_open(path, denied.into());
        assert!(matches!(error, StorageError::Open { .. }), "{error:?}");
        assert_eq!(
            error.to_string(),
            "Failed to open the aic database `/home/someone/.aic/aic.redb`"
        );
        assert!(
            error
                .hint()
                .starts_with("remove or move `/home/someone/.aic/aic.redb` aside")
        );
    }

    #[test]
    fn a_lock_conflict_is_reported_as_in_use() {
        let path = Path::new("aic.redb");
        let error = StorageError::from_open(path, redb::DatabaseError::DatabaseAlreadyOpen);
        assert!(matches!(error, StorageError::InUse { .. }), "{error:?}");
        assert!(error.hint().starts_with("close the other program"));
    }
}
