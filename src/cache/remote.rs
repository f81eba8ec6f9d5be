//! The remote tier of the per-file cache: a store a team already runs (S3 or
//! an S3-compatible store, Redis, WebDAV or plain HTTP, a directory) behind
//! the local redb tier (`docs/remote-cache.md`).
//!
//! Rows are stored under the local tier's content-addressed keys, as the
//! local tier's envelopes wrapped in an [`entry`] that names its key and may
//! be signed, at `PREFIX/v1/KK/KEY` (`KEY` the 64 hex digits of the key, `KK`
//! its first two). A [`RemoteTier`] is made once per process and store; it
//! runs its requests on its own small tokio runtime, in batches (a Redis
//! `MGET` of 256 keys, or one object per request), several at once, each
//! under the read timeout.
//!
//! It fails open. A request that fails or times out costs that request only;
//! a timeout, or three failures in a row, open the breaker: the tier is off
//! for the rest of the process, after one warning naming the store (redacted)
//! and the cause. Compiles then run on the local tier alone, with the same
//! output.

pub mod entry;
pub mod location;
#[cfg(feature = "remote-cache")]
mod store;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use aic_stages::config::{CacheConfig, RemoteCacheConfig};
use aic_storage::FactsKey;
use futures::StreamExt as _;
use serde::Serialize;

use entry::{HmacKey, open_entry, seal_entry};
use location::{RemoteLocation, RemoteUrlError};
use store::Backend;

/// The environment variable that names the store, over `cache.remote.url`.
pub const REMOTE_URL_ENV: &str = "AIC_CACHE_REMOTE_URL";
/// The environment variable that overrides `cache.remote.readOnly` (`1`/`true`
/// or `0`/`false`).
pub const READ_ONLY_ENV: &str = "AIC_CACHE_REMOTE_READ_ONLY";
/// Failures in a row that open the breaker (a timeout opens it at once).
const FAILURES_TO_OPEN: u32 = 3;
/// The shortest timeout of a write request: uploads from CI are larger and
/// less urgent than compile-path reads.
pub const MIN_WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// What a process needs to reach a remote tier, from config and environment.
#[derive(Clone, Debug)]
pub struct RemoteSettings {
    /// The store.
    pub location: RemoteLocation,
    /// Never write to it.
    pub read_only: bool,
    /// The longest one read request may take.
    pub timeout: Duration,
    /// The key prefix inside the store (no leading or trailing `/`).
    pub prefix: String,
    /// The key that signs and verifies entries, when one is set.
    pub hmac: Option<HmacKey>,
}

