//! The resident project index: a long-lived process (the MCP server, `aic
//! daemon`) keeps each project's [`Snapshot`] and follows the project's
//! edits through file-system events ([`watch`]), so a compile on an unchanged
//! tree does no walk and no per-file look-up, and a compile after edits
//! re-reads only the edited files.
//!
//! Correctness comes first: the snapshot after an update is the one a fresh
//! walk would make. Whenever the events cannot say that path by path — a new
//! or removed directory, a changed `.gitignore`, an overflowing event queue, a
//! watch error, more than a thousand changed paths, a root that was moved or
//! replaced — the project is walked again (through the per-file cache, so
//! unchanged files are not read). A project whose directories cannot all be
//! watched (the `inotify` watch limit) is walked on every compile, as without
//! a resident index, and says so once in the log.

pub mod persist;
pub mod watch;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use aic_stages::content_hash::ContentHash;
use aic_stages::relative_path::RelativePath;
use aic_stages::repo_map::{FileEntry, RepoMap};
use serde::Serialize;
use tracing::{debug, info, warn};

use crate::clock::Clock;

use crate::cache::FileCache;
use crate::pipeline::prepare::Project;
use crate::pipeline::scan::git::read_git_recency;
use crate::pipeline::scan::prior::PriorFiles;
use crate::pipeline::scan::{
    self, PathOutcome, ScanDetail, ScanOptions, SkippedFiles, Snapshot, scan_path,
};
use watch::{Changes, Watch};

/// How the scan phase of one compile was answered by the resident index,
/// for the trace (`inspect --json`: `resident`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResidentReport {
    /// `reused` (no change since the last compile), `updated` (edited paths
    /// re-read), `walked` (a full walk, with `reason`).
    pub answer: &'static str,
    /// Why the project was walked (first use, a new directory, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Paths re-read for an update.
    pub paths_updated: usize,
    /// Whether git's index and history were read again.
    pub git_reread: bool,
}

/// One project as the index keeps it.
struct Resident {
    snapshot: Arc<Snapshot>,
    detail: ScanDetail,
    /// `None`: not watched (the limit was hit, or no event source): walked on
    /// every compile.
    watch: Option<Watch>,
    /// Why the project is not watched.
    unwatched: Option<String>,
    /// The root directory's identity when it was watched: a root replaced by
    /// another directory of the same name is walked again.
    root_id: Option<(u64, u64)>,
    last_used: Instant,
    queries: u64,
    /// Files the first walk read from the saved snapshot.
    seeded_files: usize,
    /// When the walk that made `snapshot` started (ns since the epoch): the
    /// next walk takes the files it saw settled unread ([`PriorFiles`]).
    walk_started_ns: i64,
    /// Why the saved snapshot was refused, when it was.
    snapshot_refused: Option<String>,
}

/// A project's identity in the index: its root and the settings the walk
/// depends on (size cap, guard path rules).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct ProjectKey {
    root: PathBuf,
    max_file_bytes: u64,
    guard: String,
}

/// Where the saved snapshot of `project` lives in `$AIC_HOME`: one file per
/// root and scan settings ([`persist`]).
pub fn saved_snapshot_path(home: &crate::home::AicHome, project: &Project) -> PathBuf {
    ProjectKey::of(project).saved_snapshot(&home.dir().join(SNAPSHOT_DIR))
}

/// The directory of `$AIC_HOME` that holds saved snapshots.
pub const SNAPSHOT_DIR: &str = "snapshots";

impl ProjectKey {
    /// Its saved snapshot's file under `dir`.
    fn saved_snapshot(&self, dir: &Path) -> PathBuf {
        let identity = format!(
            "{}\0{}\0{}",
            self.root.display(),
            self.max_file_bytes,
            self.guard
        );
        persist::path_for(dir, xxhash_rust::xxh3::xxh3_128(identity.as_bytes()))
    }

    fn of(project: &Project) -> Self {
        let guard = &project.config.guard;
        Self {
            root: project.root.clone(),
            max_file_bytes: project.config.repo_map.max_file_bytes,
            guard: format!("{}:{:?}", guard.enabled, guard.additional_exclusions),
        }
    }
}

