//! Glob patterns over repository-relative paths, as rule packs and config write
//! them.
//!
//! Paths are read as `.gitignore` reads them: `*` and `?` never cross a `/`;
//! `**` spans any number of directories; a pattern without a `/` (such as
//! `*.md` or `tests`) matches a name at any depth; a leading `/` anchors the
//! pattern at the root (`./` is dropped); and a pattern that matches a
//! directory matches every file below it (`src/api` and `src/api/` take
//! `src/api/**`). Unlike `.gitignore`, there is no `!` negation: exclusion
//! and inclusion are separate lists.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::relative_path::RelativePath;

/// A compiled list of glob patterns that can tell which of them match a path.
#[derive(Clone, Debug)]
pub struct PatternSet {
    set: GlobSet,
    /// For each glob in `set`, the index of the pattern it came from.
    origin: Vec<usize>,
    patterns: Vec<String>,
}

impl PatternSet {
    /// Compiles patterns.
    ///
    /// # Errors
    ///
    /// The first invalid pattern's index and its [`globset::Error`].
    pub fn new(patterns: &[String]) -> Result<Self, (usize, globset::Error)> {
        let mut builder = GlobSetBuilder::new();
        let mut origin = Vec::new();
        for (index, pattern) in patterns.iter().enumerate() {
            for glob in expand(pattern) {
                builder.add(compile(&glob).map_err(|e| (index, e))?);
                origin.push(index);
            }
        }
        let set = builder.build().map_err(|e| (0, e))?;
        Ok(Self {
            set,
            origin,
            patterns: patterns.to_vec(),
        })
    }

    /// An empty set, which matches nothing.
    pub fn empty() -> Self {
        Self {
            set: GlobSet::empty(),
            origin: Vec::new(),
            patterns: Vec::new(),
        }
    }

    /// Whether the set holds no pattern.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether any pattern matches.
    pub fn is_match(&self, path: &RelativePath) -> bool {
        self.set.is_match(path.as_str())
    }

    /// The patterns as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// The pattern at `index` of [`PatternSet::patterns`].
    pub fn pattern(&self, index: u16) -> &str {
        self.patterns
            .get(usize::from(index))
            .map_or("", String::as_str)
    }

    /// The indices of the patterns that match, each once, ascending.
    pub fn matching_indices(&self, path: &RelativePath) -> Vec<u16> {
        let mut indices: Vec<u16> = self
            .set
            .matches(path.as_str())
            .into_iter()
            .map(|glob| u16::try_from(self.origin[glob]).unwrap_or(u16::MAX))
            .collect();
        indices.sort_unstable();
        indices.dedup();
        indices
    }

    /// The patterns that match, each once, in the order they were given.
    pub fn matching(&self, path: &RelativePath) -> Vec<&str> {
        let mut indices: Vec<usize> = self
            .set
            .matches(path.as_str())
            .into_iter()
            .map(|glob| self.origin[glob])
            .collect();
        indices.sort_unstable();
        indices.dedup();
        indices
            .into_iter()
            .map(|index| self.patterns[index].as_str())
            .collect()
    }
}

/// The globs one pattern stands for, with gitignore's reading of paths: a
/// leading `/` or `./` anchors at the root (and is dropped); a pattern with
/// no `/` but a trailing one matches at any depth (`*.md`, `CHANGELOG*`);
/// and a pattern also matches everything below a directory it matches
/// (`src/api` and `src/api/` take `src/api/**`, `generated` takes
/// `**/generated/**`).
fn expand(pattern: &str) -> Vec<String> {
    let anchored = pattern.trim_start_matches("./").trim_start_matches('/');
    let trimmed = anchored.trim_end_matches('/');
    let directory_only = trimmed.len() != anchored.len();
    let any_depth = !trimmed.contains('/') && !pattern.starts_with('/');
    let mut globs = Vec::with_capacity(4);
    let mut add = |glob: String| {
        if !globs.contains(&glob) {
            globs.push(glob);
        }
    };
    if !directory_only {
        add(trimmed.to_owned());
        if any_depth {
            add(format!("**/{trimmed}"));
        }
    }
    if !trimmed.ends_with("/**") && trimmed != "**" {
        add(format!("{trimmed}/**"));
        if any_depth {
            add(format!("**/{trimmed}/**"));
        }
    }
    globs
}

fn compile(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    fn set(patterns: &[&str]) -> PatternSet {
        PatternSet::new(&patterns.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>()).unwrap()
    }

    fn path(p: &str) -> RelativePath {
        RelativePath::new(p).unwrap()
    }

    #[test_case("src/**/*.ts", "src/a/b/c.ts", true)]
    #[test_case("src/**/*.ts", "lib/c.ts", false)]
    #[test_case("src/*.ts", "src/a/c.ts", false)]
    #[test_case("**/generated/**", "a/generated/x.rs", true)]
    #[test_case("**/generated/**", "generated/x.rs", true)]
    #[test_case("*.md", "docs/deep/guide.md", true)]
    #[test_case("**/*.test.*", "src/a.test.ts", true)]
    #[test_case("**/*.test.*", "src/latest.ts", false)]
    #[test_case("./dist/**", "dist/index.js", true)]
    #[test_case("docs/**", "src/docs.rs", false)]
    #[test_case("src/api", "src/api/users.ts", true)]
    #[test_case("src/api/", "src/api/v1/users.ts", true)]
    #[test_case("src/api/", "src/api", false)]
    #[test_case("src/api", "src/apis/users.ts", false)]
    #[test_case("generated", "a/generated/x.rs", true)]
    #[test_case("/generated", "a/generated/x.rs", false)]
    #[test_case("/generated", "generated/x.rs", true)]
    #[test_case("tests", "pkg/tests/test_a.py", true)]
    fn matches_as_documented(pattern: &str, candidate: &str, expected: bool) {
        assert_eq!(set(&[pattern]).is_match(&path(candidate)), expected);
    }

    #[test]
    fn matching_lists_each_pattern_once_in_order() {
        let patterns = set(&["*.rs", "src/**", "**/*.rs"]);
        assert_eq!(
            patterns.matching(&path("src/lib.rs")),
            vec!["*.rs", "src/**", "**/*.rs"]
        );
        assert!(patterns.matching(&path("README.md")).is_empty());
    }

    #[test]
    fn invalid_pattern_reports_its_index() {
        let err = PatternSet::new(&["ok/**".to_owned(), "bad/[x".to_owned()]).unwrap_err();
        assert_eq!(err.0, 1);
    }
}
