//! FileKind: what a file is for — source, its tests, its documentation, a
//! changelog, a translation, test data, generated output, examples of its
//! use — read from its path alone.
//!
//! The selector's file-kind prior uses it: a task about behaviour (a bug, a
//! feature, a refactor) is answered by the source that implements the
//! behaviour, so tests, docs, changelogs, translations, fixtures,
//! generated files and examples rank behind that source unless the task asks for them
//! (`docs/selection.md`, "The file-kind prior").
//!
//! # Example
//!
//! ```
//! use aic_stages::language::Language;
//! use aic_stages::relative_path::RelativePath;
//! use aic_stages::select::file_kind::FileKind;
//!
//! let kind = |path: &str| {
//!     let path = RelativePath::new(path).unwrap();
//!     FileKind::of(&path, Language::detect(&path))
//! };
//! assert_eq!(kind("src/_pytest/python.py"), FileKind::Source);
//! assert_eq!(kind("doc/en/how-to/fixtures.rst"), FileKind::Docs);
//! assert_eq!(kind("testing/test_python.py"), FileKind::Test);
//! assert_eq!(kind("changelog/1234.feature.rst"), FileKind::Changelog);
//! assert_eq!(kind("src/locale/de/LC_MESSAGES/django.po"), FileKind::Translation);
//! ```

use serde::Serialize;

use crate::language::Language;
use crate::relative_path::RelativePath;
use crate::select::terms::stem;

/// What a file is for, by its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// Code, configuration and everything that is none of the below.
    Source,
    /// A test (`tests/…`, `test_*.py`, `*.spec.ts`, `*_test.go`, `conftest.py`).
    Test,
    /// Test data: fixtures, snapshots, sample inputs.
    Fixture,
    /// Prose documentation: `docs/…`, `*.rst`, `*.md` (a README included).
    Docs,
    /// A changelog or release notes, or one of their fragments.
    Changelog,
    /// A translation catalogue (`*.po`, `locale/…` message files).
    Translation,
    /// Generated output (`*.generated.*`, `*_pb2.py`, `dist/…`).
    Generated,
    /// Code that shows how to use the project rather than implementing it:
    /// anything under `examples/`, `samples/`, `demo/` or `playground/`.
    Example,
}

impl FileKind {
    /// Every kind, in declaration order (a kind's `as usize` is its index).
    pub const ALL: [Self; 8] = [
        Self::Source,
        Self::Test,
        Self::Fixture,
        Self::Docs,
        Self::Changelog,
        Self::Translation,
        Self::Generated,
        Self::Example,
    ];