/// Why a project is walked, for [`ResidentIndex::walk_new`].
struct WalkWhy {
    /// For the report (first use, a new directory, …).
    reason: String,
    /// Compiles counted so far, this one included.
    queries: u64,
    /// The project's first walk in this process: seeded from its saved
    /// snapshot, when there is one.
    first_use: bool,
    /// The project's last snapshot and when its walk started: what a walk
    /// after the first takes unchanged files from.
    previous: Option<(Arc<Snapshot>, i64)>,
}

/// Saves `snapshot` to `path` on a thread of its own (a large project's
/// snapshot takes a fraction of a second to write); a failure is logged.
fn save_in_background(
    path: PathBuf,
    fingerprint: u128,
    snapshot: Arc<Snapshot>,
    walk_started_ns: i64,
) {
    let spawned = std::thread::Builder::new()
        .name("aic-snapshot-save".to_owned())
        .spawn(move || {
            let started = Instant::now();
            let saved = (&snapshot.repo, snapshot.file_tree_hash);
            match persist::save(&path, fingerprint, saved, walk_started_ns) {
                Ok(files) => info!(
                    "Saved the snapshot of {files} files to `{}` ({:?})",
                    path.display(),
                    started.elapsed()
                ),
                Err(error) => warn!("Could not save the snapshot `{}`: {error}", path.display()),
            }
        });
    if let Err(error) = spawned {
        warn!("Could not start saving a snapshot: {error}");
    }
}

/// What [`ResidentIndex::status`] says of one project.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResidentProjectStatus {
    /// The project root.
    pub root: PathBuf,
    /// Files in its RepoMap.
    pub files: usize,
    /// Directories watched (0: not watched).
    pub watched_directories: usize,
    /// Why it is not watched, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unwatched: Option<String>,
    /// When the last file-system event arrived, ms since the epoch (0: none).
    pub last_event_ms: u64,
    /// Files whose hash and terms the last walk took from the project's
    /// saved snapshot instead of the database ([`persist`]; 0: none saved).
    #[serde(default)]
    pub seeded_files: usize,
    /// Why the saved snapshot was not used, when one was refused (another
    /// build, other settings, damaged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_refused: Option<String>,
    /// Compiles answered from the index: every compile of the project, in
    /// any view (prompt, inspect, a hook's), including the one that built
    /// the index, except the daemon's own warm-up compile.
    pub queries: u64,
    /// Seconds since the last compile.
    pub idle_secs: u64,
}

/// The resident snapshots of the projects a long-lived process serves.
pub struct ResidentIndex {
    projects: Mutex<HashMap<ProjectKey, Arc<Mutex<Resident>>>>,
    /// Where compiles write their cookies (see [`watch`]).
    cookie_dir: PathBuf,
    /// Where snapshots are saved after a full walk and read before a
    /// project's first walk ([`persist`]); `None`: not saved.
    snapshot_dir: Option<PathBuf>,
    /// Per project, the file-tree hash of its saved snapshot as this process
    /// last wrote or read it: an unchanged tree is not saved again.
    saved_trees: Mutex<HashMap<ProjectKey, ContentHash>>,
    /// Projects whose being unwatched was already logged.
    unwatched_said: Mutex<std::collections::HashSet<ProjectKey>>,
}

impl ResidentIndex {
    /// An empty index writing its cookies in `cookie_dir` (a directory of
    /// aic's own, such as `$AIC_HOME/cookies`; created when first needed).
    pub fn new(cookie_dir: PathBuf) -> Self {
        Self {
            projects: Mutex::default(),
            cookie_dir,
            snapshot_dir: None,
            saved_trees: Mutex::default(),
            unwatched_said: Mutex::default(),
        }
    }

    /// This index, saving each project's snapshot under `dir` after a full
    /// walk and seeding a project's first walk from it ([`persist`]).
    #[must_use]
    pub fn with_saved_snapshots(mut self, dir: PathBuf) -> Self {
        self.snapshot_dir = Some(dir);
        self
    }

    /// Where the saved snapshot of `key`'s project lives.
    fn saved_snapshot(&self, key: &ProjectKey) -> Option<PathBuf> {
        Some(key.saved_snapshot(self.snapshot_dir.as_ref()?))
    }

