//! Instructions out of a rule file's Markdown, and when two say the same.

use crate::rules::Place;

/// One instruction: a bullet or a sentence of a rule file's prose.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Instruction {
    /// The file's display path.
    pub(super) path: String,
    /// One-based line it starts on.
    pub(super) line: usize,
    /// Its text, trimmed of list markers (for messages).
    pub(super) text: String,
    /// Lower case, punctuation and Markdown marks as spaces, collapsed.
    pub(super) normalized: String,
    /// Its content words ([`content_words`]), sorted and deduplicated.
    pub(super) words: Vec<String>,
}

impl Instruction {
    /// Where it is.
    pub(super) fn place(&self) -> Place {
        Place {
            path: self.path.clone(),
            line: self.line,
        }
    }
}

/// An instruction needs this many content words to be compared: shorter
/// lines ("Testing", "See below") say too little to be duplicates.
const MIN_WORDS: usize = 3;

/// The instructions of a rule file's text: each list item and each sentence
/// of a paragraph line, outside code fences, front matter, headings, tables
/// and HTML comments.
pub(super) fn instructions(path: &str, text: &str) -> Vec<Instruction> {
    let mut found = Vec::new();
    let mut fenced = false;
    let mut front_matter = text.starts_with("---");
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if front_matter {
            if index > 0 && trimmed == "---" {
                front_matter = false;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced
            || trimmed.is_empty()
            || trimmed.starts_with('#')
            || trimmed.starts_with('|')
            || trimmed.starts_with("<!--")
        {
            continue;
        }
        let item = trimmed
            .trim_start_matches(['-', '*', '+', '>'])
            .trim_start();
        let item = strip_ordinal(item);
        for sentence in sentences(item) {
            let words = content_words(sentence);
            if words.is_empty() {
                continue;
            }
            found.push(Instruction {
                path: path.to_owned(),
                line: index + 1,
                text: sentence.to_owned(),
                normalized: normalize(sentence),
                words,
            });
        }
    }
    found
}

/// `item` without a leading `1.` or `2)`.
fn strip_ordinal(item: &str) -> &str {
    let digits = item.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && matches!(item.as_bytes().get(digits), Some(b'.' | b')')) {
        item[digits + 1..].trim_start()
    } else {
        item
    }
}

/// The sentences of one line: split after `. `, `! ` and `? `.
fn sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = line.as_bytes();
    for i in 0..bytes.len() {
        if matches!(bytes[i], b'.' | b'!' | b'?') && bytes.get(i + 1) == Some(&b' ') {
            out.push(line[start..=i].trim());
            start = i + 1;
        }
    }
    out.push(line[start..].trim());
    out.retain(|s| !s.is_empty());
    out
}

/// Lower case, every character that is not a letter or digit as a space,
/// spaces collapsed.
pub(super) fn normalize(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Small words that do not change what an instruction asks.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "to", "for", "of", "in", "on", "at", "by", "with", "and", "or", "be", "is",
    "are", "it", "its", "this", "that", "these", "those", "when", "you", "your", "we", "our",
    "please", "make", "sure", "should", "must", "can", "will", "all", "any", "as", "from", "into",
    "so", "if", "then", "than", "also", "just",
];

/// The content words of `text`: normalized, small words dropped, each cut to
/// a crude stem (a trailing `ing`, `ed`, `es` or `s` off words of five or
/// more letters), sorted and deduplicated.
pub(super) fn content_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = normalize(text)
        .split(' ')
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(w))
        .map(stem)
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

fn stem(word: &str) -> String {
    for suffix in ["ing", "ed", "es", "s"] {
        if word.len() >= 5
            && let Some(stem) = word.strip_suffix(suffix)
        {
            return stem.to_owned();
        }
    }
    word.to_owned()
}

/// Two instructions say the same when their content words overlap by at
/// least this share (Jaccard).
const SIMILAR_SHARE: f64 = 0.75;

/// Whether two sorted content-word lists say the same: at least
/// [`MIN_WORDS`] each and a Jaccard overlap of [`SIMILAR_SHARE`].
pub(super) fn similar(a: &[String], b: &[String]) -> bool {
    if a.len() < MIN_WORDS || b.len() < MIN_WORDS {
        return false;
    }
    let shared = a.iter().filter(|w| b.binary_search(w).is_ok()).count();
    let union = a.len() + b.len() - shared;
    shared as f64 >= SIMILAR_SHARE * union as f64
}
