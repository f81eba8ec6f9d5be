//! `aic compile --copy`: the prompt on the system clipboard, through `arboard`.
//!
//! On macOS and Windows the clipboard keeps what a process put there after it
//! exits. On Linux (X11, or Wayland through XWayland) the process that sets the
//! clipboard must answer every paste itself, so `aic` starts a copy of itself
//! in the background (`aic clipboard-serve`, hidden) that takes the text on
//! stdin, holds the clipboard until another program takes it over, and then
//! exits; the compile returns as soon as that process holds the clipboard.
//! Where there is no display (a headless machine, SSH), `--copy` fails with an
//! error that says so and how to get the prompt instead; the prompt is still
//! written to stdout or `-o FILE` first, so nothing is lost.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use anyhow::Context;

use crate::error::UserError;

/// What the serving process prints on its first line once it holds the
/// clipboard; anything else is its error.
const READY: &str = "ready";

/// Puts `text` on the clipboard.
///
/// # Errors
///
/// A [`UserError`] when no clipboard is reachable (no `DISPLAY` or
/// `WAYLAND_DISPLAY` on Linux, or the display refuses the connection), with
/// the other ways to take the prompt as its hint; an I/O error when the
/// serving process cannot be started.
pub fn copy(text: &str) -> anyhow::Result<()> {
    if cfg!(any(target_os = "macos", target_os = "windows")) {
        let mut clipboard = arboard::Clipboard::new().map_err(unavailable)?;
        return clipboard.set_text(text).map_err(unavailable);
    }
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|value| !value.is_empty()));
    if !has_display {
        return Err(unavailable(
            "neither DISPLAY nor WAYLAND_DISPLAY is set (a headless or SSH session)",
        ));
    }
    let exe =
        std::env::current_exe().context("Cannot find the aic executable to serve the clipboard")?;
    let mut command = Command::new(exe);
    command
        .arg("clipboard-serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        // Its own process group: a Ctrl-C in the terminal after the compile
        // must not take the clipboard away.
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = command
        .spawn()
        .context("Cannot start the process that serves the clipboard")?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(text.as_bytes())
            .context("Cannot hand the prompt to the clipboard process")?;
    }
    let mut first = String::new();
    if let Some(stdout) = child.stdout.take() {
        BufReader::new(stdout).read_line(&mut first)?;
    }
    if first.trim() == READY {
        return Ok(());
    }
    let _ = child.wait();
    let cause = first.trim();
    Err(unavailable(if cause.is_empty() {
        "the clipboard process ended without taking the clipboard"
    } else {
        cause
    }))
}

/// `aic clipboard-serve`: reads the text on stdin, takes the clipboard, prints
/// `ready` (or the error) on stdout, and holds the clipboard until another
/// program takes it over.
///
/// # Errors
///
/// When stdin cannot be read or the clipboard cannot be taken (the error is
/// also printed for the waiting `--copy`).
pub fn serve() -> anyhow::Result<()> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("Cannot read the text to copy from stdin")?;
    let mut out = std::io::stdout();
    let mut clipboard = match arboard::Clipboard::new() {
        Ok(clipboard) => clipboard,
        Err(error) => {
            let _ = writeln!(out, "{error}");
            return Err(error.into());
        }
    };
    let _ = writeln!(out, "{READY}");
    let _ = out.flush();
    #[cfg(target_os = "linux")]
    {
        use arboard::SetExtLinux;
        clipboard.set().wait().text(text)?;
    }
    #[cfg(not(target_os = "linux"))]
    clipboard.set_text(text)?;
    Ok(())
}

/// The error `--copy` ends with when there is no clipboard to use.
fn unavailable(cause: impl std::fmt::Display) -> anyhow::Error {
    UserError::new(
        format!("No clipboard to copy the prompt to: {cause}"),
        "the prompt was still written; save it with `-o FILE`, or pipe stdout to your clipboard tool (`| pbcopy`, `| xclip -selection clipboard`, `| wl-copy`, `| clip.exe`)",
    )
    .into()
}
