//! Terms: how intents, paths and identifiers are cut into comparable words.
//!
//! One splitter serves every signal so that an intent word and a path segment meet
//! on equal terms: text is split on anything that is not a letter or digit, then
//! identifiers are split at camelCase humps and letter/digit boundaries
//! (`parseHTTPHeader2` → `parse`, `http`, `header`, `2`). Words are lower-cased and
//! stemmed with the Snowball English stemmer, so `fixes`, `fixed` and `fixing` all
//! become `fix` while `prefix` and `fixtures` stay distinct words.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::FxHashMap;

use super::term_list::TermList;

/// Words that carry no subject in an intent (English function words and question
/// words). Compared against lower-cased, unstemmed words.
pub const STOPWORDS: &[&str] = &[
    "a", "about", "above", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could",
    "did", "do", "does", "doing", "done", "during", "each", "either", "every", "for", "from",
    "get", "gets", "had", "has", "have", "having", "he", "her", "here", "his", "how", "i", "if",
    "in", "into", "is", "it", "its", "just", "let", "lets", "make", "me", "more", "most", "my",
    "need", "needs", "no", "nor", "not", "now", "of", "on", "once", "only", "or", "other", "our",
    "out", "over", "please", "same", "she", "should", "so", "some", "such", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too",
    "under", "until", "up", "us", "very", "via", "was", "we", "were", "what", "when", "where",
    "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
];

/// Whether a lower-cased word is a stop word.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// Splits text into lower-cased words: on every character that is not alphanumeric,
/// then at camelCase humps (`userService` → `user`, `service`; `HTTPServer` →
/// `http`, `server`) and at letter/digit boundaries (`utf8` → `utf`, `8`).
///
/// Order follows the text; duplicates are kept.
pub fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        if chunk.is_empty() {
            continue;
        }
        split_identifier(chunk, &mut words);
    }
    words
}

fn split_identifier(chunk: &str, out: &mut Vec<String>) {
    let chars: Vec<char> = chunk.chars().collect();
    let mut start = 0;
    for i in 1..chars.len() {
        let (prev, cur) = (chars[i - 1], chars[i]);
        let next_is_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
        let boundary = (prev.is_lowercase() && cur.is_uppercase())
            || (prev.is_uppercase() && cur.is_uppercase() && next_is_lower)
            || (prev.is_alphabetic() && cur.is_numeric())
            || (prev.is_numeric() && cur.is_alphabetic());
        if boundary {
            out.push(chars[start..i].iter().collect::<String>().to_lowercase());
            start = i;
        }
    }
    out.push(chars[start..].iter().collect::<String>().to_lowercase());
}

/// Stems one lower-case word with the Snowball English stemmer.
///
/// # Examples
///
/// ```
/// use aic_stages::select::terms::stem;
/// assert_eq!(stem("fixes"), "fix");
/// assert_eq!(stem("fixed"), "fix");
/// assert_eq!(stem("prefix"), "prefix");
/// assert_ne!(stem("fixtures"), "fix");
/// ```
pub fn stem(word: &str) -> String {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    // Path and identifier words repeat across thousands of files, so each
    // thread memoises the stems it computed; the memo is a pure function's
    // cache and is cleared when it reaches its cap.
    const MEMO_CAP: usize = 1 << 16;
    thread_local! {
        static MEMO: std::cell::RefCell<HashMap<String, String>> =
            std::cell::RefCell::new(HashMap::new());
    }
    if word.len() > 32 {
        return STEMMER
            .get_or_init(|| Stemmer::create(Algorithm::English))
            .stem(word)
            .into_owned();
    }
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(stemmed) = memo.get(word) {
            return stemmed.clone();
        }
        let stemmed = STEMMER
            .get_or_init(|| Stemmer::create(Algorithm::English))
            .stem(word)
            .into_owned();
        if memo.len() >= MEMO_CAP {
            memo.clear();
        }
        memo.insert(word.to_owned(), stemmed.clone());
        stemmed
    })
}

/// The stemmed words of a path: every segment split with [`split_words`], then
/// stemmed; dots, slashes, underscores and dashes all separate words.
pub fn path_terms(path: &str) -> Vec<String> {
    split_words(path).iter().map(|w| stem(w)).collect()
}

