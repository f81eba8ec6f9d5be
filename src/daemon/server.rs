//! The daemon's side of the socket: one thread per connection over one
//! long-lived [`Host`] (memo and resident index), a monitor thread that drops
//! idle projects and ends the daemon after its idle time.

use std::collections::{BTreeSet, VecDeque};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context;
use tracing::{debug, info, warn};

use super::protocol::{DaemonStatus, Envelope, Reply, Request, read_frame, write_frame};
use super::{DaemonPaths, build_id, environment};
use crate::answer::{Outcome, PendingRecord, run_job_unrecorded};
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
    handed_back: AtomicU64,
    active: AtomicUsize,
    last_request: Mutex<Instant>,
    latencies_ms: Mutex<VecDeque<f64>>,
    stop: AtomicBool,
    environment: String,
    options: ServeOptions,
    /// Directories requests have named (each warmed up once).
    warming: Mutex<BTreeSet<PathBuf>>,
    /// Warm-up compiles still running.
    indexing: AtomicUsize,
    /// Held for writing from just before a reply leaves until its compile's
    /// log entry is written; every compile passes through it for reading
    /// first, so it sees the log entries of the answers before it.
    recording: std::sync::RwLock<()>,
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
        handed_back: AtomicU64::new(0),
        active: AtomicUsize::new(0),
        last_request: Mutex::new(Instant::now()),
        latencies_ms: Mutex::new(VecDeque::new()),
        stop: AtomicBool::new(false),
        environment: environment(),
        options,
        warming: Mutex::default(),
        indexing: AtomicUsize::new(0),
        recording: std::sync::RwLock::default(),
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
            // Wakes the accept loop; with the socket gone nothing can, and
            // nothing is left to clean up.
            if UnixStream::connect(socket).is_err() {
                exit_now();
            }
            break;
        }
    }
}

#[expect(
    clippy::exit,
    reason = "a daemon whose socket was removed cannot be reached to stop it"
)]
fn exit_now() {
    info!("aic daemon stopped");
    std::process::exit(0);
}

fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    fs_err::symlink_metadata(path)
        .ok()
        .map(|metadata| metadata.ino())
}

/// Answers one connection's request; whether it was a compile or a hook.
fn connection(state: &Arc<State>, mut stream: UnixStream) -> io::Result<bool> {
    stream.set_read_timeout(Some(REQUEST_READ_TIMEOUT))?;
    let envelope: Envelope = match read_frame(&mut stream) {
        Ok(envelope) => envelope,
        // The accept loop's wake-up, or a client that went away.
        Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => return Ok(false),
        Err(error) => return Err(error),
    };
    let started = Instant::now();
    let same_environment = envelope.environment == state.environment;
    // Any build may stop the daemon (a newer one replacing it) or ask its
    // status.
    let (reply, pending) = match envelope.request {
        Request::Stop => (Reply::Stopping, None),
        // A status waits for the log entries of the answers sent before it
        // (`client::settle`).
        Request::Status => {
            drop(
                state
                    .recording
                    .read()
                    .unwrap_or_else(PoisonError::into_inner),
            );
            (Reply::Status(status(state, same_environment)), None)
        }
        _ if envelope.build != build_id() => (
            Reply::OtherBuild {
                daemon: build_id().to_owned(),
            },
            None,
        ),
        _ if !same_environment => (Reply::OtherEnvironment, None),
        request => match envelope
            .dir
            .as_deref()
            .and_then(|dir| warm_up(state, dir, matches!(request, Request::Hook(_))))
        {
            Some(root) => {
                info!(
                    "Indexing `{}`; the client compiles itself meanwhile",
                    root.display()
                );
                state.handed_back.fetch_add(1, Ordering::Relaxed);
                (Reply::Warming, None)
            }
            None => answer(state, request),
        },
    };
    if let Reply::Compiled(_) | Reply::Hook(_) = &reply {
        info!(
            "Answered in {:.1} ms",
            started.elapsed().as_secs_f64() * 1000.0
        );
    }
    let stopping = matches!(reply, Reply::Stopping);
    let answered = matches!(reply, Reply::Compiled(_) | Reply::Hook(_));
    // Counted before the reply leaves, so a status asked right after the
    // answer includes it.
    if answered {
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
    }
    // The log entry is written after the reply has left: the client does
    // not wait for its commit, and the next compile waits for it.
    let recording = pending.as_ref().map(|_| {
        state
            .recording
            .write()
            .unwrap_or_else(PoisonError::into_inner)
    });
    let written = write_frame(&mut stream, &reply);
    if let Some(pending) = pending {
        pending.record(&state.host);
    }
    drop(recording);
    written?;
    if stopping {
        state.stop.store(true, Ordering::SeqCst);
        if let Ok(address) = stream.local_addr()
            && let Some(path) = address.as_pathname()
        {
            let _ = UnixStream::connect(path);
        }
    }
    Ok(answered)
}

/// One warm-up compile in flight: counted in [`State::indexing`] until
/// dropped, also when the compile panics.
struct Indexing<'a>(&'a AtomicUsize);

