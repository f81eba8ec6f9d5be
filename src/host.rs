//! What a run of aic uses of the machine it runs on: the home directory and its
//! database, the in-process memo, and the clock.
//!
//! A [`Host`] is made once per process — by the command line for one command,
//! by the MCP server for its whole life — and handed to everything that needs
//! one of those, so no stage or phase reaches for a global. The database is
//! opened on first use and then shared: a compile reads the cache and logs the
//! compile through the same handle (and the same page cache).

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use aic_stages::config::CacheConfig;
use aic_storage::Store;

use crate::cache::memo::Memo;
use crate::cache::remote::{RemoteSettings, RemoteTier};
use crate::clock::{Clock, SystemClock};
use crate::home::{AicHome, DatabaseError};
use crate::resident::ResidentIndex;

/// The machine-facing services of one process.
pub struct Host {
    home: Option<AicHome>,
    database: OnceLock<Arc<Store>>,
    memo: Option<Arc<Memo>>,
    resident: Option<Arc<ResidentIndex>>,
    clock: Arc<dyn Clock>,
    /// The remote tiers opened so far (one per store), and the stores that
    /// could not be opened (warned about once).
    remotes: Mutex<(Vec<Arc<RemoteTier>>, Vec<String>)>,
    /// Whether this process fills or moves the cache (precompute, push,
    /// pull) rather than compiling: remote reads then wait as long as writes.
    patient: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("home", &self.home)
            .field("memo", &self.memo.is_some())
            .field("resident", &self.resident.is_some())
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A host for a one-shot command: the home from the environment, the
    /// system clock, no memo.
    pub fn from_env() -> Self {
        Self::new(AicHome::from_env(), None, Arc::new(SystemClock))
    }

    /// A host with the memo and the resident index on, for a long-lived
    /// process (the MCP server, the daemon): a compile on an unchanged tree
    /// does not walk it, and a warm compile neither looks each file up in the
    /// database nor decodes its row again.
    pub fn long_lived() -> Self {
        let home = AicHome::from_env();
        let cookies = home.as_ref().map_or_else(
            || std::env::temp_dir().join(format!("aic-cookies-{}", std::process::id())),
            |home| home.dir().join("cookies"),
        );
        let mut index = ResidentIndex::new(cookies);
        if let Some(home) = &home {
            index = index.with_saved_snapshots(home.dir().join(crate::resident::SNAPSHOT_DIR));
        }
        Self::new(home, Some(Arc::new(Memo::default())), Arc::new(SystemClock))
            .with_resident(Arc::new(index))
    }

    /// This host, keeping projects resident in `index`.
    #[must_use]
    pub fn with_resident(mut self, index: Arc<ResidentIndex>) -> Self {
        self.resident = Some(index);
        self
    }

    /// The resident index, in a long-lived process.
    pub fn resident(&self) -> Option<&Arc<ResidentIndex>> {
        self.resident.as_ref()
    }

    /// A host from its parts.
    pub fn new(home: Option<AicHome>, memo: Option<Arc<Memo>>, clock: Arc<dyn Clock>) -> Self {
        Self {
            home,
            database: OnceLock::new(),
            memo,
            resident: None,
            clock,
            remotes: Mutex::new((Vec::new(), Vec::new())),
            patient: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Marks this process as one that fills or moves the cache in bulk (a
    /// CI job), not a compile: remote reads wait up to the write timeout
    /// instead of `cache.remote.timeoutMs`. Call before the first compile.
    pub fn batch_remote(&self) {
        self.patient
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The remote tier `cache` and the environment name, opened on first
    /// use and shared by every compile of this process (its breaker too).
    /// `None` when none is named, or when it cannot be opened: then one
    /// warning per store, and the compile goes on with the local tier.
    pub fn remote_tier(&self, cache: &CacheConfig) -> Option<Arc<RemoteTier>> {
        let settings = match RemoteSettings::from_env(cache) {
            Ok(settings) => {
                let mut settings = settings?;
                if self.patient.load(std::sync::atomic::Ordering::Relaxed) {
                    settings.timeout = settings
                        .timeout
                        .max(crate::cache::remote::MIN_WRITE_TIMEOUT);
                }
                settings
            }
            Err(error) => {
                self.warn_once(
                    error.shown.clone(),
                    &format!(
                        "{error}; going on without the remote cache (use {})",
                        crate::cache::remote::location::URL_FORMS
                    ),
                );
                return None;
            }
        };
        let mut remotes = self.remotes.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tier) = remotes
            .0
            .iter()
            .find(|tier| tier.settings().same(&settings))
        {
            return Some(tier.clone());
        }
        let shown = settings.location.shown.clone();
        match RemoteTier::open(settings) {
            Ok(tier) => {
                let tier = Arc::new(tier);
                remotes.0.push(tier.clone());
                Some(tier)
            }
            Err(cause) => {
                drop(remotes);
                self.warn_once(
                    shown.clone(),
                    &format!(
                        "The remote cache `{shown}` cannot be used ({cause}); going on without it"
                    ),
                );
                None
            }
        }
    }

    fn warn_once(&self, store: String, message: &str) {
        let mut remotes = self.remotes.lock().unwrap_or_else(PoisonError::into_inner);
        if !remotes.1.contains(&store) {
            remotes.1.push(store);
            tracing::warn!("{message}");
        }
    }

    /// The home directory, when one is known.
    pub fn home(&self) -> Option<&AicHome> {
        self.home.as_ref()
    }

    /// The database, opened on first use.
    ///
    /// # Errors
    ///
    /// [`DatabaseError`] when there is no home or the file cannot be opened; a
    /// later call tries again.
    pub fn database(&self) -> Result<Arc<Store>, DatabaseError> {
        if let Some(store) = self.database.get() {
            return Ok(store.clone());
        }
        let store = self
            .home
            .as_ref()
            .ok_or(DatabaseError::NoHome)?
            .open_database()?;
        Ok(self.database.get_or_init(|| store).clone())
    }

    /// The in-process memo, when this process keeps one.
    pub fn memo(&self) -> Option<&Arc<Memo>> {
        self.memo.as_ref()
    }

    /// The clock.
    pub fn clock(&self) -> &dyn Clock {
        self.clock.as_ref()
    }

    /// Milliseconds since the Unix epoch, by [`Host::clock`].
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }
}
