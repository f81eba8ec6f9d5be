//! The clients of the stores a remote tier uses: opendal for object stores,
//! WebDAV, HTTP and directories; the `redis` crate for Redis, whose `MGET`
//! and pipelines make one round trip of a whole batch (opendal has no batch
//! read). Each call is one request; the tier adds timeouts, concurrency and
//! the breaker.

use opendal::{ErrorKind, Operator, services};
use redis::aio::MultiplexedConnection;
use tokio::sync::OnceCell;

use super::location::{RemoteLocation, StoreKind};

/// Keys per Redis `MGET` or pipeline.
const REDIS_BATCH: usize = 256;
/// Redis batches in flight at once.
const REDIS_CONCURRENCY: usize = 4;
/// Object requests in flight at once (one key each).
const OBJECT_CONCURRENCY: usize = 32;

/// An opened store client (one per process and store: its size does not
/// matter).
#[expect(
    clippy::large_enum_variant,
    reason = "one per process and store, behind an Arc"
)]
pub(crate) enum Backend {
    /// Through opendal.
    Objects(Operator),
    /// A Redis server and its connection, made on first use.
    Redis {
        client: redis::Client,
        connection: OnceCell<MultiplexedConnection>,
    },
}

impl Backend {
    /// The client for `location`; nothing is sent yet.
    ///
    /// # Errors
    ///
    /// The client's message (scrubbed of secrets) when its settings are
    /// refused.
    pub(crate) fn open(location: &RemoteLocation) -> Result<Self, String> {
        let scrub = |error: &dyn std::fmt::Display| location.scrub(&error.to_string());
        // The HTTP transport of the object stores (idempotent).
        opendal::install_default();
        let operator = match &location.kind {
            StoreKind::Redis { url } => {
                let client = redis::Client::open(url.as_str()).map_err(|e| scrub(&e))?;
                return Ok(Self::Redis {
                    client,
                    connection: OnceCell::new(),
                });
            }
            StoreKind::S3 {
                bucket,
                root,
                endpoint,
                region,
            } => {
                let region = region
                    .clone()
                    .or_else(|| std::env::var("AWS_REGION").ok())
                    .or_else(|| std::env::var("AWS_DEFAULT_REGION").ok())
                    .unwrap_or_else(|| "us-east-1".to_owned());
                let mut builder = services::S3::default()
                    .bucket(bucket)
                    .root(root)
                    .region(&region);
                if let Some(endpoint) = endpoint {
                    builder = builder.endpoint(endpoint);
                }
                Operator::new(builder)
            }
            StoreKind::Webdav {
                endpoint,
                root,
                credentials,
            } => {
                let mut builder = services::Webdav::default().endpoint(endpoint).root(root);
                if let Some((user, password)) = credentials {
                    builder = builder.username(user).password(password);
                }
                Operator::new(builder)
            }
            StoreKind::Http { endpoint, root } => {
                Operator::new(services::Http::default().endpoint(endpoint).root(root))
            }
            StoreKind::Fs { root } => Operator::new(services::Fs::default().root(root)),
        };
        operator.map(Self::Objects).map_err(|e| scrub(&e))
    }

    /// Keys per request.
    pub(crate) fn batch(&self) -> usize {
        match self {
            Self::Objects(_) => 1,
            Self::Redis { .. } => REDIS_BATCH,
        }
    }

    /// Requests in flight at once.
    pub(crate) fn concurrency(&self) -> usize {
        match self {
            Self::Objects(_) => OBJECT_CONCURRENCY,
            Self::Redis { .. } => REDIS_CONCURRENCY,
        }
    }

    /// Writes in flight at once: as reads, but one at a time on WebDAV,
    /// where concurrent writes creating the same collection lost entries on a
    /// server under load (wsgidav, in CI).
    pub(crate) fn write_concurrency(&self) -> usize {
        match self {
            Self::Objects(operator) if operator.info().scheme() == "webdav" => 1,
            _ => self.concurrency(),
        }
    }

    async fn redis(
        client: &redis::Client,
        connection: &OnceCell<MultiplexedConnection>,
    ) -> Result<MultiplexedConnection, String> {
        connection
            .get_or_try_init(|| client.get_multiplexed_async_connection())
            .await
            .cloned()
            .map_err(|error| error.to_string())
    }

    /// The values under `paths` (`None` where there is none), in order.
    ///
    /// # Errors
    ///
    /// The client's message for a request that failed.
    pub(crate) async fn get(&self, paths: &[String]) -> Result<Vec<Option<Vec<u8>>>, String> {
        match self {
            Self::Objects(operator) => {
                let mut values = Vec::with_capacity(paths.len());
                for path in paths {
                    values.push(match operator.read(path).await {
                        Ok(buffer) => Some(buffer.to_vec()),
                        Err(error) if error.kind() == ErrorKind::NotFound => None,
                        Err(error) => return Err(error.to_string()),
                    });
                }
                Ok(values)
            }
            Self::Redis { client, connection } => {
                let mut connection = Self::redis(client, connection).await?;
                redis::cmd("MGET")
                    .arg(paths)
                    .query_async(&mut connection)
                    .await
                    .map_err(|error| error.to_string())
            }
        }
    }

    /// Which of `paths` have a value, in order. Object stores are asked
    /// with the same request as a read (entries are a few hundred bytes), so
    /// "present" means what a compile would find.
    ///
    /// # Errors
    ///
    /// The client's message for a request that failed.
    pub(crate) async fn exists(&self, paths: &[String]) -> Result<Vec<bool>, String> {
        match self {
            Self::Objects(_) => Ok(self
                .get(paths)
                .await?
                .into_iter()
                .map(|value| value.is_some())
                .collect()),
            Self::Redis { client, connection } => {
                let mut connection = Self::redis(client, connection).await?;
                let mut pipeline = redis::pipe();
                for path in paths {
                    pipeline.exists(path);
                }
                pipeline
                    .query_async(&mut connection)
                    .await
                    .map_err(|error| error.to_string())
            }
        }
    }

    /// Stores each value under its path.
    ///
    /// # Errors
    ///
    /// The client's message for a request that failed.
    pub(crate) async fn put(&self, items: Vec<(String, Vec<u8>)>) -> Result<(), String> {
        match self {
            Self::Objects(operator) => {
                for (path, value) in items {
                    operator
                        .write(&path, value)
                        .await
                        .map_err(|error| error.to_string())?;
                }
                Ok(())
            }
            Self::Redis { client, connection } => {
                let mut connection = Self::redis(client, connection).await?;
                let mut pipeline = redis::pipe();
                for (path, value) in items {
                    pipeline.set(path, value).ignore();
                }
                pipeline
                    .query_async::<()>(&mut connection)
                    .await
                    .map_err(|error| error.to_string())
            }
        }
    }
}
