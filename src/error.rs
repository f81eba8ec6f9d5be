//! Errors a compile can end with, their exit codes and the hint shown with each.
//! The codes are listed in `docs/exit-codes.md`.

use std::path::PathBuf;

use aic_stages::fit::tokens::TokenCount;
use aic_stages::spec::SpecValidationError;

use crate::config::ConfigLoadError;
use crate::pipeline::PipelineTrace;

/// Process exit codes. 0 is success; 2 is a command-line usage error (clap).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ExitStatus {
    /// The command did what it was asked.
    Success = 0,
    /// No file is relevant to the intent.
    NoRelevantFiles = 1,
    /// The command line is invalid (clap's own code).
    Usage = 2,
    /// The intent or project root is invalid.
    InvalidInput = 3,
    /// The configuration is invalid.
    InvalidConfig = 4,
    /// The guard blocked every selected file.
    GuardBlockedAll = 5,
    /// The budget cannot hold the prompt's fixed sections plus one file.
    BudgetTooSmall = 6,
    /// A bug or an unexpected system failure.
    Internal = 70,
}

impl ExitStatus {
    /// The status of an exit code (an unknown code is `Internal`).
    pub fn from_code(code: u8) -> Self {
        match code {
            0 => Self::Success,
            1 => Self::NoRelevantFiles,
            2 => Self::Usage,
            3 => Self::InvalidInput,
            4 => Self::InvalidConfig,
            5 => Self::GuardBlockedAll,
            6 => Self::BudgetTooSmall,
            _ => Self::Internal,
        }
    }
}

impl From<ExitStatus> for std::process::ExitCode {
    fn from(status: ExitStatus) -> Self {
        Self::from(status as u8)
    }
}

/// Why a compile failed.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The intent is empty or only whitespace.
    #[error("The intent is empty")]
    EmptyIntent,
    /// The project root does not exist.
    #[error("Project root `{}` does not exist", path.display())]
    RootNotFound {
        /// The root as given.
        path: PathBuf,
    },
    /// The project root is not a directory.
    #[error("Project root `{}` is not a directory", path.display())]
    RootNotDirectory {
        /// The root as given.
        path: PathBuf,
    },
    /// The project root could not be resolved.
    #[error("Cannot open project root `{}`", path.display())]
    RootUnreadable {
        /// The root as given.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The project root is the filesystem root, the home directory itself or
    /// a directory above it, or in a system or credential directory.
    #[error("Project root `{}` is {what}, not a project", path.display())]
    RootTooBroad {
        /// The root as given.
        path: PathBuf,
        /// What it is: `the filesystem root`, `your home directory`, `in the
        /// system directory `/etc``, `in the credential directory `~/.ssh``.
        what: String,
    },
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigLoadError),
    /// No candidate has any semantic signal.
    #[error("No relevant files found for the intent among {files_total} files in scope")]
    NoRelevantFiles {
        /// Files in the RepoMap.
        files_total: usize,
        /// The subject tokens that were looked for.
        subject_tokens: Vec<String>,
        /// Why files the intent named are not in scope (one sentence each,
        /// e.g. a built-in ignore pattern and the `.gitignore` line that
        /// brings the file back); empty when it named none.
        unresolved_targets: Vec<String>,
    },
    /// The guard blocked every selected file.
    #[error("Context Guard blocked all {} selected files", blocked.len())]
    GuardBlockedAll {
        /// The blocked files.
        blocked: Vec<String>,
        /// The trace of the compile up to the guard's verdict, with its
        /// findings (never a matched value): `aic inspect` prints it.
        trace: Option<Box<PipelineTrace>>,
    },
    /// The budget cannot hold the prompt.
    #[error(
        "A budget of {budget} tokens cannot hold the prompt: its fixed sections take {overhead} tokens and the smallest selected file needs {smallest} more"
    )]
    BudgetTooSmall {
        /// The total budget.
        budget: TokenCount,
        /// Tokens of the sections other than file blocks.
        overhead: TokenCount,
        /// Tokens of the cheapest file block.
        smallest: TokenCount,
    },
    /// The specification file of `aic spec` could not be read.
    #[error("Failed to read the specification `{}`", path.display())]
    SpecUnreadable {
        /// The file as given (`-` for stdin).
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The specification of `aic spec` is not valid.
    #[error("Invalid specification in `{}`: {problem}", path.display())]
    InvalidSpecification {
        /// The file as given (`-` for stdin).
        path: PathBuf,
        /// What is wrong, naming the field.
        problem: SpecValidationError,
    },
    /// The changes of `--diff`, `--staged` or `--range` could not be read.
    #[error("Cannot read the changes of `{label}`: {problem}")]
    InvalidDiff {
        /// The git command that shows the same changes.
        label: String,
        /// What went wrong.
        problem: crate::pipeline::diff::DiffError,
    },
    /// The caller cancelled the compile (an MCP timeout or
    /// `notifications/cancelled`); nothing was cached or logged.
    #[error("The compile was cancelled")]
    Cancelled,
    /// A bug: an invariant the pipeline relies on did not hold.
    #[error("Internal error: {message}")]
    Internal {
        /// What went wrong.
        message: String,
    },
}

