//! Recency from version control: when the project root is inside a git
//! repository, a file's recency is its last commit time and, above all, whether
//! it has uncommitted changes — what the developer is working on now. Read with
//! `gix` (no `git` process).
//!
//! History: commits reachable from `HEAD`, newest first by commit time, at most
//! [`MAX_COMMITS`] of them; each is compared with its first parent tree by tree,
//! descending only into subtrees whose ids differ, and every changed path takes
//! the time of the newest commit that touched it. The walk is bounded by a count,
//! not a clock, so the result is the same on every run.
//!
//! Working tree: a file is *dirty* when the index has no entry for it (untracked
//! and not ignored) or the entry's recorded size or modification time differs
//! from the file's — the same stat check `git status` starts with.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use aic_stages::path_table::PathTable;
use aic_stages::repo_map::RepoMap;
use gix::bstr::ByteSlice;
use gix::prelude::ObjectIdExt;
use tracing::debug;

use super::Shard;
use super::prior::{PathNames, PriorFiles};
use crate::cache::FileCache;
use crate::cache::key::blob_key;

/// The git directory of the repository holding `root`, when it has one: the
/// nearest `.git` directory at or above the root, or the directory a `.git`
/// file (a worktree, a submodule) points to.
pub(crate) fn git_dir(root: &Path) -> Option<PathBuf> {
    for directory in root.ancestors() {
        let dot_git = directory.join(".git");
        let Ok(metadata) = fs_err::metadata(&dot_git) else {
            continue;
        };
        if metadata.is_dir() {
            return Some(dot_git);
        }
        let text = fs_err::read_to_string(&dot_git).ok()?;
        let target = text.strip_prefix("gitdir:")?.trim();
        let target = directory.join(target);
        return target.is_dir().then_some(target);
    }
    None
}

/// The common directory of git directory `dir`: the one its `commondir`
/// file names (a linked worktree's, relative to `dir` or absolute), else
/// `dir` itself.
pub(crate) fn common_dir(dir: &Path) -> PathBuf {
    fs_err::read_to_string(dir.join("commondir"))
        .ok()
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .map_or_else(|| dir.to_path_buf(), |common| dir.join(common))
}

/// The most commits read from history.
pub const MAX_COMMITS: usize = 1_000;

/// The cache row kind of a history read; the version changes with [`History`]
/// or with the way history is read.
const HISTORY_ROW: &str = "git-history-v1:max-commits=1000";

/// Whether a cached row is a history row this aic wrote (for `aic cache import`).
pub(crate) fn is_history_row(payload: &[u8]) -> bool {
    postcard::from_bytes::<History>(payload).is_ok()
}

/// What a history read found, as cached: commits read, and the last commit
/// time per path, sorted by path.
#[derive(Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct History {
    commits_read: u32,
    last_commit: Vec<(String, i64)>,
}

/// What git says about the files of a project.
#[derive(Debug, Default)]
pub struct GitRecency {
    /// Last commit time (seconds since the epoch) per path relative to the project
    /// root, for paths changed in the commits read. A resident index keys it
    /// by its RepoMap's own paths ([`GitRecency::share_paths`]).
    pub last_commit: PathTable<i64>,
    /// The index, when it could be read (when not, no file is reported dirty).
    index: Option<Arc<BlobIndex>>,
    /// Commits read.
    pub commits_read: usize,
}

impl GitRecency {
    /// The newest commit time read, in ms since the epoch (0 with none): an
    /// uncommitted change is newer than it.
    pub fn newest_commit_ms(&self) -> i64 {
        self.last_commit.values().copied().max().unwrap_or(0) * 1000
    }

    /// Keys the path tables by `repo`'s paths, which are reference-counted:
    /// a resident index then holds each path's text once, not once in its
    /// RepoMap and again in each table (about 100 bytes per file). Paths
    /// outside the RepoMap keep their own text; the index is shared only when
    /// nothing else holds it.
    pub fn share_paths(&mut self, repo: &RepoMap) {
        self.last_commit.share_paths(repo);
        if let Some(index) = self.index.as_mut().and_then(Arc::get_mut) {
            index.entries.share_paths(repo);
        }
    }

    /// Entries of the index (0 when it could not be read).
    fn indexed(&self) -> usize {
        self.index.as_ref().map_or(0, |index| index.entries.len())
    }

    /// Whether a file differs from what the index recorded (or is not in it);
    /// `mtime_ns` is its modification time in ns since the epoch.
    ///
    /// When the recorded size and modification time match, the file is clean
    /// without reading it. When only the time differs (a copy, a fresh checkout
    /// tool, `touch`), `read` is called and the content's blob id is compared with
    /// the index's, as `git status` does, so the answer depends on content only.
    pub fn is_dirty(
        &self,
        path: &str,
        size_bytes: u64,
        mtime_ns: i64,
        read: impl FnOnce() -> Option<Vec<u8>>,
    ) -> bool {
        let Some(index) = &self.index else {
            return false;
        };
        let Some(entry) = index.entries.get(path) else {
            return true;
        };
        if u64::from(entry.size) != (size_bytes & 0xffff_ffff) {
            return true;
        }
        if entry.vouches_for(index.written, size_bytes, mtime_ns) {
            return false;
        }
        read().is_none_or(|bytes| blob_id(Some(index), &bytes).as_ref() != Some(&entry.id))
    }
}

