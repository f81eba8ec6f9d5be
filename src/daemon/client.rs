//! The client side: `aic compile`, `aic inspect` and every hook ask a
//! running daemon first, and compile in this process when there is none, it
//! is another build or environment, or it fails mid-request — always with
//! the same output.
//!
//! `AIC_DAEMON` chooses: `off` never uses a daemon; `running` uses one that
//! runs (the default for `compile` and `inspect`); `start` also starts one
//! when none runs (the default for hooks). A command run with `-v` compiles
//! in this process, so its phase log is printed.

use std::io;
use std::time::{Duration, Instant};

use tracing::{debug, info, warn};

use super::protocol::{CompileJob, HookInput, Reply, Request};
use super::{DaemonPaths, Outcome, Reported, build_id, environment, run_job};
use crate::home::AicHome;
use crate::host::Host;

/// The environment variable that chooses whether a daemon is used.
pub const DAEMON_VAR: &str = "AIC_DAEMON";

/// How long a compile waits for the daemon's answer before compiling in
/// this process.
const COMPILE_TIMEOUT: Duration = Duration::from_mins(5);

/// How long a hook waits for the daemon's answer before running in this
/// process (editors give hooks a minute or more).
const HOOK_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a client waits for a daemon it started to listen.
const START_WAIT: Duration = Duration::from_secs(3);

/// Whether a client uses a daemon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Never.
    Off,
    /// When one runs.
    Running,
    /// When one runs, starting one when none does.
    Start,
}

impl Mode {
    /// The mode `AIC_DAEMON` sets, else `default`.
    pub fn from_env(default: Self) -> Self {
        match std::env::var(DAEMON_VAR).as_deref() {
            Ok("off" | "0" | "false" | "no") => Self::Off,
            Ok("running") => Self::Running,
            Ok("start" | "on" | "1" | "true" | "yes") => Self::Start,
            _ => default,
        }
    }
}

/// A compile for `aic compile` or `aic inspect`: the daemon's answer when
/// one answers, otherwise this process's.
pub fn compile(job: &CompileJob, host: &Host) -> Outcome {
    let verbose = tracing::enabled!(tracing::Level::INFO);
    if !verbose
        && let Some(Reply::Compiled(mut answer)) = ask(
            &Request::Compile(job.clone()),
            Mode::from_env(Mode::Running),
            COMPILE_TIMEOUT,
        )
    {
        for warning in &answer.warnings {
            warn!("{warning}");
        }
        let error = answer
            .failure
            .take()
            .map(|failure| Reported(failure).into());
        return Outcome { answer, error };
    }
    run_job(job, host)
}

/// A hook's output from the daemon, starting one when none runs (unless
/// `AIC_DAEMON` says otherwise); `None` when the hook must run in this
/// process.
pub fn hook(input: &HookInput) -> Option<String> {
    match ask(
        &Request::Hook(input.clone()),
        Mode::from_env(Mode::Start),
        HOOK_TIMEOUT,
    )? {
        Reply::Hook(output) => Some(output),
        _ => None,
    }
}

/// Asks the daemon of this home; `None` (after a debug line, or an info line
/// for a daemon that cannot be used) when this process must answer itself.
fn ask(request: &Request, mode: Mode, timeout: Duration) -> Option<Reply> {
    if mode == Mode::Off || cfg!(not(unix)) {
        return None;
    }
    let paths = DaemonPaths::new(AicHome::from_env()?.dir());
    let started = Instant::now();
    let reply = match exchange(&paths, request, timeout) {
        Ok(reply) => reply,
        Err(error) if mode == Mode::Start && is_absent(&error) => {
            start_background(&paths, &[]).ok()?;
            exchange(&paths, request, timeout)
                .map_err(|error| debug!("The daemon did not answer: {error}"))
                .ok()?
        }
        Err(error) => {
            debug!("No daemon answered: {error}");
            return None;
        }
    };
    debug!("The daemon answered in {:?}", started.elapsed());
    match reply {
        Reply::OtherBuild { daemon } => {
            info!(
                "The running aic daemon is another build ({daemon}, this is {}); compiling in this process",
                build_id()
            );
            if mode == Mode::Start {
                // As `sccache --start-server` does: the old daemon makes way.
                let _ = exchange(&paths, &Request::Stop, Duration::from_secs(2));
                wait_gone(&paths);
                start_background(&paths, &[]).ok()?;
                return exchange(&paths, request, timeout).ok();
            }
            None
        }
        Reply::OtherEnvironment => {
            info!(
                "The running aic daemon was started with another HOME, AIC_HOME or {}; compiling in this process",
                crate::root::ALLOWED_ROOTS_VAR
            );
            None
        }
        reply => Some(reply),
    }
}

/// Whether an error means no daemon listens.
fn is_absent(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
    )
}

/// One request and its reply.
///
/// # Errors
///
/// No daemon listens (`NotFound`, `ConnectionRefused`), it did not answer
/// within `timeout`, or it closed the connection (a daemon killed
/// mid-request).
#[cfg(unix)]
pub fn exchange(paths: &DaemonPaths, request: &Request, timeout: Duration) -> io::Result<Reply> {
    use super::protocol::{read_frame, write_frame};
    let mut stream = std::os::unix::net::UnixStream::connect(paths.socket())?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    write_frame(
        &mut stream,
        &EnvelopeRef {
            build: build_id(),
            environment: &environment(),
            request,
        },
    )?;
    read_frame(&mut stream)
}

/// One request and its reply (no daemon on this system).
///
/// # Errors
///
/// Always `Unsupported`.
#[cfg(not(unix))]
pub fn exchange(_: &DaemonPaths, _: &Request, _: Duration) -> io::Result<Reply> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// [`super::protocol::Envelope`] by reference, for writing.
#[derive(serde::Serialize)]
struct EnvelopeRef<'a> {
    build: &'a str,
    environment: &'a str,
    request: &'a Request,
}

/// Starts a daemon in the background (its own process group, its stderr in
/// `daemon.log`), with `extra` arguments for `aic daemon start`, and waits
/// until it listens.
///
/// # Errors
///
/// The daemon could not be spawned or did not listen within 3 s.
pub fn start_background(paths: &DaemonPaths, extra: &[String]) -> io::Result<u32> {
    fs_err::create_dir_all(&paths.dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(&paths.dir, std::fs::Permissions::from_mode(0o700))?;
    }
    let log = fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .open(paths.log())?;
    let mut command = std::process::Command::new(std::env::current_exe()?);
    command
        .args(["daemon", "start", "--foreground"])
        .args(extra)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log.into_parts().0)
        .env_remove(DAEMON_VAR);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let child = command.spawn()?;
    let deadline = Instant::now() + START_WAIT;
    while Instant::now() < deadline {
        if matches!(
            exchange(paths, &Request::Status, Duration::from_secs(1)),
            Ok(Reply::Status(_))
        ) {
            return Ok(child.id());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "the daemon did not start within {START_WAIT:?} (see `{}`)",
            paths.log().display()
        ),
    ))
}

/// Waits (up to 2 s) until no daemon listens.
pub fn wait_gone(paths: &DaemonPaths) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if exchange(paths, &Request::Status, Duration::from_millis(200))
            .is_err_and(|error| is_absent(&error))
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
