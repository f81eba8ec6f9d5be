//! The in-process memo of a long-lived process (the MCP server): the path
//! index and the decoded scan and import rows it has already read or written,
//! so a warm compile neither looks each file up in redb nor decodes its row
//! again, and the exact token counts of prompt blocks it has counted.
//!
//! It is a cache of the database, never the source of truth: a path entry is
//! used only when the file's size and mtime still match (as in the database),
//! and rows are content-addressed under the stage fingerprint, so an entry can
//! be stale only in the sense of being unused. A one-shot command has none (it
//! reads each row once, so memoising costs memory for nothing); a process that
//! compiles many times keeps one in its [`Host`](crate::host::Host). Bounded by
//! [`MAX_ENTRIES`]: past it, the memo starts over.

use std::sync::atomic::{AtomicUsize, Ordering};

use aic_stages::lang::ImportRef;
use aic_stages::relative_path::RelativePath;
use aic_stages::row_codec::EntryTerms;
use aic_storage::{FactsKey, PathRecord};
use dashmap::DashMap;

/// The most entries (paths plus rows) the memo holds before it is cleared:
/// the paths and scan rows of a tree of a million files and more. An entry
/// shares its path and its terms with the resident snapshot's entry for the
/// file (both are reference-counted), so while the snapshot holds them an
/// entry costs its table slot (~100 bytes); rows of files since edited are
/// the memo's own, up to ~1 KiB each.
pub const MAX_ENTRIES: usize = 2_500_000;

/// The memo's tables.
#[derive(Debug, Default)]
pub struct Memo {
    paths: DashMap<([u8; 16], RelativePath), PathRecord>,
    scan: DashMap<FactsKey, EntryTerms>,
    imports: DashMap<FactsKey, Vec<ImportRef>>,
    /// Exact tokens of a prompt block, by xxh3-128 of its text.
    blocks: DashMap<u128, u32>,
    entries: AtomicUsize,
}

impl Memo {
    fn grow(&self) {
        if self.entries.fetch_add(1, Ordering::Relaxed) >= MAX_ENTRIES {
            self.paths.clear();
            self.scan.clear();
            self.imports.clear();
            self.blocks.clear();
            self.entries.store(0, Ordering::Relaxed);
        }
    }

    /// The path record of a file of a project.
    pub fn path(&self, project: &[u8; 16], path: &RelativePath) -> Option<PathRecord> {
        self.paths
            .get(&(*project, path.clone()))
            .map(|entry| *entry)
    }

    /// Remembers a path record (the path's text is shared, not copied).
    pub fn put_path(&self, project: &[u8; 16], path: &RelativePath, record: PathRecord) {
        if self
            .paths
            .insert((*project, path.clone()), record)
            .is_none()
        {
            self.grow();
        }
    }

    /// Decoded scan facts by row key.
    pub fn scan(&self, key: &FactsKey) -> Option<EntryTerms> {
        self.scan.get(key).map(|entry| entry.clone())
    }

    /// Remembers decoded scan facts.
    pub fn put_scan(&self, key: FactsKey, facts: EntryTerms) {
        if self.scan.insert(key, facts).is_none() {
            self.grow();
        }
    }

    /// Decoded imports by row key.
    pub fn imports(&self, key: &FactsKey) -> Option<Vec<ImportRef>> {
        self.imports.get(key).map(|entry| entry.clone())
    }

    /// The exact tokens of a prompt block, by the xxh3-128 of its text.
    pub fn block_tokens(&self, text_hash: u128) -> Option<u32> {
        self.blocks.get(&text_hash).map(|entry| *entry)
    }

    /// Remembers a block's exact tokens.
    pub fn put_block_tokens(&self, text_hash: u128, tokens: u32) {
        if self.blocks.insert(text_hash, tokens).is_none() {
            self.grow();
        }
    }

    /// Remembers decoded imports.
    pub fn put_imports(&self, key: FactsKey, imports: Vec<ImportRef>) {
        if self.imports.insert(key, imports).is_none() {
            self.grow();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memo_starts_over_past_its_bound() {
        let memo = Memo::default();
        let record = PathRecord {
            size: 1,
            mtime_ns: 2,
            content_hash: 3,
            binary: false,
        };
        let [a, b] = ["a", "b"].map(|p| RelativePath::new(p).unwrap());
        memo.put_path(&[0; 16], &a, record);
        assert_eq!(memo.path(&[0; 16], &a), Some(record));
        assert_eq!(memo.path(&[1; 16], &a), None);
        memo.entries.store(MAX_ENTRIES, Ordering::Relaxed);
        memo.put_path(&[0; 16], &b, record);
        assert_eq!(memo.path(&[0; 16], &a), None);
    }
}