/// A stemmed term's identity in [`TermStats`]: the low 32 bits of its xxh3-64.
///
/// Two different terms share an id with probability about 1 in 4 billion per
/// pair; a collision can only add a little relevance to one file, never remove
/// any, so the saving in memory (4 bytes per term instead of the string) wins.
pub fn term_id(stemmed: &str) -> u32 {
    (xxhash_rust::xxh3::xxh3_64(stemmed.as_bytes()) & 0xffff_ffff) as u32
}

/// One distinct term of a file and its occurrences: 6 bytes, with no padding
/// (a resident snapshot holds one per distinct word of every file, so the
/// two bytes a `(u32, u16)` pair would spend on alignment are a quarter of
/// its term counts). Serialised as the pair `(id, count)` would be.
#[derive(Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
#[repr(C, packed(2))]
pub struct TermCount {
    /// The term's [`term_id`].
    pub id: u32,
    /// Its occurrences in the file, saturating at `u16::MAX`.
    pub count: u16,
}

impl TermCount {
    /// The pair `(id, count)`.
    pub fn pair(self) -> (u32, u16) {
        (self.id, self.count)
    }
}

impl From<(u32, u16)> for TermCount {
    fn from((id, count): (u32, u16)) -> Self {
        Self { id, count }
    }
}

impl PartialEq for TermCount {
    fn eq(&self, other: &Self) -> bool {
        self.pair() == other.pair()
    }
}

impl Eq for TermCount {}

impl std::fmt::Debug for TermCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.pair().fmt(f)
    }
}

/// Term frequencies of one file, for the BM25 content relevance signal.
///
/// Terms are the words of the content (identifiers split as [`split_words`]
/// does, lower-cased and stemmed, stop words and one-letter words left out) plus
/// the words of the path. Held as a [`TermList`] of 2–4 bytes a term: a
/// 10 KiB source file has a few hundred distinct terms, so a 10,000-file
/// repository needs a few MiB.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TermStats {
    /// Distinct terms with their counts.
    /// Shared: the long-lived process's memo of decoded rows and the
    /// resident snapshot's entry hold one copy.
    pub terms: TermList,
    /// Number of term occurrences in the file (the BM25 document length).
    pub length: u32,
}

impl TermStats {
    /// Counts the terms of a file's text and path.
    ///
    /// # Examples
    ///
    /// ```
    /// use aic_stages::select::terms::{TermStats, term_id, stem};
    /// let stats = TermStats::of("src/user.rs", "fn find_user(users: &[User]) -> User {}");
    /// assert_eq!(stats.frequency(term_id(&stem("user"))), 5);
    /// assert_eq!(stats.frequency(term_id("find")), 1);
    /// ```
    pub fn of(path: &str, content: &str) -> Self {
        // `(term id, occurrences)` in order of first sight; the memo keeps
        // each word's index here for the current file, so counting a word
        // takes one hash look-up. Words that stem alike get one entry each,
        // merged after sorting.
        let mut counts: Vec<(u32, u32)> = Vec::new();
        let mut length = 0u32;
        WORD_MEMO.with_borrow_mut(|memo| {
            memo.next_file();
            let mut add = |word: &str| {
                if word.len() < 2 {
                    return;
                }
                if let Some(slot) = memo.slot(word, &mut counts) {
                    counts[slot].1 += 1;
                    length = length.saturating_add(1);
                }
            };
            for word in split_words(path) {
                add(&word);
            }
            let mut lowered = [0_u8; MAX_CONTENT_WORD_BYTES];
            for chunk in alphanumeric_runs(content) {
                if chunk.len() > MAX_CONTENT_WORD_BYTES {
                    continue;
                }
                if chunk.bytes().all(|b| b.is_ascii_lowercase()) {
                    add(chunk);
                } else if chunk.is_ascii() {
                    split_ascii_identifier(chunk.as_bytes(), &mut lowered, &mut add);
                } else {
                    let mut parts = Vec::new();
                    split_identifier(chunk, &mut parts);
                    for part in &parts {
                        add(part);
                    }
                }
            }
        });
        counts.sort_unstable_by_key(|&(id, _)| id);
        let mut terms: Vec<TermCount> = Vec::with_capacity(counts.len());
        let mut merged = counts.into_iter().peekable();
        while let Some((id, mut count)) = merged.next() {
            while let Some((_, more)) = merged.next_if(|&(next, _)| next == id) {
                count = count.saturating_add(more);
            }
            terms.push(TermCount {
                id,
                count: u16::try_from(count).unwrap_or(u16::MAX),
            });
        }
        Self {
            terms: TermList::new(&terms),
            length,
        }
    }

