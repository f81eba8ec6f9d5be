//! `aic compile "<intent>" [--root DIR] [--budget N] [--format F] [--json]
//! [-o FILE] [--copy] [--raw]`.

use anyhow::Context;

use crate::answer::{CompileJob, Outcome, View};
use crate::args::CompileArgs;
use crate::host::Host;
use crate::printer::{print_stdout, replace_file};

/// Bytes of output past which a prompt printed to a terminal gets a note.
const LARGE_ON_TERMINAL: usize = 20_000;

/// Compiles and prints the prompt (or `{compiledPrompt, meta}` as JSON), or
/// writes it to `-o FILE` (stdout then stays empty), and with `--copy` also
/// puts the prompt on the clipboard; the compile is logged for `aic status`
/// (a failure to log is a warning). A running `aic daemon` answers when
/// there is one ([`crate::daemon::client`]).
pub fn run(args: &CompileArgs, host: &Host) -> anyhow::Result<()> {
    let job = CompileJob {
        request: args.request.request()?,
        view: View::Prompt {
            json: args.json,
            copy: args.copy,
        },
    };
    let Outcome { answer, error } = crate::daemon::client::compile(&job, host);
    if let Some(error) = error {
        return Err(error);
    }
    let text = answer.stdout;
    if let Some(file) = args
        .output
        .as_deref()
        .filter(|file| file.as_os_str() != "-")
    {
        replace_file(file, text.as_bytes()).map_err(|error| {
            crate::error::UserError::new(
                format!("Cannot write the prompt to `{}`: {error:#}", file.display()),
                "pass a file path in a directory you can write to (not a directory), or leave -o out to print the prompt",
            )
        })?;
        tracing::info!(
            "Wrote {} tokens ({} bytes) to {}",
            answer.tokens_compiled,
            text.len(),
            file.display()
        );
    } else {
        if std::io::IsTerminal::is_terminal(&std::io::stdout()) && text.len() > LARGE_ON_TERMINAL {
            tracing::warn!(
                target: crate::logging::NOTE_TARGET,
                "the prompt is {} tokens; write it to a file with -o FILE, copy it with --copy, or lower it with --budget",
                answer.tokens_compiled
            );
        }
        print_stdout(&text).context("Failed to write to stdout")?;
    }
    if let Some(prompt) = answer.prompt {
        crate::clipboard::copy(&prompt)?;
        tracing::info!("Copied the prompt to the clipboard");
    }
    Ok(())
}
