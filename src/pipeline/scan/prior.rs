//! What a walk may take from an earlier walk of the same project: the files
//! of the last snapshot (a resident index walking its project again) or of
//! the project's saved snapshot (a restarted daemon, a one-shot compile after
//! `aic precompute`).
//!
//! A file is taken unread, without a database look-up, when it has the size
//! and modification time it had then, and that time was at least two seconds
//! before the earlier walk started: a file modified within the file system's
//! timestamp resolution of its read may have changed unseen, so it is looked
//! up (or read) again, as the path index does. Anything else about the file
//! (its language, its content hash) must also match, so a prior can cost
//! look-ups but never change a result.
//!
//! The lookup is a binary search over the earlier walk's files in path order:
//! no table is built, so a resident index keeps one copy of each file's facts
//! (its snapshot) instead of a second one in the memo.

use std::sync::Arc;

use aic_stages::content_hash::ContentHash;
use aic_stages::language::Language;
use aic_stages::relative_path::RelativePath;
use aic_stages::repo_map::FileEntry;
use aic_stages::row_codec::EntryTerms;

use super::Snapshot;

/// A file modified this close before a walk started is not taken from it
/// (2 s, in nanoseconds).
pub const RACY_NS: i64 = 2_000_000_000;

/// One file of a saved snapshot, as the walk may take it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriorFile {
    /// Its path relative to the project root.
    pub path: RelativePath,
    /// Its language, as detected from the path.
    pub language: Language,
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time, ns since the epoch.
    pub mtime_ns: i64,
    /// xxh3-128 of its bytes.
    pub hash: ContentHash,
    /// Its scan terms.
    pub terms: EntryTerms,
}

/// The files of an earlier walk a walk may take unread ([module docs](self)).
#[derive(Debug)]
pub enum PriorFiles {
    /// A resident snapshot; its files count when modified at least
    /// [`RACY_NS`] before `walk_started_ns` (when the walk that read them
    /// started: files re-read later are judged by that earlier time, which
    /// only leaves more of them to be looked up).
    Snapshot {
        /// The earlier snapshot.
        snapshot: Arc<Snapshot>,
        /// When the walk that made it started, ns since the epoch.
        walk_started_ns: i64,
    },
    /// A saved snapshot read back: settled files only, sorted by path,
    /// without repeats ([`PriorFiles::saved`]).
    Saved(Vec<PriorFile>),
}

impl PriorFiles {
    /// The files of a saved snapshot (settled when saved), sorted by path;
    /// of two records of one path the last is kept.
    pub fn saved(mut files: Vec<PriorFile>) -> Self {
        if !files.is_sorted_by(|a, b| a.path < b.path) {
            files.sort_by(|a, b| a.path.cmp(&b.path));
            files.dedup_by(|later, earlier| {
                let same = later.path == earlier.path;
                if same {
                    std::mem::swap(later, earlier);
                }
                same
            });
        }
        Self::Saved(files)
    }

    /// How many files it holds (settled or not).
    pub fn len(&self) -> usize {
        match self {
            Self::Snapshot { snapshot, .. } => snapshot.repo.files.len(),
            Self::Saved(files) => files.len(),
        }
    }

    /// Whether it holds no file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where the earlier walk saw a file at `path`: the index to ask
    /// [`PriorFiles::path_at`] and [`PriorFiles::unchanged_at`] with.
    pub fn find(&self, path: &str) -> Option<usize> {
        match self {
            Self::Snapshot { snapshot, .. } => snapshot
                .repo
                .files
                .binary_search_by(|file| file.path.as_str().cmp(path))
                .ok(),
            Self::Saved(files) => files
                .binary_search_by(|file| file.path.as_str().cmp(path))
                .ok(),
        }
    }

