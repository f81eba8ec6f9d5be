//! The orienting context for an intent too vague to select on ("speed it
//! up", "make it better"): instead of files that happen to contain a generic
//! word, the prompt shows what a newcomer reads first — the README, the
//! manifests, a map of the top-level directories, the few entry points and
//! the modules most imported. An editor's session start asks for the same.
//!
//! An intent is *vague* ([`is_vague`]) when it names no file, no name in code
//! form and no trace frame, has at most [`VAGUE_SUBJECT_TOKENS`] subject
//! words, and none of them is a word of a path or of a defined name of any
//! candidate (so nothing but loose content matches could be ranked).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::relative_path::RelativePath;
use crate::repo_map::{FileEntry, RepoMap};
use crate::select::import_graph::ImportGraph;
use crate::select::intent::TaskClassification;
use crate::select::selector::{ScoredFile, SelectionSignals};

/// An intent with more subject words than this is specific enough to rank on.
pub const VAGUE_SUBJECT_TOKENS: usize = 2;
/// The most entry points shown.
pub const MAX_ENTRY_POINTS: usize = 4;
/// The reason the selection records for an orienting file.
pub const ORIENTING: &str = "orienting";

/// Words that name the repository as a whole, not a part of it: an intent
/// whose subject words are all among them asks for the orienting context.
pub const WHOLE_PROJECT_WORDS: &[&str] = &[
    "project",
    "codebase",
    "code",
    "repo",
    "repository",
    "overview",
    "architecture",
    "structure",
    "layout",
    "organisation",
    "organization",
    "tour",
    "walkthrough",
    "introduction",
    "summary",
    "big",
    "picture",
    "whole",
    "entire",
    "high",
    "level",
    // The ask itself.
    "explain",
    "describe",
    "understand",
    "walk",
    "show",
    "tell",
    "learn",
    "work",
    "give",
];

/// Whether `task` is too vague to select on, given the ranked files (`None`
/// when no candidate had any signal at all: then only an intent with at
/// most one subject word is vague — "quantum chromodynamics" in a web app
/// is specific, and absent).
pub fn is_vague(
    task: &TaskClassification,
    has_targets: bool,
    ranked: Option<&[ScoredFile]>,
) -> bool {
    if has_targets || !task.mentions.is_empty() || !task.frames.is_empty() {
        return false;
    }
    // "explain this project", "an overview of the codebase": words about
    // the whole repository ask for the orienting context, whatever files
    // happen to contain them.
    if !task.subject_tokens.is_empty()
        && task.subject_tokens.len() <= WHOLE_PROJECT_WORDS.len()
        && task.subject_tokens.iter().all(|token| {
            WHOLE_PROJECT_WORDS
                .iter()
                .any(|word| crate::select::terms::stem(word) == *token)
        })
    {
        return true;
    }
    if task.subject_tokens.len() > VAGUE_SUBJECT_TOKENS {
        return false;
    }
    match ranked {
        // Nothing matched: vague when there was at most one word to match
        // ("speed it up"); several words that all match nothing are specific
        // and absent, which the caller reports as such.
        None => task.subject_tokens.len() <= 1,
        Some(files) => files.iter().all(|f| {
            f.signals.path_relevance == 0.0 && f.signals.symbol_relevance == 0.0 && !f.target
        }),
    }
}

