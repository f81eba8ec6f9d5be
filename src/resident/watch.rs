//! File-system events for a resident project: a non-recursive watch on every
//! directory in scope (ignored directories such as `node_modules/` are never
//! watched, so the kernel's watch limit goes to what aic reads) and on the
//! git directory, whose `index` and `HEAD` say when commits, checkouts and
//! stages happened.
//!
//! Events are only collected here (`Changes`); a compile drains them. To
//! know that every event of an edit made before the compile has arrived, the
//! compile writes a cookie file in a directory of aic's own that the same
//! watcher watches, and waits for its event (the kernel queues one watcher's
//! events in order), as watchman does, without writing into the project.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use notify::{Event, EventKind, RecursiveMode, Watcher};

/// The prefix of cookie files (written in a directory of aic's own).
const COOKIE_PREFIX: &str = ".aic-cookie-";

/// More changed paths than this between two compiles and the project is
/// walked again rather than updated path by path (a branch switch).
pub(crate) const MAX_TRACKED_PATHS: usize = 1_000;

/// How long a compile waits for its cookie's event before walking the
/// project again instead of trusting the events.
const COOKIE_WAIT: Duration = Duration::from_millis(500);

/// What happened since the last compile drained the events.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    /// Changed paths (absolute), files or directories.
    pub(crate) paths: BTreeSet<PathBuf>,
    /// Why the events cannot be trusted path by path (an overflow, a watch
    /// error, too many changes): walk again.
    pub(crate) rescan: Option<String>,
    /// The git index or HEAD changed.
    pub(crate) git: bool,
    /// Cookies seen, by name.
    pub(crate) cookies: BTreeSet<String>,
    /// When the last event arrived, ms since the epoch (0: none).
    pub(crate) last_event_ms: u64,
}

type Shared = Arc<(Mutex<Changes>, Condvar)>;

/// The watches on one project.
pub(crate) struct Watch {
    watcher: notify::RecommendedWatcher,
    shared: Shared,
    /// Where cookies are written: the git directory, else the root.
    cookie_dir: PathBuf,
    /// Watches added (directories).
    pub(crate) watched: usize,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("cookie_dir", &self.cookie_dir)
            .field("watched", &self.watched)
            .finish_non_exhaustive()
    }
}

impl Watch {
    /// Watches `root`, each of `directories` (absolute), the git directory's
    /// files that say a commit, checkout, reset or stage happened (`HEAD`,
    /// `index`, `packed-refs`, `logs/HEAD`, `refs/heads/`) and its
    /// `info/exclude`, and `cookie_dir` (outside the project: aic never
    /// writes into it).
    ///
    /// # Errors
    ///
    /// The watcher's error: the watch limit reached (`inotify`
    /// `max_user_watches`), no event source on this system, a directory gone.
    pub(crate) fn start(
        root: &Path,
        directories: impl Iterator<Item = PathBuf>,
        git_dir: Option<&Path>,
        cookie_dir: &Path,
    ) -> notify::Result<Self> {
        private_dir(cookie_dir).map_err(notify::Error::io)?;
        let shared: Shared = Arc::default();
        let sink = shared.clone();
        let git = git_dir.map(Path::to_path_buf);
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
            record(&sink, git.as_deref(), event);
        })?;
        let mut directories_watched = 0;
        {
            let mut paths = watcher.paths_mut();
            paths.add(root, RecursiveMode::NonRecursive)?;
            for directory in directories {
                paths.add(&directory, RecursiveMode::NonRecursive)?;
                directories_watched += 1;
            }
            if let Some(git_dir) = git_dir {
                paths.add(git_dir, RecursiveMode::NonRecursive)?;
                for sub in ["logs", "refs/heads", "info"] {
                    let directory = git_dir.join(sub);
                    if directory.is_dir() {
                        paths.add(&directory, RecursiveMode::NonRecursive)?;
                    }
                }
            }
            paths.add(cookie_dir, RecursiveMode::NonRecursive)?;
            paths.commit()?;
        }
        Ok(Self {
            watcher,
            shared,
            cookie_dir: cookie_dir.to_path_buf(),
            watched: directories_watched + 1,
        })
    }

    /// Waits until every event of a change made before this call has been
    /// recorded (a cookie's round trip), then takes the changes. A cookie that
    /// cannot be written or whose event does not come marks the changes for a
    /// rescan.
    pub(crate) fn drain(&self) -> Changes {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{COOKIE_PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let cookie = self.cookie_dir.join(&name);
        let written = fs_err::write(&cookie, b"").is_ok();
        let (lock, signal) = &*self.shared;
        let mut changes = lock.lock().unwrap_or_else(PoisonError::into_inner);
        if written {
            let (guard, timeout) = signal
                .wait_timeout_while(changes, COOKIE_WAIT, |changes| {
                    !changes.cookies.contains(&name)
                })
                .unwrap_or_else(PoisonError::into_inner);
            changes = guard;
            if timeout.timed_out() && changes.rescan.is_none() {
                changes.rescan = Some("the file-system events are late".to_owned());
            }
        } else if changes.rescan.is_none() {
            changes.rescan = Some(format!(
                "a cookie file cannot be written in `{}`",
                self.cookie_dir.display()
            ));
        }
        let taken = std::mem::take(&mut *changes);
        // The time of the last event outlives the drain (for `status`).
        changes.last_event_ms = taken.last_event_ms;
        drop(changes);
        let _ = fs_err::remove_file(&cookie);
        taken
    }

    /// When the last event arrived, ms since the epoch (0: none yet).
    pub(crate) fn last_event_ms(&self) -> u64 {
        self.shared
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last_event_ms
    }

    /// Stops watching (also on drop).
    pub(crate) fn stop(self) {
        drop(self.watcher);
    }
}

