//! The RepoMap: every file in scope with what the scan learned of it (size,
//! modification time, content hash, scan terms, recency), sorted by path, and
//! the file-tree hash.
//!
//! This module holds values only. Walking the filesystem, reading files and taking
//! their modification times is I/O and lives in the binary's scan phase, which
//! builds these values and hands them to the stages.

use std::sync::{Arc, Mutex};

use serde::Serialize;
use xxhash_rust::xxh3::Xxh3;

use crate::content_hash::ContentHash;
use crate::fit::tokens::TokenCount;
use crate::language::Language;
use crate::pattern::PatternSet;
use crate::relative_path::RelativePath;
use crate::select::terms::TermStats;

/// One file of the [`RepoMap`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileEntry {
    /// Path relative to the project root.
    pub path: RelativePath,
    /// Detected language.
    pub language: Language,
    /// Size on disk in bytes.
    pub size_bytes: u64,
    /// Token estimate from the size ([`estimate_tokens`]); exact counts are taken only
    /// for files that reach the prompt.
    pub estimated_tokens: TokenCount,
    /// Last modification time in milliseconds since the Unix epoch (UTC).
    pub last_modified_ms: i64,
    /// The same time in nanoseconds, as the file system keeps it: what git's
    /// index is compared with (it records nanoseconds). Not serialised.
    #[serde(skip)]
    pub last_modified_ns: i64,
    /// When the file last changed as far as the selector's recency signal is
    /// concerned, in milliseconds since the epoch: the modification time, unless
    /// version control knows better (last commit time, or newer than every commit
    /// for uncommitted changes). Not part of the file-tree hash.
    #[serde(skip)]
    pub recency_ms: i64,
    /// xxh3-128 of the file's bytes.
    pub content_hash: ContentHash,
    /// [`crate::select::terms::term_id`]s of the stemmed words of the names the file
    /// defines ([`crate::select::symbols::symbol_terms`]), sorted and without repeats
    /// ([`symbol_ids`]): symbol relevance compares these, a number at a
    /// time, instead of the strings.
    #[serde(skip)]
    pub symbol_ids: std::sync::Arc<[u32]>,
    /// [`crate::select::symbols::name_id`]s of the names the file defines, sorted:
    /// what an intent's mentioned names are matched against.
    #[serde(skip)]
    pub name_ids: std::sync::Arc<[u32]>,
    /// Term frequencies of path and content, for BM25 content relevance.
    #[serde(skip)]
    pub term_stats: TermStats,
    /// The stemmed words of the path, computed on first use
    /// ([`FileEntry::path_terms`]) and kept with the entry, so a resident
    /// snapshot splits each path once, not once per compile.
    #[serde(skip)]
    pub path_terms: std::sync::OnceLock<std::sync::Arc<PathTerms>>,
    /// What kind of file this is by its path and language (source, test,
    /// docs, …), computed on first use ([`FileEntry::kind`]) and kept, so
    /// the file-kind prior classifies each path once, not once per compile.
    #[serde(skip)]
    pub kind: std::sync::OnceLock<crate::select::file_kind::FileKind>,
}

/// The stemmed words of a file's path, as path relevance compares them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathTerms {
    /// Words of the directory part, shared by the files of one directory.
    pub directory: std::sync::Arc<[String]>,
    /// Words of the file name without its extension, each shared with the
    /// other paths that have the same word (a reference count, not a copy).
    pub name: Box<[std::sync::Arc<str>]>,
    /// The extension, stemmed, shared alike.
    pub extension: Option<std::sync::Arc<str>>,
}

impl PathTerms {
    /// The terms of `path`.
    pub fn of(path: &RelativePath) -> Self {
        use crate::select::terms::stem;
        let directory = path
            .as_str()
            .rsplit_once('/')
            .map_or("", |(directory, _)| directory);
        let file_name = path.file_name();
        let extension = path.extension();
        let stem_part = match &extension {
            Some(extension) => &file_name[..file_name.len() - extension.len() - 1],
            None => file_name,
        };
        Self {
            directory: directory_terms(directory),
            // File names are mostly distinct: split each time, unlike
            // directory components, which repeat; their words repeat.
            name: crate::select::terms::path_terms(stem_part)
                .iter()
                .map(|word| shared_word(word))
                .collect(),
            extension: extension.map(|e| shared_word(&stem(&e))),
        }
    }
}

type TermsMemo = std::cell::RefCell<rustc_hash::FxHashMap<Box<str>, std::sync::Arc<[String]>>>;

