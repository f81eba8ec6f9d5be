//! The RepoMap walk: jwalk reads the project's directories on one thread,
//! with the gitignore rules applied as each is read, and hands the files it
//! finds to the rayon pool, which stats, reads and hashes each one and computes
//! its scan terms (through the cache) while the walk goes on.
//!
//! Ignore rules, highest priority first: `.gitignore` files from the deepest
//! directory up to the root, then `.gitignore` files of the root's ancestors up to
//! the enclosing git repository, then that repository's `.git/info/exclude`, and
//! last the built-in [`DEFAULT_NEGATIVE_PATTERNS`]. A `!pattern` in a
//! `.gitignore` can therefore bring back a path the defaults leave out. Matching
//! is the `ignore` crate's gitignore matcher. Rules are honoured whether or not
//! the root is inside a git repository.
//!
//! Symbolic links are not followed into directories (no loops, no escapes); a link
//! to a file is kept when its target resolves inside the root and is not a file
//! the guard's path rules keep out or judge by name (`docs/notes.txt -> ../.env`
//! is left out). Files are read through [`read_bounded`]: the size cap applies
//! to the bytes read, and only regular files are read. Binary files (a NUL
//! byte in the first 8 KiB) and files larger than `repoMap.maxFileBytes` are left
//! out and counted.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use aic_stages::content_hash::ContentHash;
use aic_stages::guard::ExclusionScanner;
use aic_stages::language::Language;
use aic_stages::relative_path::RelativePath;
use aic_stages::repo_map::{FileEntry, RepoMap, estimate_tokens};
use aic_stages::row_codec::{EntryTerms, ScanTerms};
use aic_stages::select::symbols::symbol_terms_and_name_ids;
use aic_stages::select::terms::TermStats;
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use jwalk::{ClientState, WalkDirGeneric};
use rayon::prelude::*;
use serde::Serialize;

use super::git::{SharedBlobIndex, blob_id};
use super::prior::PriorFiles;
use crate::cache::FileCache;
use crate::cache::key::RowKind;

/// Directories and files never scanned, in gitignore syntax; one list for every
/// project. A trailing `/` means a directory at any depth. `.git` has none: a
/// git worktree's or submodule's `.git` is a file pointing at the repository,
/// not project content.
pub const DEFAULT_NEGATIVE_PATTERNS: &[&str] = &[
    ".git",
    ".hg/",
    ".svn/",
    ".aic/",
    "node_modules/",
    "bower_components/",
    "vendor/",
    "dist/",
    "build/",
    "out/",
    "target/",
    "coverage/",
    "htmlcov/",
    "tmp/",
    "log/",
    "__pycache__/",
    ".venv/",
    "venv/",
    ".tox/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    "*.egg-info/",
    ".eggs/",
    ".next/",
    ".nuxt/",
    ".vite/",
    ".astro/",
    ".output/",
    ".svelte-kit/",
    ".vercel/",
    ".netlify/",
    ".turbo/",
    ".parcel-cache/",
    ".cache/",
    ".yarn/",
    ".pnpm-store/",
    ".gradle/",
    ".m2/",
    ".idea/",
    ".bundle/",
    "Pods/",
    "DerivedData/",
    ".dart_tool/",
    ".terraform/",
    ".stack-work/",
    "*.tsbuildinfo",
    "*.pyc",
    ".DS_Store",
];

/// Bytes inspected for a NUL byte to tell binary files from text.
const BINARY_PROBE_BYTES: usize = 8 * 1024;

/// Counts of files left out of the map, by reason.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedFiles {
    /// A NUL byte in the first 8 KiB.
    pub binary: usize,
    /// Larger than `repoMap.maxFileBytes`.
    pub too_large: usize,
    /// Could not be stat'ed or read (permissions, vanished, link loops).
    pub unreadable: usize,
    /// Symbolic links to directories, to files outside the root, or to files
    /// the guard's path rules keep out (`.env`, `*.key`, …).
    pub symlinks: usize,
    /// Files of other shards (`aic precompute --shard`).
    #[serde(skip_serializing_if = "is_zero")]
    pub other_shard: usize,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// One of N disjoint parts of a repository's files, by content
/// (`aic precompute --shard I/N`): the file whose git blob id starts with the
/// 128-bit number `h` belongs to shard `h mod N` (zero-based here, one-based
/// on the command line). The blob id comes from git's index when the file is
/// as the index recorded it, so a shard does not read the other shards'
/// files (see [`BlobIndex`](super::git::BlobIndex)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Zero-based index, below `count`.
    pub index: u32,
    /// Number of shards, at least 1.
    pub count: u32,
}

impl Shard {
    /// Whether the file with this git blob id is in the shard; a file whose
    /// id could not be computed is in the first.
    pub fn contains(self, blob_id: Option<&gix::oid>) -> bool {
        let Some(start) = blob_id.and_then(|id| id.as_bytes().first_chunk::<16>()) else {
            return self.index == 0;
        };
        u128::from_be_bytes(*start) % u128::from(self.count.max(1)) == u128::from(self.index)
    }
}

impl SkippedFiles {
    /// The counts of a list of files left out, plus `unreadable` entries the
    /// walk could not name.
    pub fn count(left_out: &[(RelativePath, LeftOut)], unreadable: usize) -> Self {
        let mut skipped = Self {
            unreadable,
            ..Self::default()
        };
        for (_, why) in left_out {
            match why {
                LeftOut::Binary => skipped.binary += 1,
                LeftOut::TooLarge => skipped.too_large += 1,
                LeftOut::Unreadable => skipped.unreadable += 1,
                LeftOut::Symlink => skipped.symlinks += 1,
            }
        }
        skipped
    }
}

/// Why the walk left a file it found out of the RepoMap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeftOut {
    /// A NUL byte in the first 8 KiB.
    Binary,
    /// Larger than `repoMap.maxFileBytes`.
    TooLarge,
    /// Could not be stat'ed or read.
    Unreadable,
    /// A symbolic link the walk does not follow.
    Symlink,
}

/// What the scan found.
#[derive(Debug)]
pub struct ScanOutput {
    /// Files in scope, sorted by path.
    pub repo: RepoMap,
    /// Files left out, by reason.
    pub skipped: SkippedFiles,
    /// The files counted in `skipped`, each with why, sorted by path (entries
    /// the walk could not name are counted only).
    pub left_out: Vec<(RelativePath, LeftOut)>,
    /// Directories the walk entered (not ignored), below the root, sorted.
    pub directories: Vec<RelativePath>,
    /// Entries the walk could not read or name (counted as unreadable).
    pub walk_errors: usize,
}

/// What [`scan_path`] found at one path.
#[derive(Debug)]
pub enum PathOutcome {
    /// Nothing is there any more.
    Gone,
    /// A directory (the caller walks it).
    Directory,
    /// The project's ignore rules or the built-in list leave the path out.
    Ignored,
    /// A file in scope.
    Entry(FileEntry),
    /// A file found and left out.
    LeftOut(LeftOut),
}