    /// [`PriorFiles::find`], starting from `near`: `Ok(index)` when the
    /// earlier walk saw `path`, `Err(index)` where it would be; either is a
    /// good `near` for the next path. The search gallops out from `near`, so
    /// paths asked in about ascending order (a walk that reads each
    /// directory's names sorted) cost a few comparisons each, not a search
    /// of the whole list; any order stays correct.
    pub fn find_near(&self, path: &str, near: usize) -> Result<usize, usize> {
        use std::cmp::Ordering::{Equal, Greater, Less};
        let len = self.len();
        let near = near.min(len);
        let order = |index: usize| self.path_str(index).cmp(path);
        // Everything before `low` sorts before `path`, everything from
        // `high` on after it.
        let (mut low, mut high);
        if near < len && order(near) == Less {
            low = near + 1;
            high = len;
            let mut step = 1;
            while let Some(probe) = near.checked_add(step).filter(|&probe| probe < len) {
                if order(probe) == Less {
                    low = probe + 1;
                    step *= 2;
                } else {
                    high = probe + 1;
                    break;
                }
            }
        } else {
            low = 0;
            high = if near < len { near + 1 } else { len };
            let mut step = 1;
            while let Some(probe) = near.checked_sub(step) {
                if order(probe) == Less {
                    low = probe + 1;
                    break;
                }
                high = probe + 1;
                step *= 2;
            }
        }
        while low < high {
            let middle = low + (high - low) / 2;
            match order(middle) {
                Less => low = middle + 1,
                Greater => high = middle,
                Equal => return Ok(middle),
            }
        }
        Err(low)
    }

    /// The earlier walk's own copy of the path at `index` (from
    /// [`PriorFiles::find`]): a walk that names its files with it holds one
    /// copy of each path, not two, while the earlier walk's files are alive
    /// beside its own.
    ///
    /// # Panics
    ///
    /// When `index` is out of range.
    pub fn path_at(&self, index: usize) -> RelativePath {
        match self {
            Self::Snapshot { snapshot, .. } => snapshot.repo.files[index].path.clone(),
            Self::Saved(files) => files[index].path.clone(),
        }
    }

    /// The path at `index`, as text.
    fn path_str(&self, index: usize) -> &str {
        match self {
            Self::Snapshot { snapshot, .. } => snapshot.repo.files[index].path.as_str(),
            Self::Saved(files) => files[index].path.as_str(),
        }
    }

    /// [`PriorFiles::unchanged_at`] for the file at `path` (tests; the walk
    /// finds each file once and asks by index).
    #[cfg(test)]
    pub(crate) fn unchanged(
        &self,
        path: &RelativePath,
        size: u64,
        mtime_ns: i64,
        language: Language,
    ) -> Option<(ContentHash, EntryTerms)> {
        self.unchanged_at(self.find(path.as_str())?, size, mtime_ns, language)
    }

    /// The content hash and scan terms of the file at `index` (from
    /// [`PriorFiles::find`]), when the earlier walk saw it settled with this
    /// `size` (bytes), modification time (`mtime_ns`, ns since the epoch)
    /// and `language`.
    ///
    /// # Panics
    ///
    /// When `index` is out of range.
    pub fn unchanged_at(
        &self,
        index: usize,
        size: u64,
        mtime_ns: i64,
        language: Language,
    ) -> Option<(ContentHash, EntryTerms)> {
        match self {
            Self::Snapshot {
                snapshot,
                walk_started_ns,
            } => {
                let file: &FileEntry = &snapshot.repo.files[index];
                (file.size_bytes == size
                    && file.last_modified_ns == mtime_ns
                    && file.language == language
                    && walk_started_ns.saturating_sub(mtime_ns) >= RACY_NS)
                    .then(|| {
                        (
                            file.content_hash,
                            EntryTerms {
                                symbol_ids: file.symbol_ids.clone(),
                                name_ids: file.name_ids.clone(),
                                term_stats: file.term_stats.clone(),
                            },
                        )
                    })
            }
            Self::Saved(files) => {
                let file = &files[index];
                (file.size == size && file.mtime_ns == mtime_ns && file.language == language)
                    .then(|| (file.hash, file.terms.clone()))
            }
        }
    }
}

