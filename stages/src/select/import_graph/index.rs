//! The paths of a RepoMap indexed for resolving imports, and the path helpers
//! the resolvers share.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::relative_path::RelativePath;
use crate::repo_map::RepoMap;

/// A RepoMap's paths indexed for resolving imports
/// ([`ImportGraph::build_indexed`](super::ImportGraph::build_indexed)); build it
/// once per RepoMap (it owns its paths, so a long-lived process keeps it with
/// the map).
pub struct ImportIndex(pub(super) FileIndex);

impl ImportIndex {
    /// Indexes `repo`'s paths (by path, directory and file name).
    pub fn new(repo: &RepoMap) -> Self {
        Self(FileIndex::new(repo))
    }
}

impl std::fmt::Debug for ImportIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportIndex")
            .field("files", &self.0.all.len())
            .finish()
    }
}

/// Paths by full path, directory and file name, in a few bytes per file: a
/// resident snapshot of a million files keeps one. The paths are the
/// RepoMap's own (shared, not copied) and in its order (sorted); the look-ups
/// hold file indices only: a hash table of them for whole paths, and the
/// indices sorted by directory and by file name, searched by halving.
pub(super) struct FileIndex {
    /// Every path, by index, sorted.
    pub(super) all: Vec<RelativePath>,
    /// Indices, found by their path's hash ([`path_hash`]).
    paths: HashTable<u32>,
    /// Indices sorted by (directory, index).
    by_directory: Vec<u32>,
    /// Indices sorted by (file name, index).
    by_name: Vec<u32>,
}

/// The hash a path is found by in [`FileIndex::paths`].
fn path_hash(path: &str) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(path)
}

impl FileIndex {
    pub(super) fn new(repo: &RepoMap) -> Self {
        let all: Vec<RelativePath> = repo.files.iter().map(|file| file.path.clone()).collect();
        let count = u32::try_from(all.len()).unwrap_or(u32::MAX);
        let mut paths = HashTable::with_capacity(all.len());
        for index in 0..count {
            let hash = path_hash(all[index as usize].as_str());
            paths.insert_unique(hash, index, |&i| path_hash(all[i as usize].as_str()));
        }
        let mut by_directory: Vec<u32> = (0..count).collect();
        by_directory.sort_by(|&a, &b| {
            parent(all[a as usize].as_str())
                .cmp(parent(all[b as usize].as_str()))
                .then(a.cmp(&b))
        });
        let mut by_name: Vec<u32> = (0..count).collect();
        by_name.sort_by(|&a, &b| {
            all[a as usize]
                .file_name()
                .cmp(all[b as usize].file_name())
                .then(a.cmp(&b))
        });
        Self {
            all,
            paths,
            by_directory,
            by_name,
        }
    }

    pub(super) fn get(&self, path: &str) -> Option<usize> {
        self.paths
            .find(path_hash(path), |&i| self.all[i as usize].as_str() == path)
            .map(|&i| i as usize)
    }

    /// The first of `candidates` that is a file.
    pub(super) fn first(&self, candidates: impl IntoIterator<Item = String>) -> Option<usize> {
        candidates.into_iter().find_map(|c| self.get(&c))
    }

    /// The files directly in `directory` (`""`: the root), in path order.
    pub(super) fn in_directory(&self, directory: &str) -> impl Iterator<Item = usize> + '_ {
        let key = |&i: &u32| parent(self.all[i as usize].as_str());
        let from = self.by_directory.partition_point(|i| key(i) < directory);
        let to = from + self.by_directory[from..].partition_point(|i| key(i) == directory);
        self.by_directory[from..to].iter().map(|&i| i as usize)
    }

    /// Each directory that holds files, with its files in path order, by
    /// directory.
    pub(super) fn directories(&self) -> impl Iterator<Item = (&str, &[u32])> + '_ {
        self.by_directory
            .chunk_by(|&a, &b| {
                parent(self.all[a as usize].as_str()) == parent(self.all[b as usize].as_str())
            })
            .map(|run| (parent(self.all[run[0] as usize].as_str()), run))
    }

    /// Files whose path is `suffix` or ends with `/suffix`, shallowest first.
    pub(super) fn by_suffix(&self, suffix: &str) -> Vec<usize> {
        let name = suffix.rsplit('/').next().unwrap_or(suffix);
        let key = |&i: &u32| self.all[i as usize].file_name();
        let from = self.by_name.partition_point(|i| key(i) < name);
        let to = from + self.by_name[from..].partition_point(|i| key(i) == name);
        let mut found: Vec<usize> = self.by_name[from..to]
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| {
                let path = self.all[i].as_str();
                path == suffix || path.ends_with(&format!("/{suffix}"))
            })
            .collect();
        found.sort_by_key(|&i| (self.all[i].as_str().matches('/').count(), i));
        found
    }
}

/// Whether a path's extension is `extension` (ASCII case ignored).
pub(super) fn has_extension(path: &str, extension: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, found)| found.eq_ignore_ascii_case(extension))
}

pub(super) fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(directory, _)| directory)
}

/// Joins a directory and a relative path, resolving `.` and `..`; `None` when
/// the result leaves the root.
pub(super) fn join(directory: &str, relative: &str) -> Option<String> {
    let mut parts: Vec<&str> = if directory.is_empty() {
        Vec::new()
    } else {
        directory.split('/').collect()
    };
    for segment in relative.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}