/// `key`'s value in `memo`, else `compute`'s, remembered; the memo starts
/// over past [`PATH_MEMO_ENTRIES`] keys.
fn remembered(
    memo: &'static std::thread::LocalKey<TermsMemo>,
    key: &str,
    compute: impl FnOnce() -> std::sync::Arc<[String]>,
) -> std::sync::Arc<[String]> {
    if let Some(terms) = memo.with_borrow(|memo| memo.get(key).cloned()) {
        return terms;
    }
    let terms = compute();
    memo.with_borrow_mut(|memo| {
        if memo.len() >= PATH_MEMO_ENTRIES {
            memo.clear();
        }
        memo.insert(key.into(), terms.clone());
    });
    terms
}

/// `word` as a shared string, one per distinct word and thread: a file
/// name's words (`index`, `test`, `util`) and extensions recur across a
/// repository, and a resident snapshot keeps every file's.
fn shared_word(word: &str) -> std::sync::Arc<str> {
    WORDS.with_borrow_mut(|words| {
        if let Some(shared) = words.get(word) {
            return shared.clone();
        }
        if words.len() >= PATH_MEMO_ENTRIES * 4 {
            words.clear();
        }
        let shared: std::sync::Arc<str> = word.into();
        words.insert(shared.clone());
        shared
    })
}

thread_local! {
    /// The file-name words and extensions seen ([`shared_word`]).
    static WORDS: std::cell::RefCell<rustc_hash::FxHashSet<std::sync::Arc<str>>> =
        std::cell::RefCell::default();
    /// Words of path components.
    static COMPONENT_TERMS: TermsMemo = TermsMemo::default();
    /// Words of whole directory paths, shared by the files of a directory.
    static DIRECTORY_TERMS: TermsMemo = TermsMemo::default();
}

/// The stemmed words of a directory path, one shared list per directory and
/// thread: those of its components in order (every `/` splits words, so this
/// equals splitting the whole path), each component split once per thread
/// (`packages`, `src`, `test` recur in most of a repository's directories).
fn directory_terms(directory: &str) -> std::sync::Arc<[String]> {
    remembered(&DIRECTORY_TERMS, directory, || {
        let mut words = Vec::new();
        for component in directory.split('/') {
            let terms = remembered(&COMPONENT_TERMS, component, || {
                crate::select::terms::path_terms(component).into()
            });
            words.extend(terms.iter().cloned());
        }
        words.into()
    })
}

/// The most directories, and path components, the memos keep per thread.
const PATH_MEMO_ENTRIES: usize = 16_384;

impl FileEntry {
    /// The stemmed words of the path (computed once per entry).
    pub fn path_terms(&self) -> &PathTerms {
        self.path_terms
            .get_or_init(|| std::sync::Arc::new(PathTerms::of(&self.path)))
    }

    /// The file's [`FileKind`](crate::select::file_kind::FileKind), classified once.
    pub fn kind(&self) -> crate::select::file_kind::FileKind {
        *self
            .kind
            .get_or_init(|| crate::select::file_kind::FileKind::of(&self.path, self.language))
    }
}

/// The sorted, distinct [`crate::select::terms::term_id`]s of a file's symbol
/// terms, for [`FileEntry::symbol_ids`].
pub fn symbol_ids(symbol_terms: &[String]) -> std::sync::Arc<[u32]> {
    let mut ids: Vec<u32> = symbol_terms
        .iter()
        .map(|term| crate::select::terms::term_id(term))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into()
}

/// Estimates the `cl100k_base` token count of a text file from its size in bytes.
///
/// Real source averages 3.45 bytes per token in `cl100k_base`
/// (measured on 1,217 Rust files); the estimate rounds up
/// `bytes / 3.5`, so 0 bytes gives 0 tokens and 1 byte gives 1.
pub fn estimate_tokens(size_bytes: u64) -> TokenCount {
    TokenCount::from_u64((size_bytes * 2).div_ceil(7))
}

/// The repository as the scan found it: files sorted by path.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RepoMap {
    /// Files in scope, sorted by path, no duplicates.
    pub files: Vec<FileEntry>,
    /// Sum of the files' estimated tokens.
    pub total_tokens: TokenCount,
    /// Which patterns of a rule pack's sets match each file, per set.
    #[serde(skip)]
    matches: MatchMemo,
}

/// The patterns of each [`PatternSet`] that match each file of a map,
/// computed for the whole map on the set's first use: a long-lived process
/// matches every path against a rule pack once, not once per compile. A
/// clone starts empty.
#[derive(Debug, Default)]
struct MatchMemo(Mutex<Vec<(Vec<String>, Arc<MatchTable>)>>);

/// Per file (by index), the indices of the matching patterns: every file's
/// list, one after the other, and where each file's list ends. Four bytes a
/// file and two a match, where a list of boxed slices took sixteen a file.
#[derive(Debug, Default)]
struct MatchTable {
    /// `ends[i]`: the end of file `i`'s matches in `matches`.
    ends: Vec<u32>,
    /// The matching patterns' indices, file after file.
    matches: Vec<u16>,
}