impl RemoteSettings {
    /// The settings of `cache` with the environment (`env` looks a variable
    /// up): `None` when neither names a store.
    ///
    /// # Errors
    ///
    /// [`RemoteUrlError`] for a URL that cannot be used.
    pub fn resolve(
        cache: &CacheConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, RemoteUrlError> {
        let config = cache.remote.clone().unwrap_or_default();
        let Some(url) = env(REMOTE_URL_ENV)
            .filter(|url| !url.trim().is_empty())
            .or(config.url.clone())
        else {
            return Ok(None);
        };
        let location = RemoteLocation::parse(&url)?;
        let read_only = match env(READ_ONLY_ENV).as_deref().map(str::trim) {
            Some("1" | "true") => true,
            Some("0" | "false") => false,
            _ => config.read_only,
        } || location.is_read_only();
        Ok(Some(Self {
            location,
            read_only,
            timeout: Duration::from_millis(u64::from(config.timeout_ms.max(1))),
            prefix: config.prefix.trim_matches('/').to_owned(),
            hmac: hmac_key(&config, env),
        }))
    }

    /// The settings from the process environment.
    ///
    /// # Errors
    ///
    /// As [`RemoteSettings::resolve`].
    pub fn from_env(cache: &CacheConfig) -> Result<Option<Self>, RemoteUrlError> {
        Self::resolve(cache, &|name| std::env::var(name).ok())
    }

    /// Whether two settings reach the same tier the same way.
    pub fn same(&self, other: &Self) -> bool {
        self.location == other.location
            && self.read_only == other.read_only
            && self.timeout == other.timeout
            && self.prefix == other.prefix
            && self.hmac.is_some() == other.hmac.is_some()
    }
}

fn hmac_key(config: &RemoteCacheConfig, env: &dyn Fn(&str) -> Option<String>) -> Option<HmacKey> {
    let name = if config.hmac_key_env.is_empty() {
        "AIC_CACHE_HMAC_KEY"
    } else {
        config.hmac_key_env.as_str()
    };
    env(name).and_then(|value| HmacKey::new(value.as_bytes()))
}

/// What a read from the remote tier brought back.
#[derive(Debug, Default)]
pub struct Fetched {
    /// The envelopes of the entries that passed the checks, by key.
    pub entries: Vec<(FactsKey, Vec<u8>)>,
    /// Keys the store had no entry for.
    pub misses: u64,
    /// Entries refused by the checks (format, key, signature).
    pub rejected: u64,
    /// Bytes read.
    pub bytes: u64,
}

/// What a write to the remote tier did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stored {
    /// Entries written.
    pub written: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Entries not written because a request failed or the breaker opened.
    pub failed: u64,
    /// Entries the store lacks that the local cache does not hold either
    /// (never computed here: `aic precompute` computes them).
    #[serde(default)]
    pub not_local: u64,
}

/// The fail-open switch of one tier: closed until a timeout or
/// [`FAILURES_TO_OPEN`] failures in a row, then open for good.
#[derive(Debug)]
struct Breaker {
    shown: String,
    open: AtomicBool,
    failures: AtomicU32,
}

impl Breaker {
    fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }

    fn success(&self) {
        self.failures.store(0, Ordering::Relaxed);
    }

    fn failure(&self, cause: &str, timed_out: bool) {
        let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        if (timed_out || failures >= FAILURES_TO_OPEN) && !self.open.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "The remote cache `{}` is unavailable ({cause}); going on with the local cache only for the rest of this run",
                self.shown
            );
        }
    }
}

/// One remote store, shared by every compile of a process.
pub struct RemoteTier {
    settings: RemoteSettings,
    backend: Arc<Backend>,
    runtime: Option<tokio::runtime::Runtime>,
    breaker: Arc<Breaker>,
}

impl std::fmt::Debug for RemoteTier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTier")
            .field("store", &self.settings.location.shown)
            .field("open", &self.breaker.is_open())
            .finish_non_exhaustive()
    }
}

impl Drop for RemoteTier {
    fn drop(&mut self) {
        // May run inside another runtime (the MCP server's): never block.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl RemoteTier {
    /// Opens the client of `settings`' store; nothing is sent until the
    /// first read or write.
    ///
    /// # Errors
    ///
    /// A message (free of secrets) when the client refuses the settings, the
    /// runtime cannot start, or this aic was built without the
    /// `remote-cache` feature.
    pub fn open(settings: RemoteSettings) -> Result<Self, String> {
        #[cfg(not(feature = "remote-cache"))]
        {
            let _ = settings;
            Err("this aic was built without the `remote-cache` feature".to_owned())
        }
        #[cfg(feature = "remote-cache")]
        {
            let backend = Arc::new(Backend::open(&settings.location)?);
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("aic-remote")
                .enable_all()
                .build()
                .map_err(|error| format!("the remote cache's runtime did not start: {error}"))?;
            Ok(Self {
                breaker: Arc::new(Breaker {
                    shown: settings.location.shown.clone(),
                    open: AtomicBool::new(false),
                    failures: AtomicU32::new(0),
                }),
                settings,
                backend,
                runtime: Some(runtime),
            })
        }
    }

    /// The store's URL, redacted.
    pub fn shown(&self) -> &str {
        &self.settings.location.shown
    }

    /// Whether writes are refused (`readOnly`, or a plain HTTP store).
    pub fn read_only(&self) -> bool {
        self.settings.read_only
    }

    /// Whether the breaker is still closed.
    pub fn is_available(&self) -> bool {
        !self.breaker.is_open()
    }

    /// The settings it was opened with.
    pub fn settings(&self) -> &RemoteSettings {
        &self.settings
    }

    /// Where the entry of `key` lives in the store.
    fn path(&self, key: &FactsKey) -> String {
        use std::fmt::Write as _;
        let hex = key.0.iter().fold(String::with_capacity(64), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        });
        let prefix = &self.settings.prefix;
        let slash = if prefix.is_empty() { "" } else { "/" };
        format!("{prefix}{slash}v1/{}/{hex}", &hex[..2])
    }

