//! The `aic` command line: [`main`] parses the [`args`](crate::args), makes
//! the process's [`Host`], runs one subcommand (a module each) and renders an
//! error with its exit code (`error:`, one `Caused by:` per source, then
//! `hint:`; the codes are in `docs/exit-codes.md`).

pub mod bench;
pub mod cache;
pub mod compile;
pub mod daemon;
pub mod diagnostics;
pub mod doctor;
pub mod hook;
pub mod init;
pub mod inspect;
pub mod install;
pub mod precompute;
pub mod rules;
pub mod spec;
pub mod tree;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command, DiagnosticsArgs, DiagnosticsCommand};
use crate::error::ExitStatus;
use crate::host::Host;

/// The text of an unknown "option" that is an intent starting with `-`
/// (`aic compile "--help crashes"`): it holds a space, which no option does.
/// clap reports it up to its first `=`.
fn intent_taken_for_a_flag(error: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if error.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(argument)) if argument.trim().contains(char::is_whitespace) => {
            Some(argument.trim_end().to_owned())
        }
        _ => None,
    }
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            if let Some(intent) = intent_taken_for_a_flag(&error) {
                let hint = format!(
                    "\nhint: `{intent}…` looks like an intent, not an option: an intent that starts with `-` goes after `--`, e.g. `aic compile -- \"{intent}…\"`\n"
                );
                let _ = std::io::Write::write_all(&mut std::io::stderr(), hint.as_bytes());
            }
            return if error.use_stderr() {
                ExitStatus::Usage.into()
            } else {
                ExitStatus::Success.into()
            };
        }
    };
    // A hook's stderr is noise to the editor: errors only (failures go to the
    // hook log).
    let hook = matches!(cli.command, Some(Command::Hook(_)));
    crate::logging::init(cli.global.verbose, cli.global.quiet + u8::from(hook));
    quiet_database_panics();
    let Some(command) = &cli.command else {
        use std::io::IsTerminal;
        if std::io::stdin().is_terminal() {
            use clap::CommandFactory;
            let _ = Cli::command().print_help();
            return ExitStatus::Usage.into();
        }
        return finish(crate::mcp::serve());
    };
    let host = Host::from_env();
    let result = match command {
        Command::Mcp => crate::mcp::serve(),
        Command::Hook(args) => hook::run(args, &host),
        Command::Install(args) => install::install(args, &host),
        Command::Uninstall(args) => install::uninstall(args, &host),
        Command::Doctor(args) => {
            return match doctor::run(args) {
                Ok(0) => ExitStatus::Success.into(),
                // A problem found is exit code 1, for scripts and CI.
                Ok(_) => ExitCode::from(1),
                Err(error) => report(&error).into(),
            };
        }
        Command::Compile(args) => compile::run(args, &host),
        Command::Inspect(args) => inspect::run(args, &host),
        Command::Precompute(args) => precompute::run(args, &host),
        Command::Cache(args) => cache::run(args, &host),
        Command::Init(args) => init::run(args),
        Command::Rules(args) => {
            return match rules::run(args, &host) {
                // `--check` with an `error` finding: exit code 1, for CI.
                Ok(errors) if args.check && errors > 0 => ExitCode::from(1),
                Ok(_) => ExitStatus::Success.into(),
                Err(error) => report(&error).into(),
            };
        }
        Command::Status(args) => diagnostics::run(
            DiagnosticsCommand::Status,
            &DiagnosticsArgs {
                days: args.days,
                ..args.project.diagnostics()
            },
            &host,
        ),
        Command::Last(args) => {
            diagnostics::run(DiagnosticsCommand::Last, &args.diagnostics(), &host)
        }
        Command::Projects(args) => diagnostics::run(
            DiagnosticsCommand::Projects,
            &DiagnosticsArgs {
                root: PathBuf::from("."),
                json: args.json,
                ..DiagnosticsArgs::default()
            },
            &host,
        ),
        Command::ChatSummary(args) => diagnostics::run(
            DiagnosticsCommand::ChatSummary,
            &DiagnosticsArgs {
                conversation: args.conversation.clone(),
                ..args.project.diagnostics()
            },
            &host,
        ),
        Command::Quality(args) => diagnostics::run(
            DiagnosticsCommand::Quality,
            &DiagnosticsArgs {
                days: Some(args.days),
                ..args.project.diagnostics()
            },
            &host,
        ),
        Command::Spec(args) => spec::run(args, &host),
        Command::Tree(args) => tree::run(args, &host),
        Command::ClipboardServe => crate::clipboard::serve(),
        Command::Bench(args) => bench::run(args),
        Command::Daemon(args) => daemon::run(args),
    };
    finish(result)
}

fn finish(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitStatus::Success.into(),
        Err(error) => report(&error).into(),
    }
}

/// Runs `work` on the database for a command that needs it (`cache`,
/// `precompute`, diagnostics): a database that cannot be opened, or that redb
/// panics on while `work` reads it, is a [`DatabaseError`](crate::home::DatabaseError) naming the file and
/// the fix (exit code 3).
///
/// # Errors
///
/// `work`'s own errors, and the `DatabaseError`.
pub(crate) fn with_database<T>(
    host: &Host,
    work: impl FnOnce(&aic_storage::Store) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let store = host.database()?;
    crate::home::guarded(&store, || work(&store))
}

/// redb panics, rather than returning an error, on pages damaged outside it;
/// aic catches those and turns them into one warning naming the file and the
/// fix, so the default hook's report (a redb source location and a backtrace
/// hint) is noise there. Every other panic is reported as before.
fn quiet_database_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let in_redb = info
            .location()
            .is_some_and(|location| location.file().contains("/redb-"));
        if in_redb {
            tracing::debug!("redb panicked on a damaged database: {info}");
        } else {
            default(info);
        }
    }));
}

/// Prints an error chain and its hint to stderr; returns its exit status.
fn report(error: &anyhow::Error) -> ExitStatus {
    let (text, status) = crate::answer::report::render_report(error);
    let _ = std::io::Write::write_all(&mut std::io::stderr(), text.as_bytes());
    status
}
