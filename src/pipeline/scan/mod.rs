//! The `scan` phase: the project's files as one compile sees them. The walk
//! ([`walk`](mod@walk)) lists the files in scope and gives each its content hash and scan
//! terms (read from the per-file cache for unchanged files); git ([`git`]) says
//! what was changed recently, which becomes each file's recency.
//!
//! The result, a [`Snapshot`], is an immutable value: every later phase reads
//! it, none changes it, and a long-lived process can keep one.

pub mod git;
pub mod prior;
pub mod walk;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use aic_stages::content_hash::ContentHash;
use aic_stages::guard::ExclusionScanner;
use aic_stages::language::Language;
use aic_stages::relative_path::RelativePath;
use aic_stages::repo_map::{FileEntry, RepoMap};
use aic_stages::select::import_graph::{ImportIndex, ProjectLayout, ResolvedImports};
use tracing::{debug, info};

use crate::cache::FileCache;
use crate::pipeline::prepare::Project;
use git::{BlobIndex, GitRecency, SharedBlobIndex, read_git_recency_named};
use prior::PriorFiles;
use walk::walk;
pub use walk::{
    Bounded, DEFAULT_NEGATIVE_PATTERNS, LeftOut, OnRead, PathOutcome, ScanOptions, Shard,
    SkippedFiles, read_bounded, scan_path,
};

/// The files of a project at one moment.
#[derive(Debug)]
pub struct Snapshot {
    /// Files in scope, sorted by path, with their recency from git when the
    /// project is in a repository.
    pub repo: RepoMap,
    /// Files left out of the RepoMap, by reason.
    pub skipped: SkippedFiles,
    /// xxh3-128 of the RepoMap's `path:size:mtime` lines: changes whenever a
    /// file is added, removed or touched.
    pub file_tree_hash: ContentHash,
    /// The project's layout from its manifests, read on first use
    /// ([`Snapshot::layout`]).
    pub layout: OnceLock<ProjectLayout>,
    /// The paths indexed for import resolution, built on first use
    /// ([`Snapshot::import_index`]).
    pub import_index: OnceLock<Arc<ImportIndex>>,
    /// Resolved imports of the files parsed by earlier compiles on this
    /// snapshot, by index in the RepoMap (a resident snapshot resolves each
    /// file's imports once).
    pub resolved: Mutex<HashMap<usize, ResolvedImports>>,
}

impl Snapshot {
    /// A snapshot of `repo` with the files left out as `skipped`.
    pub fn new(repo: RepoMap, skipped: SkippedFiles) -> Self {
        let file_tree_hash = repo.file_tree_hash();
        Self {
            repo,
            skipped,
            file_tree_hash,
            layout: OnceLock::new(),
            import_index: OnceLock::new(),
            resolved: Mutex::default(),
        }
    }

    /// xxh3-128 of every file's recency (in path order): changes when git's
    /// history or index moves, which the file-tree hash does not see.
    pub fn recency_hash(&self) -> ContentHash {
        let mut bytes = Vec::with_capacity(self.repo.files.len() * 8);
        for file in &self.repo.files {
            bytes.extend_from_slice(&file.recency_ms.to_le_bytes());
        }
        ContentHash::of(&bytes)
    }

    /// The RepoMap's paths indexed for import resolution, built once per
    /// snapshot.
    pub fn import_index(&self) -> &ImportIndex {
        self.import_index
            .get_or_init(|| Arc::new(ImportIndex::new(&self.repo)))
    }

    /// Takes over what `old` computed that this snapshot's changes leave
    /// valid, when both hold the same paths (an update that changed only the
    /// contents of `changed`): the pattern matches and the import index
    /// (paths only), and, when no manifest changed, the layout and the
    /// resolved imports of the unchanged files.
    pub fn keep_from(&self, old: &Self, changed: &[RelativePath]) {
        if !self.repo.same_paths(&old.repo) {
            return;
        }
        self.repo.keep_matches_of(&old.repo);
        if let Some(index) = old.import_index.get() {
            let _ = self.import_index.set(index.clone());
        }
        let manifest_changed = changed.iter().any(|path| {
            matches!(
                path.file_name(),
                "tsconfig.json" | "jsconfig.json" | "package.json" | "go.mod" | "Cargo.toml"
            )
        });
        let Some(layout) = old.layout.get().filter(|_| !manifest_changed) else {
            return;
        };
        let _ = self.layout.set(layout.clone());
        let mut resolved = old
            .resolved
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        for path in changed {
            if let Ok(index) = self.repo.files.binary_search_by(|f| f.path.cmp(path)) {
                resolved.remove(&index);
            }
        }
        *self
            .resolved
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = resolved;
    }

