//! `aic inspect "<intent>" [--json] [--all]`: how the prompt would be
//! compiled ([`crate::answer::inspect`] renders it). When the guard blocks
//! every selected file the trace is printed all the same and the command then
//! fails with `CompileError::GuardBlockedAll` (exit code 5).

use anyhow::Context;

use crate::answer::{CompileJob, Outcome, View};
use crate::args::InspectArgs;
use crate::host::Host;
use crate::printer::print_stdout;

/// Runs the pipeline and prints its trace; when the guard blocked every
/// selected file, prints the trace of the compile so far and returns the
/// error. A running `aic daemon` answers when there is one.
pub fn run(args: &InspectArgs, host: &Host) -> anyhow::Result<()> {
    let mut request = args.request.request()?;
    request.trace_all = args.all;
    request.explain_left_out = true;
    request.use_prompt_cache = false;
    let job = CompileJob {
        request,
        view: View::Inspect { json: args.json },
    };
    let Outcome { answer, error } = crate::daemon::client::compile(&job, host);
    if !answer.stdout.is_empty() {
        print_stdout(&answer.stdout).context("Failed to write to stdout")?;
    }
    error.map_or(Ok(()), Err)
}