    /// The file-tree hash of `key`'s snapshot as last saved or read by this
    /// process.
    fn saved_tree(&self, key: &ProjectKey) -> Option<ContentHash> {
        self.saved_trees
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .copied()
    }

    fn note_saved_tree(&self, key: &ProjectKey, tree: ContentHash) {
        self.saved_trees
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), tree);
    }
}

impl std::fmt::Debug for ResidentIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResidentIndex").finish_non_exhaustive()
    }
}

impl ResidentIndex {
    /// The current snapshot of `project`: the kept one when nothing changed,
    /// an updated one after edits, a fresh walk the first time (or when the
    /// events cannot be trusted). `cancel` stops a walk; a cancelled walk is
    /// not kept. `counted` adds the compile to the project's
    /// [`ResidentProjectStatus::queries`] (not the daemon's warm-up).
    pub fn snapshot(
        &self,
        project: &Project,
        cache: Option<&FileCache>,
        cancel: Option<&AtomicBool>,
        counted: bool,
    ) -> (Arc<Snapshot>, ResidentReport) {
        let key = ProjectKey::of(project);
        let entry = self
            .projects
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .cloned();
        let Some(entry) = entry else {
            // The same root under other scan settings (a changed size cap or
            // guard rule) is dropped with its watches; its count goes on.
            let replaced = {
                let mut projects = self.projects.lock().unwrap_or_else(PoisonError::into_inner);
                let mut replaced = None;
                projects.retain(|known, resident| {
                    let keep = known.root != key.root;
                    if !keep {
                        let queries = resident
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .queries;
                        replaced = Some(replaced.unwrap_or(0) + queries);
                    }
                    keep
                });
                replaced
            };
            let reason = if replaced.is_some() {
                "the scan settings changed"
            } else {
                "first use"
            };
            let queries = replaced.unwrap_or(0) + u64::from(counted);
            let why = WalkWhy {
                reason: reason.to_owned(),
                queries,
                first_use: true,
                previous: None,
            };
            return self.walk_new(key, project, cache, cancel, why);
        };
        let mut resident = entry.lock().unwrap_or_else(PoisonError::into_inner);
        resident.last_used = Instant::now();
        resident.queries += u64::from(counted);
        let queries = resident.queries;
        let previous = Some((resident.snapshot.clone(), resident.walk_started_ns));
        let reason = match (&resident.watch, root_id(&project.root)) {
            (None, _) => Some(
                resident
                    .unwatched
                    .clone()
                    .unwrap_or_else(|| "not watched".to_owned()),
            ),
            (Some(_), id) if id != resident.root_id => {
                Some("the project directory was replaced".to_owned())
            }
            (Some(watch), _) => {
                let changes = watch.drain();
                match changes.rescan.clone() {
                    Some(reason) => Some(reason),
                    None => {
                        return update(&mut resident, project, cache, &changes).unwrap_or_else(
                            |reason| {
                                drop(resident);
                                let why = WalkWhy {
                                    reason,
                                    queries,
                                    first_use: false,
                                    previous,
                                };
                                self.walk_new(key, project, cache, cancel, why)
                            },
                        );
                    }
                }
            }
        };
        drop(resident);
        self.walk_new(
            key,
            project,
            cache,
            cancel,
            WalkWhy {
                reason: reason.unwrap_or_default(),
                queries,
                first_use: false,
                previous,
            },
        )
    }