    /// The layout the manifests of the project at `root` describe (package
    /// names, path aliases, crates), read once per snapshot: a resident
    /// snapshot answers every compile with the layout read for the first.
    pub fn layout(&self, root: &Path) -> &ProjectLayout {
        self.layout
            .get_or_init(|| crate::pipeline::select::manifests::read_layout(root, &self.repo))
    }
}

/// Runs the `scan` phase, taking the files `prior` holds unread when they are
/// unchanged ([`PriorFiles`]). The git history read is independent of the
/// walk, so it runs on its own thread while the walk fans out over the rayon
/// pool. `cancel` stops the walk early; the snapshot is then incomplete and
/// the caller must not use it.
pub fn scan(
    project: &Project,
    cache: Option<&FileCache>,
    cancel: Option<&AtomicBool>,
    prior: Option<&PriorFiles>,
) -> Snapshot {
    scan_sharded(project, cache, cancel, None, None, prior).0
}

/// What a resident index keeps beside a [`Snapshot`] to follow edits without
/// walking again: the files left out by name, the directories in scope, and
/// git's index and history.
#[derive(Debug, Default)]
pub struct ScanDetail {
    /// Files the walk found and left out, with why, sorted by path.
    pub left_out: Vec<(RelativePath, LeftOut)>,
    /// Directories in scope below the root, sorted.
    pub directories: Vec<RelativePath>,
    /// Entries the walk could not read or name.
    pub walk_errors: usize,
    /// Git's index and history, when the project is in a repository.
    pub git: Option<GitRecency>,
}

/// The options of the walk for `project`: its size cap and the guard's path
/// rules for links.
pub fn never_include(project: &Project) -> Option<ExclusionScanner> {
    let guard = &project.config.guard;
    // The guard's own constructor reports an invalid glob; here the built-in
    // list is enough to keep links to sensitive files out.
    guard
        .enabled
        .then(|| {
            ExclusionScanner::new(&guard.additional_exclusions)
                .or_else(|_| ExclusionScanner::new(&[] as &[String]))
                .ok()
        })
        .flatten()
}

/// [`scan`] over one [`Shard`] of the files (`aic precompute --shard`), the
/// others counted in [`SkippedFiles::other_shard`], calling `on_read` with
/// each file the walk reads (its entry and its bytes, from a rayon worker),
/// so a caller that needs more of a file than its scan terms (precompute)
/// does not read it a second time.
pub fn scan_shard(
    project: &Project,
    cache: Option<&FileCache>,
    on_read: Option<&OnRead<'_>>,
    shard: Option<Shard>,
) -> Snapshot {
    scan_sharded(project, cache, None, on_read, shard, None).0
}

/// [`scan`], also returning the [`ScanDetail`] a resident index keeps.
pub fn scan_detailed(
    project: &Project,
    cache: Option<&FileCache>,
    cancel: Option<&AtomicBool>,
    prior: Option<&PriorFiles>,
) -> (Snapshot, ScanDetail) {
    scan_sharded(project, cache, cancel, None, None, prior)
}

