//! The paths of a RepoMap indexed for resolving imports, and the path helpers
//! the resolvers share.

use crate::path_table::PathTable;
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
            .field("files", &self.0.len())
            .finish()
    }
}

/// Paths by full path, directory and file name, in a few bytes per file: a
/// resident snapshot of a million files keeps one. The paths are the
/// RepoMap's own (shared, not copied) and in its order (sorted), so a row of
/// the [`PathTable`] is a RepoMap index; the directory and file-name
/// look-ups are those indices sorted, searched by halving.
pub(super) struct FileIndex {
    /// Every path, its row its index.
    paths: PathTable<()>,
    /// Indices sorted by (directory, index).
    by_directory: Vec<u32>,
    /// Indices sorted by (file name, index).
    by_name: Vec<u32>,
}

impl FileIndex {
    pub(super) fn new(repo: &RepoMap) -> Self {
        let paths: PathTable<()> = repo
            .files
            .iter()
            .map(|file| (file.path.clone(), ()))
            .collect();
        let count = u32::try_from(paths.len()).unwrap_or(u32::MAX);
        // Each key is cut from its path once, not at every comparison. The
        // sort is stable over indices in order, so files of one key keep
        // the path order; directories come in long sorted runs.
        let sorted_by = |key: &dyn Fn(&str) -> &str| {
            let mut keyed: Vec<(&str, u32)> = (0..count)
                .map(|i| (key(paths.path(i as usize).as_str()), i))
                .collect();
            keyed.sort_by_key(|&(key, _)| key);
            keyed.into_iter().map(|(_, i)| i).collect::<Vec<u32>>()
        };
        let by_directory = sorted_by(&parent);
        let by_name = sorted_by(&file_name);
        Self {
            paths,
            by_directory,
            by_name,
        }
    }

    /// The path of the file at `index`.
    pub(super) fn path(&self, index: usize) -> &str {
        self.paths.path(index).as_str()
    }

    /// Files in the index.
    pub(super) fn len(&self) -> usize {
        self.paths.len()
    }

    pub(super) fn get(&self, path: &str) -> Option<usize> {
        self.paths.row(path)
    }

    /// The first of `candidates` that is a file.
    pub(super) fn first(&self, candidates: impl IntoIterator<Item = String>) -> Option<usize> {
        candidates.into_iter().find_map(|c| self.get(&c))
    }

    /// The files directly in `directory` (`""`: the root), in path order.
    pub(super) fn in_directory(&self, directory: &str) -> impl Iterator<Item = usize> + '_ {
        self.run(&self.by_directory, parent, directory)
            .iter()
            .map(|&i| i as usize)
    }

    /// Each directory that holds files, with its files in path order, by
    /// directory.
    pub(super) fn directories(&self) -> impl Iterator<Item = (&str, &[u32])> + '_ {
        self.by_directory
            .chunk_by(|&a, &b| parent(self.path(a as usize)) == parent(self.path(b as usize)))
            .map(|run| (parent(self.path(run[0] as usize)), run))
    }

    /// Files whose path is `suffix` or ends with `/suffix`, shallowest first.
    pub(super) fn by_suffix(&self, suffix: &str) -> Vec<usize> {
        let name = file_name(suffix);
        let mut found: Vec<usize> = self
            .run(&self.by_name, file_name, name)
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| {
                let path = self.path(i);
                path == suffix || path.ends_with(&format!("/{suffix}"))
            })
            .collect();
        found.sort_by_key(|&i| (self.path(i).matches('/').count(), i));
        found
    }

    /// The run of `sorted` (indices sorted by `key` of their path) whose key
    /// is `wanted`.
    fn run<'a>(&self, sorted: &'a [u32], key: impl Fn(&str) -> &str, wanted: &str) -> &'a [u32] {
        let of = |&i: &u32| key(self.path(i as usize));
        let from = sorted.partition_point(|i| of(i) < wanted);
        let to = from + sorted[from..].partition_point(|i| of(i) == wanted);
        &sorted[from..to]
    }
}

/// Whether a path's extension is `extension` (ASCII case ignored).
pub(super) fn has_extension(path: &str, extension: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, found)| found.eq_ignore_ascii_case(extension))
}

/// The last segment of a path (the file name).
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
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
