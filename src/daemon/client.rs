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
use std::path::Path;
use std::time::{Duration, Instant};

use tracing::{debug, info, warn};

use super::protocol::{Reply, Request};
use super::{DaemonPaths, build_id, environment};
use crate::answer::report::Reported;
use crate::answer::{CompileJob, Outcome, run_job};
use crate::home::AicHome;
use crate::hook::HookInput;
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
            Ok("") | Err(_) => default,
            Ok(other) => {
                warn!(
                    target: crate::logging::NOTE_TARGET,
                    "{DAEMON_VAR}={other} is not `off`, `running` or `start`; using the default"
                );
                default
            }
        }
    }
}

/// A compile for `aic compile` or `aic inspect`: the daemon's answer when
/// one answers, otherwise this process's.
pub fn compile(job: &CompileJob, host: &Host) -> Outcome {
    let verbose = tracing::enabled!(tracing::Level::INFO);
    let dir = Some(job.request.project_root.as_path());
    // A relative root or config file means the client's working directory,
    // which the daemon does not share: such a compile runs here.
    let relative = !job.request.project_root.is_absolute()
        || job
            .request
            .config_path
            .as_ref()
            .is_some_and(|path| !path.is_absolute());
    if !verbose
        && !relative
        && let Some(Reply::Compiled(mut answer)) = ask(
            &Request::Compile(Box::new(job.clone())),
            dir,
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

/// Waits until a running daemon has written the log entries of the answers
/// it has sent (it writes each after its reply has left), so a command that
/// reads the log (`aic last`, `aic status`) sees every compile before it.
/// Costs a failed connect when no daemon runs; does nothing with
/// `AIC_DAEMON=off`.
pub fn settle() {
    if Mode::from_env(Mode::Running) == Mode::Off || cfg!(not(unix)) {
        return;
    }
    let Some(home) = AicHome::from_env() else {
        return;
    };
    let paths = DaemonPaths::new(home.dir());
    if let Err(error) = exchange(&paths, &Request::Status, Duration::from_secs(2)) {
        debug!("No daemon to settle: {error}");
    }
}

/// A hook's output from the daemon, starting one when none runs (unless
/// `AIC_DAEMON` says otherwise); `None` when the hook must run in this
/// process.
pub fn hook(input: &HookInput) -> Option<String> {
    let payload_cwd = serde_json::from_slice::<serde_json::Value>(&input.stdin)
        .ok()
        .and_then(|payload| payload.get("cwd")?.as_str().map(std::path::PathBuf::from));
    let dir = payload_cwd
        .or_else(|| input.claude_project_dir.clone())
        .or_else(|| input.cursor_project_dir.clone())
        .or_else(|| input.aic_project_root.clone())
        .or_else(|| input.cwd.clone());
    match ask(
        &Request::Hook(Box::new(input.clone())),
        dir.as_deref(),
        Mode::from_env(Mode::Start),
        HOOK_TIMEOUT,
    )? {
        Reply::Hook(output) => Some(output),
        _ => None,
    }
}

/// Asks the daemon of this home; `None` (after a debug line, or an info line
/// for a daemon that cannot be used) when this process must answer itself.
fn ask(request: &Request, dir: Option<&Path>, mode: Mode, timeout: Duration) -> Option<Reply> {
    if mode == Mode::Off || cfg!(not(unix)) {
        return None;
    }
    let paths = DaemonPaths::new(AicHome::from_env()?.dir());
    let started = Instant::now();
    let reply = match exchange_about(&paths, request, dir, timeout) {
        Ok(reply) => reply,
        Err(error) if mode == Mode::Start && is_absent(&error) => {
            start_background(&paths, &[]).ok()?;
            exchange_about(&paths, request, dir, timeout)
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
            if mode == Mode::Start {
                // As `sccache --start-server` does: the old daemon makes way.
                info!("Replacing the aic daemon of another build ({daemon})");
                let _ = exchange(&paths, &Request::Stop, Duration::from_secs(2));
                wait_gone(&paths);
                start_background(&paths, &[]).ok()?;
                return match exchange_about(&paths, request, dir, timeout).ok()? {
                    Reply::Warming => None,
                    reply => Some(reply),
                };
            }
            warn!(
                target: crate::logging::NOTE_TARGET,
                "the running aic daemon is another build ({daemon}, this is {}), so this compile ran in-process; `aic daemon stop` then `aic daemon start` replaces it",
                build_id()
            );
            None
        }
        Reply::OtherEnvironment => {
            warn!(
                target: crate::logging::NOTE_TARGET,
                "the running aic daemon was started with another HOME, AIC_HOME or {}, so this compile ran in-process (`aic daemon status` shows it)",
                crate::root::ALLOWED_ROOTS_VAR
            );
            None
        }
        Reply::Warming => {
            debug!("The daemon is indexing the project; compiling in this process");
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
pub fn exchange(paths: &DaemonPaths, request: &Request, timeout: Duration) -> io::Result<Reply> {
    exchange_about(paths, request, None, timeout)
}

/// [`exchange`] for a request about the project at `dir` (see
/// [`super::protocol::Envelope::dir`]).
///
/// # Errors
///
/// As [`exchange`].
#[cfg(unix)]
pub fn exchange_about(
    paths: &DaemonPaths,
    request: &Request,
    dir: Option<&Path>,
    timeout: Duration,
) -> io::Result<Reply> {
    use super::protocol::{read_frame, write_frame};
    let mut stream = std::os::unix::net::UnixStream::connect(paths.socket())?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    write_frame(
        &mut stream,
        &EnvelopeRef {
            build: build_id(),
            environment: &environment(),
            dir,
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
pub fn exchange_about(
    _: &DaemonPaths,
    _: &Request,
    _: Option<&Path>,
    _: Duration,
) -> io::Result<Reply> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// [`super::protocol::Envelope`] by reference, for writing.
#[derive(serde::Serialize)]
struct EnvelopeRef<'a> {
    build: &'a str,
    environment: &'a str,
    dir: Option<&'a Path>,
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
    let mut options = fs_err::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use fs_err::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let log = options.open(paths.log())?;
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
