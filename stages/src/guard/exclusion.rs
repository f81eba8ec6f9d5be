//! The never-include list: files that leave the context because of their path alone.

use crate::guard::{
    GuardError, GuardFinding, GuardFindingType, GuardScanner, GuardSeverity, PathGlobs,
};
use crate::language::Language;
use crate::relative_path::RelativePath;

/// Which files a built-in never-include pattern applies to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Applies {
    /// Every file.
    Always,
    /// Only files whose language is not code (see [`ExclusionScanner`], "Known problems").
    NonCode,
    /// Never blocked by path: the content scanners decide (an `.env` without a
    /// secret-shaped value, a `.pem` of public certificates). Still sensitive:
    /// a symbolic link to such a file is not followed.
    Content,
}

/// The built-in never-include list, matched case-insensitively.
const NEVER_INCLUDE: &[(&str, Applies)] = &[
    (".env", Applies::Content),
    (".env.*", Applies::Content),
    ("*.pem", Applies::Content),
    ("*.key", Applies::Always),
    ("*.pfx", Applies::Always),
    ("*.p12", Applies::Always),
    ("id_rsa", Applies::Always),
    ("id_dsa", Applies::Always),
    ("id_ecdsa", Applies::Always),
    ("id_ed25519", Applies::Always),
    ("*.keystore", Applies::Always),
    ("*.jks", Applies::Always),
    (".npmrc", Applies::Always),
    (".pypirc", Applies::Always),
    (".netrc", Applies::Always),
    ("credentials.json", Applies::Always),
    ("*secret*", Applies::NonCode),
    ("*credential*", Applies::NonCode),
    ("*password*", Applies::NonCode),
];

/// Blocks files whose path is on the never-include list.
///
/// ## What it does
///
/// Matches the repository-relative path (never the content) against the built-in
/// never-include list and `guard.additionalExclusions`, and reports one
/// [`GuardFindingType::ExcludedFile`] finding with [`GuardSeverity::Block`] for each
/// pattern that matches. The pattern id is `never-include:<pattern>`, for example
/// `never-include:*.pem`; the finding has no line.
///
/// The built-in list: `*.key`, `*.pfx`, `*.p12`, `id_rsa`, `id_dsa`, `id_ecdsa`,
/// `id_ed25519`, `*.keystore`, `*.jks`, `.npmrc`, `.pypirc`, `.netrc`,
/// `credentials.json`, and, for files that are not code, `*secret*`,
/// `*credential*` and `*password*`. Built-in patterns ignore ASCII case and match the
/// file name at any depth. `.env`, `.env.*` and `*.pem` are sensitive but not
/// blocked by path: the content scanners decide (see "Known problems"). `guard.additionalExclusions` follow the rules of the
/// guard's path globs (a pattern without `/` matches the file name at any depth).
///
/// ## Why
///
/// Environment files, key stores and credential files exist to hold secrets; their
/// content must never reach a model, whatever the content scanners would say. When
/// this scanner blocks a file the guard does not run the content scanners on it.
///
/// ## Example
///
/// ```
/// use aic_stages::guard::{ExclusionScanner, GuardScanner};
/// use aic_stages::language::Language;
/// use aic_stages::relative_path::RelativePath;
///
/// let scanner = ExclusionScanner::new(&[] as &[String]).unwrap();
/// let key = RelativePath::new("deploy/tls/server.key").unwrap();
/// let findings = scanner.scan(&key, Language::Unknown, "");
/// assert_eq!(findings[0].pattern.as_deref(), Some("never-include:*.key"));
/// let env = RelativePath::new(".env").unwrap();
/// assert!(scanner.scan(&env, Language::Unknown, "").is_empty());
/// assert!(scanner.is_sensitive(&env, Language::Unknown));
/// ```
///
/// ## Known problems
///
/// - `*secret*`, `*credential*` and `*password*` apply only when the file's
///   language is not code ([`Language::is_code`]). `secret_scanner.rs` or
///   `password_reset.py` are ordinary source files, and a secret inside code is
///   caught by [`SecretScanner`](crate::guard::SecretScanner). Prose and data such as
///   `docs/password-policy.md` or `secrets.yaml` are still blocked.
/// - `.env`, `.env.*` and `*.pem` are left to the content scanners: an `.env`
///   whose values are not secrets (`VITE_CUSTOM_ENV_VARIABLE=1`) and a `.pem` of
///   public certificates stay; in an env file every value assigned to a
///   secret-like name is a secret (rule `dotenv-secret`), and a private key in a
///   `.pem` is found by `private-key`; both are redacted or blocked as
///   `guard.secretAction` says. A symbolic link to any of them, or to a
///   never-include file, is not followed by the walk ([`ExclusionScanner::is_sensitive`]).
/// - `*.key` also matches files that are not keys, such as Keynote documents.
pub struct ExclusionScanner {
    built_in: PathGlobs,
    additional: PathGlobs,
    /// The configured `guard.additionalExclusions`, for pattern ids.
    additional_patterns: Vec<String>,
}

