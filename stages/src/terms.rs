//! Terms: how intents, paths and identifiers are cut into comparable words.
//!
//! One splitter serves every signal so that an intent word and a path segment meet
//! on equal terms: text is split on anything that is not a letter or digit, then
//! identifiers are split at camelCase humps and letter/digit boundaries
//! (`parseHTTPHeader2` → `parse`, `http`, `header`, `2`). Words are lower-cased and
//! stemmed with the Snowball English stemmer, so `fixes`, `fixed` and `fixing` all
//! become `fix` while `prefix` and `fixtures` stay distinct words.

use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

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
/// use aic_stages::terms::stem;
/// assert_eq!(stem("fixes"), "fix");
/// assert_eq!(stem("fixed"), "fix");
/// assert_eq!(stem("prefix"), "prefix");
/// assert_ne!(stem("fixtures"), "fix");
/// ```
pub fn stem(word: &str) -> String {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER
        .get_or_init(|| Stemmer::create(Algorithm::English))
        .stem(word)
        .into_owned()
}

/// The stemmed words of a path: every segment split with [`split_words`], then
/// stemmed; dots, slashes, underscores and dashes all separate words.
pub fn path_terms(path: &str) -> Vec<String> {
    split_words(path).iter().map(|w| stem(w)).collect()
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

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
    fn path_terms_keep_whole_words() {
        let terms = path_terms("src/prefix.ts");
        assert!(!terms.contains(&"fix".to_owned()));
        let terms = path_terms("tests/fixtures/debug.py");
        assert!(!terms.contains(&"fix".to_owned()));
        assert!(!terms.contains(&"bug".to_owned()));
    }
}
