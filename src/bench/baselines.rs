//! Simple rankings every aic number is compared with, computed on the same
//! worktree as aic's:
//!
//! - `bm25`: Okapi BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N − df + 0.5) ÷
//!   (df + 0.5))) of the intent's distinct terms over documents made of each
//!   file's path terms and content terms. Files with a NUL byte in their first
//!   8 KiB or over 1 MiB count by their path alone.
//! - `path-keywords`: the share of the intent's distinct terms that are terms
//!   of the path; files with none are not ranked.
//! - `recency`: last commit time before the checked-out commit, newest first,
//!   as aic's own recency signal reads it (`gix`, the newest 1,000 commits);
//!   files not touched in those commits follow in path order.
//!
//! Terms: the text is split at every character that is not a letter or a
//! digit and at lower-to-upper case changes (`CliRunner` → `cli`, `runner`),
//! lowercased; terms shorter than 2 characters and a short list of English
//! stop words are dropped. Ties break on path ascending. Only files with a
//! positive score are ranked (except `recency`, which ranks every file).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use aic_stages::path_table::PathTable;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation.
const B: f64 = 0.75;
/// Files larger than this (bytes) count by their path alone.
const MAX_CONTENT_BYTES: u64 = 1 << 20;
/// Words too common to rank with.
const STOP_WORDS: [&str; 34] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "has", "have",
    "if", "in", "into", "is", "it", "its", "not", "of", "on", "or", "so", "that", "the", "this",
    "to", "was", "when", "will", "with", "we",
];

/// The terms of `text`, in order (see the module docs).
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    let flush = |current: &mut String, out: &mut Vec<String>| {
        if current.chars().count() >= 2 && !STOP_WORDS.contains(&current.as_str()) {
            out.push(std::mem::take(current));
        } else {
            current.clear();
        }
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && previous_lower {
                flush(&mut current, &mut out);
            }
            previous_lower = c.is_lowercase() || c.is_numeric();
            current.extend(c.to_lowercase());
        } else {
            flush(&mut current, &mut out);
            previous_lower = false;
        }
    }
    flush(&mut current, &mut out);
    out
}

/// Orders scored paths by score descending then path ascending, dropping
/// scores ≤ 0.
fn ranked(mut scored: Vec<(f64, &str)>) -> Vec<String> {
    scored.retain(|(score, _)| *score > 0.0);
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .map(|(_, path)| path.to_owned())
        .collect()
}

/// A BM25 query: an intent's distinct terms, in sorted order.
#[derive(Clone, Debug, Default)]
pub struct Query {
    terms: Vec<String>,
    index: HashMap<String, usize>,
}

impl Query {
    /// The query of `intent`'s distinct [`terms`].
    pub fn new(intent: &str) -> Self {
        let terms: Vec<String> = terms(intent)
            .into_iter()
            .collect::<BTreeSet<String>>()
            .into_iter()
            .collect();
        let index = terms
            .iter()
            .enumerate()
            .map(|(i, term)| (term.clone(), i))
            .collect();
        Self { terms, index }
    }

    /// Whether the intent has no term.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The document made of `terms`: the frequencies of this query's terms
    /// in it and its length.
    pub fn document(&self, terms: &[String]) -> Document {
        let mut hits: Vec<usize> = terms
            .iter()
            .filter_map(|term| self.index.get(term).copied())
            .collect();
        hits.sort_unstable();
        let mut counts: Vec<(usize, u32)> = Vec::new();
        for i in hits {
            match counts.last_mut() {
                Some((last, tf)) if *last == i => *tf += 1,
                _ => counts.push((i, 1)),
            }
        }
        Document {
            counts,
            length: terms.len(),
        }
    }
}

/// One BM25 document: the frequencies of a [`Query`]'s terms in it (by term
/// index, ascending, zeros left out), and its length in terms.
#[derive(Clone, Debug, Default)]
pub struct Document {
    counts: Vec<(usize, u32)>,
    length: usize,
}

