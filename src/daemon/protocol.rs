//! What a client and `aic daemon` say to each other over the socket: frames
//! of a 4-byte big-endian length and that many bytes of JSON, one request
//! and one reply per connection.

use std::io::{self, Read, Write};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::answer::{Answer, CompileJob};
use crate::hook::HookInput;
use crate::resident::ResidentProjectStatus;

/// The largest frame read, in bytes (a prompt of a few MB, with room).
const MAX_FRAME_BYTES: u32 = 256 << 20;

/// A request with what the daemon must share with its client to answer as
/// the client would: the same build and the same environment.
#[derive(Debug, Serialize, Deserialize)]
pub struct Envelope {
    /// The client's [`super::build_id`].
    pub build: String,
    /// The client's [`super::environment`].
    pub environment: String,
    /// The directory the request is about (a compile's root, a hook's
    /// project): when no project there is resident yet, the daemon starts
    /// indexing it and answers [`Reply::Warming`], and the client compiles
    /// itself this once instead of waiting for a cold index.
    #[serde(default)]
    pub dir: Option<PathBuf>,
    /// What it asks.
    pub request: Request,
}

/// What a client asks.
#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    /// A compile, answered as `aic compile` or `aic inspect` prints it.
    Compile(Box<CompileJob>),
    /// An editor hook event, answered with the hook's stdout.
    Hook(Box<HookInput>),
    /// The daemon's state.
    Status,
    /// Stop the daemon.
    Stop,
}

/// The daemon's answer.
#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    /// A compile's answer.
    Compiled(Answer),
    /// A hook's stdout.
    Hook(String),
    /// The daemon's state.
    Status(DaemonStatus),
    /// The daemon is stopping.
    Stopping,
    /// The daemon is another build: the client compiles itself (or replaces
    /// the daemon).
    OtherBuild {
        /// The daemon's build.
        daemon: String,
    },
    /// The daemon runs with another environment (home, allowed roots): the
    /// client compiles itself.
    OtherEnvironment,
    /// The project is being indexed: the client compiles itself this time.
    Warming,
}

/// What `aic daemon status` shows.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonStatus {
    /// The daemon's process id.
    pub pid: u32,
    /// Its build.
    pub build: String,
    /// Seconds since it started.
    pub uptime_secs: u64,
    /// Compiles and hook events the daemon answered.
    pub requests: u64,
    /// Compiles and hook events the daemon handed back to their client
    /// because it was still indexing the project (the first request about a
    /// project): the client compiled them in-process.
    #[serde(default)]
    pub handed_back: u64,
    /// Median and 95th percentile of the last requests' wall times, ms.
    pub p50_ms: f64,
    /// 95th percentile, ms.
    pub p95_ms: f64,
    /// Resident memory, bytes (0 when unknown).
    pub rss_bytes: u64,
    /// Minutes without a request before the daemon exits (0: never).
    pub idle_minutes: f64,
    /// Minutes without a compile before a project is dropped (0: never).
    pub project_idle_minutes: f64,
    /// Whether the asking client has the daemon's environment (`HOME`,
    /// `AIC_HOME`, `AIC_ALLOWED_ROOTS`); when not, its compiles do not use
    /// this daemon.
    #[serde(default)]
    pub same_environment: bool,
    /// Projects being indexed now (their warm-up compile has not finished,
    /// so the daemon may still be writing their cache rows).
    #[serde(default)]
    pub indexing: usize,

    /// The projects it holds.
    pub projects: Vec<ResidentProjectStatus>,
}

/// Writes one frame.
///
/// # Errors
///
/// The I/O error, or a value that does not serialise.
pub fn write_frame<T: Serialize>(stream: &mut impl Write, value: &T) -> io::Result<()> {
    let bytes = serde_json::to_vec(value).map_err(io::Error::other)?;
    let length = u32::try_from(bytes.len())
        .ok()
        .filter(|length| *length <= MAX_FRAME_BYTES)
        .ok_or_else(|| io::Error::other("frame too large"))?;
    stream.write_all(&length.to_be_bytes())?;
    stream.write_all(&bytes)?;
    stream.flush()
}

/// Reads one frame.
///
/// # Errors
///
/// The I/O error (`UnexpectedEof` when the peer closed), a frame over 256
/// MiB, or JSON that is not a `T`.
pub fn read_frame<T: for<'de> Deserialize<'de>>(stream: &mut impl Read) -> io::Result<T> {
    let mut length = [0u8; 4];
    stream.read_exact(&mut length)?;
    let length = u32::from_be_bytes(length);
    if length > MAX_FRAME_BYTES {
        return Err(io::Error::other("frame too large"));
    }
    let mut bytes = vec![0u8; length as usize];
    stream.read_exact(&mut bytes)?;
    serde_json::from_slice(&bytes)
        .map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))
}