/// Names paths with an earlier walk's copies where it has them
/// ([`PriorFiles::path_at`]), so that tables made beside a walk (git's index
/// entries and last-commit times) hold no text of their own for the files
/// the earlier walk saw. Paths asked in ascending order, as git keeps them,
/// cost one comparison each; others a binary search.
#[derive(Debug)]
pub struct PathNames<'a> {
    prior: Option<&'a PriorFiles>,
    /// Where the next path in ascending order is looked for first.
    next: usize,
}

impl<'a> PathNames<'a> {
    /// Names from `prior`; with `None`, every path gets its own text.
    pub fn new(prior: Option<&'a PriorFiles>) -> Self {
        Self { prior, next: 0 }
    }

    /// `path` as a [`RelativePath`]: the earlier walk's copy when it has the
    /// path, else a new one; `None` when `path` is not a relative path.
    pub fn name(&mut self, path: &str) -> Option<RelativePath> {
        if let Some(prior) = self.prior {
            let found = if self.next < prior.len() && prior.path_str(self.next) == path {
                Some(self.next)
            } else {
                prior.find(path)
            };
            if let Some(index) = found {
                self.next = index + 1;
                return Some(prior.path_at(index));
            }
        }
        RelativePath::new(path)
    }
}

#[cfg(test)]
mod tests {
    use aic_stages::fit::tokens::TokenCount;
    use aic_stages::repo_map::RepoMap;
    use aic_stages::select::term_list::TermList;
    use aic_stages::select::terms::{TermCount, TermStats};

    use super::*;
    use crate::pipeline::scan::SkippedFiles;

    const WALK_NS: i64 = 1_800_000_000_000_000_000;

    fn terms(id: u32) -> EntryTerms {
        EntryTerms {
            symbol_ids: vec![id].into(),
            name_ids: vec![id + 1].into(),
            term_stats: TermStats {
                terms: TermList::new(&[TermCount { id, count: 2 }]),
                length: 2,
            },
        }
    }

    fn entry(path: &str, mtime_ns: i64) -> FileEntry {
        let path = RelativePath::new(path).unwrap();
        let terms = terms(7);
        FileEntry {
            language: Language::detect(&path),
            path,
            size_bytes: 10,
            estimated_tokens: TokenCount(3),
            last_modified_ms: mtime_ns / 1_000_000,
            last_modified_ns: mtime_ns,
            recency_ms: mtime_ns / 1_000_000,
            content_hash: ContentHash([4; 16]),
            symbol_ids: terms.symbol_ids,
            name_ids: terms.name_ids,
            term_stats: terms.term_stats,
            path_terms: std::sync::OnceLock::new(),
            kind: std::sync::OnceLock::new(),
        }
    }

    #[test]
    fn a_snapshot_gives_settled_files_with_the_same_size_time_and_language() {
        let settled = WALK_NS - RACY_NS;
        let racy = WALK_NS - RACY_NS + 1;
        let repo = RepoMap::new(vec![entry("a.rs", settled), entry("b.rs", racy)]);
        let prior = PriorFiles::Snapshot {
            snapshot: Arc::new(Snapshot::new(repo, SkippedFiles::default())),
            walk_started_ns: WALK_NS,
        };
        let a = RelativePath::new("a.rs").unwrap();
        let (hash, found) = prior.unchanged(&a, 10, settled, Language::Rust).unwrap();
        assert_eq!(hash, ContentHash([4; 16]));
        assert_eq!(found, terms(7));
        assert_eq!(prior.unchanged(&a, 11, settled, Language::Rust), None);
        assert_eq!(prior.unchanged(&a, 10, settled + 1, Language::Rust), None);
        assert_eq!(prior.unchanged(&a, 10, settled, Language::Python), None);
        // Modified within two seconds of the walk: looked up again.
        let b = RelativePath::new("b.rs").unwrap();
        assert_eq!(prior.unchanged(&b, 10, racy, Language::Rust), None);
        let c = RelativePath::new("c.rs").unwrap();
        assert_eq!(prior.unchanged(&c, 10, settled, Language::Rust), None);
        assert_eq!(prior.len(), 2);
    }

