//! Diff-aware compiles: what changed, read from git (through `gix`), as the
//! compile's direct evidence.
//!
//! A [`DiffSpec`] names two states of the repository: the working tree against
//! a revision (`--diff`, default `HEAD`: what `git diff HEAD` shows, staged or
//! not; untracked files are not part of it), the index against `HEAD`
//! (`--staged`), two revisions (`--range A..B`), or a branch against where it
//! left another (`--range A...B`). [`read_changes`] lists the
//! files that differ under the project root with their unified diffs (3 lines
//! of context, from `similar`) and the changed line ranges on the new side.
//! The compile then pins the changed files as if the intent named them, slices
//! a large one around its hunks, reaches their import neighbours through the
//! import graph, and shows the diff in its own section.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::Path;

use gix::bstr::ByteSlice;
use gix::prelude::ObjectIdExt;

use crate::pipeline::scan::git::{IndexEntry, index_written, modified_ns};

/// The two states a diff compares.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DiffSpec {
    /// The working tree against a revision (`--diff[=REV]`, default `HEAD`).
    WorkTree(String),
    /// The index against `HEAD` (`--staged`).
    Staged,
    /// One revision against another (`--range A..B`).
    Range(String, String),
    /// `B` against where it branched from `A` (`--range A...B`, git's
    /// three-dot form: what a pull request of `B` into `A` changes).
    Branch(String, String),
}

impl DiffSpec {
    /// Reads a diff argument as the MCP tool takes it: `staged`, `A..B`, or a
    /// revision to compare the working tree with (empty means `HEAD`).
    pub fn parse(text: &str) -> Self {
        let text = text.trim();
        if text == "staged" || text == "--staged" || text == "cached" {
            return Self::Staged;
        }
        if let Some((from, to)) = text.split_once("...") {
            return Self::Branch(
                if from.is_empty() { "HEAD" } else { from }.to_owned(),
                if to.is_empty() { "HEAD" } else { to }.to_owned(),
            );
        }
        if let Some((from, to)) = text.split_once("..") {
            return Self::Range(
                if from.is_empty() { "HEAD" } else { from }.to_owned(),
                if to.is_empty() { "HEAD" } else { to }.to_owned(),
            );
        }
        Self::WorkTree(if text.is_empty() { "HEAD" } else { text }.to_owned())
    }

    /// The git command that shows the same changes (`git diff HEAD`).
    pub fn label(&self) -> String {
        match self {
            Self::WorkTree(rev) => format!("git diff {rev}"),
            Self::Staged => "git diff --staged".to_owned(),
            Self::Range(from, to) => format!("git diff {from}..{to}"),
            Self::Branch(from, to) => format!("git diff {from}...{to}"),
        }
    }
}

/// How a file changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    /// New on the new side.
    Added,
    /// On both sides, with different content.
    Modified,
    /// Gone on the new side.
    Deleted,
    /// Moved without a change of content (an added file with the same blob
    /// as a deleted one), from this path.
    Renamed(String),
}

/// One changed file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedFile {
    /// The path relative to the project root.
    pub path: String,
    /// How it changed.
    pub kind: ChangeKind,
    /// Its unified diff (`--- a/…`, `+++ b/…`, hunks), or one line saying a
    /// binary file changed.
    pub patch: String,
    /// The new side's changed lines, 1-based, one per hunk (its first changed
    /// line); empty for a deleted or binary file.
    pub changed_lines: Vec<u32>,
}

/// The changes a compile is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeSet {
    /// What was compared.
    pub spec: DiffSpec,
    /// The changed files, by path.
    pub files: Vec<ChangedFile>,
}

/// Why the changes could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// The project is not in a git work tree.
    #[error("`{}` is not in a git work tree", root.display())]
    NotARepository {
        /// The project root.
        root: std::path::PathBuf,
    },
    /// A revision does not name a commit.
    #[error("`{rev}` does not name a commit of this repository")]
    UnknownRevision {
        /// The revision as given.
        rev: String,
    },
    /// The repository could not be read.
    #[error("the repository could not be read: {message}")]
    Unreadable {
        /// What failed.
        message: String,
    },
}