impl MatchTable {
    /// The table of `files`' paths matched against `set`.
    fn of(files: &[FileEntry], set: &PatternSet) -> Self {
        let mut table = Self {
            ends: Vec::with_capacity(files.len()),
            matches: Vec::new(),
        };
        for file in files {
            table.matches.extend(set.matching_indices(&file.path));
            table
                .ends
                .push(u32::try_from(table.matches.len()).unwrap_or(u32::MAX));
        }
        table.matches.shrink_to_fit();
        table
    }

    /// Files in the table.
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The patterns of `set` whose numbers match the file at `index`.
    fn names<'p>(&self, set: &'p PatternSet, index: usize) -> Vec<&'p str> {
        self.get(index).iter().map(|&i| set.pattern(i)).collect()
    }

    /// The matches of the file at `index` (none past the end).
    fn get(&self, index: usize) -> &[u16] {
        let Some(&end) = self.ends.get(index) else {
            return &[];
        };
        let start = index.checked_sub(1).map_or(0, |before| self.ends[before]);
        &self.matches[start as usize..end as usize]
    }
}

/// Pattern sets a map remembers (rule packs differ by task class).
const MATCH_SETS_KEPT: usize = 16;

/// The patterns of one set that match each file of a map
/// ([`RepoMap::pattern_matches`]).
#[derive(Clone, Debug)]
pub struct PatternMatches<'p> {
    set: &'p PatternSet,
    table: Arc<MatchTable>,
}

impl<'p> PatternMatches<'p> {
    /// The patterns that match the file at `index` of the map, each once, in
    /// the order they were given.
    pub fn of(&self, index: usize) -> Vec<&'p str> {
        self.table.names(self.set, index)
    }

    /// The matches without the set: kept per file as pattern numbers and
    /// named later ([`PatternHits::names`]).
    pub fn hits(&self) -> PatternHits {
        PatternHits(Arc::clone(&self.table))
    }
}

/// Which patterns of one [`PatternSet`] match each file of a map, by the
/// files' indices, held as pattern numbers (two bytes a match) without the
/// set: what a selection keeps for every candidate, naming the patterns only
/// for the files it keeps. Cheap to clone (a shared table).
#[derive(Clone, Debug)]
pub struct PatternHits(Arc<MatchTable>);

impl PatternHits {
    /// How many patterns match the file at `index` of the map.
    pub fn count(&self, index: usize) -> usize {
        self.0.get(index).len()
    }

    /// The patterns that match the file at `index`, each once, in the order
    /// they were given; `set` must be the set the hits were taken with
    /// ([`RepoMap::pattern_matches`]).
    pub fn names<'p>(&self, set: &'p PatternSet, index: usize) -> Vec<&'p str> {
        self.0.names(set, index)
    }
}

impl Clone for MatchMemo {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl RepoMap {
    /// Builds a map from entries in any order: sorts them by path and drops
    /// duplicate paths (the first of equal paths after a stable sort wins).
    pub fn new(mut files: Vec<FileEntry>) -> Self {
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files.dedup_by(|a, b| a.path == b.path);
        let total = files.iter().map(|f| f.estimated_tokens.get()).sum();
        Self {
            files,
            total_tokens: TokenCount::from_u64(total),
            matches: MatchMemo::default(),
        }
    }

    /// Whether both maps hold the same paths in the same order.
    pub fn same_paths(&self, other: &RepoMap) -> bool {
        self.files.len() == other.files.len()
            && self
                .files
                .iter()
                .zip(&other.files)
                .all(|(a, b)| a.path == b.path)
    }

    /// Keeps the pattern matches `old` remembered when both maps hold the
    /// same paths in the same order (a content-only update of a resident
    /// snapshot: matches depend on paths only).
    pub fn keep_matches_of(&self, old: &RepoMap) {
        if self.same_paths(old) {
            let kept = old
                .matches
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone();
            *self
                .matches
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = kept;
        }
    }