    /// Occurrences of a term (0 when absent).
    pub fn frequency(&self, id: u32) -> u16 {
        self.terms.frequency(id)
    }
}

/// Content words longer than this many bytes (hashes, base64, minified
/// names) are not terms.
const MAX_CONTENT_WORD_BYTES: usize = 64;

/// The most words a [`WordMemo`] remembers before it starts over.
const WORD_IDS_CAP: usize = 200_000;

thread_local! {
    /// The thread's [`WordMemo`].
    static WORD_MEMO: RefCell<WordMemo> = RefCell::new(WordMemo::default());
}

/// Each lower-case word's term id after stemming (`None` for a stop word),
/// keyed by the word's xxh3-64, and where the file being counted keeps each
/// word's count: source repeats the same identifiers, and stemming costs more
/// than a hash look-up.
///
/// The file's own table is small (a file's distinct words), so the look-up
/// of each occurrence stays in the nearest caches; the thread's table of all
/// words seen (up to [`WORD_IDS_CAP`], megabytes) is consulted once per
/// distinct word of a file.
///
/// Keying by the hash keeps the tables free of pointers to chase and strings
/// to allocate; two words sharing a 64-bit hash would share a term, which,
/// as with [`term_id`], can only add a little relevance.
#[derive(Default)]
struct WordMemo {
    /// Every word's term id.
    ids: FxHashMap<u64, Option<u32>>,
    /// The current file's words: the index of each one's entry in the file's
    /// counts, [`STOP_WORD`] for a stop word.
    slots: FxHashMap<u64, u32>,
}

/// The slot of a stop word in [`WordMemo::slots`]: it is not counted.
const STOP_WORD: u32 = u32::MAX;

/// The most distinct words a file's slot table keeps its room for: a larger
/// one is dropped when its thread starts the next file, so clearing stays
/// cheap.
const FILE_SLOTS_KEPT: usize = 1 << 14;

impl WordMemo {
    /// Starts counting a new file.
    fn next_file(&mut self) {
        if self.slots.capacity() > FILE_SLOTS_KEPT {
            self.slots = FxHashMap::default();
        } else {
            self.slots.clear();
        }
    }

    /// The index in `counts` of a lower-case word of two or more bytes in
    /// the current file (pushed as `(id, 0)` on its first sight in the
    /// file), `None` for a stop word.
    fn slot(&mut self, word: &str, counts: &mut Vec<(u32, u32)>) -> Option<usize> {
        let key = xxhash_rust::xxh3::xxh3_64(word.as_bytes());
        let slot = if let Some(&slot) = self.slots.get(&key) {
            slot
        } else {
            if self.ids.len() >= WORD_IDS_CAP && !self.ids.contains_key(&key) {
                self.ids.clear();
            }
            let id = *self
                .ids
                .entry(key)
                .or_insert_with(|| (!is_stopword(word)).then(|| term_id(&stem(word))));
            let slot = id.map_or(STOP_WORD, |id| {
                counts.push((id, 0));
                u32::try_from(counts.len() - 1).unwrap_or(STOP_WORD)
            });
            self.slots.insert(key, slot);
            slot
        };
        (slot != STOP_WORD).then_some(slot as usize)
    }
}

