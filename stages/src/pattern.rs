//! Glob patterns over repository-relative paths, as rule packs and config write
//! them.
//!
//! `*` and `?` never cross a `/`; `**` spans any number of directories. A pattern
//! without a `/` (such as `*.md`) matches the file name at any depth, as in
//! `.gitignore`. A leading `./` or `/` anchors nothing and is dropped.

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
            let trimmed = pattern.trim_start_matches("./").trim_start_matches('/');
            builder.add(compile(trimmed).map_err(|e| (index, e))?);
            origin.push(index);
            if !trimmed.contains('/') {
                builder.add(compile(&format!("**/{trimmed}")).map_err(|e| (index, e))?);
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