/// The BM25 score of each of `docs` for `query` (see the module docs), in
/// the order of `docs`. Each score sums its terms in the query's order, so it
/// is the same on every run.
pub fn bm25_scores(query: &Query, docs: &[Document]) -> Vec<f64> {
    let n = docs.len() as f64;
    let average = docs.iter().map(|d| d.length as f64).sum::<f64>() / n.max(1.0);
    let mut df = vec![0_u32; query.terms.len()];
    for doc in docs {
        for (i, _) in &doc.counts {
            df[*i] += 1;
        }
    }
    let idf: Vec<f64> = df
        .into_iter()
        .map(|df| {
            let df = f64::from(df);
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    docs.iter()
        .map(|doc| {
            let norm = K1 * (1.0 - B + B * doc.length as f64 / average.max(1.0));
            doc.counts
                .iter()
                .map(|(i, tf)| {
                    let tf = f64::from(*tf);
                    idf[*i] * tf * (K1 + 1.0) / (tf + norm)
                })
                .sum::<f64>()
        })
        .collect()
}

/// The `bm25` ranking of `files` (paths relative to `root`) for `intent`.
pub fn bm25(root: &Path, files: &[String], intent: &str) -> Vec<String> {
    let query = Query::new(intent);
    if query.is_empty() {
        return Vec::new();
    }
    let docs: Vec<Document> = files
        .iter()
        .map(|path| {
            let mut all = terms(path);
            if let Some(text) = readable_text(&root.join(path)) {
                all.extend(terms(&text));
            }
            query.document(&all)
        })
        .collect();
    let scores = bm25_scores(&query, &docs);
    ranked(
        scores
            .into_iter()
            .zip(files)
            .map(|(score, path)| (score, path.as_str()))
            .collect(),
    )
}

/// A file's text, or `None` when it is binary, too large or unreadable.
pub fn readable_text(path: &Path) -> Option<String> {
    let meta = fs_err::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_CONTENT_BYTES {
        return None;
    }
    let bytes = fs_err::read(path).ok()?;
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The `path-keywords` ranking of `files` for `intent`.
pub fn path_keywords(files: &[String], intent: &str) -> Vec<String> {
    let query: BTreeSet<String> = terms(intent).into_iter().collect();
    if query.is_empty() {
        return Vec::new();
    }
    let scored = files
        .iter()
        .map(|path| {
            let path_terms: BTreeSet<String> = terms(path).into_iter().collect();
            let hits = query.iter().filter(|t| path_terms.contains(*t)).count();
            (hits as f64 / query.len() as f64, path.as_str())
        })
        .collect();
    ranked(scored)
}

/// The `recency` ranking of `files`, from the last commit time per path.
pub fn recency(files: &[String], last_commit: &PathTable<i64>) -> Vec<String> {
    let mut scored: Vec<(Option<i64>, &str)> = files
        .iter()
        .map(|path| (last_commit.get(path.as_str()).copied(), path.as_str()))
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .map(|(_, path)| path.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|&s| s.to_owned()).collect()
    }

    #[test]
    fn splits_terms() {
        assert_eq!(
            terms("Fix CliRunner.invoke mix_stderr in a file2 HTTPServer"),
            strings(&[
                "fix",
                "cli",
                "runner",
                "invoke",
                "mix",
                "stderr",
                "file2",
                "httpserver"
            ])
        );
    }

    #[test]
    fn path_keywords_rank_by_share_then_path() {
        let files = strings(&["src/parser.rs", "src/user_parser.rs", "README.md"]);
        assert_eq!(
            path_keywords(&files, "fix the user parser"),
            strings(&["src/user_parser.rs", "src/parser.rs"])
        );
    }

    #[test]
    fn recency_puts_unknown_last() {
        let files = strings(&["a", "b", "c"]);
        let times: PathTable<i64> = [
            (
                aic_stages::relative_path::RelativePath::new("b").unwrap(),
                5,
            ),
            (
                aic_stages::relative_path::RelativePath::new("c").unwrap(),
                9,
            ),
        ]
        .into_iter()
        .collect();
        assert_eq!(recency(&files, &times), strings(&["c", "b", "a"]));
    }

    #[test]
    fn bm25_prefers_the_file_about_the_term() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("parser.py"), "def parse(): tokens tokens").unwrap();
        fs_err::write(dir.path().join("other.py"), "def other(): pass tokens").unwrap();
        fs_err::write(dir.path().join("none.py"), "x = 1").unwrap();
        let files = strings(&["none.py", "other.py", "parser.py"]);
        assert_eq!(
            bm25(dir.path(), &files, "parser tokens"),
            strings(&["parser.py", "other.py"])
        );
    }
}