/// Lists what changed under `root` between the two states of `spec`.
///
/// # Errors
///
/// [`DiffError`] when `root` is not in a git work tree, a revision does not
/// name a commit, or the repository cannot be read.
pub fn read_changes(root: &Path, spec: &DiffSpec) -> Result<ChangeSet, DiffError> {
    let repo = gix::discover(root).map_err(|_| DiffError::NotARepository {
        root: root.to_path_buf(),
    })?;
    let workdir =
        repo.workdir()
            .map(Path::to_path_buf)
            .ok_or_else(|| DiffError::NotARepository {
                root: root.to_path_buf(),
            })?;
    let workdir = fs_err::canonicalize(&workdir).unwrap_or(workdir);
    let prefix = root
        .strip_prefix(&workdir)
        .ok()
        .and_then(Path::to_str)
        .map(|p| p.replace('\\', "/"))
        .map(|p| if p.is_empty() { p } else { format!("{p}/") })
        .ok_or_else(|| DiffError::NotARepository {
            root: root.to_path_buf(),
        })?;
    // Old and new sides: path (from the work tree's top) → blob id, and how
    // to read a new side's bytes.
    let (old, new): (BTreeMap<String, gix::ObjectId>, NewSide) = match spec {
        DiffSpec::WorkTree(rev) => (
            tree_of(&repo, rev)?,
            NewSide::WorkTree(work_tree_index(&repo)?),
        ),
        DiffSpec::Staged => {
            let index = work_tree_index(&repo)?;
            let ids = index
                .entries
                .iter()
                .map(|(p, e)| (p.clone(), e.id))
                .collect();
            (tree_of(&repo, "HEAD")?, NewSide::Ids(ids))
        }
        DiffSpec::Range(from, to) => (tree_of(&repo, from)?, NewSide::Ids(tree_of(&repo, to)?)),
        DiffSpec::Branch(from, to) => {
            let base = merge_base(&repo, from, to)?;
            (tree_of(&repo, &base)?, NewSide::Ids(tree_of(&repo, to)?))
        }
    };
    let mut paths: BTreeSet<&String> = old.keys().collect();
    match &new {
        NewSide::WorkTree(index) => paths.extend(index.entries.keys()),
        NewSide::Ids(ids) => paths.extend(ids.keys()),
    }
    let mut files = Vec::new();
    // Blob ids of deleted and added files, for exact renames.
    let (mut deleted_ids, mut added_ids) = (Vec::new(), Vec::new());
    for full in paths {
        let Some(path) = full.strip_prefix(prefix.as_str()) else {
            continue;
        };
        let before = old.get(full).copied();
        let after: Option<Vec<u8>> = match &new {
            NewSide::Ids(ids) => match ids.get(full) {
                Some(id) if Some(*id) == before => continue,
                Some(id) => Some(blob(&repo, *id)?),
                None => None,
            },
            NewSide::WorkTree(index) => {
                match work_tree_side(&repo, index, &workdir, full, before)? {
                    WorkTreeSide::Unchanged => continue,
                    WorkTreeSide::Gone => None,
                    WorkTreeSide::Bytes(bytes) => Some(bytes),
                }
            }
        };
        let old_bytes = before.map(|id| blob(&repo, id)).transpose()?;
        match (before, &after) {
            (Some(id), None) => deleted_ids.push((id, files.len())),
            (None, Some(bytes)) => {
                if let Ok(id) =
                    gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, bytes)
                {
                    added_ids.push((id, files.len()));
                }
            }
            _ => {}
        }
        let kind = match (&old_bytes, &after) {
            (None, Some(_)) => ChangeKind::Added,
            (Some(_), None) => ChangeKind::Deleted,
            (Some(_), Some(_)) => ChangeKind::Modified,
            (None, None) => continue,
        };
        let (unified_diff, changed_lines) = unified(
            path,
            old_bytes.as_deref().unwrap_or_default(),
            after.as_deref(),
            &kind,
        );
        files.push(ChangedFile {
            path: path.to_owned(),
            kind,
            patch: unified_diff,
            changed_lines,
        });
    }
    pair_renames(&mut files, &deleted_ids, &added_ids);
    Ok(ChangeSet {
        spec: spec.clone(),
        files,
    })
}

/// The index's unconflicted entries and when it was written.
fn work_tree_index(repo: &gix::Repository) -> Result<WorkTreeIndex, DiffError> {
    let index = repo.index_or_empty().map_err(|e| unreadable(&e))?;
    let entries = index
        .entries()
        .iter()
        .filter(|entry| entry.stage_raw() == 0)
        .filter_map(|entry| {
            let path = entry.path(&index).to_str().ok()?.to_owned();
            Some((path, IndexEntry::of(entry)))
        })
        .collect();
    Ok(WorkTreeIndex {
        entries,
        written: index_written(&index),
    })
}

