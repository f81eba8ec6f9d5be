//! Token counting in `cl100k_base`, the unit of every budget (seed §9,
//! ARCHITECTURE.md §Tokens).
//!
//! The encoder costs about 0.15 s of CPU to build, so it is built once per process
//! and only on the first count: a compile that never counts never pays for it.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

use crate::repo_map::TokenCount;

/// Counts tokens of text in `cl100k_base`.
///
/// Cheap to construct and to copy; the encoder behind it is a process-wide
/// singleton built lazily on the first [`TokenCounter::count`].
#[derive(Clone, Copy, Debug, Default)]
pub struct TokenCounter;

static ENCODER: OnceLock<&'static CoreBPE> = OnceLock::new();

impl TokenCounter {
    /// The counter for `cl100k_base`.
    pub fn cl100k() -> Self {
        Self
    }

    /// Counts the tokens of `text`, treating special-token text such as
    /// `<|endoftext|>` as ordinary text (file contents are data, never control).
    pub fn count(self, text: &str) -> TokenCount {
        if text.is_empty() {
            return TokenCount::ZERO;
        }
        let encoder = ENCODER.get_or_init(tiktoken_rs::cl100k_base_singleton);
        TokenCount::from_usize(encoder.count_ordinary(text))
    }

    /// Builds the encoder now if it is not built yet. A caller that knows it
    /// will count later (every compile counts its prompt) calls this on a
    /// spare thread at the start, so the build overlaps other work.
    pub fn preload() {
        ENCODER.get_or_init(tiktoken_rs::cl100k_base_singleton);
    }

    /// Whether the encoder has been built in this process (for tests and traces
    /// that check a compile did not pay for it).
    pub fn is_loaded() -> bool {
        ENCODER.get().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_strings() {
        let counter = TokenCounter::cl100k();
        assert_eq!(counter.count(""), TokenCount(0));
        assert_eq!(counter.count("hello world"), TokenCount(2));
        assert_eq!(counter.count("fn main() {}"), TokenCount(4));
    }

    #[test]
    fn special_tokens_are_ordinary_text() {
        let counter = TokenCounter::cl100k();
        assert!(counter.count("<|endoftext|>").0 > 1);
    }
}