/// The path of `root` inside `repo`'s work tree, with a trailing `/` (empty
/// at the work tree's top): what index paths start with.
fn root_prefix(repo: &gix::Repository, root: &Path) -> Option<String> {
    let workdir = repo.workdir()?.to_path_buf();
    let workdir = fs_err::canonicalize(&workdir).unwrap_or(workdir);
    let prefix = root.strip_prefix(&workdir).ok()?;
    let prefix = prefix.to_str()?.replace('\\', "/");
    Some(if prefix.is_empty() {
        String::new()
    } else {
        format!("{prefix}/")
    })
}

/// The blob ids git's index records for the files under a project root, with
/// the size and modification time it saw them at: what `aic precompute
/// --shard` decides a file's shard by without reading it.
///
/// A file's shard is a function of its git blob id, a hash of its content
/// that every machine computes alike: taken from the index when the file's
/// size and modification time are those the index recorded (a fresh
/// checkout), and computed from the bytes otherwise (a changed, untracked or
/// touched file, or a project outside git).
#[derive(Debug)]
pub struct BlobIndex {
    /// Entries by path relative to the project root (paths that are not a
    /// [`RelativePath`] name no file aic reads and are left out).
    entries: PathTable<IndexEntry>,
    /// The repository's object hash (SHA-1, or SHA-256 in a repository made
    /// with it).
    kind: gix::hash::Kind,
    /// When the index file was written (its modification time): an entry
    /// modified then or later is "racily clean" (git's term) — the file may
    /// have changed after the index saw it without a new size or time — so
    /// it must be read.
    written: gix::index::entry::stat::Time,
}

/// What git's index recorded of one file.
#[derive(Debug)]
pub(crate) struct IndexEntry {
    /// Size in bytes, low 32 bits; `u32::MAX` for a conflicted path.
    size: u32,
    /// Modification time as git saw it (second and nanosecond; git writes a
    /// nanosecond of 0 where the file system or the tool gave none).
    mtime: gix::index::entry::stat::Time,
    /// The blob id git recorded.
    pub(crate) id: gix::ObjectId,
}

impl IndexEntry {
    /// The record of `entry` (a conflicted path gets an impossible size, so
    /// it never matches the file on disk).
    pub(crate) fn of(entry: &gix::index::Entry) -> Self {
        Self {
            size: if entry.stage_raw() == 0 {
                entry.stat.size
            } else {
                u32::MAX
            },
            mtime: entry.stat.mtime,
            id: entry.id,
        }
    }

    /// Whether the entry vouches for a file of `size_bytes` modified at
    /// `mtime_ns` (ns since the epoch) in an index `written` then: the same
    /// size and modification time, and a time before the index was written
    /// (not racily clean), so the file holds the recorded blob unread.
    pub(crate) fn vouches_for(
        &self,
        written: gix::index::entry::stat::Time,
        size_bytes: u64,
        mtime_ns: i64,
    ) -> bool {
        u64::from(self.size) == (size_bytes & 0xffff_ffff)
            && self.same_mtime(mtime_ns)
            && self.settled(written)
    }

    /// Whether the entry's modification time is before the index was
    /// `written`. With a recorded nanosecond the times are compared whole,
    /// so a fresh checkout — every file written before its index, most in the
    /// index's last seconds — is settled; without one, by the second, as git
    /// compares them (a file of the index's second is racy).
    fn settled(&self, written: gix::index::entry::stat::Time) -> bool {
        if self.mtime.nsecs == 0 {
            self.mtime.secs < written.secs
        } else {
            (self.mtime.secs, self.mtime.nsecs) < (written.secs, written.nsecs)
        }
    }

    /// Whether a file modified at `mtime_ns` (ns since the epoch) has the
    /// entry's modification time: to the nanosecond when the entry has one
    /// (a write after a `stat` gets a fine-grained time, so a change made
    /// just after git looked differs from what git saw), and to the second
    /// when it has none.
    fn same_mtime(&self, mtime_ns: i64) -> bool {
        let secs = i64::from(self.mtime.secs);
        if self.mtime.nsecs == 0 {
            secs == mtime_ns.div_euclid(1_000_000_000)
        } else {
            secs * 1_000_000_000 + i64::from(self.mtime.nsecs) == mtime_ns
        }
    }
}

impl BlobIndex {
    /// The index of the repository enclosing `root`; `None` outside a git
    /// work tree or when the index cannot be read.
    pub fn read(root: &Path) -> Option<Self> {
        let repo = gix::discover(root).ok()?;
        let prefix = root_prefix(&repo, root)?;
        Self::of(&repo, &prefix, &mut PathNames::new(None))
    }

    /// The index of `repo`, its paths relative to `prefix` (see
    /// [`root_prefix`]). A conflicted path (several stages) is recorded with
    /// an impossible size, so it never matches the file on disk.
    fn of(repo: &gix::Repository, prefix: &str, names: &mut PathNames<'_>) -> Option<Self> {
        let index = repo.index_or_empty().ok()?;
        let entries = entries_under(&index, prefix)
            .filter_map(|(path, entry)| Some((names.name(path)?, IndexEntry::of(entry))))
            .collect();
        Some(Self {
            entries,
            kind: repo.object_hash(),
            written: index_written(&index),
        })
    }