    /// Walks `project`, watches it and keeps it under `key` ([`WalkWhy`]
    /// says why, and how many compiles were counted so far).
    fn walk_new(
        &self,
        key: ProjectKey,
        project: &Project,
        cache: Option<&FileCache>,
        cancel: Option<&AtomicBool>,
        why: WalkWhy,
    ) -> (Arc<Snapshot>, ResidentReport) {
        let WalkWhy {
            reason,
            queries,
            first_use,
            previous,
        } = why;
        let root = &project.root;
        let saved = self.saved_snapshot(&key);
        // A walk after the first takes unchanged files from the last
        // snapshot; the first, from what an earlier process saved. Either
        // spares the database look-ups.
        let mut seeded_files = 0;
        let mut snapshot_refused = None;
        let prior = match (&saved, cache) {
            (Some(saved), Some(cache)) if first_use => match self.load_saved(&key, saved, cache) {
                Ok(files) => {
                    seeded_files = files.as_ref().map_or(0, PriorFiles::len);
                    files
                }
                Err(why) => {
                    snapshot_refused = Some(why);
                    None
                }
            },
            _ => previous.map(|(snapshot, walk_started_ns)| PriorFiles::Snapshot {
                snapshot,
                walk_started_ns,
            }),
        };
        let walk_started_ns = crate::clock::SystemClock.now_ns();
        // The watches start after the walk (the walk finds the directories);
        // a file edited in between is found by a stat pass below.
        let (snapshot, mut detail) = scan::scan_detailed(project, cache, cancel, prior.as_ref());
        drop(prior);
        if let Some(git) = &mut detail.git {
            git.share_paths(&snapshot.repo);
        }
        let snapshot = Arc::new(snapshot);
        // A project walked on every compile (not watched) is saved only
        // when its tree changed since it was last saved or read.
        if let (Some(saved), Some(cache)) = (saved, cache)
            && self.saved_tree(&key) != Some(snapshot.file_tree_hash)
            && !cancel.is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Relaxed))
        {
            self.note_saved_tree(&key, snapshot.file_tree_hash);
            save_in_background(
                saved,
                cache.fingerprint(),
                snapshot.clone(),
                walk_started_ns,
            );
        }
        let report = ResidentReport {
            answer: "walked",
            reason: Some(reason),
            paths_updated: 0,
            git_reread: true,
        };
        if cancel.is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Relaxed)) {
            return (snapshot, report);
        }
        let started = Instant::now();
        let (watch, unwatched) = self.start_watch(&key, root, &detail.directories);
        info!(
            "Watching {} directories of `{}` ({:?})",
            watch.as_ref().map_or(0, |watch| watch.watched),
            root.display(),
            started.elapsed()
        );
        let mut resident = Resident {
            snapshot: snapshot.clone(),
            detail,
            watch,
            unwatched,
            root_id: root_id(root),
            last_used: Instant::now(),
            queries,
            seeded_files,
            snapshot_refused,
            walk_started_ns,
        };
        // Files edited between their read and the watch: found by a stat pass
        // and re-read now.
        let stale = stale_paths(root, &resident.snapshot);
        let mut snapshot = snapshot;
        if !stale.is_empty() {
            let changes = Changes {
                paths: stale.into_iter().collect(),
                ..Changes::default()
            };
            if let Ok((updated, _)) = update(&mut resident, project, cache, &changes) {
                snapshot = updated;
            }
        }
        let mut projects = self.projects.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(old) = projects.insert(key, Arc::new(Mutex::new(resident))) {
            let old = old
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .watch
                .take();
            if let Some(watch) = old {
                watch.stop();
            }
        }
        (snapshot, report)
    }

    /// Watches `root`, its `directories_in_scope` and its git directory, or
    /// says why it is not watched (logged once per project).
    fn start_watch(
        &self,
        key: &ProjectKey,
        root: &Path,
        directories_in_scope: &[RelativePath],
    ) -> (Option<Watch>, Option<String>) {
        let directories = directories_in_scope
            .iter()
            .map(|directory| root.join(directory.as_str()));
        let git_dir = crate::pipeline::scan::git::git_dir(root);
        let limit = max_watched_directories();
        let started_watch = if directories_in_scope.len() >= limit {
            Err(format!(
                "it has {} directories, more than {MAX_WATCHED_VAR}={limit} allows",
                directories_in_scope.len() + 1
            ))
        } else {
            Watch::start(root, directories, git_dir.as_deref(), &self.cookie_dir)
                .map_err(|error| unwatched_reason(&error))
        };
        match started_watch {
            Ok(watch) => (Some(watch), None),
            Err(why) => {
                // Said once per project: an unwatched project comes here on
                // every compile.
                let first = self
                    .unwatched_said
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(key.clone());
                if first {
                    warn!(
                        "Not watching `{}` ({why}); each compile walks it instead",
                        root.display()
                    );
                } else {
                    debug!("Still not watching `{}` ({why})", root.display());
                }
                (None, Some(why))
            }
        }
    }

    /// The files of `key`'s saved snapshot at `saved`, for its first walk in
    /// this process: `Ok(None)` when there is none, `Err(why)` (logged) when
    /// it was refused.
    fn load_saved(
        &self,
        key: &ProjectKey,
        saved: &Path,
        cache: &FileCache,
    ) -> Result<Option<PriorFiles>, String> {
        let started = Instant::now();
        match persist::load(saved, cache.fingerprint()) {
            Ok((files, tree)) => {
                self.note_saved_tree(key, tree);
                info!(
                    "Read {} files of `{}` from its saved snapshot ({:?})",
                    files.len(),
                    key.root.display(),
                    started.elapsed()
                );
                Ok(Some(files))
            }
            Err(persist::LoadError::Missing) => Ok(None),
            Err(error) => {
                let why = format!("`{}` was not used: {error}", saved.display());
                warn!("The saved snapshot {why}");
                Err(why)
            }
        }
    }

    /// Drops projects unused for `idle` or whose root is gone; returns how many
    /// are left.
    pub fn drop_idle(&self, idle: Duration) -> usize {
        let mut projects = self.projects.lock().unwrap_or_else(PoisonError::into_inner);
        projects.retain(|key, resident| {
            let resident = resident.lock().unwrap_or_else(PoisonError::into_inner);
            let keep = resident.last_used.elapsed() < idle && key.root.is_dir();
            if !keep {
                info!("Dropped the resident index of `{}`", key.root.display());
            }
            keep
        });
        projects.len()
    }

    /// The projects held, sorted by root.
    pub fn status(&self) -> Vec<ResidentProjectStatus> {
        let projects = self.projects.lock().unwrap_or_else(PoisonError::into_inner);
        let mut list: Vec<ResidentProjectStatus> = projects
            .iter()
            .map(|(key, resident)| {
                let resident = resident.lock().unwrap_or_else(PoisonError::into_inner);
                ResidentProjectStatus {
                    root: key.root.clone(),
                    files: resident.snapshot.repo.total_files(),
                    watched_directories: resident.watch.as_ref().map_or(0, |watch| watch.watched),
                    unwatched: resident.unwatched.clone(),
                    last_event_ms: resident.watch.as_ref().map_or(0, Watch::last_event_ms),
                    seeded_files: resident.seeded_files,
                    snapshot_refused: resident.snapshot_refused.clone(),
                    queries: resident.queries,
                    idle_secs: resident.last_used.elapsed().as_secs(),
                }
            })
            .collect();
        list.sort_by(|a, b| a.root.cmp(&b.root));
        list
    }
}