/// Scan settings.
#[derive(Clone, Copy)]
pub struct ScanOptions<'a> {
    /// Size cap in bytes (`repoMap.maxFileBytes`).
    pub max_file_bytes: u64,
    /// Set by the caller to stop the scan early (a cancelled compile): the walk
    /// and the per-file work stop, and the result is incomplete.
    pub cancel: Option<&'a std::sync::atomic::AtomicBool>,
    /// The guard's path rules, when the guard is on: a symbolic link whose
    /// target is a never-include or content-decided file (`docs/notes.txt ->
    /// ../.env`) is left out, so the target is never read under the link's name.
    pub never_include: Option<&'a ExclusionScanner>,
    /// Called with each text file the walk reads (not with files answered
    /// from the path index, binary files or files left out), from a rayon
    /// worker, in no particular order.
    pub on_read: Option<&'a OnRead<'a>>,
    /// Only the files of this shard are scanned (the others are counted in
    /// [`SkippedFiles::other_shard`]).
    pub shard: Option<Shard>,
    /// Git's index, which gives the blob ids of unchanged files without
    /// reading them: to a shard, to decide whose a file is, and to a new
    /// checkout, to find a file's scan row in the remote tier
    /// ([`FileCache::blob_scan`]). Waited for when the first file needs it.
    pub blob_index: Option<&'a SharedBlobIndex<'a>>,
    /// An earlier walk's files, taken unread (and without a database
    /// look-up) when unchanged ([`PriorFiles`]).
    pub prior: Option<&'a PriorFiles>,
}

/// What [`ScanOptions::on_read`] is given: the file's entry and its bytes.
pub type OnRead<'a> = dyn Fn(&FileEntry, &[u8]) + Sync + 'a;

impl std::fmt::Debug for ScanOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanOptions")
            .field("max_file_bytes", &self.max_file_bytes)
            .field("cancel", &self.cancel)
            .field("on_read", &self.on_read.is_some())
            .finish_non_exhaustive()
    }
}

impl ScanOptions<'_> {
    fn cancelled(&self) -> bool {
        self.cancel
            .is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// Files the walk hands to the rayon pool at a time: few enough that the
/// pool's threads finish together, enough that handing them over costs
/// nothing next to scanning them.
const WALK_BATCH: usize = 32;

/// The ignore rules in force while reading a directory, deepest first.
#[derive(Clone, Debug, Default)]
struct IgnoreStack {
    matchers: Vec<Arc<Gitignore>>,
}

impl IgnoreStack {
    fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        for matcher in self.matchers.iter().rev() {
            match matcher.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }
}

#[derive(Debug, Default)]
struct ScanState;

impl ClientState for ScanState {
    type ReadDirState = IgnoreStack;
    /// A regular file's stat, taken as its directory was read
    /// ([`stat_regular_files`]).
    type DirEntryState = Option<Stat>;
}

/// What the scan uses of a file's stat, links followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stat {
    kind: StatKind,
    size_bytes: u64,
    /// Nanoseconds since the epoch, as [`modified_ns`](super::git::modified_ns)
    /// gives them; 0 when it gives none.
    mtime_ns: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StatKind {
    File,
    Directory,
    /// A FIFO, a socket, a device.
    Other,
}

impl Stat {
    fn of(metadata: &std::fs::Metadata) -> Self {
        let kind = if metadata.is_file() {
            StatKind::File
        } else if metadata.is_dir() {
            StatKind::Directory
        } else {
            StatKind::Other
        };
        Self {
            kind,
            size_bytes: metadata.len(),
            mtime_ns: super::git::modified_ns(metadata).unwrap_or(0),
        }
    }

    /// The stat of `name` in the open `directory`: the kernel looks up one
    /// name, not every component of the file's path. `None` when it fails or
    /// finds a symbolic link (the scan follows links by path).
    #[cfg(unix)]
    #[allow(
        clippy::useless_conversion,
        reason = "`time_t` and `c_long` are narrower than `i64` on 32-bit targets"
    )]
    fn at(directory: std::os::fd::BorrowedFd<'_>, name: &std::ffi::OsStr) -> Option<Self> {
        use nix::libc;
        let stat =
            nix::sys::stat::fstatat(directory, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
                .ok()?;
        let kind = match stat.st_mode & libc::S_IFMT {
            libc::S_IFREG => StatKind::File,
            libc::S_IFDIR => StatKind::Directory,
            libc::S_IFLNK => return None,
            _ => StatKind::Other,
        };
        let mtime_ns =
            super::git::modified_ns_of(i64::from(stat.st_mtime), i64::from(stat.st_mtime_nsec));
        Some(Self {
            kind,
            // As `Metadata::len` reads it.
            size_bytes: stat.st_size as u64,
            mtime_ns: mtime_ns.unwrap_or(0),
        })
    }

    fn is_file(self) -> bool {
        self.kind == StatKind::File
    }

    fn is_dir(self) -> bool {
        self.kind == StatKind::Directory
    }

    fn len(self) -> u64 {
        self.size_bytes
    }
}

/// Regular files a directory must hold for the walk to open it and stat them
/// relative to it. Opening and closing a directory took about 2.3 µs on a
/// 2-core VM, and a stat relative to it saved about 0.7 µs on a file ten
/// directories deep: the open pays from four files on. With every directory
/// opened, a tree of two-file test-fixture directories (babel) took more CPU
/// to walk than with every file stat'ed by path.
#[cfg(unix)]
const MIN_FILES_TO_OPEN_DIRECTORY: usize = 4;

/// Stats the regular files among a directory's `children` relative to the
/// directory, opened once, when it holds at least
/// [`MIN_FILES_TO_OPEN_DIRECTORY`] of them, and keeps each stat in the
/// child's state for the scan. Stats by full path took about a tenth of a
/// compile's CPU on a 66k-file tree, more than half of it the kernel looking
/// up each of the path's directories again. A file of a smaller directory,
/// or one whose directory or stat fails, is left to the scan's stat by path.
#[cfg(unix)]
fn stat_regular_files(
    directory: &Path,
    children: &mut [jwalk::Result<jwalk::DirEntry<ScanState>>],
) {
    use nix::fcntl::OFlag;
    use std::os::fd::AsFd as _;
    // Only a handle to look names up in: no read access is checked.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let access = OFlag::O_PATH;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let access = OFlag::O_RDONLY;
    let is_regular = |child: &jwalk::Result<jwalk::DirEntry<ScanState>>| {
        child.as_ref().is_ok_and(|entry| entry.file_type.is_file())
    };
    if children.iter().filter(|child| is_regular(child)).count() < MIN_FILES_TO_OPEN_DIRECTORY {
        return;
    }
    let Ok(handle) = nix::fcntl::open(
        directory,
        access | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW,
        nix::sys::stat::Mode::empty(),
    ) else {
        return;
    };
    for entry in children.iter_mut().flatten() {
        if entry.file_type.is_file() {
            entry.client_state = Stat::at(handle.as_fd(), &entry.file_name);
        }
    }
}

/// A path found by the walk, before it is read.
struct Found {
    path: RelativePath,
    is_symlink: bool,
    /// Where the walk's prior ([`ScanOptions::prior`]) has this path.
    prior: Option<u32>,
}