    /// Reads the entries of `keys`, checks them, and returns the envelopes
    /// that passed. Nothing when the breaker is open; keys of failed
    /// requests count as neither hits nor misses.
    pub fn fetch(&self, keys: &[FactsKey]) -> Fetched {
        let mut fetched = Fetched::default();
        let hmac = self.settings.hmac.as_ref();
        let concurrency = self.backend.concurrency();
        let results = self.run(
            keys,
            self.settings.timeout,
            concurrency,
            |backend, batch| async move {
                let paths: Vec<String> = batch.into_iter().map(|(path, _)| path).collect();
                backend.get(&paths).await
            },
        );
        for (batch, values) in results {
            for (key, value) in batch.iter().zip(values) {
                let Some(value) = value else {
                    fetched.misses += 1;
                    continue;
                };
                fetched.bytes += value.len() as u64;
                match open_entry(key, &value, hmac) {
                    Ok(envelope) => fetched.entries.push((*key, envelope.to_vec())),
                    Err(error) => {
                        tracing::debug!("Refused the remote entry of a row: {error}");
                        fetched.rejected += 1;
                    }
                }
            }
        }
        fetched
    }

    /// The keys of `keys` the store has no entry for; `None` when a request
    /// failed (then nothing is known).
    pub fn missing(&self, keys: &[FactsKey]) -> Option<Vec<FactsKey>> {
        let concurrency = self.backend.concurrency();
        let results = self.run(
            keys,
            self.write_timeout(),
            concurrency,
            |backend, batch| async move {
                let paths: Vec<String> = batch.into_iter().map(|(path, _)| path).collect();
                backend.exists(&paths).await
            },
        );
        let answered: usize = results.iter().map(|(batch, _)| batch.len()).sum();
        if answered != keys.len() {
            return None;
        }
        let mut missing: Vec<FactsKey> = results
            .into_iter()
            .flat_map(|(batch, found)| {
                batch
                    .into_iter()
                    .zip(found)
                    .filter(|(_, found)| !found)
                    .map(|(key, _)| key)
            })
            .collect();
        missing.sort_unstable();
        Some(missing)
    }

    /// Writes the envelopes of `rows` as entries (signed when a key is set).
    /// Callers check [`RemoteTier::read_only`] first.
    pub fn store(&self, rows: &[(FactsKey, Vec<u8>)]) -> Stored {
        let hmac = self.settings.hmac.clone();
        let values: std::collections::HashMap<FactsKey, Vec<u8>> = rows
            .iter()
            .map(|(key, envelope)| (*key, seal_entry(key, envelope, hmac.as_ref())))
            .collect();
        let values = Arc::new(values);
        let keys: Vec<FactsKey> = rows.iter().map(|(key, _)| *key).collect();
        let shared = values.clone();
        let bytes_of = |key: &FactsKey| values.get(key).map_or(0, |v| v.len() as u64);
        let concurrency = self.backend.write_concurrency();
        let results = self.run(
            &keys,
            self.write_timeout(),
            concurrency,
            move |backend, batch| {
                let shared = shared.clone();
                async move {
                    let count = batch.len();
                    let items = batch
                        .into_iter()
                        .filter_map(|(path, key)| Some((path, shared.get(&key)?.clone())))
                        .collect();
                    backend.put(items).await.map(|()| vec![(); count])
                }
            },
        );
        let mut stored = Stored::default();
        for (batch, _) in results {
            stored.written += batch.len() as u64;
            stored.bytes += batch.iter().map(bytes_of).sum::<u64>();
        }
        stored.failed = keys.len() as u64 - stored.written;
        stored
    }