/// The environment variable that caps the directories watched per project
/// (a project with more is walked on every compile instead).
pub const MAX_WATCHED_VAR: &str = "AIC_MAX_WATCHED_DIRECTORIES";

/// The cap [`MAX_WATCHED_VAR`] sets; unlimited (the kernel's limit decides)
/// when unset or not a number.
fn max_watched_directories() -> usize {
    std::env::var(MAX_WATCHED_VAR)
        .ok()
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(usize::MAX)
}

/// Says why a project cannot be watched, with the fix for the watch limit.
fn unwatched_reason(error: &notify::Error) -> String {
    match error.kind {
        notify::ErrorKind::MaxFilesWatch => {
            "the inotify watch limit is reached; raise `fs.inotify.max_user_watches` with sysctl"
                .to_owned()
        }
        _ => format!("the file watcher failed: {error}"),
    }
}

/// The device and inode of a directory.
fn root_id(root: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        fs_err::metadata(root)
            .ok()
            .map(|metadata| (metadata.dev(), metadata.ino()))
    }
    #[cfg(not(unix))]
    {
        fs_err::metadata(root).ok().map(|_| (0, 0))
    }
}

/// Files whose size or modification time differ from the snapshot's (edited
/// while the walk ran), absolute.
fn stale_paths(root: &Path, snapshot: &Snapshot) -> Vec<PathBuf> {
    use rayon::prelude::*;
    snapshot
        .repo
        .files
        .par_iter()
        .filter_map(|file| {
            let absolute = root.join(file.path.as_str());
            let same = fs_err::metadata(&absolute).ok().is_some_and(|metadata| {
                metadata.len() == file.size_bytes && modified_ms(&metadata) == file.last_modified_ms
            });
            (!same).then_some(absolute)
        })
        .collect()
}

