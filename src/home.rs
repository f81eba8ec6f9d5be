//! The aic home directory and the database in it.
//!
//! `AIC_HOME` names the directory, else `~/.aic`. It holds the database
//! (`aic.redb`: caches, logs, sessions), the hook log and the hook state, and
//! the installer's backups; its directories are created with mode 0700 and its
//! files with 0600, and an existing home with wider permissions is tightened
//! ([`AicHome::tighten`]) with a warning. Opening the database has one typed failure, [`DatabaseError`], so a
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
                "run `aic cache clear` to move `{}` aside and start with an empty database (caches and logs are lost)",
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
                "The aic database `{}` is damaged (`aic cache clear` moves it aside and starts an empty one)",
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

    /// Tightens the home and everything under it that is not private:
    /// directories to mode 0700 and files to 0600 (symbolic links are left
    /// alone). A home left 0777 by an older aic or by hand is tightened with a
    /// warning, once per process. Returns the paths changed; nothing on other
    /// platforms than unix, or when the home does not exist.
    pub fn tighten(&self) -> Vec<PathBuf> {
        let changed = tighten_tree(&self.dir);
        if let Some(first) = changed.first() {
            warn_once_tightened(&format!(
                "Tightened the permissions of {} path(s) under `{}`, first `{}` (directories 0700, files 0600): the aic home holds caches, logs and hook state",
                changed.len(),
                self.dir.display(),
                first.display()
            ));
        }
        changed
    }

    /// Opens (creating when needed) the database. A database written by a
    /// newer aic opens with a warning, once per process.
    ///
    /// # Errors
    ///
    /// [`DatabaseError::Storage`] when redb refuses the file, and
    /// [`DatabaseError::Damaged`] when it panics on a damaged page.
    pub fn open_database(&self) -> Result<Arc<Store>, DatabaseError> {
        self.tighten();
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
/// returns an error on pages damaged outside it, and that panic — or an
/// error that says a page is damaged — becomes [`DatabaseError::Damaged`].
///
/// # Errors
///
/// `read`'s own error, or [`DatabaseError::Damaged`].
pub fn guarded<T>(store: &Store, read: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    let damaged = || {
        DatabaseError::Damaged {
            path: store.path().to_path_buf(),
        }
        .into()
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)) {
        // Damage found while reading (a page that does not add up) is the
        // same as damage found on opening: named, with its fix.
        Ok(Err(error))
            if error.chain().any(|cause| {
                cause
                    .downcast_ref::<StorageError>()
                    .is_some_and(StorageError::is_damage)
            }) =>
        {
            Err(damaged())
        }
        Ok(result) => result,
        Err(_) => Err(damaged()),
    }
}

/// Creates `dir` and its missing parents with mode 0700 (on unix), and
/// tightens it when it exists with wider permissions.
///
/// # Errors
///
/// The I/O error of the creation, naming the path.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|error| {
        std::io::Error::new(error.kind(), format!("{error}: `{}`", dir.display()))
    })?;
    restrict(dir, 0o700);
    Ok(())
}

/// Writes `bytes` to `path` as a private file: its directory is created 0700
/// and the file is 0600 (on unix), also when it existed with wider
/// permissions.
///
/// # Errors
///
/// The I/O error of the directory or the write, naming the path.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_private_dir(parent)?;
    }
    let mut file = open_private(path, false)?;
    std::io::Write::write_all(&mut file, bytes)
}

/// Opens `path` for writing (truncated) or appending, as a private file (0600
/// on unix, tightened when it existed with wider permissions).
///
/// # Errors
///
/// The I/O error of the open, naming the path.
pub fn open_private(path: &Path, append: bool) -> std::io::Result<fs_err::File> {
    let mut options = fs_err::OpenOptions::new();
    options.create(true);
    if append {
        options.append(true);
    } else {
        options.write(true).truncate(true);
    }
    #[cfg(unix)]
    fs_err::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path)?;
    restrict(path, 0o600);
    Ok(file)
}

/// Sets `mode` on `path` when its permissions allow more (unix only); a
/// failure is ignored (the file may belong to another user).
fn restrict(path: &Path, mode: u32) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(metadata) = fs_err::symlink_metadata(path)
            && !metadata.file_type().is_symlink()
            && metadata.permissions().mode() & 0o777 & !mode != 0
        {
            return fs_err::set_permissions(path, std::fs::Permissions::from_mode(mode)).is_ok();
        }
        false
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        false
    }
}

/// Tightens `dir` and everything under it; returns the paths changed.
fn tighten_tree(dir: &Path) -> Vec<PathBuf> {
    let mut changed = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if restrict(&dir, 0o700) {
            changed.push(dir.clone());
        }
        let Ok(entries) = fs_err::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => stack.push(path),
                Ok(kind) if kind.is_file() && restrict(&path, 0o600) => changed.push(path),
                _ => {}
            }
        }
    }
    changed.sort();
    changed
}

/// Prints the tightening warning once per process.
fn warn_once_tightened(message: &str) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| tracing::warn!("{message}"));
}

/// Prints a warning once per process.
fn warn_once(message: &str) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| tracing::warn!("{message}"));
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        fs_err::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_loose_home_is_tightened_and_private_writes_stay_private() {
        let temp = tempfile::tempdir().unwrap();
        let home = AicHome::at(temp.path().join("aic"));
        fs_err::create_dir_all(home.dir().join("hook-sessions")).unwrap();
        fs_err::write(home.dir().join("hook.log"), "x").unwrap();
        for (path, loose) in [
            (home.dir().to_path_buf(), 0o777),
            (home.dir().join("hook-sessions"), 0o755),
            (home.dir().join("hook.log"), 0o644),
        ] {
            fs_err::set_permissions(&path, std::fs::Permissions::from_mode(loose)).unwrap();
        }
        let changed = home.tighten();
        assert_eq!(changed.len(), 3, "{changed:?}");
        assert_eq!(mode(home.dir()), 0o700);
        assert_eq!(mode(&home.dir().join("hook-sessions")), 0o700);
        assert_eq!(mode(&home.dir().join("hook.log")), 0o600);
        assert!(home.tighten().is_empty());

        let state = home.dir().join("hook-sessions/new/prompt-1");
        write_private(&state, b"fix it").unwrap();
        assert_eq!(mode(&state), 0o600);
        assert_eq!(mode(state.parent().unwrap()), 0o700);
        let log = home.dir().join("other.log");
        drop(open_private(&log, true).unwrap());
        assert_eq!(mode(&log), 0o600);
    }
}