impl ExclusionScanner {
    /// Builds the scanner from the built-in list plus `additional_exclusions`
    /// (`guard.additionalExclusions`).
    ///
    /// # Errors
    ///
    /// [`GuardError::InvalidGlob`] with field `guard.additionalExclusions` for an
    /// invalid pattern.
    ///
    /// # Panics
    ///
    /// Never in practice: the built-in globs are constants, compiled by the unit
    /// tests.
    pub fn new<S: AsRef<str>>(additional_exclusions: &[S]) -> Result<Self, GuardError> {
        let built_in_patterns: Vec<&str> =
            NEVER_INCLUDE.iter().map(|(pattern, _)| *pattern).collect();
        let built_in = PathGlobs::new("guard.neverInclude", &built_in_patterns, true)
            .expect("the built-in never-include globs are valid");
        let additional =
            PathGlobs::new("guard.additionalExclusions", additional_exclusions, false)?;
        Ok(Self {
            built_in,
            additional,
            additional_patterns: additional_exclusions
                .iter()
                .map(|pattern| pattern.as_ref().to_owned())
                .collect(),
        })
    }
}

impl std::fmt::Debug for ExclusionScanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExclusionScanner")
            .field("additional", &self.additional_patterns)
            .finish_non_exhaustive()
    }
}

impl ExclusionScanner {
    /// Whether `path` is on the never-include list or is a file the content
    /// scanners decide about (`.env`, `.env.*`, `*.pem`): a symbolic link whose
    /// target is such a path must not be read under the link's name.
    pub fn is_sensitive(&self, path: &RelativePath, language: Language) -> bool {
        let built_in = self.built_in.matching(path).into_iter().any(|index| {
            NEVER_INCLUDE
                .get(index)
                .is_some_and(|(_, applies)| *applies != Applies::NonCode || !language.is_code())
        });
        built_in || !self.additional.matching(path).is_empty()
    }
}

