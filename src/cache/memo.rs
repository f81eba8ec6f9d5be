//! The in-process memo of a long-lived process (the MCP server, the daemon):
//! the decoded import rows it has already read or written, so a warm compile
//! does not decode them again, and the exact token counts of prompt blocks it
//! has counted.
//!
//! A file's path record and scan terms are not memoised: the resident index
//! keeps them in its snapshot, and a walk of a project it already holds takes
//! them from there ([`PriorFiles`](crate::pipeline::scan::prior::PriorFiles)),
//! so each file's facts are held once.
//!
//! It is a cache of the database, never the source of truth: rows are
//! content-addressed under the stage fingerprint, so an entry can be stale
//! only in the sense of being unused. A one-shot command has none (it reads
//! each row once, so memoising costs memory for nothing); a process that
//! compiles many times keeps one in its [`Host`](crate::host::Host). Bounded
//! by [`MAX_ENTRIES`]: past it, the memo starts over.

use std::sync::atomic::{AtomicUsize, Ordering};

use aic_stages::lang::ImportRef;
use aic_storage::FactsKey;
use dashmap::DashMap;

/// The most entries (import rows plus block counts) the memo holds before it
/// is cleared: the imports of every file of a tree of a million files, with
/// room to spare.
pub const MAX_ENTRIES: usize = 2_500_000;

/// The memo's tables.
#[derive(Debug, Default)]
pub struct Memo {
    imports: DashMap<FactsKey, Vec<ImportRef>>,
    /// Exact tokens of a prompt block, by xxh3-128 of its text.
    blocks: DashMap<u128, u32>,
    entries: AtomicUsize,
}

impl Memo {
    fn grow(&self) {
        if self.entries.fetch_add(1, Ordering::Relaxed) >= MAX_ENTRIES {
            self.imports.clear();
            self.blocks.clear();
            self.entries.store(0, Ordering::Relaxed);
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
        memo.put_block_tokens(1, 10);
        assert_eq!(memo.block_tokens(1), Some(10));
        assert_eq!(memo.block_tokens(2), None);
        memo.entries.store(MAX_ENTRIES, Ordering::Relaxed);
        memo.put_block_tokens(2, 20);
        assert_eq!(memo.block_tokens(1), None);
    }
}
