//! Micro-benchmarks of the per-file and per-compile stages, on this repository's
//! own sources (a small, stable corpus present on every checkout), or with
//! `AIC_BENCH_CORPUS=DIR` on the text files of any directory (a real
//! repository, for throughput at its scale).
//!
//! Run with `cargo bench --bench stages` (one bench: `-- term_stats`). Results go to `perf/RESULTS.md` with the
//! command that produced them; nothing here is asserted.

use std::path::Path;

use aic_stages::fit::ladder::names_only;
use aic_stages::fit::tokens::TokenCounter;
use aic_stages::language::Language;
use aic_stages::relative_path::RelativePath;
use aic_stages::select::intent::IntentClassifier;
use aic_stages::select::selector::path_relevance;
use aic_stages::select::symbols::symbol_terms;
use divan::counter::BytesCount;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

/// The Rust sources of this repository, read once; or, with
/// `AIC_BENCH_CORPUS=DIR`, every UTF-8 file of at most 1 MiB under `DIR`
/// (a real repository, for throughput at its scale).
fn corpus() -> Vec<(String, String)> {
    if let Some(dir) = std::env::var_os("AIC_BENCH_CORPUS") {
        return directory_corpus(Path::new(&dir));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for directory in [
        "src",
        "stages/src",
        "stages/src/guard",
        "stages/src/transform",
    ] {
        for entry in fs_err::read_dir(root.join(directory)).expect("source directory") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "rs") {
                let text = fs_err::read_to_string(&path).expect("utf-8 source");
                files.push((path.display().to_string(), text));
            }
        }
    }
    files.sort();
    files
}

/// Every UTF-8 file of at most 1 MiB under `root`, sorted by path; hidden
/// files and directories (`.git`) are skipped, ignore files are not read (so
/// the set can differ a little from what `aic` scans).
fn directory_corpus(root: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in fs_err::read_dir(&directory).expect("corpus directory") {
            let entry = entry.expect("entry");
            let path = entry.path();
            let file_type = entry.file_type().expect("file type");
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if file_type.is_dir() {
                pending.push(path);
            } else if file_type.is_file()
                && entry.metadata().is_ok_and(|m| m.len() <= 1 << 20)
                && let Ok(text) = fs_err::read_to_string(&path)
            {
                files.push((path.display().to_string(), text));
            }
        }
    }
    files.sort();
    files
}

fn total_bytes(files: &[(String, String)]) -> usize {
    files.iter().map(|(_, text)| text.len()).sum()
}

/// Runs `work` over every file of the corpus, counting throughput in bytes.
fn over_corpus(bencher: Bencher, work: impl Fn(&str) -> usize + Sync) {
    let files = corpus();
    bencher
        .counter(BytesCount::new(total_bytes(&files)))
        .bench(|| {
            files
                .iter()
                .map(|(_, text)| work(black_box(text)))
                .sum::<usize>()
        });
}

#[divan::bench]
fn token_count(bencher: Bencher) {
    let counter = TokenCounter::cl100k();
    counter.count("warm up the encoder");
    over_corpus(bencher, |text| counter.count(text).0 as usize);
}

/// BM25 term statistics of every file's content (under one fixed path). The
/// per-thread word memo stays filled across iterations, as it does over a
/// long scan, so this times counting with most words already stemmed.
#[divan::bench]
fn term_stats(bencher: Bencher) {
    over_corpus(bencher, |text| {
        aic_stages::select::terms::TermStats::of("src/file.rs", text)
            .terms
            .len()
    });
}

/// A corpus file: its relative path, its language and its text.
type Entry = (RelativePath, Language, String);

/// The corpus's files with a relative path (the last components of the
/// path read) and the language detected from it.
fn with_paths(files: Vec<(String, String)>) -> Vec<Entry> {
    files
        .into_iter()
        .filter_map(|(path, text)| {
            let relative = path.trim_start_matches('/').replace('\\', "/");
            let path = RelativePath::new(&relative)?;
            let language = Language::detect(&path);
            Some((path, language, text))
        })
        .collect()
}