/// The files of the orienting context, best first: the root README, the
/// root manifests, then up to [`MAX_ENTRY_POINTS`] entry points (`main.*`,
/// `lib.*`, `index.*`, `app.*`, `cli.*`, `__init__.py`, `__main__.py`,
/// `mod.rs`), shallowest first. Each is boosted by [`ORIENTING`].
pub fn orienting_files(repo: &RepoMap) -> Vec<ScoredFile> {
    let readme = |f: &&FileEntry| {
        !f.path.as_str().contains('/') && f.path.file_name().to_lowercase().starts_with("readme")
    };
    let manifest = |f: &&FileEntry| {
        !f.path.as_str().contains('/')
            && matches!(
                f.path.file_name(),
                "Cargo.toml"
                    | "package.json"
                    | "pyproject.toml"
                    | "setup.py"
                    | "setup.cfg"
                    | "go.mod"
                    | "pom.xml"
                    | "build.gradle"
                    | "build.gradle.kts"
                    | "Gemfile"
                    | "composer.json"
                    | "deno.json"
                    | "Makefile"
            )
    };
    let entry = |f: &&FileEntry| {
        let name = f.path.file_name();
        let stem = name.split('.').next().unwrap_or(name);
        f.language.is_code()
            && matches!(
                stem,
                "main" | "lib" | "index" | "app" | "cli" | "__init__" | "__main__" | "mod"
            )
            && !is_test_path(f.path.as_str())
    };
    let mut chosen: Vec<&FileEntry> = repo.files.iter().filter(readme).take(1).collect();
    chosen.extend(repo.files.iter().filter(manifest));
    let mut entries: Vec<&FileEntry> = repo.files.iter().filter(entry).collect();
    entries.sort_by_key(|f| (f.path.as_str().matches('/').count(), f.path.clone()));
    chosen.extend(entries.into_iter().take(MAX_ENTRY_POINTS));
    let count = chosen.len().max(1) as f64;
    chosen
        .into_iter()
        .enumerate()
        .map(|(rank, f)| ScoredFile {
            path: f.path.clone(),
            language: f.language,
            estimated_tokens: f.estimated_tokens,
            score: ((1.0 - rank as f64 / (2.0 * count)) * 1e6).round() / 1e6,
            signals: SelectionSignals::default(),
            boosted_by: vec![ORIENTING.to_owned()],
            penalized_by: Vec::new(),
            target: false,
        })
        .collect()
}

/// The most files [`central_files`] adds.
pub const MAX_CENTRAL_FILES: usize = 3;

/// The code files most imported (by in-degree in the import graph, whose
/// [`ImportGraph::importer_counts`] gives how many files import a file of
/// `repo`), at most
/// [`MAX_CENTRAL_FILES`], each imported by at least 2 files, not already in
/// `chosen` and not tests: the modules the rest of the code is built on. Most
/// importers first, then by path; scored below every file of `chosen`.
pub fn central_files(
    repo: &RepoMap,
    graph: &ImportGraph,
    chosen: &[ScoredFile],
) -> Vec<ScoredFile> {
    let floor = chosen.iter().map(|f| f.score).fold(1.0, f64::min);
    let mut central: Vec<(usize, &FileEntry)> = graph
        .importer_counts()
        .filter_map(|(i, count)| Some((count, repo.files.get(i)?)))
        .filter(|(count, f)| {
            *count >= 2
                && f.language.is_code()
                && !is_test_path(f.path.as_str())
                && !chosen.iter().any(|c| c.path == f.path)
        })
        .collect();
    central.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)));
    central
        .into_iter()
        .take(MAX_CENTRAL_FILES)
        .enumerate()
        .map(|(rank, (_, f))| ScoredFile {
            path: f.path.clone(),
            language: f.language,
            estimated_tokens: f.estimated_tokens,
            score: ((floor * (0.9 - 0.1 * rank as f64)) * 1e6).round() / 1e6,
            signals: SelectionSignals::default(),
            boosted_by: vec![ORIENTING.to_owned()],
            penalized_by: Vec::new(),
            target: false,
        })
        .collect()
}

/// Whether a path is under a test, example, demo, fixture, benchmark or
/// vendored directory: not where a newcomer learns how the code is built.
pub fn is_test_path(path: &str) -> bool {
    path.split('/').any(|part| {
        matches!(
            part,
            "test"
                | "tests"
                | "__tests__"
                | "testdata"
                | "e2e"
                | "examples"
                | "example"
                | "samples"
                | "sample"
                | "playground"
                | "playgrounds"
                | "demo"
                | "demos"
                | "fixtures"
                | "__fixtures__"
                | "__mocks__"
                | "bench"
                | "benches"
                | "benchmarks"
                | "docs"
                | "node_modules"
                | "vendor"
        )
    })
}

