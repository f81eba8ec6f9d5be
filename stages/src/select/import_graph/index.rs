//! The paths of a RepoMap indexed for resolving imports, and the path helpers
//! the resolvers share.

use rustc_hash::{FxBuildHasher, FxHashMap};

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

/// Paths by full path, directory and file name. The paths are the RepoMap's
/// own (shared, not copied); a directory or file name is allocated once, not
/// once per file.
pub(super) struct FileIndex {
    paths: FxHashMap<RelativePath, usize>,
    /// Directory → indices of the files directly in it.
    pub(super) directories: FxHashMap<Box<str>, Vec<usize>>,
    /// File name → indices, for suffix look-ups.
    names: FxHashMap<Box<str>, Vec<usize>>,
    /// Every path, by index.
    pub(super) all: Vec<RelativePath>,
}

/// Adds `index` to `key`'s list, allocating the key only when it is new.
fn push_to(map: &mut FxHashMap<Box<str>, Vec<usize>>, key: &str, index: usize) {
    match map.get_mut(key) {
        Some(indices) => indices.push(index),
        None => {
            map.insert(Box::from(key), vec![index]);
        }
    }
}

impl FileIndex {
    pub(super) fn new(repo: &RepoMap) -> Self {
        let files = repo.files.len();
        let mut paths = FxHashMap::with_capacity_and_hasher(files, FxBuildHasher);
        let mut directories = FxHashMap::default();
        let mut names = FxHashMap::default();
        let mut all = Vec::with_capacity(files);
        for (index, file) in repo.files.iter().enumerate() {
            let path = file.path.as_str();
            paths.insert(file.path.clone(), index);
            push_to(&mut directories, parent(path), index);
            push_to(&mut names, file.path.file_name(), index);
            all.push(file.path.clone());
        }
        Self {
            paths,
            directories,
            names,
            all,
        }
    }

    pub(super) fn get(&self, path: &str) -> Option<usize> {
        self.paths.get(path).copied()
    }

    /// The first of `candidates` that is a file.
    pub(super) fn first(&self, candidates: impl IntoIterator<Item = String>) -> Option<usize> {
        candidates.into_iter().find_map(|c| self.get(&c))
    }

    /// Files whose path is `suffix` or ends with `/suffix`, shallowest first.
    pub(super) fn by_suffix(&self, suffix: &str) -> Vec<usize> {
        let name = suffix.rsplit('/').next().unwrap_or(suffix);
        let mut found: Vec<usize> = self
            .names
            .get(name)
            .map(|indices| {
                indices
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let path = self.all[i].as_str();
                        path == suffix || path.ends_with(&format!("/{suffix}"))
                    })
                    .collect()
            })
            .unwrap_or_default();
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