/// Runs `work` over every file of `files`, counting throughput in bytes.
fn over_files(
    bencher: Bencher,
    files: &[Entry],
    work: impl Fn(&RelativePath, Language, &str) -> usize + Sync,
) {
    bencher
        .counter(BytesCount::new(
            files.iter().map(|(_, _, text)| text.len()).sum::<usize>(),
        ))
        .bench(|| {
            files
                .iter()
                .map(|(path, language, text)| work(path, *language, black_box(text)))
                .sum::<usize>()
        });
}

/// The default ContextGuard and transformer pipeline, from which
/// [`FactsSettings`](aic_stages::facts::FactsSettings) borrow.
struct DefaultStages {
    guard: aic_stages::guard::ContextGuard,
    transformers: aic_stages::transform::ContentTransformerPipeline,
}

impl DefaultStages {
    fn new() -> Self {
        let config = aic_stages::config::AicConfig::default();
        Self {
            guard: aic_stages::guard::ContextGuard::new(&config.guard).expect("default guard"),
            transformers: aic_stages::transform::ContentTransformerPipeline::new(
                &config.content_transformers,
            ),
        }
    }

    fn settings(&self) -> aic_stages::facts::FactsSettings<'_> {
        aic_stages::facts::FactsSettings {
            guard: &self.guard,
            transformers: &self.transformers,
            tokens: TokenCounter::cl100k(),
            raw: false,
        }
    }
}

/// The default ContextGuard's scan of every file (secrets, injection,
/// commands, encoded content) under its own path.
#[divan::bench]
fn guard_scan(bencher: Bencher) {
    let stages = DefaultStages::new();
    over_files(bencher, &with_paths(corpus()), |path, language, text| {
        stages.guard.scan_file(path, language, text).findings.len()
    });
}

/// The whole per-file stage (guard, transforms, tier renders, token
/// counts) of every file under its own path, as a precompute computes a
/// file's FileFacts after reading it.
#[divan::bench(sample_count = 5)]
fn file_facts(bencher: Bencher) {
    let stages = DefaultStages::new();
    let settings = stages.settings();
    over_files(bencher, &with_paths(corpus()), |path, language, text| {
        aic_stages::facts::compute_facts(&settings, path, language, text.as_bytes(), false)
            .transformed_tokens
            .0 as usize
    });
}

/// One tree-sitter parse of every code file with a grammar (no queries,
/// nothing remembered between iterations): the floor under a precompute's
/// per-file work, since every code file is parsed once.
#[divan::bench(sample_count = 5)]
fn tree_sitter_parse(bencher: Bencher) {
    let files: Vec<Entry> = with_paths(corpus())
        .into_iter()
        .filter(|(path, language, text)| {
            aic_stages::work::parse_uncached(path, *language, "").is_some() && !text.is_empty()
        })
        .collect();
    over_files(bencher, &files, |path, language, text| {
        aic_stages::work::parse_uncached(path, language, text).unwrap_or(0)
    });
}

/// The definition index of every file (what the per-file stage adds to
/// FileFacts for slicing by definitions), to compare with `file_facts`.
#[divan::bench]
fn definition_index(bencher: Bencher) {
    over_files(bencher, &with_paths(corpus()), |_, language, text| {
        aic_stages::select::definitions::definition_index(text, language).len()
    });
}

/// The line map of every file whose transforms changed it: the L0 text
/// aligned with the text on disk, as the per-file stage stores it.
#[divan::bench(sample_count = 5)]
fn line_map(bencher: Bencher) {
    let stages = DefaultStages::new();
    let files: Vec<(Entry, String)> = with_paths(corpus())
        .into_iter()
        .map(|(path, language, text)| {
            let shown = stages
                .transformers
                .transform(&path, language, &text, false, false)
                .text;
            ((path, language, text), shown)
        })
        .collect();
    bencher
        .counter(BytesCount::new(
            files
                .iter()
                .map(|((_, _, text), _)| text.len())
                .sum::<usize>(),
        ))
        .bench(|| {
            files
                .iter()
                .map(|((_, _, text), shown)| {
                    aic_stages::fit::line_map::LineMap::align(black_box(text), shown)
                        .runs()
                        .len()
                })
                .sum::<usize>()
        });
}

