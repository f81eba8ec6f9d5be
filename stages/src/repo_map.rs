//! The RepoMap model (seed §8): repository-relative paths, languages, the per-file
//! [`FileEntry`] rows and the file-tree hash.
//!
//! This module holds values only. Walking the filesystem, reading files and taking
//! their modification times is I/O and lives in the runner (`src/scan.rs`), which
//! builds these values and hands them to the stages.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::lang::ImportRef;
use crate::terms::TermStats;
use xxhash_rust::xxh3::Xxh3;

/// A path relative to the project root, always `/`-separated, never starting with `/`
/// and never containing `.` or `..` segments.
///
/// Ordering is plain byte order of the string, which is the order every list of files
/// in `aic` is sorted by (ARCHITECTURE.md §Determinism).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct RelativePath(String);

impl RelativePath {
    /// Builds a relative path from its `/`-separated form.
    ///
    /// Backslashes are turned into `/`, a leading `./` or `/` is dropped and empty or
    /// `.` segments are removed. Returns `None` when the path is empty after that or
    /// contains a `..` segment, which would point outside the root.
    pub fn new(path: &str) -> Option<Self> {
        let normalized = path.replace('\\', "/");
        let mut segments = Vec::new();
        for segment in normalized.split('/') {
            match segment {
                "" | "." => {}
                ".." => return None,
                other => segments.push(other),
            }
        }
        if segments.is_empty() {
            None
        } else {
            Some(Self(segments.join("/")))
        }
    }

    /// The path as a `/`-separated string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The last segment (the file name).
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// The file name's extension in lower case, without the dot; `None` for names
    /// without one (dot files such as `.gitignore` have no extension).
    pub fn extension(&self) -> Option<String> {
        let name = self.file_name();
        let dot = name.rfind('.')?;
        if dot == 0 || dot + 1 == name.len() {
            return None;
        }
        Some(name[dot + 1..].to_ascii_lowercase())
    }
}

impl fmt::Display for RelativePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RelativePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// A number of tokens in the `cl100k_base` encoding, the unit of every budget.
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

/// xxh3-128 of a file's raw bytes: the identity of its content.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContentHash(pub [u8; 16]);

impl ContentHash {
    /// Hashes raw bytes.
    pub fn of(bytes: &[u8]) -> Self {
        Self(xxhash_rust::xxh3::xxh3_128(bytes).to_be_bytes())
    }

    /// Lower-case hexadecimal form, 32 characters.
    pub fn to_hex(self) -> String {
        use fmt::Write;
        self.0
            .iter()
            .fold(String::with_capacity(32), |mut out, byte| {
                let _ = write!(out, "{byte:02x}");
                out
            })
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl Serialize for ContentHash {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_hex())
    }
}

/// The language of a file, detected from its extension or, failing that, its name
/// (seed §8 "Language Detection"). Serialized as the seed's lower-case names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[expect(missing_docs, reason = "each variant is the language it names")]
pub enum Language {
    TypeScript,
    JavaScript,
    Python,
    Go,
    Rust,
    Java,
    C,
    Cpp,
    CSharp,
    Ruby,
    Php,
    Swift,
    Kotlin,
    Html,
    Css,
    Json,
    Yaml,
    Markdown,
    Sql,
    Shell,
    Xml,
    Toml,
    Svg,
    Makefile,
    Dockerfile,
    Procfile,
    Ignore,
    Text,
    Unknown,
}

impl Language {
    /// Detects the language of a path: the extension table first, then the file-name
    /// table for names without a known extension, else [`Language::Unknown`].
    ///
    /// # Examples
    ///
    /// ```
    /// use aic_stages::repo_map::{Language, RelativePath};
    /// let path = RelativePath::new("src/Main.TSX").unwrap();
    /// assert_eq!(Language::detect(&path), Language::TypeScript);
    /// let path = RelativePath::new("docker/Dockerfile.dev").unwrap();
    /// assert_eq!(Language::detect(&path), Language::Dockerfile);
    /// ```
    pub fn detect(path: &RelativePath) -> Self {
        if let Some(extension) = path.extension()
            && let Some(language) = Self::from_extension(&extension)
        {
            return language;
        }
        Self::from_file_name(path.file_name())
    }