    #[test]
    fn saved_files_are_found_in_any_order_and_the_last_record_of_a_path_wins() {
        let file = |path: &str, size: u64, id: u32| PriorFile {
            path: RelativePath::new(path).unwrap(),
            language: Language::Python,
            size,
            mtime_ns: 5,
            hash: ContentHash([u8::try_from(id).unwrap(); 16]),
            terms: terms(id),
        };
        let prior = PriorFiles::saved(vec![
            file("z.py", 1, 1),
            file("a.py", 2, 2),
            file("z.py", 3, 3),
            file("m.py", 4, 4),
        ]);
        assert_eq!(prior.len(), 3);
        let z = RelativePath::new("z.py").unwrap();
        assert_eq!(prior.unchanged(&z, 1, 5, Language::Python), None);
        assert_eq!(
            prior.unchanged(&z, 3, 5, Language::Python),
            Some((ContentHash([3; 16]), terms(3)))
        );
        let m = RelativePath::new("m.py").unwrap();
        assert_eq!(
            prior
                .unchanged(&m, 4, 5, Language::Python)
                .map(|(hash, _)| hash),
            Some(ContentHash([4; 16]))
        );
        assert!(!prior.is_empty());
    }

    /// A saved Python file at `path`, the same but for its path.
    fn saved_file(path: &str) -> PriorFile {
        PriorFile {
            path: RelativePath::new(path).unwrap(),
            language: Language::Python,
            size: 1,
            mtime_ns: 5,
            hash: ContentHash([1; 16]),
            terms: terms(1),
        }
    }

    #[test]
    fn a_search_from_any_start_finds_what_a_whole_search_finds() {
        let paths: Vec<String> = (0..37).map(|i| format!("d{}/f{i:02}.py", i % 5)).collect();
        let prior = PriorFiles::saved(paths.iter().map(|path| saved_file(path)).collect());
        let mut sorted: Vec<&str> = paths.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        let mut asked: Vec<String> = paths.clone();
        // Paths before, between and after the saved ones.
        asked.extend(["a.py", "d2/f00.py", "d2/zz.py", "d4/", "zz.py"].map(String::from));
        for path in &asked {
            let whole = sorted.binary_search(&path.as_str());
            for near in 0..=prior.len() + 2 {
                assert_eq!(prior.find_near(path, near), whole, "{path} from {near}");
            }
        }
        let empty = PriorFiles::saved(Vec::new());
        assert_eq!(empty.find_near("a.py", 0), Err(0));
        assert_eq!(empty.find_near("a.py", 9), Err(0));
    }

    #[test]
    fn path_names_share_the_prior_copies_in_any_order() {
        let prior = PriorFiles::saved(vec![
            saved_file("a.py"),
            saved_file("b/c.py"),
            saved_file("d.py"),
        ]);
        let shared = |name: &RelativePath| {
            let at = prior.find(name.as_str()).unwrap();
            std::ptr::eq(prior.path_at(at).as_str(), name.as_str())
        };
        let mut names = PathNames::new(Some(&prior));
        // In order, out of order, and a path the prior lacks.
        for path in ["a.py", "b/c.py", "d.py", "a.py", "x.py", "d.py"] {
            let name = names.name(path).unwrap();
            assert_eq!(name.as_str(), path);
            assert_eq!(prior.find(path).is_some() && shared(&name), path != "x.py");
        }
        assert_eq!(names.name(""), None);
        let own = PathNames::new(None).name("a.py").unwrap();
        assert!(!shared(&own));
    }
}