    /// The paths (relative to the project root) and blob ids of the index's
    /// unconflicted entries, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &gix::oid)> {
        self.entries
            .iter()
            .filter(|(_, entry)| entry.size != u32::MAX && entry.settled(self.written))
            .map(|(path, entry)| (path.as_str(), entry.id.as_ref()))
    }

    /// The blob id the index recorded for `path` when the file on disk has
    /// the size and modification time it recorded (`mtime_ns`: ns since the
    /// epoch; compared to the nanosecond where git recorded one, else to the
    /// second), and that time is before the index was written; `None` when
    /// the file must be read to know it.
    pub fn recorded(&self, path: &str, size_bytes: u64, mtime_ns: i64) -> Option<&gix::oid> {
        let entry = self.entries.get(path)?;
        entry
            .vouches_for(self.written, size_bytes, mtime_ns)
            .then_some(entry.id.as_ref())
    }
}

/// A file's modification time in nanoseconds since the epoch, as git's index
/// records it; `None` before 1970, past 2262 or where the platform has none.
pub(crate) fn modified_ns(metadata: &std::fs::Metadata) -> Option<i64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        modified_ns_of(metadata.mtime(), metadata.mtime_nsec())
    }
    #[cfg(not(unix))]
    {
        let since = metadata
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        i64::try_from(since.as_nanos()).ok()
    }
}

/// [`modified_ns`] from a stat's modification time, given as seconds and
/// nanoseconds since the epoch (`None` for a time before 1970, one past what
/// an `i64` of nanoseconds holds, a nanosecond field out of range): the
/// walk's stats relative to a directory and [`modified_ns`] read it the same
/// way.
#[cfg(unix)]
pub(crate) fn modified_ns_of(seconds: i64, nanoseconds: i64) -> Option<i64> {
    let seconds = u64::try_from(seconds).ok()?;
    let nanoseconds = u32::try_from(nanoseconds)
        .ok()
        .filter(|nanoseconds| *nanoseconds < 1_000_000_000)?;
    i64::try_from(std::time::Duration::new(seconds, nanoseconds).as_nanos()).ok()
}

/// When the index file was written, as an index entry's time (a time before
/// 1970 or past 2106 clamped to the nearest one git can record).
pub(crate) fn index_written(index: &gix::index::File) -> gix::index::entry::stat::Time {
    let stamp = index.timestamp();
    let secs = stamp.unix_seconds();
    gix::index::entry::stat::Time {
        secs: u32::try_from(secs.max(0)).unwrap_or(u32::MAX),
        nsecs: stamp.nanoseconds(),
    }
}

/// The git blob id of `bytes`, as `git hash-object` computes it in the
/// repository of `index` (SHA-1 outside git); `None` when the hasher refuses
/// the input (a SHA-1 collision attack).
pub fn blob_id(index: Option<&BlobIndex>, bytes: &[u8]) -> Option<gix::ObjectId> {
    let kind = index.map_or(gix::hash::Kind::Sha1, |index| index.kind);
    gix::objs::compute_hash(kind, gix::objs::Kind::Blob, bytes).ok()
}

/// Git's index for one scan, read once by whichever thread asks first (the
/// git thread, beside the walk); a thread that asks meanwhile waits for it.
/// The loader may do more than read it (fetch what the index names).
pub struct SharedBlobIndex<'a> {
    cell: OnceLock<Option<Arc<BlobIndex>>>,
    load: Box<dyn Fn() -> Option<Arc<BlobIndex>> + Send + Sync + 'a>,
}

impl std::fmt::Debug for SharedBlobIndex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedBlobIndex")
            .field("loaded", &self.cell.get().is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> SharedBlobIndex<'a> {
    /// An index `load` reads on first use.
    pub fn new(load: impl Fn() -> Option<Arc<BlobIndex>> + Send + Sync + 'a) -> Self {
        Self {
            cell: OnceLock::new(),
            load: Box::new(load),
        }
    }

    /// The index, loaded now or waited for; `None` outside git.
    pub fn get(&self) -> Option<&BlobIndex> {
        self.cell.get_or_init(&self.load).as_deref()
    }

    /// [`SharedBlobIndex::get`], shared.
    pub fn shared(&self) -> Option<Arc<BlobIndex>> {
        self.cell.get_or_init(&self.load).clone()
    }
}

/// The files git tracks under `root` (its index's stage-0 entries), relative
/// to `root`, sorted; `None` outside a git work tree.
pub fn tracked_files(root: &Path) -> Option<Vec<String>> {
    let repo = gix::discover(root).ok()?;
    let prefix = root_prefix(&repo, root)?;
    let index = repo.index_or_empty().ok()?;
    let mut files: Vec<String> = entries_under(&index, &prefix)
        .filter(|(_, entry)| entry.stage_raw() == 0)
        .map(|(path, _)| path.to_owned())
        .collect();
    files.sort();
    Some(files)
}

/// The entries of `index` under the project root, with their paths relative
/// to it (`prefix`: see [`root_prefix`]); paths that are not UTF-8 are left
/// out.
fn entries_under<'a>(
    index: &'a gix::index::File,
    prefix: &'a str,
) -> impl Iterator<Item = (&'a str, &'a gix::index::Entry)> {
    index.entries().iter().filter_map(move |entry| {
        let path = entry.path(index).to_str().ok()?;
        Some((path.strip_prefix(prefix)?, entry))
    })
}

/// What a history row is keyed by: the `HEAD` commit and the project's
/// place in the repository (the same on every machine with that checkout).
fn history_source(head: &[u8], prefix: &str) -> Vec<u8> {
    let mut source = head.to_vec();
    source.extend_from_slice(prefix.as_bytes());
    source
}