impl Found {
    /// Its path below `root`, made when the file is opened rather than kept
    /// for every file of the walk (a 1M-file walk would hold ~85 MiB of
    /// them at its peak).
    fn absolute(&self, root: &Path) -> PathBuf {
        root.join(self.path.as_str())
    }
}

enum FileOutcome {
    Entry(FileEntry),
    Binary,
    TooLarge,
    Unreadable,
    Symlink,
    /// Outside the shard a sharded precompute covers.
    OtherShard,
    /// Waiting for the remote tier.
    Deferred(Deferred),
}

/// jwalk over `root`, serial (see [`walk`]), applying the `.gitignore`
/// files and the base ignore rules as each directory is read.
fn directory_walk(root: &Path) -> WalkDirGeneric<ScanState> {
    let base = base_ignore_stack(root);
    WalkDirGeneric::<ScanState>::new(root)
        .skip_hidden(false)
        .follow_links(false)
        // Each directory's names sorted: the walk then meets paths in about
        // the order a prior and the RepoMap keep them, so finding each one
        // in the prior takes a few comparisons and the final sort finds
        // long runs already in order.
        .sort(true)
        // One thread reads the directories while the rayon pool scans the
        // files it finds: jwalk's parallel walk hands its results over in
        // order, and its consumer spins (`sched_yield`) while it waits,
        // which took a tenth of a warm babel compile's CPU on 2 cores.
        .parallelism(jwalk::Parallelism::Serial)
        .root_read_dir_state(base)
        .process_read_dir(|depth, directory, stack, children| {
            // jwalk first "reads" the root's parent, whose one child is the
            // root itself: the root is never ignored, whatever its name
            // (a project in a directory called `build` or `tmp`).
            if depth.is_none() {
                return;
            }
            let has_gitignore = children.iter().any(|child| {
                child
                    .as_ref()
                    .is_ok_and(|e| e.file_name == ".gitignore" && !e.file_type.is_dir())
            });
            if has_gitignore {
                let mut builder = GitignoreBuilder::new(directory);
                builder.add(directory.join(".gitignore"));
                if let Ok(matcher) = builder.build() {
                    stack.matchers.push(Arc::new(matcher));
                }
            }
            children.retain(|child| match child {
                Ok(entry) => {
                    let is_dir = entry.file_type.is_dir();
                    !stack.is_ignored(&entry.path(), is_dir)
                }
                Err(_) => true,
            });
            #[cfg(unix)]
            stat_regular_files(directory, children);
        })
}

/// Reads the directories of `walk` on this thread and sends the files found,
/// each with its stat when the walk took one, to `sender`, [`WALK_BATCH`] at
/// a time; returns the directories and the number of entries that could not
/// be read or named.
fn read_directories(
    walk: WalkDirGeneric<ScanState>,
    root: &Path,
    options: ScanOptions<'_>,
    sender: &crossbeam_channel::Sender<Vec<(Found, Option<Stat>)>>,
) -> (Vec<RelativePath>, usize) {
    let mut directories = Vec::new();
    let mut walk_errors = 0usize;
    let mut batch = Vec::with_capacity(WALK_BATCH);
    // Where the last file was in the prior: the next one is close by.
    let mut near = 0;
    for entry in walk {
        if options.cancelled() {
            break;
        }
        let Ok(entry) = entry else {
            walk_errors += 1;
            continue;
        };
        if entry.depth == 0 {
            continue;
        }
        let absolute = entry.path();
        let Ok(relative) = absolute.strip_prefix(root) else {
            continue;
        };
        // A path the prior has is named with the prior's copy of it.
        let Some(relative) = relative.to_str() else {
            // Non-UTF-8 names cannot be shown in a prompt.
            walk_errors += 1;
            continue;
        };
        // A prior holds files only.
        let prior = options
            .prior
            .filter(|_| !entry.file_type.is_dir())
            .and_then(|prior| {
                let found = prior.find_near(relative, near);
                near = found.unwrap_or_else(|place| place);
                Some((prior, found.ok()?))
            });
        let Some(path) = prior
            .map(|(prior, index)| prior.path_at(index))
            .or_else(|| RelativePath::new(relative))
        else {
            walk_errors += 1;
            continue;
        };
        if entry.file_type.is_dir() {
            directories.push(path);
            continue;
        }
        // The stat travels beside the path, not in it: the scan keeps every
        // file's `Found` to the end of the walk, and needs its stat only once.
        let found = Found {
            path,
            is_symlink: entry.file_type.is_symlink(),
            prior: prior.and_then(|(_, index)| u32::try_from(index).ok()),
        };
        batch.push((found, entry.client_state));
        if batch.len() == WALK_BATCH
            && sender
                .send(std::mem::replace(
                    &mut batch,
                    Vec::with_capacity(WALK_BATCH),
                ))
                .is_err()
        {
            break;
        }
    }
    if !batch.is_empty() {
        let _ = sender.send(batch);
    }
    (directories, walk_errors)
}

/// Walks `root` (an existing directory, already canonicalised).
pub fn walk(root: &Path, options: ScanOptions<'_>, cache: Option<&FileCache>) -> ScanOutput {
    let walk_started = std::time::Instant::now();
    let walk = directory_walk(root);
    let (sender, receiver) = crossbeam_channel::unbounded::<Vec<(Found, Option<Stat>)>>();
    let (mut directories, walk_errors, mut scanned) = std::thread::scope(|scope| {
        let scan = scope.spawn(|| {
            let mut scanned = receiver
                .into_iter()
                .enumerate()
                .par_bridge()
                .map(|(sent, batch)| {
                    let scanned = batch
                        .into_iter()
                        .map(|(file, stat)| {
                            let outcome = if options.cancelled() {
                                FileOutcome::Unreadable
                            } else {
                                scan_file(root, &file, stat, options, cache)
                            };
                            (file, outcome)
                        })
                        .collect();
                    (sent, scanned)
                })
                .collect::<Vec<(usize, Vec<(Found, FileOutcome)>)>>();
            // Back in the walk's order, which is about the path order: the
            // RepoMap's sort then finds long runs already sorted.
            scanned.sort_unstable_by_key(|&(sent, _)| sent);
            scanned
                .into_iter()
                .map(|(_, batch)| batch)
                .collect::<Vec<_>>()
        });
        let (directories, walk_errors) = read_directories(walk, root, options, &sender);
        drop(sender);
        tracing::debug!("Walked the directories in {:?}", walk_started.elapsed());
        let scanned = scan
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (directories, walk_errors, scanned)
    });
    // The walk's order is not quite the path order ("a/b/c" before
    // "a/b-c"): the RepoMap and the lists below are sorted by path.
    let total: usize = scanned.iter().map(Vec::len).sum();
    tracing::debug!(
        "Walked and scanned {total} files in {:?}",
        walk_started.elapsed()
    );
    resolve_deferred(root, &mut scanned, options, cache);
    let mut entries = Vec::with_capacity(total);
    let mut left_out = Vec::new();
    let mut other_shard = 0;
    for (file, outcome) in scanned.into_iter().flatten() {
        match outcome {
            FileOutcome::Entry(entry) => entries.push(entry),
            FileOutcome::OtherShard => other_shard += 1,
            outcome => left_out.push((file.path, left_out_of(&outcome))),
        }
    }
    left_out.sort_by(|a, b| a.0.cmp(&b.0));
    directories.sort();
    ScanOutput {
        repo: RepoMap::new(entries),
        skipped: SkippedFiles {
            other_shard,
            ..SkippedFiles::count(&left_out, walk_errors)
        },
        left_out,
        directories,
        walk_errors,
    }
}

