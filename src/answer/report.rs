//! An error as the command line reports it: `error:`, one `Caused by:` per
//! source, then `hint:` when a fix is known, and the exit status
//! (`docs/exit-codes.md`). The daemon reports its clients' errors with the
//! same text, and a client prints that text as it came ([`Reported`]).

use super::Failure;
use crate::error::{CompileError, ExitStatus, UserError};
use crate::home::DatabaseError;

/// An error reported by the daemon, printed by the client as it came.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.report)]
pub struct Reported(pub Failure);

/// An error as the command line prints it and its exit status. An error the
/// daemon reported ([`Reported`]) is printed as it came.
pub fn render_report(error: &anyhow::Error) -> (String, ExitStatus) {
    use std::fmt::Write;
    if let Some(Reported(failure)) = error.downcast_ref() {
        return (failure.report.clone(), ExitStatus::from_code(failure.exit));
    }
    let mut text = format!("error: {error}\n");
    for cause in error.chain().skip(1) {
        let _ = writeln!(text, "  Caused by: {cause}");
    }
    let compile_error = error.downcast_ref::<CompileError>();
    let user_error = error.downcast_ref::<UserError>();
    let database_error = error.downcast_ref::<DatabaseError>();
    if let Some(hint) = compile_error.and_then(CompileError::hint) {
        let _ = write!(text, "\nhint: {hint}\n");
    } else if let Some(user_error) = user_error {
        let _ = write!(text, "\nhint: {}\n", user_error.hint);
    } else if let Some(database_error) = database_error {
        let _ = write!(text, "\nhint: {}\n", database_error.hint());
    }
    if user_error.is_some() || database_error.is_some() {
        return (text, ExitStatus::InvalidInput);
    }
    (
        text,
        compile_error.map_or(ExitStatus::Internal, CompileError::exit_status),
    )
}

/// [`render_report`] as the daemon sends it.
pub fn failure(error: &anyhow::Error) -> Failure {
    let (report, status) = render_report(error);
    Failure {
        report,
        exit: status as u8,
    }
}