/// What the work tree holds of one path.
enum WorkTreeSide {
    /// The old side's blob (or nothing on either side).
    Unchanged,
    /// No file where the old side had one.
    Gone,
    /// Other bytes than the old side's.
    Bytes(Vec<u8>),
}

/// The work tree's side of `full` (a path from the work tree's top) whose old
/// side is the blob `before`. A file the index vouches for as it is on disk,
/// with the old blob, is not read.
fn work_tree_side(
    repo: &gix::Repository,
    index: &WorkTreeIndex,
    workdir: &Path,
    full: &str,
    before: Option<gix::ObjectId>,
) -> Result<WorkTreeSide, DiffError> {
    let on_disk = workdir.join(full);
    match fs_err::metadata(&on_disk) {
        Ok(meta) if meta.is_file() => {
            let unchanged_since_index = index
                .entries
                .get(full)
                .zip(modified_ns(&meta))
                .is_some_and(|(e, ns)| {
                    Some(e.id) == before && e.vouches_for(index.written, meta.len(), ns)
                });
            if unchanged_since_index {
                return Ok(WorkTreeSide::Unchanged);
            }
            let bytes = fs_err::read(&on_disk).map_err(|e| unreadable(&e))?;
            let id = gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, &bytes)
                .map_err(|e| unreadable(&e))?;
            Ok(if Some(id) == before {
                WorkTreeSide::Unchanged
            } else {
                WorkTreeSide::Bytes(bytes)
            })
        }
        // Deleted from the work tree (a file only in the index was never in
        // the old side either).
        _ if before.is_none() => Ok(WorkTreeSide::Unchanged),
        _ => Ok(WorkTreeSide::Gone),
    }
}

/// A repository read that failed.
fn unreadable(error: &dyn std::fmt::Display) -> DiffError {
    DiffError::Unreadable {
        message: error.to_string(),
    }
}

/// Turns each added file whose blob is a deleted file's into one rename (as
/// git does for an exact rename), and drops the deletion; `deleted` and
/// `added` hold each side's blob id and index in `files`.
fn pair_renames(
    files: &mut Vec<ChangedFile>,
    deleted: &[(gix::ObjectId, usize)],
    added: &[(gix::ObjectId, usize)],
) {
    let mut gone = Vec::new();
    for &(id, added_at) in added {
        if let Some(&(_, deleted_at)) = deleted
            .iter()
            .find(|(old, at)| *old == id && !gone.contains(at))
        {
            gone.push(deleted_at);
            let from = files[deleted_at].path.clone();
            let file = &mut files[added_at];
            file.patch = format!("rename from {from}\nrename to {}\n", file.path);
            file.changed_lines = Vec::new();
            file.kind = ChangeKind::Renamed(from);
        }
    }
    let mut index = 0;
    files.retain(|_| {
        let keep = !gone.contains(&index);
        index += 1;
        keep
    });
}

/// The index's unconflicted entries by path from the work tree's top, and
/// when it was written: enough to skip reading an unchanged file.
struct WorkTreeIndex {
    entries: BTreeMap<String, IndexEntry>,
    written: gix::index::entry::stat::Time,
}

/// The new side of a diff.
enum NewSide {
    /// The files on disk (the index tells which are unchanged).
    WorkTree(WorkTreeIndex),
    /// Blob ids of a tree or the index.
    Ids(BTreeMap<String, gix::ObjectId>),
}

/// The commit where `to` branched from `from`, as a revision.
fn merge_base(repo: &gix::Repository, from: &str, to: &str) -> Result<String, DiffError> {
    let id = |rev: &str| {
        repo.rev_parse_single(rev)
            .map(gix::Id::detach)
            .map_err(|_| DiffError::UnknownRevision {
                rev: rev.to_owned(),
            })
    };
    let (one, two) = (id(from)?, id(to)?);
    match repo.merge_base(one, two) {
        Ok(Some(base)) => Ok(base.detach().to_string()),
        _ => Err(DiffError::UnknownRevision {
            rev: format!("{from}...{to} (no common ancestor)"),
        }),
    }
}

/// Every blob of the tree of `rev`'s commit, by path.
fn tree_of(
    repo: &gix::Repository,
    rev: &str,
) -> Result<BTreeMap<String, gix::ObjectId>, DiffError> {
    let unknown = || DiffError::UnknownRevision {
        rev: rev.to_owned(),
    };
    let id = repo.rev_parse_single(rev).map_err(|_| unknown())?;
    let commit = id
        .object()
        .ok()
        .and_then(|object| object.peel_to_commit().ok())
        .ok_or_else(unknown)?;
    let tree = commit.tree_id().map_err(|_| unknown())?.detach();
    let mut out = BTreeMap::new();
    flatten(repo, tree, &mut String::new(), &mut out)?;
    Ok(out)
}