/// Scans one path below `root` as the walk would have: `Ignored` when the
/// ignore rules of its directories (read now) or the built-in list leave it
/// out, `Directory` for a directory, otherwise the file's outcome (through the
/// cache, like [`walk`]). For a resident snapshot that follows edits.
pub fn scan_path(
    root: &Path,
    path: &RelativePath,
    options: ScanOptions<'_>,
    cache: Option<&FileCache>,
) -> PathOutcome {
    let absolute = root.join(path.as_str());
    let Ok(metadata) = fs_err::symlink_metadata(&absolute) else {
        return PathOutcome::Gone;
    };
    if metadata.is_dir() {
        return PathOutcome::Directory;
    }
    if is_ignored_path(root, path) {
        return PathOutcome::Ignored;
    }
    let found = Found {
        path: path.clone(),
        is_symlink: metadata.file_type().is_symlink(),
        prior: options
            .prior
            .and_then(|prior| prior.find(path.as_str()))
            .and_then(|index| u32::try_from(index).ok()),
    };
    let outcome = scan_file(root, &found, None, options, cache);
    let mut scanned = [vec![(found, outcome)]];
    resolve_deferred(root, &mut scanned, options, cache);
    match scanned[0].pop() {
        Some((_, FileOutcome::Entry(entry))) => PathOutcome::Entry(entry),
        Some((_, FileOutcome::OtherShard)) => PathOutcome::Ignored,
        Some((_, outcome)) => PathOutcome::LeftOut(left_out_of(&outcome)),
        None => PathOutcome::Gone,
    }
}

/// Why a file the walk did not keep was left out; a deferred file still
/// unresolved counts as unreadable.
fn left_out_of(outcome: &FileOutcome) -> LeftOut {
    match outcome {
        FileOutcome::Binary => LeftOut::Binary,
        FileOutcome::TooLarge => LeftOut::TooLarge,
        FileOutcome::Symlink => LeftOut::Symlink,
        FileOutcome::Entry(_)
        | FileOutcome::OtherShard
        | FileOutcome::Unreadable
        | FileOutcome::Deferred(_) => LeftOut::Unreadable,
    }
}

/// Whether the walk would leave `path` out by an ignore rule: the rules in
/// force in each of its directories, from the root down, as the walk stacks
/// them.
fn is_ignored_path(root: &Path, path: &RelativePath) -> bool {
    let mut stack = base_ignore_stack(root);
    let mut directory = root.to_path_buf();
    let names: Vec<&str> = path.as_str().split('/').collect();
    for (index, name) in names.iter().enumerate() {
        let gitignore = directory.join(".gitignore");
        if gitignore.is_file() {
            let mut builder = GitignoreBuilder::new(&directory);
            builder.add(gitignore);
            if let Ok(matcher) = builder.build() {
                stack.matchers.push(Arc::new(matcher));
            }
        }
        let child = directory.join(name);
        if stack.is_ignored(&child, index + 1 < names.len()) {
            return true;
        }
        directory = child;
    }
    false
}

/// Scans one file the walk found; `walk_stat` is its stat when the walk
/// took one as it read the file's directory, else the file is stat'ed by
/// path here (links always are, to follow them).
fn scan_file(
    root: &Path,
    file: &Found,
    walk_stat: Option<Stat>,
    options: ScanOptions<'_>,
    cache: Option<&FileCache>,
) -> FileOutcome {
    let absolute = file.absolute(root);
    if file.is_symlink {
        match fs_err::canonicalize(&absolute) {
            Ok(target) if target.starts_with(root) => {
                if links_to_sensitive(root, &target, options.never_include) {
                    return FileOutcome::Symlink;
                }
            }
            Ok(_) => return FileOutcome::Symlink,
            Err(_) => return FileOutcome::Unreadable,
        }
    }
    let metadata = match walk_stat {
        Some(stat) if !file.is_symlink => stat,
        _ => match fs_err::metadata(&absolute) {
            Ok(metadata) => Stat::of(&metadata),
            Err(_) => return FileOutcome::Unreadable,
        },
    };
    if metadata.is_dir() {
        return FileOutcome::Symlink;
    }
    if !metadata.is_file() {
        return FileOutcome::Unreadable;
    }
    if metadata.len() > options.max_file_bytes {
        return FileOutcome::TooLarge;
    }
    let mtime_ns = metadata.mtime_ns;
    let last_modified_ms = mtime_ns.div_euclid(1_000_000);
    let stat = FileStat {
        language: Language::detect(&file.path),
        last_modified_ms,
        last_modified_ns: mtime_ns,
    };
    // A file's blob id comes from git's index when the file is as the index
    // recorded it: a shard skips the other shards' files unread.
    let blob_index = options.blob_index.and_then(SharedBlobIndex::get);
    let recorded =
        blob_index.and_then(|index| index.recorded(file.path.as_str(), metadata.len(), mtime_ns));
    if let Some(shard) = options.shard
        && recorded.is_some()
        && !shard.contains(recorded)
    {
        return FileOutcome::OtherShard;
    }
    // Warmest path: a file an earlier walk saw, unchanged since.
    if options.shard.is_none()
        && let Some((hash, facts)) = options.prior.zip(file.prior).and_then(|(prior, index)| {
            prior.unchanged_at(index as usize, metadata.len(), mtime_ns, stat.language)
        })
    {
        if let Some(cache) = cache {
            cache.count_prior_hit();
        }
        return stat.entry(file, metadata.len(), hash, facts);
    }
    // Warm path: an unchanged file (same size and mtime as when it was hashed)
    // whose scan facts are cached is not read at all (in a shard, only when
    // the index said the file is the shard's).
    if let Some(cache) = cache
        && (options.shard.is_none() || recorded.is_some())
        && let Some((hash, binary)) = cache.indexed_hash(&file.path, metadata.len(), mtime_ns)
    {
        if binary {
            return FileOutcome::Binary;
        }
        if let Some(facts) = cache.scan_terms(hash, &file.path, stat.language) {
            return stat.entry(file, metadata.len(), hash, facts);
        }
        if cache.remote().is_some() {
            return FileOutcome::Deferred(Deferred {
                stat,
                size_bytes: metadata.len(),
                hash,
                bytes: None,
            });
        }
    }
    // A new checkout: the remote tier's row under the blob id gives the
    // content hash and scan terms (unless the bytes are wanted anyway).
    if let (Some(cache), Some(blob)) = (cache, recorded)
        && options.on_read.is_none()
        && let Some((hash, terms)) =
            cache.blob_scan(blob, &file.path, stat.language, metadata.len(), mtime_ns)
    {
        return stat.entry(file, metadata.len(), hash, terms);
    }
    let (bytes, read_mtime_ns) = match read_seen_regular(&absolute, options.max_file_bytes) {
        Ok((Bounded::Bytes(bytes), mtime_ns)) => (bytes, mtime_ns),
        Ok((Bounded::TooLarge, _)) => return FileOutcome::TooLarge,
        Ok((Bounded::NotRegular, _)) | Err(_) => return FileOutcome::Unreadable,
    };
    // The walk stats a directory's files as it reads the directory, which
    // may be seconds before this read: the bytes are recorded with the time
    // of the file as opened, so an edit in between is never filed under the
    // earlier time.
    let mtime_ns = read_mtime_ns.unwrap_or(mtime_ns);
    let stat = FileStat {
        last_modified_ms: mtime_ns.div_euclid(1_000_000),
        last_modified_ns: mtime_ns,
        ..stat
    };
    let size_bytes = bytes.len() as u64;
    let content_hash = ContentHash::of(&bytes);
    let probe = &bytes[..bytes.len().min(BINARY_PROBE_BYTES)];
    let binary = memchr::memchr(0, probe).is_some();
    if let Some(cache) = cache {
        cache.index_path(&file.path, size_bytes, mtime_ns, content_hash, binary);
    }
    if binary {
        return FileOutcome::Binary;
    }
    if let Some(shard) = options.shard
        && recorded.is_none()
        && !shard.contains(blob_id(blob_index, &bytes).as_deref())
    {
        return FileOutcome::OtherShard;
    }
    // Touched but unchanged content (a checkout, a copy) still hits by hash.
    if let Some(facts) =
        cache.and_then(|cache| cache.scan_terms(content_hash, &file.path, stat.language))
    {
        return stat.after_read(file, options, content_hash, facts, &bytes);
    }
    if cache.is_some_and(|cache| cache.remote().is_some()) {
        // The remote tier is asked for every such file in one batch after
        // this pass; the bytes are kept for a miss, within a bound.
        let held = HELD_BYTES.fetch_add(bytes.len(), std::sync::atomic::Ordering::Relaxed);
        let keep = held + bytes.len() <= MAX_DEFERRED_BYTES;
        if !keep {
            HELD_BYTES.fetch_sub(bytes.len(), std::sync::atomic::Ordering::Relaxed);
        }
        return FileOutcome::Deferred(Deferred {
            stat,
            size_bytes,
            hash: content_hash,
            bytes: keep.then_some(bytes),
        });
    }
    compute_terms(file, options, cache, stat, content_hash, &bytes)
}

