//! `aic daemon`: one long-lived process per user and `AIC_HOME` that keeps
//! the projects it serves resident ([`crate::resident`]) and answers
//! compiles, inspects and hook events over a Unix socket
//! (`$AIC_HOME/daemon/daemon.sock`, mode 0600 in a 0700 directory).
//!
//! Clients ([`client`]) use a running daemon when there is one, and hooks
//! start it on first use; without it they compile in-process, with the same
//! bytes out: the daemon answers with [`crate::answer`] and [`crate::hook`],
//! as the commands do. A daemon of another build, or started with another home or
//! allowed-roots list, is never used. The daemon drops a project unused for
//! its project idle time and exits after its own idle time. On Windows there
//! is no daemon: every command compiles in-process.

pub mod client;
pub mod protocol;
#[cfg(unix)]
pub mod server;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Minutes a daemon waits without a request before it exits.
pub const DEFAULT_IDLE_MINUTES: f64 = 30.0;

/// Minutes a project stays resident without a compile.
pub const DEFAULT_PROJECT_IDLE_MINUTES: f64 = 30.0;

/// The daemon's files under the aic home: `daemon/` (0700) with the socket
/// and the log.
#[derive(Clone, Debug)]
pub struct DaemonPaths {
    /// `$AIC_HOME/daemon`.
    pub dir: PathBuf,
}

impl DaemonPaths {
    /// The paths under `home`.
    pub fn new(home: &Path) -> Self {
        Self {
            dir: home.join("daemon"),
        }
    }

    /// The socket.
    pub fn socket(&self) -> PathBuf {
        self.dir.join("daemon.sock")
    }

    /// The log the daemon writes (its stderr).
    pub fn log(&self) -> PathBuf {
        self.dir.join("daemon.log")
    }
}

/// This build of aic: its version and the executable's size and time, so a
/// rebuilt binary never talks to a daemon of the old one.
pub fn build_id() -> &'static str {
    static BUILD: OnceLock<String> = OnceLock::new();
    BUILD.get_or_init(|| {
        let stamp = std::env::current_exe()
            .and_then(fs_err::metadata)
            .map(|metadata| {
                let modified = metadata
                    .modified()
                    .ok()
                    .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |elapsed| elapsed.as_nanos());
                format!("{}:{modified}", metadata.len())
            })
            .unwrap_or_default();
        let stamp = aic_stages::content_hash::ContentHash::of(stamp.as_bytes()).to_hex();
        format!("{} (binary {})", env!("CARGO_PKG_VERSION"), &stamp[..16])
    })
}

/// The environment a compile's answer depends on (the home directories and
/// the allowed roots), as one string a client and a daemon compare.
pub fn environment() -> String {
    let var = |name: &str| {
        std::env::var_os(name)
            .map(|value| value.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    // The same directory spelled two ways (`/a/b/`, a symlink) is the same.
    let dir = |name: &str| {
        let value = var(name);
        fs_err::canonicalize(&value).map_or(value, |path| path.to_string_lossy().into_owned())
    };
    format!(
        "HOME={}\nAIC_HOME={}\n{}={}",
        dir("HOME"),
        dir("AIC_HOME"),
        crate::root::ALLOWED_ROOTS_VAR,
        var(crate::root::ALLOWED_ROOTS_VAR)
    )
}