/// The per-file cache keys of the git history rows [`read_git_recency`]
/// stores for the project at `root` with `part`: the whole history's row,
/// or a shard's part and the parts' count; empty outside a git repository or
/// before its first commit. `aic precompute --push` pushes them, so a new
/// machine reads the history instead of walking 1,000 commits.
pub fn history_row_keys(root: &Path, part: Option<Shard>) -> Vec<aic_storage::FactsKey> {
    let Some(source) = gix::discover(root).ok().and_then(|repo| {
        let prefix = root_prefix(&repo, root)?;
        let head = repo.head_id().ok()?;
        Some(history_source(head.as_bytes(), &prefix))
    }) else {
        return Vec::new();
    };
    match part {
        Some(part) => vec![
            blob_key(&source, &part_kind(part)),
            blob_key(&source, HISTORY_PARTS),
        ],
        None => vec![blob_key(&source, HISTORY_ROW)],
    }
}

/// Reads history and the index for the repository enclosing `root`; `None` when
/// `root` is not inside a git repository with a work tree or `HEAD` cannot be
/// read (a repository with no commit still reports its dirty files). With
/// `part` (a shard of a precompute), only that shard's run of consecutive
/// commits (the I-th of N, newest first) is walked.
///
/// The history part depends only on the `HEAD` commit and the root's place in
/// the work tree, so with a `cache` it is read once per `HEAD` and kept in the
/// per-file cache (keyed by the commit id); the index is read every time.
/// A history that sharded precomputes stored in parts is merged.
pub fn read_git_recency(
    root: &Path,
    cache: Option<&FileCache>,
    index: Option<Arc<BlobIndex>>,
    part: Option<Shard>,
) -> Option<GitRecency> {
    read_git_recency_named(root, cache, index, part, None)
}

/// [`read_git_recency`], naming the paths of its tables with `prior`'s copies
/// where it has them ([`PathNames`]): a walk that starts from an earlier
/// one's files holds each path's text once while both are alive.
pub fn read_git_recency_named(
    root: &Path,
    cache: Option<&FileCache>,
    index: Option<Arc<BlobIndex>>,
    part: Option<Shard>,
    prior: Option<&PriorFiles>,
) -> Option<GitRecency> {
    let mut names = PathNames::new(prior);
    let mut repo = gix::discover(root).ok()?;
    let prefix = root_prefix(&repo, root)?;

    let mut recency = GitRecency::default();
    let index_started = std::time::Instant::now();
    recency.index = index.or_else(|| BlobIndex::of(&repo, &prefix, &mut names).map(Arc::new));
    debug!(
        "git: read {} index entries in {:?}",
        recency.indexed(),
        index_started.elapsed()
    );
    // Consecutive commits share most trees: decoded trees are kept (about
    // 1 KiB per tracked file, gix's sizing for tree diffs), and packed deltas
    // are cached by the pack cache.
    repo.object_cache_size_if_unset((recency.indexed() << 10).max(4 << 10));
    let Ok(head) = repo.head_id() else {
        return Some(recency);
    };
    let source = history_source(head.as_bytes(), &prefix);
    let history =
        if let Some(history) = cache.and_then(|cache| cached_history(cache, &source, part)) {
            debug!(
                "git: history of {} commits from the cache, {} index entries",
                history.commits_read,
                recency.indexed()
            );
            history
        } else {
            let history = walk_history(&repo, head.detach(), &prefix, part);
            if let Some(cache) = cache
                && let Ok(bytes) = postcard::to_stdvec(&history)
            {
                match part {
                    Some(part) => {
                        cache.put_blob(&source, &part_kind(part), &bytes);
                        cache.put_blob(&source, HISTORY_PARTS, &part.count.to_le_bytes());
                    }
                    None => cache.put_blob(&source, HISTORY_ROW, &bytes),
                }
            }
            debug!(
                "git: {} commits read, {} paths with history, {} index entries",
                history.commits_read,
                history.last_commit.len(),
                recency.indexed()
            );
            history
        };
    recency.commits_read = history.commits_read as usize;
    recency.last_commit = history
        .last_commit
        .into_iter()
        .filter_map(|(path, time)| Some((names.name(&path)?, time)))
        .collect();
    Some(recency)
}

/// The row kind of one shard's part of the history ([`walk_history`]).
fn part_kind(part: Shard) -> String {
    format!("{HISTORY_ROW}:part={}/{}", part.index + 1, part.count)
}

/// The row that says into how many parts sharded precomputes split the
/// history of a commit (u32, little endian).
const HISTORY_PARTS: &str = "git-history-parts-v1";

/// The cached history under `source`: for a part, that part's row; for the
/// whole, its row, or else the parts sharded precomputes stored, merged (and
/// kept locally as the whole row). Without a local whole row, one round trip
/// to the remote tier asks for it and the parts' count, a second for the
/// parts.
fn cached_history(cache: &FileCache, source: &[u8], part: Option<Shard>) -> Option<History> {
    let decode = |bytes: Vec<u8>| postcard::from_bytes::<History>(&bytes).ok();
    if let Some(part) = part {
        cache.prefetch([blob_key(source, &part_kind(part))]);
        return cache.blob(source, &part_kind(part)).and_then(decode);
    }
    // The whole row held locally answers without asking the store.
    if let Some(history) = cache.blob(source, HISTORY_ROW).and_then(decode) {
        return Some(history);
    }
    cache.prefetch([
        blob_key(source, HISTORY_ROW),
        blob_key(source, HISTORY_PARTS),
    ]);
    if let Some(history) = cache.blob(source, HISTORY_ROW).and_then(decode) {
        return Some(history);
    }
    let count = cache.blob(source, HISTORY_PARTS)?;
    let count = u32::from_le_bytes(count.as_slice().try_into().ok()?);
    let parts: Vec<Shard> = (0..count).map(|index| Shard { index, count }).collect();
    cache.prefetch(parts.iter().map(|part| blob_key(source, &part_kind(*part))));
    let parts = parts
        .iter()
        .map(|part| cache.blob(source, &part_kind(*part)).and_then(decode))
        .collect::<Option<Vec<History>>>()?;
    let history = History::merge(parts);
    if let Ok(bytes) = postcard::to_stdvec(&history) {
        cache.put_blob(source, HISTORY_ROW, &bytes);
    }
    Some(history)
}