impl GuardScanner for ExclusionScanner {
    fn name(&self) -> &'static str {
        "ExclusionScanner"
    }

    fn scan(&self, path: &RelativePath, language: Language, _content: &str) -> Vec<GuardFinding> {
        let built_in = self
            .built_in
            .matching(path)
            .into_iter()
            .filter_map(|index| {
                let (pattern, applies) = NEVER_INCLUDE.get(index)?;
                let skipped = match applies {
                    Applies::Always => false,
                    Applies::NonCode => language.is_code(),
                    Applies::Content => true,
                };
                (!skipped).then_some(*pattern)
            });
        let additional = self
            .additional
            .matching(path)
            .into_iter()
            .filter_map(|index| self.additional_patterns.get(index).map(String::as_str));
        built_in
            .chain(additional)
            .map(|pattern| GuardFinding {
                severity: GuardSeverity::Block,
                finding_type: GuardFindingType::ExcludedFile,
                file: path.clone(),
                line: None,
                message: format!("File matches never-include pattern `{pattern}`"),
                pattern: Some(format!("never-include:{pattern}")),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use test_case::test_case;

    use super::*;

    fn scan(additional: &[&str], path: &str, language: Language) -> Vec<String> {
        let scanner = ExclusionScanner::new(additional).unwrap();
        let path = RelativePath::new(path).unwrap();
        scanner
            .scan(&path, language, "")
            .into_iter()
            .map(|finding| {
                assert_eq!(finding.severity, GuardSeverity::Block);
                assert_eq!(finding.finding_type, GuardFindingType::ExcludedFile);
                assert_eq!(finding.line, None);
                finding.pattern.unwrap()
            })
            .collect()
    }

    #[test_case("tls/server.key", "*.key")]
    #[test_case("tls/client.pfx", "*.pfx")]
    #[test_case("tls/client.p12", "*.p12")]
    #[test_case("home/.ssh/id_rsa", "id_rsa")]
    #[test_case("id_dsa", "id_dsa")]
    #[test_case("keys/id_ecdsa", "id_ecdsa")]
    #[test_case("keys/id_ed25519", "id_ed25519")]
    #[test_case("android/release.keystore", "*.keystore")]
    #[test_case("android/release.jks", "*.jks")]
    #[test_case(".npmrc", ".npmrc")]
    #[test_case("tools/.pypirc", ".pypirc")]
    #[test_case(".netrc", ".netrc")]
    #[test_case("gcp/credentials.json", "credentials.json")]
    fn blocks_never_include_paths(path: &str, pattern: &str) {
        let language = Language::detect(&RelativePath::new(path).unwrap());
        assert!(
            scan(&[], path, language).contains(&format!("never-include:{pattern}")),
            "{path} should match {pattern}"
        );
    }

    #[test_case(".env")]
    #[test_case("services/api/.env")]
    #[test_case(".env.local")]
    #[test_case("deploy/.env.production")]
    #[test_case("certs/server.pem")]
    #[test_case("a/b/c.PEM")]
    #[test_case(".env.example")]
    #[test_case("config/.env.sample")]
    #[test_case(".env.template")]
    #[test_case(".env.dist")]
    #[test_case(".env.production.example")]
    #[test_case("src/env.rs")]
    #[test_case("keys/id_rsa.pub")]
    #[test_case("docs/keys.md")]
    #[test_case("environment.ts")]
    fn leaves_ordinary_paths(path: &str) {
        let language = Language::detect(&RelativePath::new(path).unwrap());
        assert_eq!(scan(&[], path, language), Vec::<String>::new());
    }

    #[test_case("src/guard/secret.rs", Language::Rust)]
    #[test_case("app/auth/password_reset.py", Language::Python)]
    #[test_case("lib/credential_store.ts", Language::TypeScript)]
    #[test_case("scripts/rotate_secrets.sh", Language::Shell)]
    fn name_patterns_spare_code(path: &str, language: Language) {
        assert_eq!(scan(&[], path, language), Vec::<String>::new());
    }

    #[test_case("deploy/secrets.yaml", "*secret*")]
    #[test_case("passwords.txt", "*password*")]
    #[test_case("docs/Credentials-Rotation.md", "*credential*")]
    #[test_case("config/SECRET", "*secret*")]
    fn name_patterns_block_data_and_prose(path: &str, pattern: &str) {
        let language = Language::detect(&RelativePath::new(path).unwrap());
        assert!(!language.is_code());
        assert_eq!(
            scan(&[], path, language),
            vec![format!("never-include:{pattern}")]
        );
    }

    #[test]
    fn reports_every_matching_pattern() {
        assert_eq!(
            scan(&[], "old/secret.key", Language::Unknown),
            vec!["never-include:*.key", "never-include:*secret*"]
        );
    }

    #[test_case(".env", true)]
    #[test_case("deploy/.env.production", true)]
    #[test_case("certs/ca.pem", true)]
    #[test_case("keys/id_rsa", true)]
    #[test_case("docs/notes.txt", false)]
    #[test_case("src/password_reset.py", false)]
    fn sensitive_paths_include_content_decided_files(path: &str, sensitive: bool) {
        let scanner = ExclusionScanner::new(&[] as &[String]).unwrap();
        let path = RelativePath::new(path).unwrap();
        assert_eq!(
            scanner.is_sensitive(&path, Language::detect(&path)),
            sensitive
        );
    }

    #[test_case("*.sqlite", "data/cache/app.sqlite", true)]
    #[test_case("*.sqlite", "app.sqlite", true)]
    #[test_case("config/prod/*.yaml", "config/prod/app.yaml", true)]
    #[test_case("config/prod/*.yaml", "config/dev/app.yaml", false)]
    #[test_case("config/prod/*.yaml", "config/prod/nested/app.yaml", false)]
    #[test_case("/dump.sql", "dump.sql", true)]
    #[test_case("/dump.sql", "db/dump.sql", false)]
    #[test_case("fixtures/", "tests/fixtures/users.json", true)]
    #[test_case("", "anything.txt", false)]
    fn additional_exclusions(pattern: &str, path: &str, blocked: bool) {
        let language = Language::detect(&RelativePath::new(path).unwrap());
        let findings = scan(&[pattern], path, language);
        assert_eq!(
            !findings.is_empty(),
            blocked,
            "{pattern} on {path}: {findings:?}"
        );
        if blocked {
            assert_eq!(findings, vec![format!("never-include:{pattern}")]);
        }
    }

    #[test]
    fn invalid_additional_exclusion_names_the_field() {
        let Err(GuardError::InvalidGlob { field, pattern, .. }) = ExclusionScanner::new(&["a[b"])
        else {
            panic!("expected an invalid glob");
        };
        assert_eq!(field, "guard.additionalExclusions");
        assert_eq!(pattern, "a[b");
    }
}