    fn write_timeout(&self) -> Duration {
        self.settings.timeout.max(MIN_WRITE_TIMEOUT)
    }
}

impl RemoteTier {
    /// Runs `request` over `keys` in the backend's batches (each key with
    /// its path in the store), at most `concurrency` at once,
    /// each under `timeout`, on the tier's runtime; blocks until all are
    /// done. Returns the batches that succeeded with one result per key; a
    /// batch is not sent once the breaker is open.
    fn run<T, R, F>(
        &self,
        keys: &[FactsKey],
        timeout: Duration,
        concurrency: usize,
        request: R,
    ) -> Vec<(Vec<FactsKey>, Vec<T>)>
    where
        T: Send + 'static,
        R: Fn(Arc<Backend>, Vec<(String, FactsKey)>) -> F + Send + Sync + 'static,
        F: Future<Output = Result<Vec<T>, String>> + Send + 'static,
    {
        let Some(runtime) = &self.runtime else {
            return Vec::new();
        };
        if keys.is_empty() || self.breaker.is_open() {
            return Vec::new();
        }
        let batches: Vec<Vec<(String, FactsKey)>> = keys
            .chunks(self.backend.batch())
            .map(|batch| batch.iter().map(|key| (self.path(key), *key)).collect())
            .collect();
        let backend = self.backend.clone();
        let breaker = self.breaker.clone();
        let location = self.settings.location.clone();
        let request = Arc::new(request);
        let (sender, receiver) = std::sync::mpsc::channel();
        runtime.spawn(async move {
            let results: Vec<(Vec<FactsKey>, Vec<T>)> = futures::stream::iter(batches)
                .map(|batch| {
                    let (backend, breaker) = (backend.clone(), breaker.clone());
                    let (location, request) = (location.clone(), request.clone());
                    async move {
                        if breaker.is_open() {
                            return None;
                        }
                        let keys: Vec<FactsKey> = batch.iter().map(|(_, key)| *key).collect();
                        match tokio::time::timeout(timeout, request(backend, batch)).await {
                            Ok(Ok(values)) if values.len() == keys.len() => {
                                breaker.success();
                                Some((keys, values))
                            }
                            Ok(Ok(_)) => {
                                breaker.failure("the store answered with a wrong count", false);
                                None
                            }
                            Ok(Err(error)) => {
                                breaker.failure(&location.scrub(&error), false);
                                None
                            }
                            Err(_) => {
                                let cause = format!("no answer within {} ms", timeout.as_millis());
                                breaker.failure(&cause, true);
                                None
                            }
                        }
                    }
                })
                .buffer_unordered(concurrency)
                .filter_map(std::future::ready)
                .collect()
                .await;
            let _ = sender.send(results);
        });
        receiver.recv().unwrap_or_default()
    }
}

/// Without the `remote-cache` feature no tier opens; this keeps the tier's
/// code compiled.
#[cfg(not(feature = "remote-cache"))]
mod store {
    /// No client.
    pub(crate) struct Backend;

    impl Backend {
        pub(crate) fn batch(&self) -> usize {
            1
        }

        pub(crate) fn concurrency(&self) -> usize {
            1
        }

        pub(crate) async fn get(&self, _: &[String]) -> Result<Vec<Option<Vec<u8>>>, String> {
            Err("no remote-cache feature".to_owned())
        }

        pub(crate) async fn exists(&self, _: &[String]) -> Result<Vec<bool>, String> {
            Err("no remote-cache feature".to_owned())
        }

        pub(crate) async fn put(&self, _: Vec<(String, Vec<u8>)>) -> Result<(), String> {
            Err("no remote-cache feature".to_owned())
        }
    }
}