impl CompileError {
    /// The exit code for this error.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            Self::EmptyIntent
            | Self::RootNotFound { .. }
            | Self::RootNotDirectory { .. }
            | Self::RootUnreadable { .. }
            | Self::RootTooBroad { .. }
            | Self::SpecUnreadable { .. }
            | Self::InvalidSpecification { .. }
            | Self::InvalidDiff { .. } => ExitStatus::InvalidInput,
            Self::Config(_) => ExitStatus::InvalidConfig,
            Self::NoRelevantFiles { .. } => ExitStatus::NoRelevantFiles,
            Self::GuardBlockedAll { .. } => ExitStatus::GuardBlockedAll,
            Self::BudgetTooSmall { .. } => ExitStatus::BudgetTooSmall,
            Self::Internal { .. } | Self::Cancelled => ExitStatus::Internal,
        }
    }

    /// How to fix it, when known.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::EmptyIntent => {
                "describe the task, e.g. `aic compile \"fix the null check in the user service\"`"
                    .to_owned()
            }
            Self::RootTooBroad { what, .. }
                if what.contains(" directory `") || what.contains("holds your home") =>
            {
                "pass the repository's directory with `--root DIR`; to compile this directory on purpose, list it in `AIC_ALLOWED_ROOTS`".to_owned()
            }
            Self::RootNotFound { .. }
            | Self::RootNotDirectory { .. }
            | Self::RootUnreadable { .. }
            | Self::RootTooBroad { .. } => {
                "pass the repository's directory with `--root DIR`".to_owned()
            }
            Self::Config(ConfigLoadError::Read { path, .. }) => format!(
                "check that `{}` exists and is readable (`--config FILE`), or leave `--config` out to search for aic.config.json",
                path.display()
            ),
            Self::Config(ConfigLoadError::Extends { path, .. }) => format!(
                "fix `extends` in `{}` to name a readable local file",
                path.display()
            ),
            Self::Config(error) => format!(
                "fix the field in `{}`, or move the file aside to use the defaults",
                error.path().display()
            ),
            Self::NoRelevantFiles {
                unresolved_targets, ..
            } if !unresolved_targets.is_empty() => unresolved_targets.join("; "),
            Self::NoRelevantFiles { files_total: 0, .. } => {
                "the root holds no text files in scope; check `--root` and your `.gitignore`"
                    .to_owned()
            }
            Self::NoRelevantFiles { subject_tokens, .. } => format!(
                "no path matched the intent's words ({}); broaden the intent, name a file or directory, or check what narrows the candidates (--include, --exclude, --scope, includePatterns in aic.config.json and aic-rules/)",
                if subject_tokens.is_empty() {
                    "none".to_owned()
                } else {
                    subject_tokens.join(", ")
                }
            ),
            Self::GuardBlockedAll { blocked, .. } => format!(
                "blocked: {}; review the findings with `aic inspect`, or add legitimate files to `guard.allowPatterns` in aic.config.json",
                blocked.join(", ")
            ),
            Self::BudgetTooSmall {
                overhead, smallest, ..
            } => format!(
                "raise the budget to at least {} tokens (`--budget`, contextBudget.maxTokens)",
                overhead.0.saturating_add(smallest.0)
            ),
            Self::SpecUnreadable { .. } => {
                "pass a readable JSON file, or `-` to read the specification from stdin".to_owned()
            }
            Self::InvalidSpecification {
                path,
                problem: SpecValidationError::Syntax { .. },
            } => format!("fix the JSON syntax of `{}`", path.display()),
            Self::InvalidSpecification { path, problem } => match problem.field() {
                Some(field) => format!(
                    "fix `{field}` in `{}`; the format is described in docs/spec-compiler.md",
                    path.display()
                ),
                None => format!(
                    "give `{}` at least one type, code block or prose block; see docs/spec-compiler.md",
                    path.display()
                ),
            },
            Self::InvalidDiff {
                problem: crate::pipeline::diff::DiffError::NotARepository { .. },
                ..
            } => "diff compiles read git: run inside a git work tree, or pass its directory with `--root DIR`".to_owned(),
            Self::InvalidDiff {
                problem: crate::pipeline::diff::DiffError::UnknownRevision { rev },
                ..
            } => format!("check the revision with `git rev-parse {rev}`; for a branch, fetch it first"),
            Self::InvalidDiff { .. } => "run `git status` to check the repository".to_owned(),
            Self::Internal { .. } | Self::Cancelled => return None,
        })
    }
}

/// A command's input is wrong in a way the user can fix (a missing file, a
/// file that is not what it should be, an out-of-range value, a damaged
/// database): exit code 3 with a hint, not an internal error.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct UserError {
    /// What went wrong, naming the input.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

impl UserError {
    /// A user error with its fix.
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: hint.into(),
        }
    }
}
