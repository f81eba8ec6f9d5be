//! [`Language`]: what a file is written in, from its name.

use std::fmt;

use serde::Serialize;

use crate::relative_path::RelativePath;

/// The language of a file, detected from its extension or, failing that, its name.
/// Serialized as lower-case names (`typescript`, `python`, `makefile`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
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
    /// use aic_stages::language::Language;
    /// use aic_stages::relative_path::RelativePath;
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

    /// The extension table (lower-case extension without the dot).
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

    /// The file-name table, for names whose extension is not in the
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

    /// The language's lower-case name (`typescript`, `csharp`, `unknown`, …).
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

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

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
    fn language_detection_follows_extensions_then_names(path: &str, expected: Language) {
        let path = RelativePath::new(path).unwrap();
        assert_eq!(Language::detect(&path), expected);
    }
}