fn flatten(
    repo: &gix::Repository,
    tree: gix::ObjectId,
    prefix: &mut String,
    out: &mut BTreeMap<String, gix::ObjectId>,
) -> Result<(), DiffError> {
    let object = tree.attach(repo).object().map_err(|e| unreadable(&e))?;
    let tree = object.try_into_tree().map_err(|e| unreadable(&e))?;
    let decoded = tree.decode().map_err(|e| unreadable(&e))?;
    for entry in &decoded.entries {
        if entry.mode.is_commit() {
            continue;
        }
        let Ok(name) = entry.filename.to_str() else {
            continue;
        };
        let length = prefix.len();
        prefix.push_str(name);
        if entry.mode.is_tree() {
            prefix.push('/');
            flatten(repo, entry.oid.to_owned(), prefix, out)?;
        } else {
            out.insert(prefix.clone(), entry.oid.to_owned());
        }
        prefix.truncate(length);
    }
    Ok(())
}

fn blob(repo: &gix::Repository, id: gix::ObjectId) -> Result<Vec<u8>, DiffError> {
    repo.find_object(id)
        .map(|object| object.detach().data)
        .map_err(|e| unreadable(&e))
}

/// The unified diff of one file and the first changed line (new side) of
/// each hunk.
fn unified(path: &str, old: &[u8], new: Option<&[u8]>, kind: &ChangeKind) -> (String, Vec<u32>) {
    let new_bytes = new.unwrap_or_default();
    if old.contains(&0) || new_bytes.contains(&0) {
        return (format!("Binary file `{path}` changed\n"), Vec::new());
    }
    let old_text = String::from_utf8_lossy(old);
    let new_text = String::from_utf8_lossy(new_bytes);
    let diff = similar::TextDiff::from_lines(old_text.as_ref(), new_text.as_ref());
    let (from, to) = match kind {
        ChangeKind::Added => ("/dev/null".to_owned(), format!("b/{path}")),
        ChangeKind::Deleted => (format!("a/{path}"), "/dev/null".to_owned()),
        ChangeKind::Modified | ChangeKind::Renamed(_) => (format!("a/{path}"), format!("b/{path}")),
    };
    let mut text = String::new();
    let _ = write!(
        text,
        "{}",
        diff.unified_diff().context_radius(3).header(&from, &to)
    );
    let changed_lines = if new.is_some() {
        diff.grouped_ops(0)
            .iter()
            .filter_map(|group| group.first())
            .map(|op| u32::try_from(op.new_range().start + 1).unwrap_or(u32::MAX))
            .collect()
    } else {
        Vec::new()
    };
    (text, changed_lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_arguments_parse() {
        assert_eq!(DiffSpec::parse(""), DiffSpec::WorkTree("HEAD".to_owned()));
        assert_eq!(
            DiffSpec::parse("main"),
            DiffSpec::WorkTree("main".to_owned())
        );
        assert_eq!(DiffSpec::parse("staged"), DiffSpec::Staged);
        assert_eq!(
            DiffSpec::parse("main..feature"),
            DiffSpec::Range("main".to_owned(), "feature".to_owned())
        );
        assert_eq!(
            DiffSpec::parse("main.."),
            DiffSpec::Range("main".to_owned(), "HEAD".to_owned())
        );
        assert_eq!(
            DiffSpec::parse("main...feature"),
            DiffSpec::Branch("main".to_owned(), "feature".to_owned())
        );
        assert_eq!(DiffSpec::Staged.label(), "git diff --staged");
    }

    #[test]
    fn a_patch_names_its_hunks_first_lines() {
        let old = b"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n";
        let new = b"a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\nk\n";
        let (patch, lines) = unified("x.txt", old, Some(new), &ChangeKind::Modified);
        assert!(patch.starts_with("--- a/x.txt\n+++ b/x.txt\n@@"), "{patch}");
        assert!(patch.contains("-b\n+B\n"), "{patch}");
        assert_eq!(lines, [2, 10]);
        let (patch, _) = unified("x.bin", b"\0", Some(b"\0\x01"), &ChangeKind::Modified);
        assert_eq!(patch, "Binary file `x.bin` changed\n");
    }
}
