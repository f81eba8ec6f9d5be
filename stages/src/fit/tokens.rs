//! Token counting in `cl100k_base`, the unit of every budget, or in
//! `o200k_base` when the model is known to use it ([`Tokenizer`]).
//!
//! Counts come from `bpe-openai`'s cl100k tokenizer: the same counts as
//! `tiktoken-rs`'s `count_ordinary` (the `tokenizer_agrees_with_tiktoken`
//! test compares every file of this workspace's dependency sources, 137 MB),
//! about three times faster (15 MB/s against 5 MB/s per core), and its
//! tables load in about 80 ms instead of 200 ms. The tokenizer is loaded once
//! per process and only on the first count: a compile that never counts
//! never pays for it.
//!
//! ASCII text (nearly all code) is cut into `cl100k_base`'s pre-tokenizer
//! pieces by hand (`pretokenizer`), other text by `bpe-openai`'s regular
//! expression; the pieces are the same. `o200k_base` text is always cut by
//! the regular expression (the `o200k_tokenizer_agrees_with_tiktoken` test
//! checks its counts on the same corpus).
//!
//! Two memos make repeated text cheap, both exact because a count is the sum
//! of independent parts: each thread remembers the count of every short
//! pre-tokenizer piece it has encoded (code repeats ` return`, `);` and
//! `\n\t\t` endlessly), and [`TokenCounter::count_lines`] remembers whole
//! line runs process-wide.

mod pretokenizer;

use std::fmt;
use std::sync::OnceLock;

use bpe_openai::Tokenizer as Bpe;
use rustc_hash::{FxBuildHasher, FxHashMap};
use serde::Serialize;

/// A number of tokens in the compile's encoding ([`Tokenizer`]; `cl100k_base`
/// unless the model is known to use `o200k_base`), the unit of every budget.
#[derive(
    Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct TokenCount(pub u32);

impl TokenCount {
    /// Zero tokens.
    pub const ZERO: Self = Self(0);

    /// The count as a `u64`, for sums that must not overflow.
    pub fn get(self) -> u64 {
        u64::from(self.0)
    }

    /// Builds a count from a `usize`, saturating at `u32::MAX`.
    pub fn from_usize(count: usize) -> Self {
        Self(u32::try_from(count).unwrap_or(u32::MAX))
    }

    /// Builds a count from a `u64`, saturating at `u32::MAX`.
    pub fn from_u64(count: u64) -> Self {
        Self(u32::try_from(count).unwrap_or(u32::MAX))
    }
}

impl fmt::Debug for TokenCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}t", self.0)
    }
}

impl fmt::Display for TokenCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// The byte-pair encodings a compile can count in.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
pub enum Tokenizer {
    /// `cl100k_base`: GPT-4, GPT-3.5 and the default for every other model.
    #[default]
    #[serde(rename = "cl100k_base")]
    Cl100k,
    /// `o200k_base`: GPT-4o, GPT-4.1, GPT-5 and the o-series.
    #[serde(rename = "o200k_base")]
    O200k,
}

impl Tokenizer {
    /// The encoding's name, as `tiktoken` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cl100k => "cl100k_base",
            Self::O200k => "o200k_base",
        }
    }

    /// The encoding's tables, built on first use.
    fn encoder(self) -> &'static Bpe {
        match self {
            Self::Cl100k => crate::work::once::<&Bpe>(&ENCODER, bpe_openai::cl100k_base),
            Self::O200k => crate::work::once::<&Bpe>(&O200K_ENCODER, bpe_openai::o200k_base),
        }
    }
}

impl fmt::Display for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Counts tokens of text in one [`Tokenizer`]'s encoding (`cl100k_base` by
/// default).
///
/// Cheap to construct and to copy; the encoder behind it is a process-wide
/// singleton built lazily on the first [`TokenCounter::count`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenCounter {
    tokenizer: Tokenizer,
}

static ENCODER: OnceLock<&'static Bpe> = OnceLock::new();
static O200K_ENCODER: OnceLock<&'static Bpe> = OnceLock::new();

impl TokenCounter {
    /// The counter for `cl100k_base`.
    pub fn cl100k() -> Self {
        Self::new(Tokenizer::Cl100k)
    }

    /// The counter for `o200k_base`.
    pub fn o200k() -> Self {
        Self::new(Tokenizer::O200k)
    }

    /// The counter for `tokenizer`.
    pub fn new(tokenizer: Tokenizer) -> Self {
        Self { tokenizer }
    }

    /// The encoding this counter counts in.
    pub fn tokenizer(self) -> Tokenizer {
        self.tokenizer
    }

    /// Counts the tokens of `text`, treating special-token text such as
    /// `<|endoftext|>` as ordinary text (file contents are data, never control).
    pub fn count(self, text: &str) -> TokenCount {
        if text.is_empty() {
            return TokenCount::ZERO;
        }
        TokenCount::from_usize(count_pieces(self.tokenizer, text))
    }