/// Bytes of deferred files held across all walks of the process; past
/// [`MAX_DEFERRED_BYTES`] a deferred file is read again on a remote miss.
static HELD_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The most bytes of deferred files held in memory (64 MiB).
const MAX_DEFERRED_BYTES: usize = 64 << 20;

/// What the walk knows of a file besides its bytes.
#[derive(Clone, Copy)]
struct FileStat {
    language: Language,
    last_modified_ms: i64,
    last_modified_ns: i64,
}

impl FileStat {
    fn entry(
        self,
        file: &Found,
        size_bytes: u64,
        content_hash: ContentHash,
        facts: EntryTerms,
    ) -> FileOutcome {
        FileOutcome::Entry(FileEntry {
            language: self.language,
            path: file.path.clone(),
            size_bytes,
            estimated_tokens: estimate_tokens(size_bytes),
            last_modified_ms: self.last_modified_ms,
            last_modified_ns: self.last_modified_ns,
            recency_ms: self.last_modified_ms,
            content_hash,
            symbol_ids: facts.symbol_ids,
            name_ids: facts.name_ids,
            term_stats: facts.term_stats,
            path_terms: std::sync::OnceLock::new(),
            kind: std::sync::OnceLock::new(),
        })
    }

    /// The entry of a file whose bytes were read, handed to `on_read`.
    fn after_read(
        self,
        file: &Found,
        options: ScanOptions<'_>,
        content_hash: ContentHash,
        facts: EntryTerms,
        bytes: &[u8],
    ) -> FileOutcome {
        let outcome = self.entry(file, bytes.len() as u64, content_hash, facts);
        if let (Some(on_read), FileOutcome::Entry(entry)) = (options.on_read, &outcome) {
            on_read(entry, bytes);
        }
        outcome
    }
}

/// A file whose scan terms neither local tier holds, waiting for the remote
/// tier's batch.
struct Deferred {
    stat: FileStat,
    size_bytes: u64,
    hash: ContentHash,
    /// Its bytes, when they were read and held.
    bytes: Option<Vec<u8>>,
}

/// Computes and caches the scan terms of a file whose bytes are at hand.
fn compute_terms(
    file: &Found,
    options: ScanOptions<'_>,
    cache: Option<&FileCache>,
    stat: FileStat,
    content_hash: ContentHash,
    bytes: &[u8],
) -> FileOutcome {
    let facts = scan_terms(&file.path, stat.language, bytes);
    if let Some(cache) = cache {
        cache.put_scan_terms(content_hash, &file.path, stat.language, &facts);
    }
    stat.after_read(file, options, content_hash, EntryTerms::from(&facts), bytes)
}

/// Fetches the scan rows of the deferred files from the remote tier in
/// batches, then finishes each: from the fetched row, else computed from its
/// bytes (read again when they were not held or its path index entry
/// answered).
fn resolve_deferred(
    root: &Path,
    batches: &mut [Vec<(Found, FileOutcome)>],
    options: ScanOptions<'_>,
    cache: Option<&FileCache>,
) {
    let Some(cache) = cache else {
        return;
    };
    let keys: Vec<_> = batches
        .iter()
        .flatten()
        .filter_map(|(file, outcome)| match outcome {
            FileOutcome::Deferred(deferred) => Some(cache.row_key(
                deferred.hash,
                RowKind::Scan,
                &file.path,
                deferred.stat.language,
            )),
            _ => None,
        })
        .collect();
    if keys.is_empty() {
        return;
    }
    let started = std::time::Instant::now();
    cache.prefetch(keys);
    tracing::debug!("Fetched remote scan rows in {:?}", started.elapsed());
    batches.par_iter_mut().for_each(|batch| {
        for (file, outcome) in batch {
            *outcome = match std::mem::replace(outcome, FileOutcome::Unreadable) {
                FileOutcome::Deferred(deferred) => {
                    resolve_one(root, file, deferred, options, cache)
                }
                resolved => resolved,
            };
        }
    });
}

