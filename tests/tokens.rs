//! The token counter against the reference: `aic` counts with `bpe-openai`,
//! and every count must equal `tiktoken-rs`'s `count_ordinary` in
//! `cl100k_base` and in `o200k_base`, on real text present on every machine — every file of this
//! workspace's dependency sources. Counting a text as the sum of its line
//! runs (`TokenCounter::count_lines`, used to count many slices of one file)
//! must give the same number on every one of those files.

use std::path::PathBuf;

use aic_stages::fit::tokens::{TokenCounter, Tokenizer};
use rayon::prelude::*;

use crate::support::{dependency_sources, files_under};

/// Files larger than this are left out, as the scan leaves them out.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

#[test]
fn tokenizer_agrees_with_tiktoken() {
    agrees_with_tiktoken(Tokenizer::Cl100k);
}

#[test]
fn o200k_tokenizer_agrees_with_tiktoken() {
    agrees_with_tiktoken(Tokenizer::O200k);
}

fn agrees_with_tiktoken(tokenizer: Tokenizer) {
    let files: Vec<PathBuf> = dependency_sources()
        .iter()
        .filter(|directory| directory.is_dir())
        .flat_map(|directory| files_under(directory))
        .filter(|path| {
            path.metadata()
                .is_ok_and(|metadata| metadata.len() <= MAX_FILE_BYTES)
        })
        .collect();
    let reference = match tokenizer {
        Tokenizer::Cl100k => tiktoken_rs::cl100k_base_singleton(),
        Tokenizer::O200k => tiktoken_rs::o200k_base_singleton(),
    };
    let counter = TokenCounter::new(tokenizer);
    let (compared, bytes, mut differences) = files
        .par_iter()
        .filter_map(|path| {
            let text = String::from_utf8(fs_err::read(path).ok()?).ok()?;
            let ours = counter.count(&text).0 as usize;
            let theirs = reference.count_ordinary(&text);
            let by_runs = counter.count_lines(&text).0 as usize;
            let difference = (ours != theirs || by_runs != ours).then(|| {
                format!(
                    "{}: {ours} vs {theirs} (by line runs {by_runs})",
                    path.display()
                )
            });
            Some((
                1_usize,
                text.len(),
                difference.into_iter().collect::<Vec<_>>(),
            ))
        })
        .reduce(
            || (0, 0, Vec::new()),
            |a, b| (a.0 + b.0, a.1 + b.1, [a.2, b.2].concat()),
        );
    differences.sort();
    assert!(
        compared > 2_000 && bytes > 20_000_000,
        "too small a corpus: {compared} files, {bytes} bytes"
    );
    assert!(
        differences.is_empty(),
        "{} of {compared} files count differently in {tokenizer} (bpe-openai vs tiktoken-rs):\n{}",
        differences.len(),
        differences.join("\n")
    );
}
