//! Writing data to stdout. stdout carries data only (the prompt, JSON); everything
//! else goes to stderr through `tracing`. A closed pipe (`aic compile … | head`)
//! is not an error.

use std::io::{self, Write};

/// Writes `text` to stdout and flushes. A broken pipe counts as success.
///
/// # Errors
///
/// Any other I/O error.
pub fn print_stdout(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