/// Rust imports read from the tokens (no parse) of every Rust file.
#[divan::bench]
fn rust_imports(bencher: Bencher) {
    let files: Vec<Entry> = with_paths(corpus())
        .into_iter()
        .filter(|(_, language, _)| *language == Language::Rust)
        .collect();
    over_files(bencher, &files, |_, _, text| {
        aic_stages::lang::rust_imports(text).len()
    });
}

/// The stemmed words of every file's definition names.
#[divan::bench]
fn definition_names(bencher: Bencher) {
    over_corpus(bencher, |text| symbol_terms(text).len());
}

/// Finding the definitions alone (the line scan of `symbols::definitions`).
#[divan::bench]
fn definition_scan(bencher: Bencher) {
    over_corpus(bencher, |text| {
        aic_stages::select::symbols::definitions(text).count()
    });
}

#[divan::bench]
fn names_only_render(bencher: Bencher) {
    over_corpus(bencher, |text| names_only(text).len());
}

#[divan::bench]
fn classify_intent() -> aic_stages::select::intent::TaskClassification {
    IntentClassifier.classify(black_box(
        "fix the null check in the user service when the token expired",
    ))
}

#[divan::bench]
fn path_relevance_10k_paths(bencher: Bencher) {
    let paths: Vec<RelativePath> = (0..10_000)
        .map(|i| {
            RelativePath::new(&format!(
                "packages/pkg{}/src/module_{i}/userService{i}.ts",
                i % 97
            ))
            .unwrap()
        })
        .collect();
    let tokens = IntentClassifier
        .classify("fix the user service")
        .subject_tokens;
    bencher.bench(|| {
        paths
            .iter()
            .map(|p| path_relevance(black_box(&tokens), p))
            .sum::<f64>()
    });
}

/// The worked example of docs/spec-compiler.md, compiled at the default budget and at a budget
/// that demotes every verbatim type (the tokenizer is built before timing starts).
#[divan::bench(args = [4000, 1500])]
fn spec_compile_worked_example(bencher: Bencher, budget: u32) {
    use aic_stages::config::AicConfig;
    use aic_stages::fit::tokens::TokenCount;
    use aic_stages::spec::{SpecificationCompiler, parse_specification};

    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spec/stage-traits.json");
    let input = parse_specification(&fs_err::read_to_string(path).expect("fixture"))
        .expect("valid fixture");
    let compiler = SpecificationCompiler::new(&AicConfig::default().content_transformers);
    TokenCounter::preload();
    bencher.bench(|| compiler.compile(black_box(&input), TokenCount(budget)));
}

/// The whole per-file stage (guard, transforms, tier renders, token counts)
/// on generated files of each shape in `aic_stages::work::SHAPES` at 1×, 10×
/// and 100× size (500, 5,000 and 50,000 units): the time per byte must stay
/// flat as the size grows.
#[divan::bench(args = [500, 5_000, 50_000], consts = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], sample_count = 3, sample_size = 1)]
fn per_file_stage_scaling<const SHAPE: usize>(bencher: Bencher, n: usize) {
    let shape = aic_stages::work::SHAPES[SHAPE];
    let (path, text) = aic_stages::work::generate(shape, n);
    let stages = DefaultStages::new();
    let settings = stages.settings();
    let path = RelativePath::new(path).expect("relative path");
    let language = Language::detect(&path);
    // Consecutive inputs differ (one or two trailing line breaks), so no
    // iteration is answered from the tree the previous one parsed.
    let round = std::sync::atomic::AtomicUsize::new(0);
    bencher
        .counter(BytesCount::new(text.len()))
        .with_inputs(|| {
            let mut input = text.clone();
            let extra = 1 + round.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2;
            input.push_str(&"\n".repeat(extra));
            input
        })
        .bench_values(|input| {
            aic_stages::facts::compute_facts(
                &settings,
                &path,
                language,
                black_box(input.as_bytes()),
                false,
            )
        });
}