    /// The kind of the file at `path` in `language`.
    pub fn of(path: &RelativePath, language: Language) -> Self {
        let lower = path.as_str().to_ascii_lowercase();
        let name = lower.rsplit('/').next().unwrap_or(&lower);
        let parts: Vec<&str> = lower.split('/').collect();
        let directories = &parts[..parts.len().saturating_sub(1)];
        let stem = name.split('.').next().unwrap_or(name);
        let extension = name.rsplit_once('.').map_or("", |(_, e)| e);
        if CHANGELOG_STEMS.contains(&stem)
            || directories
                .iter()
                .any(|d| CHANGELOG_DIRECTORIES.contains(d))
        {
            return Self::Changelog;
        }
        if matches!(extension, "po" | "pot" | "mo" | "xliff" | "xlf")
            || directories
                .iter()
                .any(|d| matches!(*d, "locale" | "locales" | "i18n" | "l10n" | "translations"))
                && !language.is_code()
        {
            return Self::Translation;
        }
        if directories.iter().any(|d| FIXTURE_DIRECTORIES.contains(d))
            || matches!(extension, "snap")
        {
            return Self::Fixture;
        }
        // `__tests__`, and its variants (`__tests_dts__`, vite's type tests).
        let test_directory = directories
            .iter()
            .any(|d| TEST_DIRECTORIES.contains(d) || d.starts_with("__tests"));
        let test_name = stem.starts_with("test_")
            || stem.ends_with("_test")
            || stem.ends_with("_tests")
            || stem.ends_with("_spec")
            || stem == "conftest"
            || name.contains(".test.")
            || name.contains(".spec.")
            || path.file_name().ends_with("Test.java")
            || path.file_name().ends_with("Tests.java");
        if test_name || test_directory && language.is_code() {
            return Self::Test;
        }
        if test_directory {
            return Self::Fixture;
        }
        if name.contains(".generated.")
            || name.contains(".gen.")
            || stem.ends_with("_pb2")
            || name.ends_with(".pb.go")
            || directories
                .first()
                .is_some_and(|d| matches!(*d, "dist" | "build"))
            // Jupyter's autosaved copies of notebooks.
            || directories.contains(&".ipynb_checkpoints")
        {
            return Self::Generated;
        }
        if matches!(extension, "rst" | "md" | "mdx" | "adoc" | "txt")
            && !matches!(stem, "requirements" | "cmakelists")
            || stem == "readme" && !language.is_code()
            || directories
                .iter()
                .any(|d| matches!(*d, "docs" | "doc" | "documentation"))
                && !language.is_code()
        {
            return Self::Docs;
        }
        // Not a package's own module of that name (`src/pydicom/examples/`).
        let in_source = |at: usize| {
            directories[..at]
                .iter()
                .any(|d| matches!(*d, "src" | "lib"))
        };
        if directories
            .iter()
            .enumerate()
            .any(|(at, d)| EXAMPLE_DIRECTORIES.contains(d) && !in_source(at))
        {
            return Self::Example;
        }
        Self::Source
    }

    /// The word a task uses when it asks for files of this kind, for the
    /// trace: `test`, `docs`, `changelog`, …
    pub fn word(self) -> &'static str {
        match self {
            Self::Source => "source",
            Self::Test => "test",
            Self::Fixture => "fixture",
            Self::Docs => "docs",
            Self::Changelog => "changelog",
            Self::Translation => "translation",
            Self::Generated => "generated",
            Self::Example => "example",
        }
    }

    /// Whether a task whose words (lower case) are `words` asks for files of
    /// this kind: it names tests, documentation, a changelog, translations
    /// or generated code.
    pub fn asked_for(self, words: &[String]) -> bool {
        // The task's words come stemmed: a word asks when an option is its
        // prefix, or, for docs and examples, when it is the option's stem
        // ("guide" is `guid`, "tutorial" `tutori`, "example" `exampl`).
        // Not for the others: "changes" stems to `chang`, which every
        // "change" has, and "release" to `releas` ("release the lock").
        let asks = |options: &[&str], by_stem: bool| {
            options.iter().any(|option| {
                let stemmed = by_stem.then(|| stem(option));
                words
                    .iter()
                    .any(|w| w.starts_with(option) || stemmed.as_ref() == Some(w))
            })
        };
        match self {
            Self::Source => true,
            Self::Test | Self::Fixture => {
                asks(&["test", "spec", "fixture", "conftest", "snapshot"], false)
            }
            Self::Docs => asks(
                &[
                    "doc", "readme", "tutorial", "guide", "typo", "spelling", "rst", "markdown",
                    "sphinx",
                ],
                true,
            ),
            Self::Changelog => asks(&["changelog", "release", "news", "changes"], false),
            Self::Translation => asks(&["translat", "locale", "i18n", "l10n", "language"], false),
            Self::Generated => asks(
                &["generat", "regenerat", "codegen", "protobuf", "proto"],
                false,
            ),
            Self::Example => asks(
                &["example", "sample", "demo", "playground", "gallery"],
                true,
            ),
        }
    }
}

const CHANGELOG_STEMS: [&str; 8] = [
    "changelog",
    "changes",
    "history",
    "news",
    "release_notes",
    "release-notes",
    "releases",
    "whatsnew",
];

const CHANGELOG_DIRECTORIES: [&str; 7] = [
    "changelog",
    "changelogs",
    ".changeset",
    "changes",
    "newsfragments",
    "changelog.d",
    "whatsnew",
];