    /// The extension table of seed §8 (lower-case extension without the dot).
    pub fn from_extension(extension: &str) -> Option<Self> {
        Some(match extension {
            "ts" | "tsx" | "mts" | "cts" => Self::TypeScript,
            "js" | "jsx" | "mjs" | "cjs" => Self::JavaScript,
            "py" | "pyw" | "pyi" => Self::Python,
            "go" => Self::Go,
            "rs" => Self::Rust,
            "java" => Self::Java,
            "c" | "h" => Self::C,
            "cpp" | "cc" | "cxx" | "hpp" | "hh" | "hxx" => Self::Cpp,
            "cs" => Self::CSharp,
            "rb" => Self::Ruby,
            "php" => Self::Php,
            "swift" => Self::Swift,
            "kt" | "kts" => Self::Kotlin,
            "html" | "htm" => Self::Html,
            "css" | "scss" | "less" => Self::Css,
            "json" => Self::Json,
            "yaml" | "yml" => Self::Yaml,
            "md" | "mdx" | "mdc" => Self::Markdown,
            "sql" => Self::Sql,
            "sh" | "bash" | "zsh" => Self::Shell,
            "xml" | "xsl" => Self::Xml,
            "toml" => Self::Toml,
            "svg" => Self::Svg,
            _ => return None,
        })
    }

    /// The file-name table of seed §8, for names whose extension is not in the
    /// extension table.
    pub fn from_file_name(name: &str) -> Self {
        match name {
            "Makefile" | "GNUmakefile" | "makefile" => Self::Makefile,
            "Dockerfile" => Self::Dockerfile,
            "Procfile" => Self::Procfile,
            "Vagrantfile" | "Rakefile" | "Gemfile" => Self::Ruby,
            ".gitignore" | ".dockerignore" | ".eslintignore" | ".prettierignore" => Self::Ignore,
            "LICENSE" | "LICENCE" | "COPYING" => Self::Text,
            _ if name.starts_with("Dockerfile.") => Self::Dockerfile,
            _ if name.starts_with("LICENSE") || name.starts_with("LICENCE") => Self::Text,
            _ => Self::Unknown,
        }
    }