/// Finishes one deferred file: from its fetched scan row, else computed from
/// its bytes.
fn resolve_one(
    root: &Path,
    file: &Found,
    deferred: Deferred,
    options: ScanOptions<'_>,
    cache: &FileCache,
) -> FileOutcome {
    let Deferred {
        stat,
        size_bytes,
        hash,
        bytes,
    } = deferred;
    if let Some(bytes) = &bytes {
        HELD_BYTES.fetch_sub(bytes.len(), std::sync::atomic::Ordering::Relaxed);
    }
    if let Some(facts) = cache.scan_terms(hash, &file.path, stat.language) {
        return match &bytes {
            Some(bytes) => stat.after_read(file, options, hash, facts, bytes),
            None => stat.entry(file, size_bytes, hash, facts),
        };
    }
    let bytes = match bytes {
        Some(bytes) => bytes,
        None => match read_bounded(&file.absolute(root), options.max_file_bytes) {
            Ok(Bounded::Bytes(bytes)) => bytes,
            Ok(Bounded::TooLarge) => return FileOutcome::TooLarge,
            Ok(Bounded::NotRegular) | Err(_) => return FileOutcome::Unreadable,
        },
    };
    // A file changed since its path index entry is hashed again.
    let hash = ContentHash::of(&bytes);
    compute_terms(file, options, Some(cache), stat, hash, &bytes)
}

/// Whether a link's canonical `target` (inside `root`) is a file the guard's
/// path rules keep out or leave to content rules that read its name.
fn links_to_sensitive(root: &Path, target: &Path, rules: Option<&ExclusionScanner>) -> bool {
    let Some(rules) = rules else {
        return false;
    };
    let relative = target
        .strip_prefix(root)
        .ok()
        .and_then(|path| path.to_str())
        .map(|path| path.replace('\\', "/"))
        .and_then(|path| RelativePath::new(&path));
    // A target that has no repository-relative name cannot be judged: left out.
    relative.is_none_or(|path| rules.is_sensitive(&path, Language::detect(&path)))
}

/// What [`read_bounded`] read.
#[derive(Debug, PartialEq, Eq)]
pub enum Bounded {
    /// The whole file, at most the cap.
    Bytes(Vec<u8>),
    /// The file holds more than the cap; only the cap and one byte were read.
    TooLarge,
    /// Not a regular file (a directory, a FIFO, a device, a socket): not read.
    NotRegular,
}

/// Reads a regular file of at most `cap` bytes. The cap applies to the bytes
/// read, not to the size the file system reports (procfs and sysfs files
/// report 0 and produce any amount): at most `cap + 1` bytes are ever held.
/// A path that is not a regular file once links are followed is not opened,
/// so a FIFO never blocks the read and a device is never opened.
///
/// # Errors
///
/// The I/O error of the stat, the open or the read, naming the path.
pub fn read_bounded(path: &Path, cap: u64) -> std::io::Result<Bounded> {
    if !fs_err::metadata(path)?.is_file() {
        return Ok(Bounded::NotRegular);
    }
    read_seen_regular(path, cap).map(|(bounded, _)| bounded)
}

/// [`read_bounded`] for a path the caller has just stat'ed and found a
/// regular file (the walk, which reads every file of the tree): no second
/// stat by path. Should the path have become something else since, it is
/// opened non-blocking and judged by the opened file's metadata, so a FIFO
/// still neither blocks nor is read. Also returns the opened file's
/// modification time (ns since the epoch; `None` before 1970).
///
/// # Errors
///
/// The I/O error of the open or the read, naming the path.
fn read_seen_regular(path: &Path, cap: u64) -> std::io::Result<(Bounded, Option<i64>)> {
    use std::io::Read as _;
    let file = open_without_blocking(path)?;
    let metadata = file.metadata()?;
    let mtime_ns = super::git::modified_ns(&metadata);
    if !metadata.is_file() {
        return Ok((Bounded::NotRegular, mtime_ns));
    }
    let expected = metadata.len().min(cap);
    let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Ok((Bounded::TooLarge, mtime_ns));
    }
    Ok((Bounded::Bytes(bytes), mtime_ns))
}

/// Opens `path` for reading; on Unix with `O_NONBLOCK`, so that opening a
/// FIFO (which would wait for a writer) returns at once. Reads of a regular
/// file are never affected by the flag.
fn open_without_blocking(path: &Path) -> std::io::Result<fs_err::File> {
    let mut options = fs_err::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use fs_err::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits());
    }
    options.open(path)
}

/// What the scan computes from a file's bytes: the identifier terms of its
/// defined names (code only) and its BM25 term statistics.
fn scan_terms(path: &RelativePath, language: Language, bytes: &[u8]) -> ScanTerms {
    let text = String::from_utf8_lossy(bytes);
    let (symbol_terms, name_ids) = if language.is_code() {
        symbol_terms_and_name_ids(&text)
    } else {
        (Vec::new(), Vec::new())
    };
    ScanTerms {
        symbol_terms: symbol_terms.into(),
        name_ids: name_ids.into(),
        term_stats: TermStats::of(path.as_str(), &text),
    }
}

/// Why a file that exists under `root` is not in the RepoMap, when a
/// built-in rule or a setting left it out, said with what brings it back:
/// a built-in ignore pattern (a `!path` line in a `.gitignore` overrides it),
/// or a size over `repoMap.maxFileBytes`. `None` when the file does not
/// exist, is not a regular file, or was left out for another reason (the
/// project's own ignore files, the guard's path rules).
pub fn builtin_exclusion(root: &Path, relative: &str, max_file_bytes: u64) -> Option<String> {
    let path = root.join(relative);
    let metadata = fs_err::metadata(&path).ok()?;
    if !metadata.is_file() {
        return None;
    }
    let mut defaults = GitignoreBuilder::new(root);
    for pattern in DEFAULT_NEGATIVE_PATTERNS {
        let _ = defaults.add_line(None, pattern);
    }
    let matcher = defaults.build().ok()?;
    if let Match::Ignore(glob) = matcher.matched_path_or_any_parents(&path, false) {
        // A file under an ignored directory comes back only with the
        // directory (the walker never enters an ignored one).
        let by_parent = !matches!(matcher.matched(&path, false), Match::Ignore(_));
        let back = if glob.is_only_dir() || by_parent {
            glob.original().to_owned()
        } else {
            relative.to_owned()
        };
        return Some(format!(
            "`{relative}` exists but the built-in ignore pattern `{}` leaves it out; a line `!{back}` in the project's `.gitignore` brings it back",
            glob.original()
        ));
    }
    if metadata.len() > max_file_bytes {
        return Some(format!(
            "`{relative}` exists but is larger ({} bytes) than `repoMap.maxFileBytes` ({max_file_bytes}); raise it in aic.config.json to include the file",
            metadata.len()
        ));
    }
    None
}

