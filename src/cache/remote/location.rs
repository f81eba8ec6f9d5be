//! Where a remote tier lives: the URL forms `cache.remote.url` and
//! `AIC_CACHE_REMOTE_URL` accept, parsed once, and the redacted form every
//! message shows.
//!
//! | URL | store |
//! | --- | --- |
//! | `s3://bucket/path?endpoint=URL&region=NAME` | S3 or an S3-compatible store (MinIO, R2, GCS's S3 API); credentials from the AWS environment and credential chain |
//! | `redis://host:port/db`, `rediss://…` | Redis (`MGET` batches); a password only in `AIC_CACHE_REMOTE_URL` |
//! | `webdav+http://host/path`, `webdav+https://…` | WebDAV (nginx, Apache, rclone serve, wsgidav); basic auth only in `AIC_CACHE_REMOTE_URL` |
//! | `http://host/path`, `https://…` | a plain HTTP server, read-only |
//! | `file:///dir` | a local or network directory |

use url::Url;

/// Every form the parser accepts, for error hints.
pub const URL_FORMS: &str = "s3://BUCKET/PATH?endpoint=URL&region=NAME, redis://HOST:PORT/DB, webdav+https://HOST/PATH, https://HOST/PATH (read-only) or file:///DIR";

/// Which store a URL names, with what its client needs.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreKind {
    /// An S3-compatible bucket.
    S3 {
        /// The bucket name.
        bucket: String,
        /// The path inside the bucket (`/` for none).
        root: String,
        /// `endpoint=`: a non-AWS endpoint (MinIO, R2, moto).
        endpoint: Option<String>,
        /// `region=`; else `AWS_REGION`/`AWS_DEFAULT_REGION`, else `us-east-1`.
        region: Option<String>,
    },
    /// A Redis server; the URL as given (it may hold a password).
    Redis {
        /// The `redis://` or `rediss://` URL.
        url: String,
    },
    /// A WebDAV server.
    Webdav {
        /// `http(s)://host:port`.
        endpoint: String,
        /// The path on the server.
        root: String,
        /// Basic auth from the URL's user info.
        credentials: Option<(String, String)>,
    },
    /// A plain HTTP server, read-only.
    Http {
        /// `http(s)://host:port`.
        endpoint: String,
        /// The path on the server.
        root: String,
    },
    /// A directory.
    Fs {
        /// Its absolute path.
        root: String,
    },
}

impl std::fmt::Debug for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::S3 { .. } => "S3",
            Self::Redis { .. } => "Redis",
            Self::Webdav { .. } => "WebDAV",
            Self::Http { .. } => "HTTP",
            Self::Fs { .. } => "directory",
        })
    }
}

/// A parsed remote URL: the store and its redacted form.
#[derive(Clone, PartialEq, Eq)]
pub struct RemoteLocation {
    /// The store.
    pub kind: StoreKind,
    /// The URL with any user name and password replaced by `****`: the only
    /// form messages, logs and `aic cache stats` show.
    pub shown: String,
    /// The secret parts of the URL (user name, password, decoded), removed
    /// from every error text a client returns.
    secrets: Vec<String>,
}

impl std::fmt::Debug for RemoteLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteLocation")
            .field("kind", &self.kind)
            .field("shown", &self.shown)
            .finish_non_exhaustive()
    }
}

/// A remote URL that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{shown}` is not a remote cache URL: {reason}")]
pub struct RemoteUrlError {
    /// The URL, redacted.
    pub shown: String,
    /// What is wrong with it.
    pub reason: String,
}

/// `text` with its user info and the values of query parameters other than
/// `endpoint` and `region` replaced by `****`, parsable or not.
pub fn redact(text: &str) -> String {
    let (address, query) = match text.split_once('?') {
        Some((address, query)) => (address, Some(query)),
        None => (text, None),
    };
    let mut out = match address.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find(['/', '#']).unwrap_or(rest.len());
            match rest[..end].rfind('@') {
                Some(at) => format!("{scheme}://****@{}", &rest[at + 1..]),
                None => address.to_owned(),
            }
        }
        None => address.to_owned(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, value)) if name == "endpoint" || name == "region" => {
                    format!("{name}={value}")
                }
                Some((name, _)) => format!("{name}=****"),
                None => pair.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