/// A map of the repository's top two directory levels with their file
/// counts, and the files at the root, for the prompt's project structure.
///
/// # Examples
///
/// ```
/// use aic_stages::select::orientation::directory_map;
/// use aic_stages::repo_map::RepoMap;
/// let map = directory_map(&RepoMap::default());
/// assert_eq!(map, "(no files)\n");
/// ```
pub fn directory_map(repo: &RepoMap) -> String {
    let mut top: BTreeMap<&str, (usize, BTreeMap<&str, usize>)> = BTreeMap::new();
    let mut root_files: Vec<&RelativePath> = Vec::new();
    for file in &repo.files {
        let mut parts = file.path.as_str().splitn(3, '/');
        let first = parts.next().unwrap_or("");
        match (parts.next(), parts.next()) {
            (None, _) => root_files.push(&file.path),
            (Some(_), None) => top.entry(first).or_default().0 += 1,
            (Some(second), Some(_)) => {
                let entry = top.entry(first).or_default();
                entry.0 += 1;
                *entry.1.entry(second).or_default() += 1;
            }
        }
    }
    let mut out = String::new();
    if top.is_empty() && root_files.is_empty() {
        return "(no files)\n".to_owned();
    }
    for (directory, (count, children)) in &top {
        let _ = writeln!(out, "{directory}/ ({count} files)");
        let mut children: Vec<(&&str, &usize)> = children.iter().collect();
        children.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (child, files) in children.iter().take(8) {
            let _ = writeln!(out, "  {child}/ ({files} files)");
        }
        if children.len() > 8 {
            let _ = writeln!(out, "  … {} more directories", children.len() - 8);
        }
    }
    if !root_files.is_empty() {
        let names: Vec<&str> = root_files.iter().map(|p| p.as_str()).collect();
        let _ = writeln!(out, "{}", names.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::intent::IntentClassifier;

    #[test]
    fn vague_intents() {
        for intent in ["speed it up", "make it better", "fix the x", "clean this"] {
            let task = IntentClassifier.classify(intent);
            assert!(is_vague(&task, false, Some(&[])), "{intent}");
        }
        let task = IntentClassifier.classify("fix the x");
        assert!(is_vague(&task, false, None));
        let task = IntentClassifier.classify("quantum chromodynamics");
        assert!(
            !is_vague(&task, false, None),
            "specific words that match nothing"
        );
        let task = IntentClassifier.classify("fix the null check in the user service");
        assert!(!is_vague(&task, false, None));
        let task = IntentClassifier.classify("speed up `parse_args`");
        assert!(!is_vague(&task, false, None));
        let task = IntentClassifier.classify("speed it up");
        assert!(!is_vague(&task, true, None), "a named file is specific");
        for intent in [
            "explain this project",
            "give me an overview of the codebase",
            "what is the architecture of this repository",
            "walk me through the code structure",
        ] {
            let task = IntentClassifier.classify(intent);
            let specific = [ScoredFile {
                path: RelativePath::new("docs/project.md").unwrap(),
                language: crate::language::Language::Markdown,
                estimated_tokens: crate::fit::tokens::TokenCount(10),
                score: 0.5,
                signals: SelectionSignals {
                    path_relevance: 1.0,
                    ..SelectionSignals::default()
                },
                boosted_by: Vec::new(),
                penalized_by: Vec::new(),
                target: false,
            }];
            assert!(
                is_vague(&task, false, Some(&specific)),
                "{intent}: {:?}",
                task.subject_tokens
            );
        }
        let task = IntentClassifier.classify("explain the project loader");
        assert!(!is_vague(&task, false, None), "a part of the project");
    }

    #[test]
    fn orienting_files_and_map() {
        let repo = FileEntry::repo_for_test(&[
            "README.md",
            "Cargo.toml",
            "src/main.rs",
            "src/parser/mod.rs",
            "src/parser/lexer.rs",
            "tests/main.rs",
            "docs/guide.md",
        ]);
        let files = orienting_files(&repo);
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "README.md",
                "Cargo.toml",
                "src/main.rs",
                "src/parser/mod.rs"
            ]
        );
        assert!(files.windows(2).all(|w| w[0].score > w[1].score));
        let map = directory_map(&repo);
        assert_eq!(
            map,
            "docs/ (1 files)\nsrc/ (3 files)\n  parser/ (2 files)\ntests/ (1 files)\nCargo.toml, README.md\n"
        );
    }
}