    /// Counts the tokens of `text` as [`TokenCounter::count`] does — the same
    /// number — as the sum of its line runs' counts (a run: a line holding
    /// something besides whitespace, with the blank lines after it), each
    /// remembered for the
    /// rest of the process (see [`RUN_MEMO_ENTRIES`]). Slicing counts many
    /// texts made of the same lines — the candidate slices of one file, and
    /// in a long-lived process (the daemon, the MCP server) the same files
    /// for the next intent — so each line's byte-pair work is paid once;
    /// later texts cost a scan for line ends, a hash and a look-up per run.
    ///
    /// The sum is exact because `cl100k_base`'s pre-tokenizer always ends a
    /// piece at the start of a line that holds something besides whitespace
    /// and does not start with `\r`: no piece runs from such a line into the
    /// previous one. `o200k_base`'s does too, except before a line starting
    /// with `/` (its punctuation piece takes trailing `[\r\n/]*`), so for it
    /// such lines are not cut before. `tests/tokens.rs` checks both on every
    /// file of the workspace's dependency sources. Runs are remembered per
    /// encoding.
    pub fn count_lines(self, text: &str) -> TokenCount {
        if text.is_empty() {
            return TokenCount::ZERO;
        }
        let mut total = 0_usize;
        let slash_cuts = self.tokenizer == Tokenizer::Cl100k;
        for run in line_runs(text, slash_cuts) {
            let hash = xxhash_rust::xxh3::xxh3_128_with_seed(run.as_bytes(), self.tokenizer as u64);
            let shard = &RUN_MEMO[(hash >> 124) as usize % RUN_MEMO_SHARDS];
            let known = shard
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(&hash)
                .copied();
            let count = known.unwrap_or_else(|| {
                let count = u32::try_from(count_pieces(self.tokenizer, run)).unwrap_or(u32::MAX);
                let mut memo = shard
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if memo.len() >= RUN_MEMO_ENTRIES / RUN_MEMO_SHARDS {
                    memo.clear();
                }
                memo.insert(hash, count);
                count
            });
            total += count as usize;
        }
        TokenCount::from_usize(total)
    }

    /// Builds the `cl100k_base` encoder now if it is not built yet. A caller
    /// that knows it will count later (every compile counts its prompt) calls
    /// this on a spare thread at the start, so the build overlaps other work.
    pub fn preload() {
        ENCODER.get_or_init(bpe_openai::cl100k_base);
    }

    /// Builds this counter's encoder now if it is not built yet (see
    /// [`TokenCounter::preload`]).
    pub fn preload_encoder(self) {
        self.tokenizer.encoder();
    }

    /// Whether the `cl100k_base` encoder has been built in this process (for
    /// tests and traces that check a compile did not pay for it).
    pub fn is_loaded() -> bool {
        ENCODER.get().is_some()
    }

    /// Whether this counter's encoder has been built in this process.
    pub fn encoder_loaded(self) -> bool {
        match self.tokenizer {
            Tokenizer::Cl100k => ENCODER.get().is_some(),
            Tokenizer::O200k => O200K_ENCODER.get().is_some(),
        }
    }
}

/// `text` cut before every line that holds a character other than
/// whitespace and does not start with `\r` (nor with `/` unless
/// `slash_cuts`): each run is such a line (or the text's start) with the
/// blank lines after it. Concatenated, the runs are `text`.
fn line_runs(text: &str, slash_cuts: bool) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut search = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        while let Some(offset) = memchr::memchr(b'\n', &bytes[search..]) {
            let cut = search + offset + 1;
            search = cut;
            let line_end = memchr::memchr(b'\n', &bytes[cut..]).map_or(bytes.len(), |at| cut + at);
            let line = &text[cut..line_end];
            if !line.starts_with('\r')
                && (slash_cuts || !line.starts_with('/'))
                && line.chars().any(|c| !c.is_whitespace())
            {
                let run = &text[start..cut];
                start = cut;
                return Some(run);
            }
        }
        let run = &text[start..];
        start = bytes.len();
        Some(run)
    })
}

/// The most line runs [`TokenCounter::count_lines`] remembers, about 40
/// bytes each (2.5 MiB in all); when full the memo starts over.
pub const RUN_MEMO_ENTRIES: usize = 65_536;

/// The count of each line run seen, by the run's 128-bit xxh3 hash, in
/// [`RUN_MEMO_SHARDS`] maps chosen by the hash's top bits so that parallel
/// workers rarely wait for one another; each holds at most its share of
/// [`RUN_MEMO_ENTRIES`] and starts over when full.
static RUN_MEMO: [std::sync::Mutex<FxHashMap<u128, u32>>; RUN_MEMO_SHARDS] =
    [const { std::sync::Mutex::new(FxHashMap::with_hasher(FxBuildHasher)) }; RUN_MEMO_SHARDS];

/// The number of independently locked parts of the line-run memo.
const RUN_MEMO_SHARDS: usize = 16;

