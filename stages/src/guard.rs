//! ContextGuard (seed §8.4): the chain of [`GuardScanner`]s that keeps secrets,
//! never-include files and injected instructions out of the prompt.
//!
//! INTERFACE ONLY — the scanners are being written; see the module's final docs.

use serde::Serialize;

use crate::config::GuardConfig;
use crate::repo_map::{Language, RelativePath};

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GuardSeverity {
    /// The file leaves the context.
    Block,
    /// The file stays; the finding is reported.
    Warn,
}

/// What a finding is about (seed §2.2 `GuardFindingType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GuardFindingType {
    /// A credential in the content.
    Secret,
    /// A never-include path.
    ExcludedFile,
    /// Text that tries to override the model's instructions.
    PromptInjection,
}

/// One finding. Never holds the matched text (STYLE.md §2.3.6).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardFinding {
    /// Block or warn.
    pub severity: GuardSeverity,
    /// Kind of finding.
    #[serde(rename = "type")]
    pub finding_type: GuardFindingType,
    /// The file.
    pub file: RelativePath,
    /// One-based line of the match; `None` for path findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Human-readable description, without the matched text.
    pub message: String,
    /// Id of the pattern that matched (e.g. `aws-access-key`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
}

/// The guard's verdict on a set of files (seed §2.2 `GuardResult`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardResult {
    /// True when no file was blocked.
    pub passed: bool,
    /// All findings, sorted by file, line, pattern.
    pub findings: Vec<GuardFinding>,
    /// Files removed from the context, sorted.
    pub files_blocked: Vec<RelativePath>,
    /// Files whose content was redacted (none yet: redaction comes with the full
    /// guard).
    pub files_redacted: Vec<RelativePath>,
}

/// One scanner of the chain.
pub trait GuardScanner: Send + Sync {
    /// Scanner name, as in the seed (`SecretScanner`, …).
    fn name(&self) -> &'static str;
    /// Findings for one file. `content` is the file's text (lossily decoded).
    fn scan(&self, path: &RelativePath, language: Language, content: &str) -> Vec<GuardFinding>;
}

/// The guard's verdict on one file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FileGuardOutcome {
    /// Findings for this file, sorted.
    pub findings: Vec<GuardFinding>,
    /// Whether any finding blocks the file.
    pub blocked: bool,
}

/// An invalid guard configuration.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// A glob in `guard.additionalExclusions` or `guard.allowPatterns` is invalid.
    #[error("invalid glob `{pattern}` in `{field}`")]
    InvalidGlob {
        /// Config field path.
        field: &'static str,
        /// The pattern.
        pattern: String,
        /// The glob error.
        #[source]
        source: globset::Error,
    },
}

/// The orchestrator: exclusion by path first, then allow patterns, then the
/// content scanners (seed §8.4 "ContextGuard constructor").
pub struct ContextGuard {
    enabled: bool,
}

impl std::fmt::Debug for ContextGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextGuard").field("enabled", &self.enabled).finish_non_exhaustive()
    }
}

impl ContextGuard {
    /// Builds the guard from `guard.*` config.
    ///
    /// # Errors
    ///
    /// [`GuardError::InvalidGlob`] for an invalid pattern.
    pub fn new(config: &GuardConfig) -> Result<Self, GuardError> {
        Ok(Self {
            enabled: config.enabled,
        })
    }

    /// Scans one file.
    pub fn scan_file(&self, path: &RelativePath, language: Language, content: &str) -> FileGuardOutcome {
        let _ = (path, language, content, self.enabled);
        FileGuardOutcome::default()
    }

    /// Aggregates per-file outcomes into a [`GuardResult`] (sorted, deterministic).
    pub fn summarize<'a>(
        outcomes: impl IntoIterator<Item = (&'a RelativePath, &'a FileGuardOutcome)>,
    ) -> GuardResult {
        let mut result = GuardResult {
            passed: true,
            ..GuardResult::default()
        };
        for (path, outcome) in outcomes {
            result.findings.extend(outcome.findings.iter().cloned());
            if outcome.blocked {
                result.files_blocked.push(path.clone());
            }
        }
        result.findings.sort();
        result.files_blocked.sort();
        result.passed = result.files_blocked.is_empty();
        result
    }
}