/// The maximal runs of alphanumeric characters of `text`, in order: the
/// non-empty pieces of `text.split(|c: char| !c.is_alphanumeric())`, with
/// ASCII bytes classified by a table instead of decoding each character.
fn alphanumeric_runs(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        let mut start = None;
        while at < bytes.len() {
            let (alphanumeric, width) = if bytes[at].is_ascii() {
                (bytes[at].is_ascii_alphanumeric(), 1)
            } else {
                let c = text[at..].chars().next().unwrap_or_default();
                (c.is_alphanumeric(), c.len_utf8())
            };
            match (alphanumeric, start) {
                (true, None) => start = Some(at),
                (false, Some(from)) => {
                    let run = &text[from..at];
                    at += width;
                    return Some(run);
                }
                _ => {}
            }
            at += width;
        }
        start.map(|from| &text[from..])
    })
}

/// [`split_identifier`] for an ASCII identifier of at most
/// [`MAX_CONTENT_WORD_BYTES`] bytes, without allocating: each part is
/// lower-cased into `lowered` and handed to `add`.
fn split_ascii_identifier(chunk: &[u8], lowered: &mut [u8], add: &mut impl FnMut(&str)) {
    for (at, byte) in chunk.iter().enumerate() {
        lowered[at] = byte.to_ascii_lowercase();
    }
    let mut emit = |from: usize, to: usize| {
        // ASCII in, ASCII out: always UTF-8.
        if let Ok(word) = std::str::from_utf8(&lowered[from..to]) {
            add(word);
        }
    };
    let mut start = 0;
    for i in 1..chunk.len() {
        let (prev, cur) = (chunk[i - 1], chunk[i]);
        let next_is_lower = chunk.get(i + 1).is_some_and(u8::is_ascii_lowercase);
        let boundary = (prev.is_ascii_lowercase() && cur.is_ascii_uppercase())
            || (prev.is_ascii_uppercase() && cur.is_ascii_uppercase() && next_is_lower)
            || (prev.is_ascii_alphabetic() && cur.is_ascii_digit())
            || (prev.is_ascii_digit() && cur.is_ascii_alphabetic());
        if boundary {
            emit(start, i);
            start = i;
        }
    }
    emit(start, chunk.len());
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    /// The counting of [`TermStats::of`] before its ASCII fast paths and
    /// memo: every character decoded, every identifier split by
    /// [`split_identifier`].
    fn reference_term_stats(path: &str, content: &str) -> TermStats {
        let mut counts: HashMap<u32, u32> = HashMap::new();
        let mut length = 0u32;
        let mut add = |word: &str| {
            if word.len() < 2 || is_stopword(word) {
                return;
            }
            *counts.entry(term_id(&stem(word))).or_default() += 1;
            length += 1;
        };
        for word in split_words(path) {
            add(&word);
        }
        for chunk in content.split(|c: char| !c.is_alphanumeric()) {
            if chunk.is_empty() || chunk.len() > 64 {
                continue;
            }
            let mut parts = Vec::new();
            split_identifier(chunk, &mut parts);
            for part in &parts {
                add(part);
            }
        }
        let mut terms: Vec<(u32, u16)> = counts
            .into_iter()
            .map(|(id, count)| (id, u16::try_from(count).unwrap_or(u16::MAX)))
            .collect();
        terms.sort_unstable();
        TermStats {
            terms: TermList::new(&terms.into_iter().map(TermCount::from).collect::<Vec<_>>()),
            length,
        }
    }

    /// The fast paths count exactly what splitting every chunk does, on this
    /// crate's sources and on text with non-ASCII letters and digits,
    /// acronyms, digits at both ends and words at the length limit.
    #[test]
    fn term_stats_match_the_plain_splitter() {
        let texts = [
            include_str!("terms.rs"),
            include_str!("../fit/slice.rs"),
            include_str!("../fit/tokens.rs"),
            include_str!("../facts.rs"),
            "parseHTTPHeader2 utf8Decoder XMLHttpRequest getURLForID A1b2C3 x9 9x __init__",
            "naïveCafé Straße ÜBERgröße 東京Tower ǅemal İstanbul ﬁle Ⅻclock ½cup",
            "camelCaseWordThatIsExactlySixtyFourBytesLongForTheLimitCheckHere1 andOneByteLongerThanThatLimitSoItIsSkippedEntirelyFromTheCounts12",
            "",
            "a",
            "é",
        ];
        for text in texts {
            assert_eq!(
                TermStats::of("src/userService/HTTPServer.ts", text),
                reference_term_stats("src/userService/HTTPServer.ts", text),
                "{:?}",
                text.get(..40).unwrap_or(text)
            );
        }
    }

    /// A file with more distinct words than a file's slot table keeps room
    /// for, then small files on the same thread: the table is replaced, and
    /// every count stays exact.
    #[test]
    fn term_stats_stay_exact_after_a_file_of_many_words() {
        let mut large = String::new();
        for mut i in 0..(FILE_SLOTS_KEPT + 5_000) {
            large.push('z');
            for _ in 0..4 {
                large.push(char::from(b'a' + (i % 26) as u8));
                i /= 26;
            }
            large.push(' ');
        }
        let small = "fn find_user(users: &[User]) -> User { users[0] }";
        for (path, text) in [
            ("src/small.rs", small),
            ("data/words.txt", large.as_str()),
            ("src/small.rs", small),
            ("src/again.rs", "zabaa zabaa users"),
        ] {
            assert_eq!(
                TermStats::of(path, text),
                reference_term_stats(path, text),
                "{path}"
            );
        }
    }

    /// A file with more distinct words than the memo holds: the thread's
    /// table of term ids starts over in the middle of it, and the counts
    /// still come out exact.
    #[test]
    fn term_stats_stay_exact_when_the_memo_starts_over_mid_file() {
        let word = |mut i: usize| {
            let mut word = String::from("q");
            for _ in 0..4 {
                word.push(char::from(b'a' + (i % 26) as u8));
                i /= 26;
            }
            word
        };
        let mut text = String::new();
        for i in (0..WORD_IDS_CAP + 20_000).chain(0..1_000) {
            text.push_str(&word(i));
            text.push_str(if i % 3 == 0 { "ing " } else { " " });
        }
        let stats = TermStats::of("src/many_words.txt", &text);
        assert!(
            stats
                .terms
                .to_term_counts()
                .iter()
                .any(|term| term.count >= 2)
        );
        assert_eq!(stats, reference_term_stats("src/many_words.txt", &text));
    }

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        let mut sorted = STOPWORDS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, STOPWORDS);
    }

    #[test_case("userService", &["user", "service"])]
    #[test_case("HTTPServer", &["http", "server"])]
    #[test_case("parse_http_header2", &["parse", "http", "header", "2"])]
    #[test_case("src/auth/jwt-token.ts", &["src", "auth", "jwt", "token", "ts"])]
    #[test_case("utf8Decoder", &["utf", "8", "decoder"])]
    #[test_case("  ", &[])]
    fn splits_identifiers(input: &str, expected: &[&str]) {
        assert_eq!(split_words(input), expected);
    }

    #[test_case("fixes", "fix")]
    #[test_case("fixing", "fix")]
    #[test_case("files", "file")]
    #[test_case("prefix", "prefix")]
    #[test_case("debug", "debug")]
    fn stems_inflections(word: &str, expected: &str) {
        assert_eq!(stem(word), expected);
    }

    #[test]
    fn term_stats_count_stemmed_words_of_path_and_content() {
        let stats = TermStats::of(
            "src/parser.py",
            "def parse(text):\n    return Parser(text).parse_all()\n",
        );
        assert_eq!(stats.frequency(term_id(&stem("parse"))), 2);
        assert_eq!(stats.frequency(term_id("text")), 2);
        assert_eq!(stats.frequency(term_id(&stem("parser"))), 2);
        assert_eq!(stats.frequency(term_id("return")), 1);
        assert_eq!(stats.frequency(term_id("missing")), 0);
        let terms = stats.terms.to_term_counts();
        assert!(terms.windows(2).all(|w| w[0].id < w[1].id));
    }

    #[test]
    fn term_stats_skip_stopwords_and_single_letters() {
        let stats = TermStats::of("", "the a of x y");
        assert_eq!(stats.length, 0);
    }

    #[test]
    fn path_terms_keep_whole_words() {
        let terms = path_terms("src/prefix.ts");
        assert!(!terms.contains(&"fix".to_owned()));
        let terms = path_terms("tests/fixtures/debug.py");
        assert!(!terms.contains(&"fix".to_owned()));
        assert!(!terms.contains(&"bug".to_owned()));
    }
}
