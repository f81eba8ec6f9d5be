//! The aic home directory and the database in it.
//!
//! `AIC_HOME` names the directory, else `~/.aic`. It holds the database
//! (`aic.redb`: caches, logs, sessions), the hook log and the hook state, and
//! the installer's backups; it and everything under it is created with mode
//! 0700. Opening the database has one typed failure, [`DatabaseError`], so a
//! command that needs it can say which file is wrong and how to fix it, and a
//! compile that only *uses* it as a cache can fall back to running without it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use aic_storage::{StorageError, Store};

/// The database's file name inside the home directory.
pub const DATABASE_FILE: &str = "aic.redb";

/// The directory aic keeps its state in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AicHome {
    dir: PathBuf,
}

/// Why the database cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    /// Neither `AIC_HOME` nor `HOME` is set.
    #[error("No home directory: set `AIC_HOME` to a writable directory to enable the cache")]
    NoHome,
    /// The file is damaged in a way redb cannot report as an error (it panicked
    /// on a page).
    #[error("The aic database `{}` is damaged", path.display())]
    Damaged {
        /// The database file.
        path: PathBuf,
    },
    /// redb refused to open or read the file.
    #[error("{0}")]
    Storage(#[from] StorageError),
}

impl DatabaseError {
    /// How to fix it.
    pub fn hint(&self) -> String {
        match self {
            Self::NoHome => "set `AIC_HOME` to a writable directory".to_owned(),
            Self::Damaged { path } => format!(
                "remove or move `{}` aside; aic recreates it empty (caches and logs are lost)",
                path.display()
            ),
            Self::Storage(error) => error.hint(),
        }
    }

    /// The message and its hint on one line, for warnings.
    pub fn with_hint(&self) -> String {
        match self {
            Self::NoHome => self.to_string(),
            Self::Damaged { path } => format!(
                "The aic database `{}` is damaged (remove or move it aside to start with an empty cache)",
                path.display()
            ),
            Self::Storage(error) => format!("{error} ({})", error.hint()),
        }
    }
}

impl AicHome {
    /// The home directory named by the environment: `AIC_HOME`, else `~/.aic`;
    /// `None` when neither variable is set.
    pub fn from_env() -> Option<Self> {
        if let Some(home) = std::env::var_os("AIC_HOME").filter(|v| !v.is_empty()) {
            return Some(Self::at(PathBuf::from(home)));
        }
        std::env::var_os("HOME")
            .filter(|v| !v.is_empty())
            .map(|home| Self::at(PathBuf::from(home).join(".aic")))
    }

    /// A home at `dir` (not created until something is written there).
    pub fn at(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The database file.
    pub fn database_path(&self) -> PathBuf {
        self.dir.join(DATABASE_FILE)
    }

    /// Opens (creating when needed) the database. A database written by a
    /// newer aic opens with a warning, once per process.
    ///
    /// # Errors
    ///
    /// [`DatabaseError::Storage`] when redb refuses the file, and
    /// [`DatabaseError::Damaged`] when it panics on a damaged page.
    pub fn open_database(&self) -> Result<Arc<Store>, DatabaseError> {
        let path = self.database_path();
        // redb trusts its pages; a file damaged outside redb can make it panic
        // rather than return an error. Treat that like a corrupt file.
        match std::panic::catch_unwind(|| Store::open_compatible(&path)) {
            Ok(Ok((store, warning))) => {
                if let Some(StorageError::SchemaTooNew {
                    found, supported, ..
                }) = warning
                {
                    warn_once(&format!(
                        "Database schema version ({found}) is newer than this aic version supports ({supported}). Some features may not work correctly."
                    ));
                }
                Ok(Arc::new(store))
            }
            Ok(Err(error)) => Err(DatabaseError::Storage(error)),
            Err(_) => Err(DatabaseError::Damaged { path }),
        }
    }
}

/// Runs `read` on a database that may be damaged: redb panics rather than
/// returns an error on pages damaged outside it, and that panic becomes
/// [`DatabaseError::Damaged`].
///
/// # Errors
///
/// `read`'s own error, or [`DatabaseError::Damaged`].
pub fn guarded<T>(store: &Store, read: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)) {
        Ok(result) => result,
        Err(_) => Err(DatabaseError::Damaged {
            path: store.path().to_path_buf(),
        }
        .into()),
    }
}

/// Prints a warning once per process.
fn warn_once(message: &str) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| tracing::warn!("{message}"));
}