fn base_ignore_stack(root: &Path) -> IgnoreStack {
    let mut stack = IgnoreStack::default();
    let mut defaults = GitignoreBuilder::new(root);
    for pattern in DEFAULT_NEGATIVE_PATTERNS {
        let _ = defaults.add_line(None, pattern);
    }
    if let Ok(matcher) = defaults.build() {
        stack.matchers.push(Arc::new(matcher));
    }

    let mut ancestors = Vec::new();
    let mut git_dir = None;
    for directory in root.ancestors() {
        if directory != root {
            ancestors.push(directory.to_path_buf());
        }
        if directory.join(".git").exists() {
            git_dir = Some(directory.to_path_buf());
            break;
        }
    }
    if let Some(repository) = git_dir {
        // A worktree's or submodule's `.git` is a file naming its git
        // directory; git reads `info/exclude` from the common directory
        // that one names (a worktree's is the main repository's `.git`).
        let exclude = super::git::git_dir(&repository)
            .map_or_else(
                || repository.join(".git"),
                |dir| super::git::common_dir(&dir),
            )
            .join("info")
            .join("exclude");
        if exclude.is_file() {
            let mut builder = GitignoreBuilder::new(&repository);
            builder.add(exclude);
            if let Ok(matcher) = builder.build() {
                stack.matchers.push(Arc::new(matcher));
            }
        }
    } else {
        // Outside a repository only the root's own rules apply.
        ancestors.clear();
    }
    for directory in ancestors.iter().rev() {
        let gitignore = directory.join(".gitignore");
        if gitignore.is_file() {
            let mut builder = GitignoreBuilder::new(directory);
            builder.add(gitignore);
            if let Ok(matcher) = builder.build() {
                stack.matchers.push(Arc::new(matcher));
            }
        }
    }
    stack
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, content: &[u8]) {
        let full = root.join(path);
        fs_err::create_dir_all(full.parent().unwrap()).unwrap();
        fs_err::write(full, content).unwrap();
    }

    fn paths(output: &ScanOutput) -> Vec<&str> {
        output.repo.files.iter().map(|f| f.path.as_str()).collect()
    }

    fn scan_dir(root: &Path) -> ScanOutput {
        let root = fs_err::canonicalize(root).unwrap();
        let rules = ExclusionScanner::new(&[] as &[String]).unwrap();
        walk(
            &root,
            ScanOptions {
                max_file_bytes: 1024,
                cancel: None,
                never_include: Some(&rules),
                on_read: None,
                shard: None,
                blob_index: None,
                prior: None,
            },
            None,
        )
    }

    #[test]
    fn honours_nested_gitignore_defaults_and_negation() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".gitignore", b"*.log\n!keep.log\n!log/\n");
        write(root, "a.log", b"x");
        write(root, "keep.log", b"x");
        write(root, "src/main.rs", b"fn main() {}");
        write(root, "src/.gitignore", b"gen/\n");
        write(root, "src/gen/out.rs", b"x");
        write(root, "node_modules/pkg/index.js", b"x");
        write(root, "log/app.rs", b"x");
        write(root, "tmp/scratch.txt", b"x");
        write(root, "nested/dist/bundle.js", b"x");
        let output = scan_dir(root);
        assert_eq!(
            paths(&output),
            [
                ".gitignore",
                "keep.log",
                "log/app.rs",
                "src/.gitignore",
                "src/main.rs"
            ]
        );
    }

    #[test]
    fn a_root_named_like_an_ignored_directory_is_scanned() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["build", "tmp", "target"] {
            let root = dir.path().join(name);
            write(&root, "src/lib.rs", b"fn parse() {}");
            write(&root, "build/out.rs", b"x");
            assert_eq!(paths(&scan_dir(&root)), ["src/lib.rs"], "root `{name}`");
        }
    }

    #[test]
    fn git_info_exclude_applies() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".git/info/exclude", b"secret-notes.md\n");
        write(root, ".git/HEAD", b"ref: refs/heads/main\n");
        write(root, "secret-notes.md", b"x");
        write(root, "README.md", b"x");
        assert_eq!(paths(&scan_dir(root)), ["README.md"]);
    }

    #[test]
    fn a_worktrees_git_file_is_not_scanned() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".git", b"gitdir: /elsewhere/.git/worktrees/feature\n");
        write(
            root,
            "vendored/lib/.git",
            b"gitdir: ../../.git/modules/lib\n",
        );
        write(root, "src/main.rs", b"fn main() {}");
        assert_eq!(paths(&scan_dir(root)), ["src/main.rs"]);
    }

    #[test]
    fn a_worktrees_exclude_file_is_read_from_the_main_repository() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("main");
        write(&main, ".git/info/exclude", b"secret-notes.md\n");
        write(&main, ".git/worktrees/feature/commondir", b"../..\n");
        let root = dir.path().join("feature");
        write(
            &root,
            ".git",
            format!(
                "gitdir: {}\n",
                main.join(".git/worktrees/feature").display()
            )
            .as_bytes(),
        );
        write(&root, "secret-notes.md", b"x");
        write(&root, "README.md", b"x");
        assert_eq!(paths(&scan_dir(&root)), ["README.md"]);
    }

    #[test]
    fn binary_and_large_files_are_counted_not_mapped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "image.png", b"\x89PNG\x00\x00");
        write(root, "big.txt", &[b'a'; 2048]);
        write(root, "latin1.txt", b"caf\xe9\n");
        let output = scan_dir(root);
        assert_eq!(paths(&output), ["latin1.txt"]);
        assert_eq!(output.skipped.binary, 1);
        assert_eq!(output.skipped.too_large, 1);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_never_leave_the_root_and_never_loop() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "private.txt", b"x");
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "src/lib.rs", b"x");
        symlink(outside.path().join("private.txt"), root.join("escape.txt")).unwrap();
        symlink(root.join("src"), root.join("src/loop")).unwrap();
        symlink(root.join("src/lib.rs"), root.join("alias.rs")).unwrap();
        symlink(root.join("self-a"), root.join("self-b")).unwrap();
        symlink(root.join("self-b"), root.join("self-a")).unwrap();
        let output = scan_dir(root);
        assert_eq!(paths(&output), ["alias.rs", "src/lib.rs"]);
        assert_eq!(output.skipped.symlinks, 2);
        assert_eq!(output.skipped.unreadable, 2);
    }

    /// The path rules apply to a link's target as well as to the link: a link
    /// to `.env` or a key is not read under its innocent name.
    #[cfg(unix)]
    #[test]
    fn links_to_files_the_guard_keeps_out_are_left_out() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".env", b"API_TOKEN=abc");
        write(root, "deploy/id_ed25519", b"key");
        write(root, "docs/readme.md", b"# docs");
        symlink(root.join(".env"), root.join("docs/notes.txt")).unwrap();
        symlink(root.join("deploy/id_ed25519"), root.join("docs/key.txt")).unwrap();
        symlink(root.join("docs/readme.md"), root.join("README.md")).unwrap();
        let output = scan_dir(root);
        assert_eq!(
            paths(&output),
            [".env", "README.md", "deploy/id_ed25519", "docs/readme.md"]
        );
        assert_eq!(output.skipped.symlinks, 2);
    }

    #[test]
    fn the_read_cap_applies_to_bytes_read_not_to_the_reported_size() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "small.txt", b"12345");
        let small = dir.path().join("small.txt");
        assert_eq!(
            read_bounded(&small, 5).unwrap(),
            Bounded::Bytes(b"12345".to_vec())
        );
        assert_eq!(read_bounded(&small, 4).unwrap(), Bounded::TooLarge);
        assert_eq!(read_bounded(dir.path(), 4).unwrap(), Bounded::NotRegular);
        // procfs reports size 0 for files that produce far more.
        let proc_file = Path::new("/proc/self/maps");
        if proc_file.exists() {
            assert_eq!(fs_err::metadata(proc_file).unwrap().len(), 0);
            assert_eq!(read_bounded(proc_file, 16).unwrap(), Bounded::TooLarge);
        }
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_skipped_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "src/lib.rs", b"x");
        let fifo = root.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(
            made.is_ok_and(|status| status.success()),
            "`mkfifo` (coreutils) must make the FIFO this test reads"
        );
        std::os::unix::fs::symlink(&fifo, root.join("pipe-link")).unwrap();
        assert_eq!(read_bounded(&fifo, 16).unwrap(), Bounded::NotRegular);
        // A socket cannot be opened at all; its stat says what it is first.
        let socket = root.join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        assert_eq!(read_bounded(&socket, 16).unwrap(), Bounded::NotRegular);
        // The walk's own read (after its stat) judges by the opened file: a
        // path that became a FIFO since is not read and does not block.
        assert_eq!(read_seen_regular(&fifo, 16).unwrap().0, Bounded::NotRegular);
        let output = scan_dir(root);
        assert_eq!(paths(&output), ["src/lib.rs"]);
        assert_eq!(output.skipped.unreadable, 3);
    }

    /// Sets the modification time of the file at `path`.
    fn set_modified(path: &Path, time: std::time::SystemTime) {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(time)
            .unwrap();
    }

    /// The walk stats files relative to their directory; the sizes and
    /// modification times it records are those a stat by path gives, to the
    /// nanosecond.
    #[test]
    fn entries_have_the_size_and_mtime_a_stat_by_path_gives() {
        use std::io::Write as _;
        use std::time::{Duration, UNIX_EPOCH};
        let dir = tempfile::tempdir().unwrap();
        let root = fs_err::canonicalize(dir.path()).unwrap();
        // The root holds enough files to be opened and its files stat'ed
        // relative to it; `src` and `src/deep` are stat'ed by path.
        write(&root, "a.rs", b"fn a() {}");
        write(&root, "old.txt", b"old");
        write(&root, "x.txt", b"x");
        write(&root, "y.txt", b"yy");
        write(&root, "src/b.md", b"# b\n");
        write(&root, "src/deep/c.txt", &[b'c'; 700]);
        // Grown after it was created, then given a time to the nanosecond.
        fs_err::OpenOptions::new()
            .append(true)
            .open(root.join("a.rs"))
            .unwrap()
            .write_all(b"\n// more")
            .unwrap();
        let exact = UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789);
        set_modified(&root.join("a.rs"), exact);
        set_modified(&root.join("x.txt"), UNIX_EPOCH + Duration::new(86_400, 1));
        set_modified(&root.join("src/b.md"), exact);
        // Before 1970: no time since the epoch, recorded as 0.
        set_modified(&root.join("old.txt"), UNIX_EPOCH - Duration::from_hours(24));
        let output = scan_dir(&root);
        assert_eq!(
            paths(&output),
            [
                "a.rs",
                "old.txt",
                "src/b.md",
                "src/deep/c.txt",
                "x.txt",
                "y.txt"
            ]
        );
        for entry in &output.repo.files {
            let metadata = fs_err::metadata(root.join(entry.path.as_str())).unwrap();
            let mtime_ns = super::super::git::modified_ns(&metadata).unwrap_or(0);
            assert_eq!(entry.size_bytes, metadata.len(), "{}", entry.path.as_str());
            assert_eq!(entry.last_modified_ns, mtime_ns, "{}", entry.path.as_str());
            assert_eq!(entry.last_modified_ms, mtime_ns.div_euclid(1_000_000));
        }
        let mtime = |path: &str| {
            let entry = output.repo.files.iter().find(|f| f.path.as_str() == path);
            entry.unwrap().last_modified_ns
        };
        assert_eq!(mtime("a.rs"), 1_700_000_000_123_456_789);
        assert_eq!(mtime("src/b.md"), 1_700_000_000_123_456_789);
        assert_eq!(mtime("x.txt"), 86_400_000_000_001);
        assert_eq!(mtime("old.txt"), 0);
        assert_eq!(
            output.repo.files[0].size_bytes,
            b"fn a() {}\n// more".len() as u64
        );
    }

    /// The walk itself stats the regular files of a directory that holds
    /// enough of them (so the scan need not stat them by path), as a stat by
    /// path would; links, and the files of smaller directories, are left to
    /// the scan.
    #[cfg(unix)]
    #[test]
    fn the_walk_stats_the_regular_files_of_large_directories() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs_err::canonicalize(dir.path()).unwrap();
        let names = ["a.rs", "b.rs", "c.rs", "d.rs"];
        for name in names {
            write(&root, &format!("big/{name}"), name.as_bytes());
        }
        write(&root, "small/e.rs", b"fn e() {}");
        std::os::unix::fs::symlink(root.join("small/e.rs"), root.join("big/link.rs")).unwrap();
        let mut seen = Vec::new();
        for entry in directory_walk(&root) {
            let entry = entry.unwrap();
            if entry.file_type.is_dir() {
                continue;
            }
            let path = entry.path();
            let relative = path
                .strip_prefix(&root)
                .unwrap()
                .to_str()
                .unwrap()
                .to_owned();
            let stat_by_walk = relative.starts_with("big/") && !entry.file_type.is_symlink();
            let expected = stat_by_walk.then(|| Stat::of(&fs_err::metadata(&path).unwrap()));
            assert_eq!(entry.client_state, expected, "{relative}");
            seen.push(relative);
        }
        seen.sort();
        assert_eq!(
            seen,
            [
                "big/a.rs",
                "big/b.rs",
                "big/c.rs",
                "big/d.rs",
                "big/link.rs",
                "small/e.rs"
            ]
        );
        assert_eq!(MIN_FILES_TO_OPEN_DIRECTORY, names.len());
    }

    #[cfg(unix)]
    #[test]
    fn stat_times_convert_to_ns_as_modified_ns_does() {
        use super::super::git::modified_ns_of;
        assert_eq!(modified_ns_of(0, 0), Some(0));
        assert_eq!(modified_ns_of(1, 999_999_999), Some(1_999_999_999));
        assert_eq!(modified_ns_of(-1, 500_000_000), None);
        assert_eq!(modified_ns_of(0, 1_000_000_000), None);
        assert_eq!(modified_ns_of(0, -1), None);
        // Past 2262 an `i64` of nanoseconds overflows.
        assert_eq!(modified_ns_of(i64::MAX / 1_000_000_000 + 1, 0), None);
    }

    #[test]
    fn output_is_sorted_and_hash_is_stable() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for name in ["z.rs", "a.rs", "m/b.rs", "m/a.rs"] {
            write(root, name, name.as_bytes());
        }
        let first = scan_dir(root);
        let second = scan_dir(root);
        assert_eq!(paths(&first), ["a.rs", "m/a.rs", "m/b.rs", "z.rs"]);
        assert_eq!(first.repo.file_tree_hash(), second.repo.file_tree_hash());
    }
}
