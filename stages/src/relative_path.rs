//! [`RelativePath`]: a file's path relative to the project root, the key every
//! list of files in aic is sorted by.

use std::fmt;
use std::sync::Arc;

/// A path relative to the project root, always `/`-separated, never starting with `/`
/// and never containing `.` or `..` segments.
///
/// Ordering is plain byte order of the string, which is the order every list of files
/// in `aic` is sorted by (`docs/architecture.md`, "Determinism").
///
/// The text is shared: a clone is a reference count, not a copy, so the
/// rankings, traces and exclusion lists of a large repository hand paths
/// around without allocating (a 300,000-file selection clones every path).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelativePath(Arc<str>);

impl serde::Serialize for RelativePath {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for RelativePath {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|path| Self(Arc::from(path)))
    }
}

impl RelativePath {
    /// Builds a relative path from its `/`-separated form.
    ///
    /// Backslashes are turned into `/`, a leading `./` or `/` is dropped and empty or
    /// `.` segments are removed. Returns `None` when the path is empty after that or
    /// contains a `..` segment, which would point outside the root.
    pub fn new(path: &str) -> Option<Self> {
        // Nearly every path (a walk's, a cache row's) is already in normal
        // form: one check and one allocation, no rebuilding.
        if !path.is_empty()
            && !path.contains('\\')
            && path
                .split('/')
                .all(|segment| !matches!(segment, "" | "." | ".."))
        {
            return Some(Self(Arc::from(path)));
        }
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
            Some(Self(Arc::from(segments.join("/"))))
        }
    }

    /// Whether both paths hold one shared text (one allocation), not two
    /// equal copies: what structures that share a RepoMap's paths promise.
    pub fn shares_text_with(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
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

impl std::borrow::Borrow<str> for RelativePath {
    fn borrow(&self) -> &str {
        &self.0
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
    #[test_case("a/./b", Some("a/b"))]
    #[test_case("a/b/", Some("a/b"))]
    #[test_case(".", None)]
    #[test_case("..", None)]
    #[test_case(".hidden/x", Some(".hidden/x"))]
    fn relative_path_normalises(input: &str, expected: Option<&str>) {
        assert_eq!(
            RelativePath::new(input).as_ref().map(RelativePath::as_str),
            expected
        );
    }

    #[test]
    fn extension_of_dot_file_is_none() {
        assert_eq!(RelativePath::new(".env").unwrap().extension(), None);
        assert_eq!(
            RelativePath::new("a/.env.local").unwrap().extension(),
            Some("local".into())
        );
    }
}