    /// The seed's name of the language (`typescript`, `csharp`, `unknown`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TypeScript => "typescript",
            Self::JavaScript => "javascript",
            Self::Python => "python",
            Self::Go => "go",
            Self::Rust => "rust",
            Self::Java => "java",
            Self::C => "c",
            Self::Cpp => "cpp",
            Self::CSharp => "csharp",
            Self::Ruby => "ruby",
            Self::Php => "php",
            Self::Swift => "swift",
            Self::Kotlin => "kotlin",
            Self::Html => "html",
            Self::Css => "css",
            Self::Json => "json",
            Self::Yaml => "yaml",
            Self::Markdown => "markdown",
            Self::Sql => "sql",
            Self::Shell => "shell",
            Self::Xml => "xml",
            Self::Toml => "toml",
            Self::Svg => "svg",
            Self::Makefile => "makefile",
            Self::Dockerfile => "dockerfile",
            Self::Procfile => "procfile",
            Self::Ignore => "ignore",
            Self::Text => "text",
            Self::Unknown => "unknown",
        }
    }

    /// The info string to put after a Markdown code fence for this language; empty
    /// when there is none worth giving.
    pub fn fence_tag(self) -> &'static str {
        match self {
            Self::Unknown | Self::Ignore | Self::Procfile | Self::Text => "",
            Self::Shell => "sh",
            Self::Makefile => "make",
            other => other.as_str(),
        }
    }

    /// Whether the language is a programming language whose files hold code rather
    /// than data, prose or configuration.
    pub fn is_code(self) -> bool {
        matches!(
            self,
            Self::TypeScript
                | Self::JavaScript
                | Self::Python
                | Self::Go
                | Self::Rust
                | Self::Java
                | Self::C
                | Self::Cpp
                | Self::CSharp
                | Self::Ruby
                | Self::Php
                | Self::Swift
                | Self::Kotlin
                | Self::Sql
                | Self::Shell
        )
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One file of the [`RepoMap`] (seed §8 `FileEntry`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileEntry {
    /// Path relative to the project root.
    pub path: RelativePath,
    /// Detected language.
    pub language: Language,
    /// Size on disk in bytes.
    pub size_bytes: u64,
    /// Token estimate from the size ([`estimate_tokens`]); exact counts are taken only
    /// for files that reach the prompt (seed §15 "Lazy token counting").
    pub estimated_tokens: TokenCount,
    /// Last modification time in milliseconds since the Unix epoch (UTC).
    pub last_modified_ms: i64,
    /// When the file last changed as far as the selector's recency signal is
    /// concerned, in milliseconds since the epoch: the modification time, unless
    /// version control knows better (last commit time, or newer than every commit
    /// for uncommitted changes). Not part of the file-tree hash.
    #[serde(skip)]
    pub recency_ms: i64,
    /// xxh3-128 of the file's bytes.
    pub content_hash: ContentHash,
    /// Stemmed words of the names the file defines
    /// ([`crate::symbols::symbol_terms`]), sorted; used for symbol relevance.
    #[serde(skip)]
    pub symbol_terms: std::sync::Arc<[String]>,
    /// Term frequencies of path and content, for BM25 content relevance.
    #[serde(skip)]
    pub term_stats: TermStats,
    /// The file's imports as written ([`crate::lang::LanguageProvider::parse_imports`]).
    #[serde(skip)]
    pub imports: Vec<ImportRef>,
}

/// Estimates the `cl100k_base` token count of a text file from its size in bytes.
///
/// Real source averages 3.45 bytes per token in `cl100k_base`
/// (DEPENDENCIES-PROBE.md §4, 1,217 Rust files); the estimate rounds up
/// `bytes / 3.5`, so 0 bytes gives 0 tokens and 1 byte gives 1.
pub fn estimate_tokens(size_bytes: u64) -> TokenCount {
    TokenCount::from_u64((size_bytes * 2).div_ceil(7))
}

/// The repository as the scan found it (seed §8 `RepoMap`): files sorted by path.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RepoMap {
    /// Files in scope, sorted by path, no duplicates.
    pub files: Vec<FileEntry>,
    /// Sum of the files' estimated tokens.
    pub total_tokens: TokenCount,
}

impl RepoMap {
    /// Builds a map from entries in any order: sorts them by path and drops
    /// duplicate paths (the first of equal paths after a stable sort wins).
    pub fn new(mut files: Vec<FileEntry>) -> Self {
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files.dedup_by(|a, b| a.path == b.path);
        let total = files.iter().map(|f| f.estimated_tokens.get()).sum();
        Self {
            files,
            total_tokens: TokenCount::from_u64(total),
        }
    }

    /// Number of files in scope.
    pub fn total_files(&self) -> usize {
        self.files.len()
    }

    /// The file-tree hash (seed §15): xxh3-128 over the lines
    /// `path:size_bytes:mtime_ms\n` of every file, in path order.
    ///
    /// It changes when a file is added, removed, renamed, resized or touched, and
    /// not when only `aic.config.json` or a rule pack changes.
    pub fn file_tree_hash(&self) -> ContentHash {
        let mut hasher = Xxh3::new();
        for file in &self.files {
            hasher.update(file.path.as_str().as_bytes());
            hasher.update(format!(":{}:{}\n", file.size_bytes, file.last_modified_ms).as_bytes());
        }
        ContentHash(hasher.digest128().to_be_bytes())
    }
}

#[cfg(test)]
impl FileEntry {
    /// A file for unit tests: language from the path, the path's words as its
    /// term statistics, nothing else known.
    pub(crate) fn for_test(path: &str, size_bytes: u64, mtime_ms: i64) -> Self {
        let relative = RelativePath::new(path).expect("test paths are valid");
        Self {
            language: Language::detect(&relative),
            path: relative,
            size_bytes,
            estimated_tokens: estimate_tokens(size_bytes),
            last_modified_ms: mtime_ms,
            recency_ms: mtime_ms,
            content_hash: ContentHash::of(path.as_bytes()),
            symbol_terms: std::sync::Arc::default(),
            term_stats: TermStats::of(path, ""),
            imports: Vec::new(),
        }
    }

    /// A RepoMap of test files of one byte each.
    pub(crate) fn repo_for_test(paths: &[&str]) -> RepoMap {
        RepoMap::new(paths.iter().map(|p| Self::for_test(p, 1, 0)).collect())
    }
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    #[test_case("src/lib.rs", Some("src/lib.rs"))]
    #[test_case("./src//lib.rs", Some("src/lib.rs"))]
    #[test_case("src\\win\\path.ts", Some("src/win/path.ts"))]
    #[test_case("/abs/leading", Some("abs/leading"))]
    #[test_case("../outside", None)]
    #[test_case("a/../b", None)]
    #[test_case("", None)]
    #[test_case("./", None)]
    fn relative_path_normalises(input: &str, expected: Option<&str>) {
        assert_eq!(
            RelativePath::new(input).as_ref().map(RelativePath::as_str),
            expected
        );
    }

    #[test_case("src/app.ts", Language::TypeScript)]
    #[test_case("web/App.jsx", Language::JavaScript)]
    #[test_case("pkg/util.PY", Language::Python)]
    #[test_case("lib/x.hpp", Language::Cpp)]
    #[test_case("docs/guide.mdx", Language::Markdown)]
    #[test_case("Makefile", Language::Makefile)]
    #[test_case("deploy/Dockerfile.prod", Language::Dockerfile)]
    #[test_case("Gemfile", Language::Ruby)]
    #[test_case(".gitignore", Language::Ignore)]
    #[test_case("LICENSE", Language::Text)]
    #[test_case("bin/run", Language::Unknown)]
    #[test_case("archive.tar.gz", Language::Unknown)]
    fn language_detection_follows_the_seed_tables(path: &str, expected: Language) {
        let path = RelativePath::new(path).unwrap();
        assert_eq!(Language::detect(&path), expected);
    }

    #[test]
    fn extension_of_dot_file_is_none() {
        assert_eq!(RelativePath::new(".env").unwrap().extension(), None);
        assert_eq!(
            RelativePath::new("a/.env.local").unwrap().extension(),
            Some("local".into())
        );
    }

    #[test]
    fn token_estimate_rounds_up() {
        assert_eq!(estimate_tokens(0), TokenCount(0));
        assert_eq!(estimate_tokens(1), TokenCount(1));
        assert_eq!(estimate_tokens(7), TokenCount(2));
        assert_eq!(estimate_tokens(3500), TokenCount(1000));
    }

    fn entry(path: &str, size: u64, mtime: i64) -> FileEntry {
        FileEntry::for_test(path, size, mtime)
    }

    #[test]
    fn repo_map_sorts_and_hash_ignores_input_order() {
        let a = RepoMap::new(vec![entry("b.rs", 10, 1), entry("a.rs", 20, 2)]);
        let b = RepoMap::new(vec![entry("a.rs", 20, 2), entry("b.rs", 10, 1)]);
        assert_eq!(a.files[0].path.as_str(), "a.rs");
        assert_eq!(a.file_tree_hash(), b.file_tree_hash());
        assert_eq!(
            a.total_tokens,
            TokenCount(estimate_tokens(10).0 + estimate_tokens(20).0)
        );
    }

    #[test]
    fn file_tree_hash_changes_on_touch() {
        let a = RepoMap::new(vec![entry("a.rs", 20, 2)]);
        let b = RepoMap::new(vec![entry("a.rs", 20, 3)]);
        assert_ne!(a.file_tree_hash(), b.file_tree_hash());
    }
}