impl History {
    /// The history of consecutive runs of commits, newest run first, as one
    /// walk over all of them finds it: a path's time is that of the newest
    /// run that changed it.
    fn merge(parts: Vec<Self>) -> Self {
        let mut commits_read = 0;
        let mut last_commit: HashMap<String, i64> = HashMap::new();
        for part in parts {
            commits_read += part.commits_read;
            for (path, time) in part.last_commit {
                last_commit.entry(path).or_insert(time);
            }
        }
        let mut last_commit: Vec<(String, i64)> = last_commit.into_iter().collect();
        last_commit.sort_unstable();
        Self {
            commits_read,
            last_commit,
        }
    }
}

/// Walks the newest [`MAX_COMMITS`] commits from `head` (by commit time) and
/// records, for every path under the project (`prefix`) that a commit
/// changed against its first parent, the time of the newest such commit.
/// With `part`, only that shard's run of consecutive commits is diffed (the
/// first of N shards takes the newest N-th), so N shards share the work and
/// [`History::merge`] of their parts is the whole walk's result.
fn walk_history(
    repo: &gix::Repository,
    head: gix::ObjectId,
    prefix: &str,
    part: Option<Shard>,
) -> History {
    let Ok(walk) = repo
        .rev_walk([head])
        .sorting(gix::revision::walk::Sorting::ByCommitTime(
            gix::traverse::commit::simple::CommitTimeOrder::default(),
        ))
        .all()
    else {
        return History::default();
    };
    let commits: Vec<_> = walk.take(MAX_COMMITS).map_while(Result::ok).collect();
    let range = part.map_or(0..commits.len(), |part| {
        let at = |index: u32| commits.len() * index as usize / part.count as usize;
        at(part.index)..at(part.index + 1)
    });
    let mut last_commit: HashMap<String, i64> = HashMap::new();
    let commits_read = range.len() as u32;
    for info in &commits[range] {
        let time = info.commit_time();
        let Ok(commit) = info.object() else { continue };
        let Ok(tree) = commit.tree_id() else { continue };
        let parent_tree = info
            .parent_ids()
            .next()
            .and_then(|parent| parent.object().ok())
            .and_then(|object| object.try_into_commit().ok())
            .and_then(|parent| parent.tree_id().ok())
            .map(gix::Id::detach);
        let mut changed = Vec::new();
        diff_trees(
            repo,
            parent_tree,
            Some(tree.detach()),
            &mut Vec::new(),
            &mut changed,
        );
        for path in changed {
            let Some(path) = path
                .to_str()
                .ok()
                .and_then(|path| path.strip_prefix(prefix))
            else {
                continue;
            };
            last_commit.entry(path.to_owned()).or_insert(time);
        }
    }
    let mut last_commit: Vec<(String, i64)> = last_commit.into_iter().collect();
    last_commit.sort_unstable();
    History {
        commits_read,
        last_commit,
    }
}

/// Appends to `changed` every blob path that differs between two trees (either
/// may be absent: an added or deleted subtree). Both trees' entries are in
/// git's order (by name, a tree's name read with a trailing `/`), so one merge
/// pass pairs them; a name that is a blob on one side and a tree on the other
/// is two entries, each handled as added or removed.
fn diff_trees(
    repo: &gix::Repository,
    old: Option<gix::ObjectId>,
    new: Option<gix::ObjectId>,
    prefix: &mut Vec<u8>,
    changed: &mut Vec<Vec<u8>>,
) {
    if old == new {
        return;
    }
    let load = |id: Option<gix::ObjectId>| -> Option<gix::Tree<'_>> {
        id?.attach(repo).object().ok()?.try_into_tree().ok()
    };
    let (old_tree, new_tree) = (load(old), load(new));
    let (before, after) = (
        tree_entries(old_tree.as_ref()),
        tree_entries(new_tree.as_ref()),
    );
    let (mut i, mut j) = (0, 0);
    while i < before.len() || j < after.len() {
        let order = match (before.get(i), after.get(j)) {
            (Some(a), Some(b)) => a.git_order(b),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let (old_entry, new_entry) = match order {
            std::cmp::Ordering::Less => (before.get(i), None),
            std::cmp::Ordering::Greater => (None, after.get(j)),
            std::cmp::Ordering::Equal => (before.get(i), after.get(j)),
        };
        i += usize::from(order.is_le());
        j += usize::from(order.is_ge());
        if old_entry.map(|e| e.id) == new_entry.map(|e| e.id) {
            continue;
        }
        let entry = old_entry.or(new_entry).expect("one side has the entry");
        let length = prefix.len();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(entry.name);
        if entry.is_tree {
            diff_trees(
                repo,
                old_entry.map(|e| e.id),
                new_entry.map(|e| e.id),
                prefix,
                changed,
            );
        } else {
            changed.push(prefix.clone());
        }
        prefix.truncate(length);
    }
}