fn modified_ms(metadata: &std::fs::Metadata) -> i64 {
    metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Applies `changes` to a resident project: each changed path is scanned as
/// the walk would scan it. `Err(reason)` when only a walk can say what
/// changed (a directory, an ignore file).
fn update(
    resident: &mut Resident,
    project: &Project,
    cache: Option<&FileCache>,
    changes: &Changes,
) -> Result<(Arc<Snapshot>, ResidentReport), String> {
    if changes.paths.is_empty() && !changes.git {
        return Ok((
            resident.snapshot.clone(),
            ResidentReport {
                answer: "reused",
                ..ResidentReport::default()
            },
        ));
    }
    let root = project.root.as_path();
    let never_include = scan::never_include(project);
    let options = ScanOptions {
        max_file_bytes: project.config.repo_map.max_file_bytes,
        cancel: None,
        never_include: never_include.as_ref(),
        on_read: None,
        shard: None,
        blob_index: None,
        prior: None,
    };
    let mut files: Vec<FileEntry> = resident.snapshot.repo.files.clone();
    let mut left_out = resident.detail.left_out.clone();
    let mut updated = 0;
    let mut touched = Vec::new();
    for absolute in &changes.paths {
        let Some(path) = relative(root, absolute) else {
            if absolute == root {
                return Err("the project directory changed".to_owned());
            }
            continue;
        };
        let name = path.as_str().rsplit('/').next().unwrap_or_default();
        if name == ".gitignore" {
            return Err(format!("`{path}` changed"));
        }
        if resident.detail.directories.binary_search(&path).is_ok() {
            return Err(format!("the directory `{path}` changed"));
        }
        let outcome = scan_path(root, &path, options, cache);
        touched.push(path.clone());
        let entry_at = files.binary_search_by(|file| file.path.cmp(&path));
        let left_at = left_out.binary_search_by(|(left, _)| left.cmp(&path));
        match outcome {
            PathOutcome::Directory => return Err(format!("the directory `{path}` appeared")),
            PathOutcome::Gone | PathOutcome::Ignored => {
                remove_at(&mut files, entry_at);
                remove_at(&mut left_out, left_at);
            }
            PathOutcome::Entry(entry) => {
                remove_at(&mut left_out, left_at);
                match entry_at {
                    Ok(index) => files[index] = entry,
                    Err(index) => files.insert(index, entry),
                }
            }
            PathOutcome::LeftOut(why) => {
                remove_at(&mut files, entry_at);
                match left_at {
                    Ok(index) => left_out[index].1 = why,
                    Err(index) => left_out.insert(index, (path.clone(), why)),
                }
            }
        }
        updated += 1;
    }
    let mut repo = RepoMap::new(files);
    if changes.git {
        resident.detail.git = read_git_recency(root, cache, None, None);
    }
    if let Some(git) = &resident.detail.git {
        if changes.git {
            scan::apply_git_recency(root, &mut repo, git);
        } else {
            let newest = git.newest_commit_ms();
            for path in &touched {
                if let Ok(index) = repo.files.binary_search_by(|file| file.path.cmp(path)) {
                    let file = &repo.files[index];
                    repo.files[index].recency_ms = scan::git_recency_ms(root, file, git, newest);
                }
            }
        }
    }
    if changes.git
        && let Some(git) = &mut resident.detail.git
    {
        git.share_paths(&repo);
    }
    let skipped = SkippedFiles::count(&left_out, resident.detail.walk_errors);
    resident.detail.left_out = left_out;
    let snapshot = Arc::new(Snapshot::new(repo, skipped));
    snapshot.keep_from(&resident.snapshot, &touched);
    resident.snapshot = snapshot.clone();
    Ok((
        snapshot,
        ResidentReport {
            answer: "updated",
            reason: None,
            paths_updated: updated,
            git_reread: changes.git,
        },
    ))
}

fn remove_at<T>(list: &mut Vec<T>, found: Result<usize, usize>) {
    if let Ok(index) = found {
        list.remove(index);
    }
}

/// `absolute` relative to `root`, when it is below it and a valid name.
fn relative(root: &Path, absolute: &Path) -> Option<RelativePath> {
    let relative = absolute.strip_prefix(root).ok()?;
    relative.to_str().and_then(RelativePath::new)
}