impl RemoteLocation {
    /// Parses a remote URL.
    ///
    /// # Errors
    ///
    /// [`RemoteUrlError`] for text that is not a URL, an unknown scheme, a
    /// missing bucket, host or directory, or an unknown query parameter.
    pub fn parse(text: &str) -> Result<Self, RemoteUrlError> {
        let shown = redact(text.trim());
        let fail = |reason: String| RemoteUrlError {
            shown: shown.clone(),
            reason,
        };
        let url = Url::parse(text.trim()).map_err(|error| fail(error.to_string()))?;
        let mut secrets = Vec::new();
        let decode = |part: &str| {
            percent_decode(part)
                .ok_or_else(|| fail("its user info is not valid percent-encoded UTF-8".to_owned()))
        };
        let user = decode(url.username())?;
        let password = url.password().map(decode).transpose()?;
        secrets.extend(
            [Some(user.clone()), password.clone()]
                .into_iter()
                .flatten()
                .filter(|s| !s.is_empty()),
        );
        let host = || {
            url.host_str()
                .filter(|host| !host.is_empty())
                .ok_or_else(|| fail("it names no host".to_owned()))
        };
        let endpoint = |scheme: &str| -> Result<String, RemoteUrlError> {
            let host = host()?;
            Ok(match url.port() {
                Some(port) => format!("{scheme}://{host}:{port}"),
                None => format!("{scheme}://{host}"),
            })
        };
        let no_query = || match url.query_pairs().next() {
            Some((name, _)) => Err(fail(format!("unknown parameter `{name}`"))),
            None => Ok(()),
        };
        let path = if url.path().is_empty() {
            "/"
        } else {
            url.path()
        };
        let kind = match url.scheme() {
            "s3" => {
                let mut endpoint = None;
                let mut region = None;
                for (name, value) in url.query_pairs() {
                    match name.as_ref() {
                        "endpoint" => endpoint = Some(value.into_owned()),
                        "region" => region = Some(value.into_owned()),
                        other => {
                            return Err(fail(format!(
                                "unknown parameter `{other}` (accepted: endpoint, region; credentials come from the environment)"
                            )));
                        }
                    }
                }
                StoreKind::S3 {
                    bucket: host()?.to_owned(),
                    root: path.to_owned(),
                    endpoint,
                    region,
                }
            }
            "redis" | "rediss" => {
                host()?;
                no_query()?;
                StoreKind::Redis {
                    url: text.trim().to_owned(),
                }
            }
            "webdav+http" | "webdav+https" => {
                no_query()?;
                let scheme = url.scheme().trim_start_matches("webdav+");
                StoreKind::Webdav {
                    endpoint: endpoint(scheme)?,
                    root: path.to_owned(),
                    credentials: (!user.is_empty() || password.is_some())
                        .then(|| (user.clone(), password.clone().unwrap_or_default())),
                }
            }
            "http" | "https" => {
                no_query()?;
                if !user.is_empty() {
                    return Err(fail(
                        "a plain HTTP store takes no user info; use webdav+https:// for a server with basic auth".to_owned(),
                    ));
                }
                StoreKind::Http {
                    endpoint: endpoint(url.scheme())?,
                    root: path.to_owned(),
                }
            }
            "file" => {
                no_query()?;
                if url
                    .host_str()
                    .is_some_and(|host| !host.is_empty() && host != "localhost")
                {
                    return Err(fail(
                        "it names a host (`file://HOST/…`); a directory store is written `file:///ABSOLUTE/DIR`".to_owned(),
                    ));
                }
                if url.path().len() <= 1 {
                    return Err(fail("it names no directory".to_owned()));
                }
                StoreKind::Fs {
                    root: decode(url.path())?,
                }
            }
            other => return Err(fail(format!("unknown scheme `{other}`"))),
        };
        Ok(Self {
            kind,
            shown,
            secrets,
        })
    }

    /// `text` (an error from a store's client) with the URL's secret parts
    /// replaced by `****`.
    pub fn scrub(&self, text: &str) -> String {
        self.secrets.iter().fold(redact(text), |text, secret| {
            text.replace(secret.as_str(), "****")
        })
    }

    /// Whether the store can only be read (plain HTTP).
    pub fn is_read_only(&self) -> bool {
        matches!(self.kind, StoreKind::Http { .. })
    }
}

/// Decodes `%XX` escapes; `None` for a bad escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_form_parses() {
        let s3 = RemoteLocation::parse(
            "s3://team-cache/aic?endpoint=http://127.0.0.1:9000&region=eu-west-1",
        )
        .unwrap();
        assert_eq!(
            s3.kind,
            StoreKind::S3 {
                bucket: "team-cache".to_owned(),
                root: "/aic".to_owned(),
                endpoint: Some("http://127.0.0.1:9000".to_owned()),
                region: Some("eu-west-1".to_owned()),
            }
        );
        let redis = RemoteLocation::parse("redis://127.0.0.1:6379/2").unwrap();
        assert!(matches!(redis.kind, StoreKind::Redis { .. }));
        let webdav = RemoteLocation::parse("webdav+https://ci:p%40ss@dav.example/cache").unwrap();
        assert_eq!(
            webdav.kind,
            StoreKind::Webdav {
                endpoint: "https://dav.example".to_owned(),
                root: "/cache".to_owned(),
                credentials: Some(("ci".to_owned(), "p@ss".to_owned())),
            }
        );
        assert!(
            RemoteLocation::parse("https://cache.example/aic")
                .unwrap()
                .is_read_only()
        );
        let fs = RemoteLocation::parse("file:///mnt/team%20cache").unwrap();
        assert_eq!(
            fs.kind,
            StoreKind::Fs {
                root: "/mnt/team cache".to_owned()
            }
        );
    }

    #[test]
    fn credentials_never_show() {
        let redis = RemoteLocation::parse("redis://:hunter2@cache:6379/0").unwrap();
        assert_eq!(redis.shown, "redis://****@cache:6379/0");
        assert!(!format!("{redis:?}").contains("hunter2"));
        assert_eq!(
            redis.scrub("auth failed for hunter2 at redis://:hunter2@cache:6379"),
            "auth failed for **** at redis://****@cache:6379"
        );
        let error = RemoteLocation::parse("ftp://user:hunter2@host/x").unwrap_err();
        assert!(!error.to_string().contains("hunter2"));
    }

    #[test]
    fn bad_urls_say_what_is_wrong() {
        let message = |text: &str| RemoteLocation::parse(text).unwrap_err().to_string();
        assert_eq!(
            message("ftp://host/x"),
            "`ftp://host/x` is not a remote cache URL: unknown scheme `ftp`"
        );
        let secret = message("s3://bucket/x?secret_access_key=abc");
        assert!(secret.contains("unknown parameter `secret_access_key`"));
        assert!(!secret.contains("abc"));
        assert!(message("file:///").contains("names no directory"));
        assert!(message("not a url").contains("not a remote cache URL"));
    }
}