    /// Which patterns of `set` match each file ([`PatternMatches::of`]):
    /// [`PatternSet::matching`] for the whole map, computed on the set's
    /// first use and remembered with the map.
    pub fn pattern_matches<'p>(&self, set: &'p PatternSet) -> PatternMatches<'p> {
        if set.is_empty() {
            return PatternMatches {
                set,
                table: Arc::default(),
            };
        }
        let mut memo = self
            .matches
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let found = memo
            .iter()
            .find(|(patterns, table)| {
                patterns.as_slice() == set.patterns() && table.len() == self.files.len()
            })
            .map(|(_, table)| table.clone());
        let table = found.unwrap_or_else(|| {
            let table = Arc::new(MatchTable::of(&self.files, set));
            if memo.len() == MATCH_SETS_KEPT {
                memo.remove(0);
            }
            memo.push((set.patterns().to_vec(), table.clone()));
            table
        });
        PatternMatches { set, table }
    }

    /// Number of files in scope.
    pub fn total_files(&self) -> usize {
        self.files.len()
    }

    /// The file-tree hash: xxh3-128 over the lines
    /// `path:size_bytes:mtime_ms\n` of every file, in path order.
    ///
    /// It changes when a file is added, removed, renamed, resized or touched, and
    /// not when only `aic.config.json` or a rule pack changes.
    pub fn file_tree_hash(&self) -> ContentHash {
        let mut hasher = Xxh3::new();
        for file in &self.files {
            hasher.update(file.path.as_str().as_bytes());
            hasher.update(format!(":{}:{}\n", file.size_bytes, file.last_modified_ms).as_bytes());
        }
        ContentHash(hasher.digest128().to_be_bytes())
    }
}

#[cfg(test)]
impl FileEntry {
    /// A file for unit tests: language from the path, the path's words as its
    /// term statistics, nothing else known.
    pub(crate) fn for_test(path: &str, size_bytes: u64, mtime_ms: i64) -> Self {
        let relative = RelativePath::new(path).expect("test paths are valid");
        Self {
            language: Language::detect(&relative),
            path: relative,
            size_bytes,
            estimated_tokens: estimate_tokens(size_bytes),
            last_modified_ms: mtime_ms,
            last_modified_ns: mtime_ms.saturating_mul(1_000_000),
            recency_ms: mtime_ms,
            content_hash: ContentHash::of(path.as_bytes()),
            symbol_ids: std::sync::Arc::default(),
            name_ids: std::sync::Arc::default(),
            term_stats: TermStats::of(path, ""),
            path_terms: std::sync::OnceLock::new(),
            kind: std::sync::OnceLock::new(),
        }
    }

    /// A RepoMap of test files of one byte each.
    pub(crate) fn repo_for_test(paths: &[&str]) -> RepoMap {
        RepoMap::new(paths.iter().map(|p| Self::for_test(p, 1, 0)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_terms_by_component_equal_the_whole_path_split() {
        for path in [
            "README.md",
            "src/userService/HTTPServer2.ts",
            "packages/babel-plugin-x/test/fixtures/utf8Bytes/input.js",
            "a/ünïcode_Dir/x-y.z/mod.rs",
            "deep/deep/deep/deep/runningTests/file",
        ] {
            let path = RelativePath::new(path).unwrap();
            let terms = PathTerms::of(&path);
            let (directory, file_name) = path
                .as_str()
                .rsplit_once('/')
                .unwrap_or(("", path.as_str()));
            assert_eq!(
                &*terms.directory,
                crate::select::terms::path_terms(directory).as_slice(),
                "{path}"
            );
            let stem = file_name
                .rsplit_once('.')
                .map_or(file_name, |(stem, _)| stem);
            let name: Vec<&str> = terms.name.iter().map(|word| &**word).collect();
            assert_eq!(name, crate::select::terms::path_terms(stem), "{path}");
        }
    }

    #[test]
    fn token_estimate_rounds_up() {
        assert_eq!(estimate_tokens(0), TokenCount(0));
        assert_eq!(estimate_tokens(1), TokenCount(1));
        assert_eq!(estimate_tokens(7), TokenCount(2));
        assert_eq!(estimate_tokens(3500), TokenCount(1000));
    }

    fn entry(path: &str, size: u64, mtime: i64) -> FileEntry {
        FileEntry::for_test(path, size, mtime)
    }

    #[test]
    fn repo_map_sorts_and_hash_ignores_input_order() {
        let a = RepoMap::new(vec![entry("b.rs", 10, 1), entry("a.rs", 20, 2)]);
        let b = RepoMap::new(vec![entry("a.rs", 20, 2), entry("b.rs", 10, 1)]);
        assert_eq!(a.files[0].path.as_str(), "a.rs");
        assert_eq!(a.file_tree_hash(), b.file_tree_hash());
        assert_eq!(
            a.total_tokens,
            TokenCount(estimate_tokens(10).0 + estimate_tokens(20).0)
        );
    }

    #[test]
    fn file_tree_hash_changes_on_touch() {
        let a = RepoMap::new(vec![entry("a.rs", 20, 2)]);
        let b = RepoMap::new(vec![entry("a.rs", 20, 3)]);
        assert_ne!(a.file_tree_hash(), b.file_tree_hash());
    }
}
