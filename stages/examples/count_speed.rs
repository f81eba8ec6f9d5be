//! Token counting speed on real text, one thread: `cargo run --release -p
//! aic-stages --example count_speed -- <cl100k_base|o200k_base> <ours|reference> DIR…`.
//!
//! Reads every UTF-8 file of at most 1 MiB under the directories (sorted, so
//! each run counts the same text in the same order), loads the encoding's
//! tables, then counts every file once and prints the bytes, the tokens, the
//! thread's CPU seconds for the counting alone (`/proc/thread-self/schedstat`,
//! wall time where that is missing) and MB/s. `ours` is
//! [`TokenCounter::count`] (memos and, for `cl100k_base`, the ASCII
//! pre-tokenizer); `reference` is `bpe-openai`'s own `count`. The numbers of
//! issue 39 are in `perf/RESULTS.md`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use aic_stages::fit::tokens::{TokenCounter, Tokenizer};

/// The most bytes a file may have to be counted, as in `tests/tokens.rs`.
const MAX_FILE_BYTES: u64 = 1 << 20;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: count_speed <cl100k_base|o200k_base> <ours|reference> DIR…";
    let tokenizer = match args.next().as_deref() {
        Some("cl100k_base") => Tokenizer::Cl100k,
        Some("o200k_base") => Tokenizer::O200k,
        _ => return Err(usage.to_owned()),
    };
    let reference = match args.next().as_deref() {
        Some("ours") => false,
        Some("reference") => true,
        _ => return Err(usage.to_owned()),
    };
    let directories: Vec<PathBuf> = args.map(PathBuf::from).collect();
    if directories.is_empty() {
        return Err(usage.to_owned());
    }
    let mut files = Vec::new();
    for directory in &directories {
        files_under(directory, &mut files);
    }
    files.sort();
    let texts: Vec<String> = files
        .iter()
        .filter(|path| fs_err::metadata(path).is_ok_and(|m| m.len() <= MAX_FILE_BYTES))
        .filter_map(|path| fs_err::read_to_string(path).ok())
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let counter = TokenCounter::new(tokenizer);
    let encoder = match tokenizer {
        Tokenizer::Cl100k => bpe_openai::cl100k_base(),
        Tokenizer::O200k => bpe_openai::o200k_base(),
    };
    // Tables loaded before the clock starts.
    let _ = counter.count("x");
    let _ = encoder.count("x");
    let (cpu_before, wall) = (cpu_seconds(), Instant::now());
    let tokens: usize = if reference {
        texts.iter().map(|text| encoder.count(text)).sum()
    } else {
        texts
            .iter()
            .map(|text| counter.count(text).0 as usize)
            .sum()
    };
    let elapsed = match (cpu_before, cpu_seconds()) {
        (Some(before), Some(after)) => after - before,
        _ => wall.elapsed().as_secs_f64(),
    };
    let mut out = std::io::stdout().lock();
    std::io::Write::write_fmt(
        &mut out,
        format_args!(
            "{} {} files={} bytes={bytes} tokens={tokens} cpu_s={elapsed:.3} mb_per_s={:.2}\n",
            tokenizer.name(),
            if reference { "reference" } else { "ours" },
            texts.len(),
            bytes as f64 / 1e6 / elapsed
        ),
    )
    .map_err(|e| e.to_string())
}

/// Every regular file under `directory`, symlinks not followed.
fn files_under(directory: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs_err::read_dir(directory) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            files_under(&entry.path(), out);
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
}

/// The calling thread's CPU time so far, from `/proc/thread-self/schedstat`
/// (nanoseconds on the CPU); `None` off Linux.
fn cpu_seconds() -> Option<f64> {
    let text = fs_err::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanoseconds: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(nanoseconds as f64 / 1e9)
}