impl Drop for Indexing<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The first time a request names `dir`, starts indexing the project there
/// on a thread of its own and returns its root, so the client compiles
/// itself instead of waiting for a cold index; `None` afterwards (the request
/// is answered, from the index or, if the warm-up has not finished, after
/// it). A compile's `dir` is its root; a hook's is the directory it starts
/// from, and the root is discovered from it as the hook does.
/// Lowers the calling thread's scheduling priority to nice 10 (Linux, where
/// the nice value is a thread's own and threads it starts inherit it): when
/// the machine is busy, an indexing daemon takes about a tenth of what a
/// client's compile or the user's build at the default priority takes, and
/// all of an idle machine. Elsewhere, and when the call fails, nothing
/// changes.
fn yield_to_clients() {
    #[cfg(target_os = "linux")]
    {
        let thread = rustix::thread::gettid();
        if let Err(error) = rustix::process::setpriority_process(Some(thread), 10) {
            debug!("Could not lower the indexing thread's priority: {error}");
        }
    }
}

fn warm_up(state: &Arc<State>, dir: &Path, discover: bool) -> Option<PathBuf> {
    // A compile of a directory that is not there fails at once, as it would
    // in-process.
    if !dir.is_dir()
        || !state
            .warming
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(dir.to_path_buf())
    {
        return None;
    }
    let root = if discover {
        crate::root::discover_root(dir).0
    } else {
        dir.to_path_buf()
    };
    let state = state.clone();
    let warmed = root.clone();
    state.indexing.fetch_add(1, Ordering::SeqCst);
    std::thread::spawn(move || {
        let _indexing = Indexing(&state.indexing);
        let started = Instant::now();
        // A compile of a neutral intent builds the snapshot and what later
        // compiles derive from it; nothing is printed or logged for it.
        let request = crate::pipeline::CompilationRequest {
            intent: "an overview of the project".to_owned(),
            project_root: warmed.clone(),
            editor_id: "aic-daemon".to_owned(),
            warm_up: true,
            ..Default::default()
        };
        // Its warnings (a vague intent, a sliced file) are about this
        // neutral intent, not a user's: they are not logged.
        let compile = || {
            tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), || {
                crate::pipeline::compile(&request, &state.host)
            })
        };
        // Below the priority of other work: the client this project's first
        // request was handed back to compiles it meanwhile, and the user
        // waits for that answer, not for the index. Threads made from here
        // start at the same priority and cannot go back: the pool's, the
        // scan's git thread, the snapshot's writer, and the project's file
        // watcher, which lives on. The watcher does little work per event
        // and a thread that mostly sleeps is woken promptly at nice 10, so
        // events still arrive well inside the cookie's 500 ms.
        yield_to_clients();
        let pool = rayon::ThreadPoolBuilder::new()
            .thread_name(|index| format!("aic-index-{index}"))
            .build();
        let compiled = match pool {
            Ok(pool) => {
                let compiled = pool.install(compile);
                // The pool's threads end with the pool: each hands back
                // what it freed first.
                pool.broadcast(|_| crate::memory::release_free_memory());
                compiled
            }
            Err(_) => compile(),
        };
        crate::memory::release_free_memory();
        match compiled {
            Ok(_) => info!(
                "Indexed `{}` in {:.0} ms",
                warmed.display(),
                started.elapsed().as_secs_f64() * 1000.0
            ),
            Err(error) => info!("Indexing `{}` stopped: {error}", warmed.display()),
        }
        // The compile logged nothing: whether the project is watched and
        // what its walk made of the saved snapshot are said here.
        let canonical = warmed.canonicalize().unwrap_or_else(|_| warmed.clone());
        let resident = state.host.resident().map(|index| index.status());
        for project in resident.into_iter().flatten() {
            if project.root != canonical {
                continue;
            }
            if let Some(why) = &project.unwatched {
                warn!(
                    "Not watching `{}` ({why}); each compile walks it instead",
                    project.root.display()
                );
            }
            if let Some(why) = &project.snapshot_refused {
                warn!("The saved snapshot of `{}` {why}", project.root.display());
            } else if project.seeded_files > 0 {
                info!(
                    "Seeded {} of {} files of `{}` from its saved snapshot",
                    project.seeded_files,
                    project.files,
                    project.root.display()
                );
            }
        }
    });
    Some(root)
}

fn answer(state: &State, request: Request) -> (Reply, Option<PendingRecord>) {
    // The log entries of earlier answers are written before this compile
    // reads anything (a hook's session, `aic last`).
    drop(
        state
            .recording
            .read()
            .unwrap_or_else(PoisonError::into_inner),
    );
    match request {
        Request::Compile(job) => {
            let (Outcome { mut answer, error }, pending) = run_job_unrecorded(&job, &state.host);
            answer.failure = error.as_ref().map(crate::answer::report::failure);
            (Reply::Compiled(answer), pending)
        }
        Request::Hook(input) => (Reply::Hook(crate::hook::answer(&input, &state.host)), None),
        Request::Status => (Reply::Status(status(state, true)), None),
        Request::Stop => (Reply::Stopping, None),
    }
}

fn minutes(duration: Duration) -> f64 {
    if duration == Duration::MAX {
        0.0
    } else {
        duration.as_secs_f64() / 60.0
    }
}

fn status(state: &State, same_environment: bool) -> DaemonStatus {
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
        handed_back: state.handed_back.load(Ordering::Relaxed),
        p50_ms: percentile(0.5),
        p95_ms: percentile(0.95),
        rss_bytes: rss_bytes(),
        idle_minutes: minutes(state.options.idle),
        project_idle_minutes: minutes(state.options.project_idle),
        same_environment,
        indexing: state.indexing.load(Ordering::SeqCst),
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
