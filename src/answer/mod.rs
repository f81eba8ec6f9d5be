//! Answering a compile in this process, as the command line shows it: the
//! prompt of `aic compile` ([`prompt`]), the report of `aic inspect`
//! ([`inspect`]), and an error as `error:`, causes and `hint:` ([`report`]).
//!
//! The commands answer themselves with these when no daemon answers, and
//! `aic daemon` answers its clients with the same functions, so the bytes
//! are the same either way. This module sits below both: it knows neither
//! the command line's arguments nor the socket. [`crate::hook`] is the same
//! for editor hook events.

pub mod inspect;
pub mod prompt;
pub mod report;

use serde::{Deserialize, Serialize};

use crate::history::compilations::{CompileOrigin, record};
use crate::host::Host;
use crate::pipeline::{Compilation, CompilationRequest};

/// One compile and how its answer is shown.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CompileJob {
    /// The compile.
    pub request: CompilationRequest,
    /// How it is shown.
    pub view: View,
}

/// How a compile's answer is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum View {
    /// `aic compile`: the prompt, or `{compiledPrompt, meta}` with `json`;
    /// `copy` also returns the bare prompt (for the clipboard).
    Prompt {
        /// `--json`.
        json: bool,
        /// `--copy`.
        copy: bool,
    },
    /// `aic inspect`: the report, or the trace as JSON.
    Inspect {
        /// `--json`.
        json: bool,
    },
}

/// A compile's answer: what the command prints.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Answer {
    /// The command's stdout.
    pub stdout: String,
    /// Tokens of the compiled prompt (for the command's notes).
    pub tokens_compiled: u64,
    /// The bare prompt, for `--copy`.
    pub prompt: Option<String>,
    /// Warnings the compile logged (a client prints them).
    pub warnings: Vec<String>,
    /// The error the command ends with, as it is reported.
    pub failure: Option<Failure>,
}

/// An error as the command line reports it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Failure {
    /// `error: …`, its causes and hint, as printed to stderr.
    pub report: String,
    /// The exit code.
    pub exit: u8,
}

/// A compile's answer in this process, or the error it ends with (a
/// command may have both: `inspect` prints the trace of a blocked compile).
#[derive(Debug)]
pub struct Outcome {
    /// What the command prints.
    pub answer: Answer,
    /// The error the command ends with.
    pub error: Option<anyhow::Error>,
}

impl Outcome {
    /// An outcome with nothing to print.
    pub fn failed(error: anyhow::Error) -> Self {
        Self {
            answer: Answer::default(),
            error: Some(error),
        }
    }
}

/// Runs a compile job in this process, as the command would, and logs it.
pub fn run_job(job: &CompileJob, host: &Host) -> Outcome {
    let (outcome, pending) = run_job_unrecorded(job, host);
    if let Some(pending) = pending {
        pending.record(host);
    }
    outcome
}

/// [`run_job`] with the compile's log entry left to the caller, who writes
/// it after the answer has gone out.
pub fn run_job_unrecorded(job: &CompileJob, host: &Host) -> (Outcome, Option<PendingRecord>) {
    match job.view {
        View::Prompt { json, copy } => match prompt::answer(&job.request, json, copy, host) {
            Ok((answer, pending)) => (
                Outcome {
                    answer,
                    error: None,
                },
                Some(pending),
            ),
            Err(error) => (Outcome::failed(error), None),
        },
        View::Inspect { json } => (inspect::answer(&job.request, json, host), None),
    }
}

/// A compile's log entry not written yet: the daemon writes it after the
/// reply has left, so a client does not wait for the log's commit.
pub struct PendingRecord {
    compilation: Compilation,
}

impl PendingRecord {
    /// Writes the log entry (for `aic status`, `aic last`); a failure is a
    /// warning, the compile's result stands.
    pub fn record(self, host: &Host) {
        let origin = CompileOrigin {
            trigger_source: "cli".to_owned(),
            ..CompileOrigin::default()
        };
        if let Err(message) = record(host, &self.compilation, &origin) {
            tracing::warn!("The compile was not logged: {message}");
        }
    }
}