/// Records one event (on the watcher's thread).
fn record(shared: &Shared, git_dir: Option<&Path>, event: notify::Result<Event>) {
    let (lock, signal) = &**shared;
    let mut changes = lock.lock().unwrap_or_else(PoisonError::into_inner);
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as u64);
    // Cookies are aic's own, and reads (aic's own, when it compiles) change
    // nothing: neither counts as the project's last event.
    let is_cookie = |path: &PathBuf| {
        path.file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.starts_with(COOKIE_PREFIX))
    };
    if !matches!(&event, Ok(event) if event.paths.iter().all(is_cookie)
        || matches!(event.kind, EventKind::Access(_)))
    {
        changes.last_event_ms = now_ms;
    }
    match event {
        Err(error) => {
            changes.rescan = Some(format!("the file watcher failed: {error}"));
        }
        Ok(event) if event.need_rescan() => {
            changes.rescan = Some("the file-system event queue overflowed".to_owned());
        }
        Ok(event) => {
            if matches!(event.kind, EventKind::Access(_)) {
                return;
            }
            for path in event.paths {
                let name = path.file_name().and_then(|name| name.to_str());
                if let Some(cookie) = name.filter(|name| name.starts_with(COOKIE_PREFIX)) {
                    changes.cookies.insert(cookie.to_owned());
                    continue;
                }
                if let Some(git_dir) = git_dir.filter(|git_dir| path.starts_with(git_dir)) {
                    match git_change(git_dir, &path) {
                        GitChange::History => changes.git = true,
                        GitChange::IgnoreRules => {
                            changes
                                .rescan
                                .get_or_insert_with(|| "`.git/info/exclude` changed".to_owned());
                        }
                        GitChange::Other => {}
                    }
                    continue;
                }
                changes.paths.insert(path);
            }
            if changes.paths.len() > MAX_TRACKED_PATHS && changes.rescan.is_none() {
                changes.rescan = Some(format!("more than {MAX_TRACKED_PATHS} paths changed"));
            }
        }
    }
    drop(changes);
    signal.notify_all();
}

/// Creates `dir` (and its parents) readable by this user only, as the aic
/// home's directories are.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// What an event in the git directory means for the snapshot.
enum GitChange {
    /// A commit, checkout, reset or stage: recency is read again.
    History,
    /// `info/exclude`: the ignore rules changed.
    IgnoreRules,
    /// Git's own files (objects, locks, …).
    Other,
}

fn git_change(git_dir: &Path, path: &Path) -> GitChange {
    let Ok(relative) = path.strip_prefix(git_dir) else {
        return GitChange::Other;
    };
    let relative = relative.to_string_lossy();
    match relative.as_ref() {
        "index" | "HEAD" | "packed-refs" | "logs/HEAD" => GitChange::History,
        "info/exclude" => GitChange::IgnoreRules,
        other
            if other.starts_with("refs/heads/")
                && Path::new(other)
                    .extension()
                    .is_none_or(|extension| extension != "lock") =>
        {
            GitChange::History
        }
        _ => GitChange::Other,
    }
}