const FIXTURE_DIRECTORIES: [&str; 9] = [
    "fixtures",
    "__fixtures__",
    "__snapshots__",
    "snapshots",
    "testdata",
    "test_data",
    "test-data",
    "__mocks__",
    "mocks",
];

const EXAMPLE_DIRECTORIES: [&str; 8] = [
    "examples",
    "example",
    "samples",
    "sample",
    "demo",
    "demos",
    "playground",
    "playgrounds",
];

const TEST_DIRECTORIES: [&str; 8] = [
    "test",
    "tests",
    "__tests__",
    "spec",
    "specs",
    "e2e",
    "testing",
    "integration_tests",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(path: &str) -> FileKind {
        let path = RelativePath::new(path).unwrap();
        FileKind::of(&path, Language::detect(&path))
    }

    #[test]
    fn kinds_by_path() {
        assert_eq!(kind("README.md"), FileKind::Docs);
        assert_eq!(kind("docs/conf.py"), FileKind::Source);
        assert_eq!(kind("src/click/core.py"), FileKind::Source);
        assert_eq!(kind("requirements.txt"), FileKind::Source);
        assert_eq!(kind("tests/test_core.py"), FileKind::Test);
        assert_eq!(kind("tests/data/sample.dcm"), FileKind::Fixture);
        assert_eq!(
            kind("packages/vite/src/node/server/index.spec.ts"),
            FileKind::Test
        );
        assert_eq!(kind("CHANGES.rst"), FileKind::Changelog);
        assert_eq!(kind("api/v1/service_pb2.py"), FileKind::Generated);
        assert_eq!(kind("pkg/server_test.go"), FileKind::Test);
        assert_eq!(kind("examples/colors/README"), FileKind::Docs);
        assert_eq!(kind("examples/complex/complex/cli.py"), FileKind::Example);
        assert_eq!(kind("playground/lib/vite.config.js"), FileKind::Example);
        assert_eq!(
            kind("docs/examples/soiling/plot_greensboro.py"),
            FileKind::Example
        );
        assert_eq!(kind("src/pydicom/examples/__init__.py"), FileKind::Source);
        assert_eq!(
            kind("tutorial/.ipynb_checkpoints/Tutorial-checkpoint.ipynb"),
            FileKind::Generated
        );
        assert_eq!(kind("playground/hmr/__tests__/hmr.spec.ts"), FileKind::Test);
        assert_eq!(
            kind("packages/vite/src/node/__tests_dts__/plugin.ts"),
            FileKind::Test
        );
    }

    #[test]
    fn a_task_asks_for_a_kind_by_its_words() {
        // As the selector passes them: stemmed subject words.
        let words = |text: &str| text.split(' ').map(stem).collect::<Vec<_>>();
        assert!(FileKind::Docs.asked_for(&words("update the documentation of options")));
        assert!(FileKind::Docs.asked_for(&words("the guide for plugins")));
        assert!(!FileKind::Docs.asked_for(&words("word wrapping of help text")));
        assert!(FileKind::Docs.asked_for(&words("a tutorial on options")));
        assert!(FileKind::Test.asked_for(&words("snapshots of the output")));
        assert!(FileKind::Example.asked_for(&words("the complex example fails")));
        assert!(FileKind::Example.asked_for(&words("update the soiling gallery script")));
        // "changes" and "release" ask by their prefix only: every "change"
        // stems to `chang`.
        assert!(!FileKind::Changelog.asked_for(&words("redraw when the label changes")));
        assert!(!FileKind::Changelog.asked_for(&words("release the lock on exit")));
        assert!(FileKind::Changelog.asked_for(&words("add a changelog entry")));
        assert!(!FileKind::Docs.asked_for(&words("fix the crash in options")));
        assert!(FileKind::Test.asked_for(&words("the tests fail on windows")));
        assert!(FileKind::Translation.asked_for(&words("german translation is wrong")));
    }
}
