//! The daemon's side of the socket: one thread per connection over one
//! long-lived [`Host`] (memo and resident index), a monitor thread that drops
//! idle projects and ends the daemon after its idle time.

use std::collections::VecDeque;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context;
use tracing::{debug, info, warn};

use super::protocol::{DaemonStatus, Envelope, Failure, Reply, Request, read_frame, write_frame};
use super::{DaemonPaths, Outcome, build_id, environment, run_job};
use crate::host::Host;

/// Latencies kept for the status percentiles.
const LATENCIES_KEPT: usize = 1_000;

/// How long a connection may take to send its request.
const REQUEST_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How a daemon runs.
#[derive(Clone, Copy, Debug)]
pub struct ServeOptions {
    /// Exit after this long without a request.
    pub idle: Duration,
    /// Drop a project after this long without a compile.
    pub project_idle: Duration,
}

/// The daemon's shared state.
struct State {
    host: Host,
    started: Instant,
    requests: AtomicU64,
    active: AtomicUsize,
    last_request: Mutex<Instant>,
    latencies_ms: Mutex<VecDeque<f64>>,
    stop: AtomicBool,
    environment: String,
}

/// Serves until stopped or idle. The socket's directory is made 0700 and the
/// socket 0600; a stale socket (no daemon answers on it) is replaced.
///
/// # Errors
///
/// Another daemon already answers on the socket, or the socket cannot be
/// made (a path over the system's limit, a directory that cannot be written).
pub fn serve(paths: &DaemonPaths, options: ServeOptions) -> anyhow::Result<()> {
    fs_err::create_dir_all(&paths.dir)?;
    fs_err::set_permissions(&paths.dir, std::fs::Permissions::from_mode(0o700))?;
    let socket = paths.socket();
    if UnixStream::connect(&socket).is_ok() {
        anyhow::bail!(
            "an aic daemon already answers on `{}` (`aic daemon stop` stops it)",
            socket.display()
        );
    }
    let _ = fs_err::remove_file(&socket);
    let listener = UnixListener::bind(&socket)
        .with_context(|| format!("Cannot listen on `{}`", socket.display()))?;
    fs_err::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
    let identity = inode(&socket);
    info!(
        "aic daemon {} listening on {} (pid {})",
        build_id(),
        socket.display(),
        std::process::id()
    );
    let state = Arc::new(State {
        host: Host::long_lived(),
        started: Instant::now(),
        requests: AtomicU64::new(0),
        active: AtomicUsize::new(0),
        last_request: Mutex::new(Instant::now()),
        latencies_ms: Mutex::new(VecDeque::new()),
        stop: AtomicBool::new(false),
        environment: environment(),
    });
    let monitor = {
        let state = state.clone();
        let socket = socket.clone();
        std::thread::spawn(move || monitor(&state, &socket, identity, options))
    };
    for stream in listener.incoming() {
        if state.stop.load(Ordering::SeqCst) {
            break;
        }
        match stream {
            Ok(stream) => {
                let state = state.clone();
                state.active.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    match connection(&state, stream) {
                        // Only compiles and hooks keep the daemon alive, not
                        // `status`.
                        Ok(true) => {
                            *state
                                .last_request
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner) = Instant::now();
                        }
                        Ok(false) => {}
                        Err(error) => debug!("A connection ended early: {error}"),
                    }
                    state.active.fetch_sub(1, Ordering::SeqCst);
                });
            }
            Err(error) => warn!("Accepting a connection failed: {error}"),
        }
    }
    state.stop.store(true, Ordering::SeqCst);
    // Stop listening at once (the monitor ends at its next tick; the process
    // does not wait for it), so a replacing daemon can bind.
    drop(listener);
    drop(monitor);
    if inode(&socket) == identity {
        let _ = fs_err::remove_file(&socket);
    }
    info!("aic daemon stopped");
    Ok(())
}