fn scan_sharded(
    project: &Project,
    cache: Option<&FileCache>,
    cancel: Option<&AtomicBool>,
    on_read: Option<&OnRead<'_>>,
    shard: Option<Shard>,
    prior: Option<&PriorFiles>,
) -> (Snapshot, ScanDetail) {
    let root = project.root.as_path();
    let started = Instant::now();
    let never_include = never_include(project);
    // Git's index gives blob ids without reading files: a shard skips the
    // other shards' files by them, and a new checkout (a database that has
    // not seen the project) with a remote tier fetches the files' scan rows
    // by them while the walk lists the files.
    let fresh = cache.is_some_and(|cache| cache.remote().is_some() && !cache.knows_project());
    let blob_index = (shard.is_some() || fresh).then(|| {
        SharedBlobIndex::new(move || {
            let index = BlobIndex::read(root).map(Arc::new);
            if let (Some(cache), Some(index)) = (cache.filter(|_| fresh), &index) {
                prefetch_blob_scans(cache, index, shard);
            }
            index
        })
    });
    let (walked, git) = std::thread::scope(|scope| {
        // A shard of a precompute (a CI matrix job) walks its own run of
        // the history's commits, so N shards share that work too and push
        // parts a new machine merges.
        let git = scope.spawn(|| {
            let index = blob_index.as_ref().and_then(SharedBlobIndex::shared);
            let started = Instant::now();
            let git = read_git_recency_named(root, cache, index, shard, prior);
            debug!("Read git history and index in {:?}", started.elapsed());
            git
        });
        let walked = walk(
            root,
            ScanOptions {
                max_file_bytes: project.config.repo_map.max_file_bytes,
                cancel,
                never_include: never_include.as_ref(),
                on_read,
                shard,
                blob_index: blob_index.as_ref(),
                prior,
            },
            cache,
        );
        debug!("Walked and read files in {:?}", started.elapsed());
        (walked, git.join().ok().flatten())
    });
    let mut repo = walked.repo;
    debug!(
        "Scan and git done in {:?}: {} files (skipped: {:?})",
        started.elapsed(),
        repo.total_files(),
        walked.skipped
    );
    if let Some(git) = &git {
        apply_git_recency(root, &mut repo, git);
        info!(
            "git: history of the last {} commit{}, {} paths changed in it",
            git.commits_read,
            if git.commits_read == 1 { "" } else { "s" },
            git.last_commit.len()
        );
    }
    let snapshot = Snapshot::new(repo, walked.skipped);
    let detail = ScanDetail {
        left_out: walked.left_out,
        directories: walked.directories,
        walk_errors: walked.walk_errors,
        git,
    };
    (snapshot, detail)
}

/// Fetches from the remote tier the [`RowKind::BlobScan`] rows of every file
/// git's index names (of `shard`'s, when there is one), in batches, so that
/// the walk finds each unchanged file's content hash and scan terms without
/// reading it.
///
/// [`RowKind::BlobScan`]: crate::cache::key::RowKind::BlobScan
fn prefetch_blob_scans(cache: &FileCache, index: &BlobIndex, shard: Option<Shard>) {
    let started = Instant::now();
    let keys: Vec<_> = index
        .entries()
        .filter(|(_, blob)| shard.is_none_or(|shard| shard.contains(Some(blob))))
        .filter_map(|(path, blob)| {
            let path = RelativePath::new(path)?;
            let language = Language::detect(&path);
            Some(cache.blob_scan_key(blob, &path, language))
        })
        .collect();
    let asked = keys.len();
    cache.prefetch(keys);
    debug!(
        "Fetched the remote scan rows of {asked} files by blob id in {:?}",
        started.elapsed()
    );
}

/// Replaces each file's recency time with what git knows: uncommitted changes are
/// newer than every commit, committed files take their last commit time, and
/// files untouched in the commits read are older than all of those.
pub fn apply_git_recency(root: &Path, repo: &mut RepoMap, git: &GitRecency) {
    let newest_commit_ms = git.newest_commit_ms();
    for file in &mut repo.files {
        file.recency_ms = git_recency_ms(root, file, git, newest_commit_ms);
    }
}

/// One file's recency by git ([`apply_git_recency`]); `newest_commit_ms` is
/// [`GitRecency::newest_commit_ms`].
pub fn git_recency_ms(
    root: &Path,
    file: &FileEntry,
    git: &GitRecency,
    newest_commit_ms: i64,
) -> i64 {
    let path = file.path.as_str();
    let cap = file.size_bytes;
    let read = || match read_bounded(&root.join(path), cap) {
        Ok(Bounded::Bytes(bytes)) => Some(bytes),
        _ => None,
    };
    if git.is_dirty(path, file.size_bytes, file.last_modified_ns, read) {
        file.last_modified_ms.max(newest_commit_ms + 1000)
    } else {
        git.last_commit
            .get(path)
            .map_or(0, |seconds| seconds * 1000)
    }
}