/// The most bytes a pre-tokenizer piece may have to be remembered by
/// [`count_pieces`]; longer pieces (rare: long words, runs of spaces or
/// punctuation) are encoded each time.
const PIECE_MEMO_MAX_BYTES: usize = 24;

/// The most pieces each thread remembers (about 60 bytes each with the
/// table, 4 MiB); when full the memo starts over. The vocabulary of a large
/// repository is that big: deno's `cli/` alone holds 54,000 distinct short
/// pieces, and with room for only 16,384 a warm count of it was 1.7 times
/// slower (the memo kept starting over).
const PIECE_MEMO_ENTRIES: usize = 65_536;

thread_local! {
    /// Each short piece's token count, per thread, so the byte-pair work for
    /// a common piece (` return`, `);`, `\n\t`) is done once per thread.
    static PIECE_MEMO: std::cell::RefCell<FxHashMap<Box<[u8]>, u32>> =
        std::cell::RefCell::new(FxHashMap::default());
    /// [`PIECE_MEMO`] for `o200k_base`.
    static O200K_PIECE_MEMO: std::cell::RefCell<FxHashMap<Box<[u8]>, u32>> =
        std::cell::RefCell::new(FxHashMap::default());
}

/// The token count of `text` in `tokenizer`: the sum of its pre-tokenizer
/// pieces' counts, exactly what `Tokenizer::count` computes, with each short
/// piece's count remembered per thread. ASCII text in `cl100k_base` is cut
/// into pieces by [`pretokenizer::ascii_pieces`], other text by
/// `bpe-openai`'s regular expression.
fn count_pieces(tokenizer: Tokenizer, text: &str) -> usize {
    let encoder = tokenizer.encoder();
    let memo = match tokenizer {
        Tokenizer::Cl100k => &PIECE_MEMO,
        Tokenizer::O200k => &O200K_PIECE_MEMO,
    };
    memo.with_borrow_mut(|memo| {
        let mut count_piece = |bytes: &[u8]| {
            if bytes.len() > PIECE_MEMO_MAX_BYTES {
                return encoder.bpe.count(bytes);
            }
            if let Some(&count) = memo.get(bytes) {
                return count as usize;
            }
            let count = encoder.bpe.count(bytes);
            if memo.len() >= PIECE_MEMO_ENTRIES {
                memo.clear();
            }
            memo.insert(bytes.into(), u32::try_from(count).unwrap_or(u32::MAX));
            count
        };
        if tokenizer == Tokenizer::Cl100k && text.is_ascii() {
            pretokenizer::ascii_pieces(text.as_bytes())
                .map(count_piece)
                .sum()
        } else {
            encoder
                .split(text)
                .map(|piece| count_piece(piece.as_bytes()))
                .sum()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counting by line runs gives the count of a plain count, for texts
    /// that share runs and for runs seen first in another text.
    #[test_case::test_case(TokenCounter::cl100k(); "cl100k")]
    #[test_case::test_case(TokenCounter::o200k(); "o200k")]
    fn counting_by_line_runs_gives_the_same_counts(counter: TokenCounter) {
        let body = include_str!("slice.rs");
        let lines: Vec<&str> = body.lines().collect();
        for window in [1, 7, 40, 400] {
            for chunk in lines.chunks(window).take(30) {
                let text = chunk.join("\n");
                assert_eq!(counter.count_lines(&text), counter.count(&text));
            }
        }
        assert_eq!(counter.count_lines(body), counter.count(body));
        assert_eq!(counter.count_lines(""), TokenCount::ZERO);
    }

    #[test]
    fn line_runs_cut_before_lines_with_text() {
        let runs: Vec<&str> = line_runs("a\n\n  \n  b\n\rc\nd", true).collect();
        assert_eq!(runs, ["a\n\n  \n", "  b\n\rc\n", "d"]);
        assert_eq!(line_runs("x\n", true).collect::<Vec<_>>(), ["x\n"]);
        let runs: Vec<&str> = line_runs("a;\n// b\nc", false).collect();
        assert_eq!(runs, ["a;\n// b\n", "c"]);
    }

    #[test]
    fn counts_known_strings() {
        let counter = TokenCounter::cl100k();
        assert_eq!(counter.count(""), TokenCount(0));
        assert_eq!(counter.count("hello world"), TokenCount(2));
        assert_eq!(counter.count("fn main() {}"), TokenCount(4));
    }

    #[test]
    fn o200k_counts_differ_from_cl100k() {
        let o200k = TokenCounter::o200k();
        assert_eq!(o200k.count("hello world"), TokenCount(2));
        let body = include_str!("slice.rs");
        assert_ne!(o200k.count(body), TokenCounter::cl100k().count(body));
        assert_eq!(
            o200k.count(body).0 as usize,
            bpe_openai::o200k_base().count(body)
        );
    }

    #[test]
    fn special_tokens_are_ordinary_text() {
        let counter = TokenCounter::cl100k();
        assert!(counter.count("<|endoftext|>").0 > 1);
    }
}