/// Drops idle projects; stops the daemon when it is idle or its socket was
/// taken over or removed.
fn monitor(state: &State, socket: &Path, identity: Option<u64>, options: ServeOptions) {
    let tick = (options.idle / 4).clamp(Duration::from_millis(200), Duration::from_secs(5));
    loop {
        std::thread::sleep(tick);
        if state.stop.load(Ordering::SeqCst) {
            break;
        }
        if let Some(index) = state.host.resident() {
            index.drop_idle(options.project_idle);
        }
        let idle = state
            .last_request
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .elapsed();
        let why = if state.active.load(Ordering::SeqCst) == 0 && idle >= options.idle {
            Some("idle")
        } else if inode(socket) != identity {
            Some("the socket was removed or replaced")
        } else {
            None
        };
        if let Some(why) = why {
            info!("Stopping: {why}");
            state.stop.store(true, Ordering::SeqCst);
            // Wakes the accept loop.
            let _ = UnixStream::connect(socket);
            break;
        }
    }
}

fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    fs_err::symlink_metadata(path)
        .ok()
        .map(|metadata| metadata.ino())
}

/// Answers one connection's request; whether it was a compile or a hook.
fn connection(state: &State, mut stream: UnixStream) -> io::Result<bool> {
    stream.set_read_timeout(Some(REQUEST_READ_TIMEOUT))?;
    let envelope: Envelope = match read_frame(&mut stream) {
        Ok(envelope) => envelope,
        // The accept loop's wake-up, or a client that went away.
        Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => return Ok(false),
        Err(error) => return Err(error),
    };
    let started = Instant::now();
    // Any build may stop the daemon (a newer one replacing it).
    let reply = if matches!(envelope.request, Request::Stop) {
        Reply::Stopping
    } else if envelope.build != build_id() {
        Reply::OtherBuild {
            daemon: build_id().to_owned(),
        }
    } else if envelope.environment != state.environment {
        Reply::OtherEnvironment
    } else {
        answer(state, envelope.request)
    };
    let stopping = matches!(reply, Reply::Stopping);
    let answered = matches!(reply, Reply::Compiled(_) | Reply::Hook(_));
    write_frame(&mut stream, &reply)?;
    if stopping {
        state.stop.store(true, Ordering::SeqCst);
        if let Ok(address) = stream.local_addr()
            && let Some(path) = address.as_pathname()
        {
            let _ = UnixStream::connect(path);
        }
    }
    if !answered {
        return Ok(false);
    }
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    state.requests.fetch_add(1, Ordering::Relaxed);
    let mut latencies = state
        .latencies_ms
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if latencies.len() == LATENCIES_KEPT {
        latencies.pop_front();
    }
    latencies.push_back(ms);
    Ok(true)
}

fn answer(state: &State, request: Request) -> Reply {
    match request {
        Request::Compile(job) => {
            let Outcome { mut answer, error } = run_job(&job, &state.host);
            answer.failure = error.map(|error| {
                let (report, status) = crate::commands::render_report(&error);
                Failure {
                    report,
                    exit: status as u8,
                }
            });
            Reply::Compiled(answer)
        }
        Request::Hook(input) => Reply::Hook(crate::commands::hook::answer(&input, &state.host)),
        Request::Status => Reply::Status(status(state)),
        Request::Stop => Reply::Stopping,
    }
}

fn status(state: &State) -> DaemonStatus {
    let mut latencies: Vec<f64> = state
        .latencies_ms
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .copied()
        .collect();
    latencies.sort_by(f64::total_cmp);
    let percentile = |p: f64| {
        if latencies.is_empty() {
            return 0.0;
        }
        let index = ((latencies.len() - 1) as f64 * p).round() as usize;
        (latencies[index] * 10.0).round() / 10.0
    };
    DaemonStatus {
        pid: std::process::id(),
        build: build_id().to_owned(),
        uptime_secs: state.started.elapsed().as_secs(),
        requests: state.requests.load(Ordering::Relaxed),
        p50_ms: percentile(0.5),
        p95_ms: percentile(0.95),
        rss_bytes: rss_bytes(),
        projects: state
            .host
            .resident()
            .map(|index| index.status())
            .unwrap_or_default(),
    }
}

/// This process's resident set size, from `/proc/self/status` (0 elsewhere).
fn rss_bytes() -> u64 {
    let Ok(status) = fs_err::read_to_string("/proc/self/status") else {
        return 0;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| {
            value
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}