/// The entries of `tree` other than submodules, in the tree's order.
fn tree_entries<'a>(tree: Option<&'a gix::Tree<'_>>) -> Vec<TreeEntry<'a>> {
    let Some(decoded) = tree.and_then(|tree| tree.decode().ok()) else {
        return Vec::new();
    };
    decoded
        .entries
        .iter()
        .filter(|e| !e.mode.is_commit())
        .map(|e| TreeEntry {
            name: e.filename.as_bytes(),
            id: e.oid.to_owned(),
            is_tree: e.mode.is_tree(),
        })
        .collect()
}

/// One entry of a decoded tree: its name (borrowed from the tree's buffer),
/// id and kind.
struct TreeEntry<'a> {
    name: &'a [u8],
    id: gix::ObjectId,
    is_tree: bool,
}

impl TreeEntry<'_> {
    /// Git's tree order: names compared bytewise, a tree's as if it ended in
    /// `/`.
    fn git_order(&self, other: &Self) -> std::cmp::Ordering {
        let suffix = |entry: &Self| entry.is_tree.then_some(b'/');
        self.name
            .iter()
            .copied()
            .chain(suffix(self))
            .cmp(other.name.iter().copied().chain(suffix(other)))
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use aic_stages::relative_path::RelativePath;

    use super::*;

    fn git(root: &Path, args: &[&str], date: &str) {
        let status = Command::new("git")
            .args(args)
            .current_dir(root)
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    }

    /// A file's modification time in ms since the epoch.
    /// Writes `text` to `path` with a modification time an hour ago, so that
    /// an index written now has settled it (not racily clean).
    fn write_settled(path: &Path, text: &str) {
        fs_err::write(path, text).unwrap();
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - std::time::Duration::from_hours(1))
            .unwrap();
    }

    #[test]
    fn last_commit_times_and_dirty_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs_err::canonicalize(dir.path()).unwrap();
        git(&root, &["init", "-q", "-b", "main"], "2024-01-01T00:00:00Z");
        fs_err::create_dir_all(root.join("src/deep")).unwrap();
        fs_err::write(root.join("src/old.rs"), "old").unwrap();
        fs_err::write(root.join("src/deep/new.rs"), "new").unwrap();
        git(&root, &["add", "."], "2024-01-01T00:00:00Z");
        git(
            &root,
            &["commit", "-q", "-m", "one"],
            "2024-01-01T00:00:00Z",
        );
        fs_err::write(root.join("src/deep/new.rs"), "newer").unwrap();
        git(
            &root,
            &["commit", "-q", "-am", "two"],
            "2024-06-01T00:00:00Z",
        );
        fs_err::write(root.join("untracked.rs"), "u").unwrap();

        let recency = read_git_recency(&root.join("src"), None, None, None).unwrap();
        assert_eq!(recency.commits_read, 2);
        assert_eq!(recency.last_commit.get("old.rs"), Some(&1_704_067_200));
        assert_eq!(recency.last_commit.get("deep/new.rs"), Some(&1_717_200_000));

        let full = read_git_recency(&root, None, None, None).unwrap();
        let meta = fs_err::metadata(root.join("src/old.rs")).unwrap();
        let mtime_ns = modified_ns(&meta).unwrap();
        let read = |path: &str| {
            let path = root.join(path);
            move || fs_err::read(path).ok()
        };
        assert!(!full.is_dirty("src/old.rs", meta.len(), mtime_ns, read("src/old.rs")));
        assert!(full.is_dirty("src/old.rs", meta.len() + 1, mtime_ns, read("src/old.rs")));
        assert!(full.is_dirty("untracked.rs", 1, mtime_ns, read("untracked.rs")));
        // A touched file with the same content is clean; an edit of the same size
        // is not.
        assert!(!full.is_dirty(
            "src/old.rs",
            meta.len(),
            mtime_ns + 60_000_000_000,
            read("src/old.rs")
        ));
        fs_err::write(root.join("src/old.rs"), "new").unwrap();
        assert!(full.is_dirty(
            "src/old.rs",
            3,
            mtime_ns + 60_000_000_000,
            read("src/old.rs")
        ));
    }

    /// The index gives a clean file's blob id, the one `blob_id` computes
    /// from its bytes, relative to a project root below the work tree; a file
    /// of another size or second, or untracked, must be read.
    /// Shards walk consecutive runs of the history: merged in order, their
    /// parts are the whole walk's history, for any number of shards (more
    /// shards than commits too).
    #[test]
    fn history_parts_merge_into_the_whole_history() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs_err::canonicalize(dir.path()).unwrap();
        git(&root, &["init", "-q", "-b", "main"], "2024-01-01T00:00:00Z");
        for (day, files) in [
            (1, &["a.rs", "b.rs", "lib/c.rs"][..]),
            (2, &["a.rs"][..]),
            (3, &["lib/c.rs", "d.rs"][..]),
            (4, &["b.rs"][..]),
            (5, &["a.rs", "lib/e.rs"][..]),
        ] {
            let date = format!("2024-01-{day:02}T00:00:00Z");
            for file in files {
                let path = root.join(file);
                fs_err::create_dir_all(path.parent().unwrap()).unwrap();
                fs_err::write(&path, format!("{file} {day}")).unwrap();
            }
            git(&root, &["add", "-A"], &date);
            git(&root, &["commit", "-q", "-m", &date], &date);
        }
        let repo = gix::discover(&root).unwrap();
        let head = repo.head_id().unwrap().detach();
        let whole = walk_history(&repo, head, "", None);
        assert_eq!(whole.commits_read, 5);
        assert_eq!(whole.last_commit.len(), 5);
        for count in 1..=7 {
            let parts = (0..count)
                .map(|index| walk_history(&repo, head, "", Some(Shard { index, count })))
                .collect();
            assert_eq!(History::merge(parts), whole, "{count} parts");
        }
    }

    /// Git orders a tree named `a` after a blob `a.rs` (as `a/`), and a
    /// name can turn from a file into a directory: the merge of two trees
    /// pairs only like with like.
    #[test]
    fn history_follows_tree_order_and_a_file_becoming_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs_err::canonicalize(dir.path()).unwrap();
        git(&root, &["init", "-q", "-b", "main"], "2024-01-01T00:00:00Z");
        fs_err::create_dir_all(root.join("a")).unwrap();
        fs_err::write(root.join("a.rs"), "1").unwrap();
        fs_err::write(root.join("a/x.rs"), "1").unwrap();
        fs_err::write(root.join("a-b.rs"), "1").unwrap();
        fs_err::write(root.join("b"), "file").unwrap();
        git(&root, &["add", "."], "2024-01-01T00:00:00Z");
        git(
            &root,
            &["commit", "-q", "-m", "one"],
            "2024-01-01T00:00:00Z",
        );
        fs_err::write(root.join("a/x.rs"), "2").unwrap();
        fs_err::remove_file(root.join("b")).unwrap();
        fs_err::create_dir_all(root.join("b")).unwrap();
        fs_err::write(root.join("b/c.rs"), "2").unwrap();
        git(&root, &["add", "-A"], "2024-06-01T00:00:00Z");
        git(
            &root,
            &["commit", "-q", "-m", "two"],
            "2024-06-01T00:00:00Z",
        );

        let recency = read_git_recency(&root, None, None, None).unwrap();
        let mut last: Vec<(&str, i64)> = recency
            .last_commit
            .iter()
            .map(|(path, time)| (path.as_str(), *time))
            .collect();
        last.sort_unstable();
        assert_eq!(
            last,
            [
                ("a-b.rs", 1_704_067_200),
                ("a.rs", 1_704_067_200),
                ("a/x.rs", 1_717_200_000),
                ("b", 1_717_200_000),
                ("b/c.rs", 1_717_200_000),
            ]
        );
    }

    #[test]
    fn the_blob_index_vouches_for_files_as_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs_err::canonicalize(dir.path()).unwrap();
        git(&root, &["init", "-q", "-b", "main"], "2024-01-01T00:00:00Z");
        fs_err::create_dir_all(root.join("app/src")).unwrap();
        write_settled(&root.join("app/src/main.rs"), "fn main() {}\n");
        // Modified after the index is written (its clock says so): git saw it
        // with a time that does not prove it settled.
        let racy_path = root.join("app/src/racy.rs");
        fs_err::write(&racy_path, "fn racy() {}\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&racy_path)
            .unwrap()
            .set_modified(std::time::SystemTime::now() + std::time::Duration::from_hours(1))
            .unwrap();
        // Written just before the index, as a checkout writes every file.
        fs_err::write(root.join("app/src/fresh.rs"), "fn fresh() {}\n").unwrap();
        git(&root, &["add", "."], "2024-01-01T00:00:00Z");
        git(
            &root,
            &["commit", "-q", "-m", "one"],
            "2024-01-01T00:00:00Z",
        );
        fs_err::write(root.join("app/untracked.rs"), "u").unwrap();

        let index = BlobIndex::read(&root.join("app")).unwrap();
        let meta = fs_err::metadata(root.join("app/src/main.rs")).unwrap();
        let mtime_ns = modified_ns(&meta).unwrap();
        let recorded = index.recorded("src/main.rs", meta.len(), mtime_ns).unwrap();
        let bytes = fs_err::read(root.join("app/src/main.rs")).unwrap();
        assert_eq!(Some(recorded.to_owned()), blob_id(Some(&index), &bytes));
        // `git hash-object` of "fn main() {}\n".
        assert_eq!(
            recorded.to_string(),
            "f328e4d9d04c31d0d70d16d21a07d1613be9d577"
        );
        assert!(
            index
                .recorded("src/main.rs", meta.len() + 1, mtime_ns)
                .is_none()
        );
        assert!(
            index
                .recorded("src/main.rs", meta.len(), mtime_ns + 60_000_000_000)
                .is_none()
        );
        assert!(index.recorded("untracked.rs", 1, mtime_ns).is_none());
        // Modified when the index was written or later: it may have changed
        // since without a new size or time, so it must be read.
        let racy = fs_err::metadata(&racy_path).unwrap();
        assert!(
            index
                .recorded("src/racy.rs", racy.len(), modified_ns(&racy).unwrap())
                .is_none()
        );
        assert!(index.entries().all(|(path, _)| path != "src/racy.rs"));
        // Written before the index, most likely in the same second: settled
        // where the file system keeps sub-second times (git then records
        // them), as on every file system the tests run on.
        let fresh = fs_err::metadata(root.join("app/src/fresh.rs")).unwrap();
        let sub_second = fresh
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
            != 0;
        if sub_second {
            assert!(
                index
                    .recorded("src/fresh.rs", fresh.len(), modified_ns(&fresh).unwrap())
                    .is_some()
            );
            assert!(index.entries().any(|(path, _)| path == "src/fresh.rs"));
        }
    }

    /// An entry vouches for a file only at the size and time git recorded,
    /// to the nanosecond when git recorded one (a write just after git looked
    /// differs by a fraction of a millisecond), to the second when it did
    /// not; and only when that time is before the index was written.
    #[test]
    fn an_entry_vouches_for_its_exact_time_before_the_index() {
        use gix::index::entry::stat::Time;
        let entry = |secs, nsecs| IndexEntry {
            size: 20,
            mtime: Time { secs, nsecs },
            id: gix::ObjectId::null(gix::hash::Kind::Sha1),
        };
        let ns = |secs: i64, nanos: i64| secs * 1_000_000_000 + nanos;
        let later = Time {
            secs: 101,
            nsecs: 0,
        };
        let fine = entry(100, 500_000);
        assert!(fine.vouches_for(later, 20, ns(100, 500_000)));
        assert!(!fine.vouches_for(later, 21, ns(100, 500_000)));
        // 0.1 ms later: the same millisecond, another write.
        assert!(!fine.vouches_for(later, 20, ns(100, 600_000)));
        // Written at the entry's time or before it: racily clean.
        assert!(!fine.vouches_for(
            Time {
                secs: 100,
                nsecs: 500_000
            },
            20,
            ns(100, 500_000)
        ));
        assert!(fine.vouches_for(
            Time {
                secs: 100,
                nsecs: 500_001
            },
            20,
            ns(100, 500_000)
        ));
        // No nanosecond recorded: by the second, as git compares.
        let coarse = entry(100, 0);
        assert!(coarse.vouches_for(later, 20, ns(100, 700_000_000)));
        assert!(!coarse.vouches_for(
            Time {
                secs: 100,
                nsecs: 900_000_000
            },
            20,
            ns(100, 0)
        ));
        assert!(!coarse.vouches_for(later, 20, ns(101, 0)));
    }

    /// In a repository made with `--object-format=sha256` the index's ids
    /// and the computed ones are SHA-256 blob ids.
    #[test]
    fn a_sha256_repository_gives_sha256_blob_ids() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs_err::canonicalize(dir.path()).unwrap();
        git(
            &root,
            &["init", "-q", "-b", "main", "--object-format=sha256"],
            "2024-01-01T00:00:00Z",
        );
        write_settled(&root.join("main.rs"), "fn main() {}\n");
        git(&root, &["add", "."], "2024-01-01T00:00:00Z");
        git(
            &root,
            &["commit", "-q", "-m", "one"],
            "2024-01-01T00:00:00Z",
        );
        let index = BlobIndex::read(&root).unwrap();
        let meta = fs_err::metadata(root.join("main.rs")).unwrap();
        let mtime_ns = modified_ns(&meta).unwrap();
        let recorded = index.recorded("main.rs", meta.len(), mtime_ns).unwrap();
        // `git hash-object` of "fn main() {}\n" in a SHA-256 repository.
        assert_eq!(
            recorded.to_string(),
            "da5ceda4be334422a92d010a0718b9347fc5191bda27f4dd280a2ae7c1932462"
        );
        assert_eq!(
            blob_id(Some(&index), b"fn main() {}\n").as_deref(),
            Some(recorded)
        );
    }

    #[test]
    fn no_repository_gives_none() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            read_git_recency(dir.path(), None, None, None).is_none()
                || std::env::var_os("GIT_DIR").is_some()
        );
    }

    #[test]
    fn a_resident_index_keys_git_tables_by_its_own_paths() {
        use aic_stages::content_hash::ContentHash;
        use aic_stages::fit::tokens::TokenCount;
        use aic_stages::language::Language;
        use aic_stages::repo_map::FileEntry;

        let file = |path: &str| {
            let path = RelativePath::new(path).unwrap();
            FileEntry {
                language: Language::detect(&path),
                path,
                size_bytes: 1,
                estimated_tokens: TokenCount(1),
                last_modified_ms: 0,
                last_modified_ns: 0,
                recency_ms: 0,
                content_hash: ContentHash([0; 16]),
                symbol_ids: Vec::new().into(),
                name_ids: Vec::new().into(),
                term_stats: aic_stages::select::terms::TermStats::default(),
                path_terms: OnceLock::new(),
                kind: OnceLock::new(),
            }
        };
        let repo = RepoMap::new(vec![file("a.rs"), file("b/c.rs")]);
        let mut recency = GitRecency::default();
        for (path, time) in [("a.rs", 5), ("b/c.rs", 7), ("gone.rs", 9)] {
            recency
                .last_commit
                .insert(RelativePath::new(path).unwrap(), time);
        }
        recency.share_paths(&repo);
        // The same times under the same names; the RepoMap's files now share
        // their text with the table, the others keep their own.
        assert_eq!(recency.last_commit.len(), 3);
        for file in &repo.files {
            let (key, _) = recency
                .last_commit
                .get_key_value(file.path.as_str())
                .unwrap();
            assert!(std::ptr::eq(key.as_str(), file.path.as_str()));
        }
        assert_eq!(recency.last_commit.get("b/c.rs"), Some(&7));
        assert_eq!(recency.last_commit.get("gone.rs"), Some(&9));
    }
}
