//! The remote tier of the per-file cache against real stores: a directory,
//! Redis, an S3-compatible server and a WebDAV server. `scripts/test.sh`
//! installs and starts the servers on loopback and passes their URLs in
//! `AIC_TEST_REDIS_URL`, `AIC_TEST_S3_URL` and `AIC_TEST_WEBDAV_URL`; without
//! one, a test starts the server itself when its program is installed
//! (`redis-server`, `moto_server`, `wsgidav`), and fails saying what to
//! install otherwise.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Run, WEBAPP_MTIMES, aic, fixture_repo, git, private_tempdir};

const INTENT: &str = "fix the null check in the user service";

/// A server this test started, stopped when dropped.
struct Server {
    child: Option<Child>,
    url: String,
    dir: Option<tempfile::TempDir>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn installed(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the server on port {port} did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The store `variable` names, else one started from `program` by `start`.
fn server(variable: &str, program: &str, start: impl FnOnce(u16) -> (Command, String)) -> Server {
    if let Ok(url) = std::env::var(variable)
        && !url.is_empty()
    {
        return Server {
            child: None,
            url,
            dir: None,
        };
    }
    assert!(
        installed(program),
        "{variable} is not set and `{program}` is not installed: run the tests with scripts/test.sh, which installs and starts the stores, or install {program}"
    );
    let port = free_port();
    let (mut command, url) = start(port);
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("`{program}` does not start: {e}"));
    wait_for_port(port);
    Server {
        child: Some(child),
        url,
        dir: None,
    }
}

fn redis() -> Server {
    server("AIC_TEST_REDIS_URL", "redis-server", |port| {
        let mut command = Command::new("redis-server");
        command.args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ]);
        (command, format!("redis://127.0.0.1:{port}/0"))
    })
}

fn s3() -> Server {
    let server = server("AIC_TEST_S3_URL", "moto_server", |port| {
        let mut command = Command::new("moto_server");
        command.args(["-p", &port.to_string()]);
        (
            command,
            format!("s3://aic-test/ci?endpoint=http://127.0.0.1:{port}&region=us-east-1"),
        )
    });
    if server.child.is_some() {
        let port = server
            .url
            .split("127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split('&').next())
            .unwrap();
        create_bucket(port.parse().unwrap(), "aic-test");
    }
    server
}

/// `PUT /bucket` on moto (which takes any credentials).
fn create_bucket(port: u16, bucket: &str) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

fn webdav() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap().to_owned();
    let mut server = server("AIC_TEST_WEBDAV_URL", "wsgidav", |port| {
        let mut command = Command::new("wsgidav");
        command.args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--root",
            &root,
            "--auth",
            "anonymous",
        ]);
        (command, format!("webdav+http://127.0.0.1:{port}/"))
    });
    server.dir = Some(dir);
    server
}

/// A new directory store.
fn directory() -> Server {
    let dir = tempfile::tempdir().unwrap();
    Server {
        child: None,
        url: format!("file://{}", dir.path().display()),
        dir: Some(dir),
    }
}

/// A key prefix of this test's own, so tests share a store without meeting.
fn prefix(name: &str) -> String {
    format!("test-{name}-{}-{}", std::process::id(), free_port())
}

/// A config file in its own directory setting `cache.remote` (besides the URL,
/// which comes from the environment as CI passes it).
fn config(remote: &serde_json::Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let text = serde_json::json!({ "cache": { "remote": remote } }).to_string();
    fs_err::write(dir.path().join("aic.config.json"), text).unwrap();
    dir
}

fn run_with(args: &[&str], home: &Path, env: &[(&str, &str)]) -> Run {
    let mut all = vec![("AIC_HOME", home.to_str().unwrap())];
    all.extend_from_slice(env);
    aic(args, &all)
}

fn with_config<'a>(args: &[&'a str], config: &'a Path) -> Vec<&'a str> {
    let mut args = args.to_vec();
    args.extend(["--config", config.to_str().unwrap()]);
    args
}

/// Fills the store from one home with `precompute --push`, then compiles
/// from a fresh home through it: every scan row comes from the store, and the
/// prompt is the bytes of a compile without any remote tier.
/// The servers written in Python (moto, wsgidav) get a longer read timeout
/// than the default 300 ms.
fn round_trip(store: &Server, name: &str, timeout_ms: u32) {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let root = repo.path().to_str().unwrap();
    let settings = config(&serde_json::json!({ "prefix": prefix(name), "timeoutMs": timeout_ms }));
    let config_file = settings.path().join("aic.config.json");
    // Any credentials do for moto; no test reaches for a real credential chain.
    let remote = [
        ("AIC_CACHE_REMOTE_URL", store.url.as_str()),
        ("AWS_ACCESS_KEY_ID", "aic-test"),
        ("AWS_SECRET_ACCESS_KEY", "aic-test"),
    ];
    let ci = private_tempdir();
    let push = run_with(
        &with_config(
            &["precompute", "--root", root, "--push", "--json"],
            &config_file,
        ),
        ci.path(),
        &remote,
    );
    assert_eq!(push.code, 0, "{}", push.stderr);
    let pushed = &push.json()["pushed"];
    let failed = pushed["failed"].as_u64().unwrap();
    assert!(pushed["written"].as_u64().unwrap() > 0, "{}", push.stdout);

    let fresh = private_tempdir();
    let inspect = run_with(
        &with_config(&["inspect", INTENT, "--root", root, "--json"], &config_file),
        fresh.path(),
        &remote,
    );
    assert_eq!(inspect.code, 0, "{}", inspect.stderr);
    let trace = inspect.json();
    let cache = &trace["cache"];
    // Every row reached the store but those the push counted as failed.
    assert!(
        cache["scan"]["computed"].as_u64().unwrap() <= failed,
        "{cache:#}\nfirst push: {}",
        push.stdout
    );
    assert!(cache["remote"]["hits"].as_u64().unwrap() > 0, "{cache:#}");
    assert_eq!(cache["remote"]["rejected"], 0, "{cache:#}");

    let another = private_tempdir();
    let through_remote = run_with(
        &with_config(&["compile", INTENT, "--root", root], &config_file),
        another.path(),
        &remote,
    );
    let local = private_tempdir();
    let local_only = run_with(&["compile", INTENT, "--root", root], local.path(), &[]);
    assert_eq!(through_remote.code, 0, "{}", through_remote.stderr);
    assert_eq!(through_remote.stdout, local_only.stdout);
    // A second push writes only what the first failed to write (a request
    // the store refused under load, counted and reported).
    let again = run_with(
        &with_config(&["cache", "push", "--root", root, "--json"], &config_file),
        ci.path(),
        &remote,
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    let rewritten = again.json()["pushed"]["written"].as_u64().unwrap();
    assert!(
        rewritten <= failed,
        "{}\nfirst push:\n{}",
        again.stdout,
        push.stdout
    );
}

#[test]
fn a_directory_store_round_trips() {
    round_trip(&directory(), "fs", 300);
}

#[test]
fn a_redis_store_round_trips() {
    round_trip(&redis(), "redis", 300);
}

#[test]
fn an_s3_store_round_trips() {
    round_trip(&s3(), "s3", 5000);
}

#[test]
fn a_webdav_store_round_trips() {
    round_trip(&webdav(), "webdav", 5000);
}

/// Every file under `dir`, relative, sorted.
fn stored(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = crate::support::files_under(dir)
        .into_iter()
        .map(|file| file.strip_prefix(dir).unwrap().to_path_buf())
        .collect();
    files.sort();
    files
}

fn store_dir(store: &Server) -> PathBuf {
    PathBuf::from(store.url.trim_start_matches("file://"))
}

/// `precompute --push` shares the git history row: a new machine reads the
/// last-commit times from the store instead of walking the history, and
/// ranks the same.
#[test]
fn the_git_history_travels_with_the_files_rows() {
    let repo = tempfile::tempdir().unwrap();
    git(
        repo.path(),
        &["init", "-q", "-b", "main"],
        "2023-01-01T00:00:00Z",
    );
    for (file, date) in [
        ("old_parser.py", "2023-01-01T00:00:00Z"),
        ("new_parser.py", "2024-01-01T00:00:00Z"),
    ] {
        fs_err::write(
            repo.path().join(file),
            "def parse():\n    return 'parser'\n",
        )
        .unwrap();
        git(repo.path(), &["add", file], date);
        git(repo.path(), &["commit", "-q", "-m", file], date);
    }
    let root = repo.path().to_str().unwrap();
    let store = directory();
    let remote = [("AIC_CACHE_REMOTE_URL", store.url.as_str())];
    let push = run_with(
        &["precompute", "--root", root, "--push"],
        private_tempdir().path(),
        &remote,
    );
    assert_eq!(push.code, 0, "{}", push.stderr);
    let args = ["-vv", "inspect", "parser", "--root", root, "--json"];
    let through_remote = run_with(&args, private_tempdir().path(), &remote);
    assert_eq!(through_remote.code, 0, "{}", through_remote.stderr);
    assert!(
        through_remote
            .stderr
            .contains("history of 2 commits from the cache"),
        "{}",
        through_remote.stderr
    );
    let local = run_with(&args, private_tempdir().path(), &[]);
    assert!(!local.stderr.contains("from the cache"), "{}", local.stderr);
    assert_eq!(
        through_remote.json()["selectedFiles"],
        local.json()["selectedFiles"]
    );

    // Three shards walk a run of the commits each (one run is empty) and
    // push their parts; a new machine merges them into the same history.
    let sharded = directory();
    let remote = [("AIC_CACHE_REMOTE_URL", sharded.url.as_str())];
    for shard in ["1/3", "2/3", "3/3"] {
        let push = run_with(
            &["precompute", "--root", root, "--push", "--shard", shard],
            private_tempdir().path(),
            &remote,
        );
        assert_eq!(push.code, 0, "{}", push.stderr);
    }
    let merged = run_with(&args, private_tempdir().path(), &remote);
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    assert!(
        merged
            .stderr
            .contains("history of 2 commits from the cache"),
        "{}",
        merged.stderr
    );
    assert_eq!(run_trace(&merged), run_trace(&through_remote));
}

/// A run's trace without what differs between two runs of one compile (its
/// times and what the cache did).
fn run_trace(run: &Run) -> serde_json::Value {
    let mut trace = run.json();
    let fields = trace.as_object_mut().unwrap();
    fields.remove("phaseTimes");
    fields.remove("cache");
    trace
}

/// A new checkout of a repository that `precompute --push` filled the store
/// for reads no file that git's index vouches for: each file's content hash
/// and scan terms come from the store by its blob id. A file changed since
/// its commit is read. The prompt is the bytes of a compile without the
/// remote tier, and the next compile finds every file in the path index.
#[test]
fn a_new_checkout_learns_its_files_from_the_store_by_blob_id() {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let tree = repo.path();
    git(tree, &["init", "-q", "-b", "main"], "2024-01-01T00:00:00Z");
    git(tree, &["add", "."], "2024-01-01T00:00:00Z");
    git(
        tree,
        &["commit", "-q", "-m", "first"],
        "2024-01-01T00:00:00Z",
    );
    let service = tree.join("src/user/service.ts");
    let text = fs_err::read_to_string(&service).unwrap();
    fs_err::write(&service, format!("{text}\n// changed after the commit\n")).unwrap();
    let root = tree.to_str().unwrap();
    let store = directory();
    let remote = [("AIC_CACHE_REMOTE_URL", store.url.as_str())];
    let push = run_with(
        &["precompute", "--root", root, "--push", "--json"],
        private_tempdir().path(),
        &remote,
    );
    assert_eq!(push.code, 0, "{}", push.stderr);
    let files = push.json()["files"].as_u64().unwrap();

    let fresh = private_tempdir();
    let inspect = |home: &Path| {
        let run = run_with(
            &["inspect", INTENT, "--root", root, "--json"],
            home,
            &remote,
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()["cache"].clone()
    };
    let first = inspect(fresh.path());
    assert_eq!(first["pathIndexHits"], 0, "{first:#}");
    assert_eq!(first["blobIndexHits"], files - 1, "{first:#}");
    assert_eq!(first["scan"]["computed"], 0, "{first:#}");
    assert_eq!(first["remote"]["rejected"], 0, "{first:#}");
    let second = inspect(fresh.path());
    // The changed file was written moments ago: too recent for the path
    // index (git's racily-clean rule), so it is read again.
    assert_eq!(second["pathIndexHits"], files - 1, "{second:#}");
    assert_eq!(second["blobIndexHits"], 0, "{second:#}");
    // A warm compile asks the store nothing (the history row is local now).
    assert_eq!(second["remote"]["hits"], 0, "{second:#}");
    assert_eq!(second["remote"]["misses"], 0, "{second:#}");

    let compile = |home: &Path, env: &[(&str, &str)]| {
        let run = run_with(&["compile", INTENT, "--root", root], home, env);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stdout
    };
    assert_eq!(
        compile(private_tempdir().path(), &remote),
        compile(private_tempdir().path(), &[])
    );
}

#[test]
fn tampered_and_wrongly_signed_entries_are_refused() {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let root = repo.path().to_str().unwrap();
    let store = directory();
    let signed = [
        ("AIC_CACHE_REMOTE_URL", store.url.as_str()),
        ("AIC_CACHE_HMAC_KEY", "team-key-for-tests"),
    ];
    let push = run_with(
        &["precompute", "--root", root, "--push"],
        private_tempdir().path(),
        &signed,
    );
    assert_eq!(push.code, 0, "{}", push.stderr);
    let local_only = run_with(
        &["compile", INTENT, "--root", root],
        private_tempdir().path(),
        &[],
    );

    let check = |env: &[(&str, &str)]| {
        let home = private_tempdir();
        let run = run_with(
            &["inspect", INTENT, "--root", root, "--json"],
            home.path(),
            env,
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        let remote = run.json()["cache"]["remote"].clone();
        // Refused entries are said once, with the key to check.
        let refused = run.stderr.matches("AIC_CACHE_HMAC_KEY matches").count();
        assert_eq!(
            refused,
            usize::from(remote["rejected"].as_u64().unwrap_or(0) > 0),
            "{}",
            run.stderr
        );
        let compiled = run_with(&["compile", INTENT, "--root", root], home.path(), env);
        assert_eq!(compiled.stdout, local_only.stdout);
        remote
    };
    let wrong_key = [
        ("AIC_CACHE_REMOTE_URL", store.url.as_str()),
        ("AIC_CACHE_HMAC_KEY", "another-key"),
    ];
    let remote = check(&wrong_key);
    assert_eq!(remote["hits"], 0, "{remote:#}");
    assert!(remote["rejected"].as_u64().unwrap() > 0, "{remote:#}");
    assert_eq!(check(&signed)["rejected"], 0);

    // One byte changed in every entry: none verifies.
    for file in stored(&store_dir(&store)) {
        let path = store_dir(&store).join(file);
        let mut bytes = fs_err::read(&path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x20;
        fs_err::write(&path, bytes).unwrap();
    }
    let remote = check(&signed);
    assert_eq!(remote["hits"], 0, "{remote:#}");
    assert!(remote["rejected"].as_u64().unwrap() > 0, "{remote:#}");

    // Without a key, an entry moved under another key's name is refused.
    let unsigned = directory();
    let plain = [("AIC_CACHE_REMOTE_URL", unsigned.url.as_str())];
    let push = run_with(
        &["precompute", "--root", root, "--push"],
        private_tempdir().path(),
        &plain,
    );
    assert_eq!(push.code, 0, "{}", push.stderr);
    let files = stored(&store_dir(&unsigned));
    let first = fs_err::read(store_dir(&unsigned).join(&files[0])).unwrap();
    for file in &files[1..] {
        fs_err::write(store_dir(&unsigned).join(file), &first).unwrap();
    }
    let remote = check(&plain);
    assert!(remote["rejected"].as_u64().unwrap() > 0, "{remote:#}");

    // Without a key, one flipped bit in each entry's value: its checksum
    // fails, so none is used, each is counted, and that is said once.
    let flipped = directory();
    let plain = [("AIC_CACHE_REMOTE_URL", flipped.url.as_str())];
    let push = run_with(
        &["precompute", "--root", root, "--push"],
        private_tempdir().path(),
        &plain,
    );
    assert_eq!(push.code, 0, "{}", push.stderr);
    for file in stored(&store_dir(&flipped)) {
        let path = store_dir(&flipped).join(file);
        let mut bytes = fs_err::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x01;
        fs_err::write(&path, bytes).unwrap();
    }
    let home = private_tempdir();
    let run = run_with(
        &["inspect", INTENT, "--root", root, "--json"],
        home.path(),
        &plain,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let remote = run.json()["cache"]["remote"].clone();
    assert_eq!(remote["hits"], 0, "{remote:#}");
    assert!(remote["rejected"].as_u64().unwrap() > 0, "{remote:#}");
    assert_eq!(
        run.stderr.matches("failed its checksum").count(),
        1,
        "{}",
        run.stderr
    );
    let compiled = run_with(&["compile", INTENT, "--root", root], home.path(), &plain);
    assert_eq!(compiled.stdout, local_only.stdout);
}

/// A TCP server that accepts connections and never answers.
fn silent_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    port
}

#[test]
fn a_store_that_never_answers_costs_one_timeout_then_the_breaker_opens() {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let root = repo.path().to_str().unwrap();
    let timeout_ms = 2000;
    let settings = config(&serde_json::json!({ "timeoutMs": timeout_ms }));
    let config_file = settings.path().join("aic.config.json");
    let local_home = private_tempdir();
    let args = with_config(&["compile", INTENT, "--root", root], &config_file);
    let local = run_with(&args, local_home.path(), &[]);
    assert_eq!(local.code, 0, "{}", local.stderr);
    for url in [
        format!("redis://127.0.0.1:{}/0", silent_server()),
        format!("webdav+http://127.0.0.1:{}/cache", silent_server()),
    ] {
        let started = Instant::now();
        let local_home = private_tempdir();
        let _ = run_with(&args, local_home.path(), &[]);
        let local_time = started.elapsed();
        let started = Instant::now();
        let home = private_tempdir();
        let hanging = run_with(&args, home.path(), &[("AIC_CACHE_REMOTE_URL", &url)]);
        let hanging_time = started.elapsed();
        assert_eq!(hanging.code, 0, "{}", hanging.stderr);
        assert_eq!(hanging.stdout, local.stdout);
        assert_eq!(
            hanging.stderr.matches("is unavailable").count(),
            1,
            "{}",
            hanging.stderr
        );
        assert!(hanging.stderr.contains(&url), "{}", hanging.stderr);
        // One timeout (the scan's batch); the imports and facts phases
        // would add one each without the breaker.
        let limit = local_time + Duration::from_millis(timeout_ms + 1500);
        assert!(
            hanging_time < limit,
            "{url}: {hanging_time:?} against {local_time:?} locally"
        );
        let trace = run_with(
            &with_config(&["inspect", INTENT, "--root", root, "--json"], &config_file),
            private_tempdir().path(),
            &[("AIC_CACHE_REMOTE_URL", &url)],
        );
        assert_eq!(trace.json()["cache"]["remote"]["unavailable"], true);
    }
}

#[test]
fn read_only_never_writes() {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let root = repo.path().to_str().unwrap();
    let store = directory();
    let settings = config(&serde_json::json!({ "readOnly": true }));
    let config_file = settings.path().join("aic.config.json");
    let env = [("AIC_CACHE_REMOTE_URL", store.url.as_str())];
    let home = private_tempdir();
    for args in [
        vec!["compile", INTENT, "--root", root],
        vec!["precompute", "--root", root],
        vec!["cache", "pull", "--root", root],
    ] {
        let run = run_with(&with_config(&args, &config_file), home.path(), &env);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
    for args in [
        vec!["precompute", "--root", root, "--push"],
        vec!["cache", "push", "--root", root],
    ] {
        let run = run_with(&with_config(&args, &config_file), home.path(), &env);
        assert_eq!(run.code, 3, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("is read-only"), "{}", run.stderr);
    }
    let overridden = run_with(
        &["cache", "push", "--root", root],
        home.path(),
        &[
            ("AIC_CACHE_REMOTE_URL", store.url.as_str()),
            ("AIC_CACHE_REMOTE_READ_ONLY", "1"),
        ],
    );
    assert_eq!(overridden.code, 3, "{}", overridden.stderr);
    assert!(stored(&store_dir(&store)).is_empty());
}

#[test]
fn credentials_and_the_hmac_key_never_show() {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let root = repo.path().to_str().unwrap();
    let redis = redis();
    let address = redis.url.trim_start_matches("redis://");
    let url = format!("redis://aic:pw-s3cr3t-value@{address}");
    let env = [
        ("AIC_CACHE_REMOTE_URL", url.as_str()),
        ("AIC_CACHE_HMAC_KEY", "hmac-s3cr3t-value"),
        ("RUST_LOG", "trace"),
    ];
    let home = private_tempdir();
    let mut outputs = Vec::new();
    for args in [
        vec!["compile", INTENT, "--root", root, "-vv"],
        vec!["inspect", INTENT, "--root", root, "--json"],
        vec!["precompute", "--root", root, "--push", "--json"],
        vec!["cache", "stats"],
        vec!["cache", "stats", "--json"],
        vec!["cache", "pull", "--root", root],
    ] {
        let run = run_with(&args, home.path(), &env);
        outputs.push(format!("{args:?}\n{}\n{}", run.stdout, run.stderr));
    }
    let all = outputs.join("\n");
    assert!(!all.contains("s3cr3t"), "{all}");
    assert!(all.contains("redis://****@"), "{all}");
    let stats = run_with(&["cache", "stats", "--json"], home.path(), &env).json();
    assert_eq!(stats["remote"]["store"], format!("redis://****@{address}"));
    // The configuration refuses a URL with credentials, without echoing them.
    let settings = config(&serde_json::json!({ "url": url }));
    let refused = run_with(
        &with_config(
            &["compile", INTENT, "--root", root],
            &settings.path().join("aic.config.json"),
        ),
        home.path(),
        &[],
    );
    assert_eq!(refused.code, 4, "{}", refused.stderr);
    assert!(!refused.stderr.contains("s3cr3t"), "{}", refused.stderr);
}

/// In a git work tree a shard takes a file's blob id from the index when the
/// file is as the index recorded it, and computes it from the bytes when not
/// (changed, untracked, touched): the shards still cover every file once,
/// fill the store as one precompute does, and give each file the shard it
/// gets outside git, where every id is computed.
#[test]
fn shards_in_a_git_work_tree_split_the_files_as_outside_git() {
    let plain = fixture_repo("webapp", WEBAPP_MTIMES);
    let checkout = fixture_repo("webapp", WEBAPP_MTIMES);
    let tree = checkout.path();
    git(tree, &["init", "-q", "-b", "main"], "2024-01-01T00:00:00Z");
    git(tree, &["add", "."], "2024-01-01T00:00:00Z");
    git(
        tree,
        &["commit", "-q", "-m", "first"],
        "2024-01-01T00:00:00Z",
    );
    // A changed tracked file, an untracked one and a touched one, the same
    // in the copy outside git.
    for root in [plain.path(), tree] {
        fs_err::write(root.join("src/extra.ts"), "export const extra = 1;\n").unwrap();
        let readme = fs_err::read_to_string(root.join("README.md")).unwrap();
        fs_err::write(root.join("README.md"), format!("{readme}\nMore.\n")).unwrap();
    }
    let touched = std::fs::File::options()
        .write(true)
        .open(tree.join("package.json"))
        .unwrap();
    touched
        .set_modified(std::time::SystemTime::now() + Duration::from_hours(1))
        .unwrap();
    let shard_files = |root: &Path, store: &Server| -> Vec<u64> {
        ["1/3", "2/3", "3/3"]
            .iter()
            .map(|shard| {
                let run = run_with(
                    &[
                        "precompute",
                        "--root",
                        root.to_str().unwrap(),
                        "--push",
                        "--shard",
                        shard,
                        "--json",
                    ],
                    private_tempdir().path(),
                    &[("AIC_CACHE_REMOTE_URL", store.url.as_str())],
                );
                assert_eq!(run.code, 0, "{}", run.stderr);
                run.json()["files"].as_u64().unwrap()
            })
            .collect()
    };
    let in_git = directory();
    let outside = directory();
    let in_git_counts = shard_files(tree, &in_git);
    let outside_counts = shard_files(plain.path(), &outside);
    assert_eq!(in_git_counts, outside_counts);
    let whole = directory();
    let run = run_with(
        &[
            "precompute",
            "--root",
            tree.to_str().unwrap(),
            "--push",
            "--json",
        ],
        private_tempdir().path(),
        &[("AIC_CACHE_REMOTE_URL", whole.url.as_str())],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        in_git_counts.iter().sum::<u64>(),
        run.json()["files"].as_u64().unwrap()
    );
    // The same rows, but for the history: the whole run pushes its row, the
    // three shards their parts and the parts' count, all keyed by one commit.
    let (sharded, unsharded) = (stored(&store_dir(&in_git)), stored(&store_dir(&whole)));
    let only_sharded: Vec<&PathBuf> = sharded
        .iter()
        .filter(|row| !unsharded.contains(row))
        .collect();
    let only_whole: Vec<&PathBuf> = unsharded
        .iter()
        .filter(|row| !sharded.contains(row))
        .collect();
    assert_eq!(
        (only_sharded.len(), only_whole.len()),
        (4, 1),
        "{only_sharded:?} {only_whole:?}"
    );
    // A key's first 16 bytes (32 hex digits) hash what the row is made from.
    let source = |row: &PathBuf| row.file_name().unwrap().to_str().unwrap()[..32].to_owned();
    assert!(
        only_sharded
            .iter()
            .all(|row| source(row) == source(only_whole[0]))
    );
}

#[test]
fn shards_together_fill_the_store_as_one_precompute_does() {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let root = repo.path().to_str().unwrap();
    let whole = directory();
    let run = run_with(
        &["precompute", "--root", root, "--push"],
        private_tempdir().path(),
        &[("AIC_CACHE_REMOTE_URL", whole.url.as_str())],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let sharded = directory();
    let mut files = 0;
    for shard in ["1/4", "2/4", "3/4", "4/4"] {
        let run = run_with(
            &[
                "precompute",
                "--root",
                root,
                "--push",
                "--shard",
                shard,
                "--json",
            ],
            private_tempdir().path(),
            &[("AIC_CACHE_REMOTE_URL", sharded.url.as_str())],
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        let report = run.json();
        assert_eq!(report["shard"], shard);
        files += report["files"].as_u64().unwrap();
    }
    let everything = stored(&store_dir(&whole));
    assert!(!everything.is_empty());
    assert_eq!(stored(&store_dir(&sharded)), everything);
    let unsharded = run_with(
        &["precompute", "--root", root, "--json"],
        private_tempdir().path(),
        &[],
    );
    assert_eq!(files, unsharded.json()["files"].as_u64().unwrap());
    let summary = run_with(
        &["precompute", "--root", root, "--shard", "2/4"],
        private_tempdir().path(),
        &[],
    );
    assert!(
        summary.stdout.contains("of shard 2/4"),
        "{}",
        summary.stdout
    );
    for bad in ["5/4", "0/4", "1/0", "two"] {
        let run = run_with(
            &["precompute", "--root", root, "--shard", bad],
            private_tempdir().path(),
            &[],
        );
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(
            run.stderr.contains("expected I/N with 1 ≤ I ≤ N"),
            "{}",
            run.stderr
        );
    }
    let run = run_with(
        &["precompute", "--root", root, "--shard", "1/99999999999"],
        private_tempdir().path(),
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("99999999999 is over the most shards, 4294967295"),
        "{}",
        run.stderr
    );
}

/// The payload inside a remote entry (format in `src/cache/remote/entry.rs`).
fn payload(entry: &[u8]) -> Vec<u8> {
    let length = u32::from_le_bytes(entry[38..42].try_into().unwrap()) as usize;
    let envelope = &entry[42..42 + length];
    // Codec byte, xxh3-64 checksum, then the payload or its length and zstd frame.
    match envelope[0] {
        2 => envelope[9..].to_vec(),
        _ => zstd::bulk::decompress(&envelope[13..], 64 << 20).unwrap(),
    }
}

#[test]
fn a_secret_the_guard_redacts_is_in_no_cached_value() {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let root = repo.path().to_str().unwrap();
    let store = directory();
    let run = run_with(
        &["precompute", "--root", root, "--push"],
        private_tempdir().path(),
        &[("AIC_CACHE_REMOTE_URL", store.url.as_str())],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let secret = b"AKIAIOSFODNN7EXAMPLE";
    let source = fs_err::read(repo.path().join("src/user/legacy-user-keys.ts")).unwrap();
    assert!(source.windows(secret.len()).any(|w| w == secret));
    let entries = stored(&store_dir(&store));
    assert!(!entries.is_empty());
    for file in entries {
        let value = payload(&fs_err::read(store_dir(&store).join(&file)).unwrap());
        assert!(
            !value.windows(secret.len()).any(|w| w == secret),
            "{} holds the secret",
            file.display()
        );
    }
}

#[test]
fn a_push_to_a_store_that_is_down_fails_the_job() {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let root = repo.path().to_str().unwrap();
    let home = private_tempdir();
    // Nothing listens on a port just freed.
    let url = format!("redis://127.0.0.1:{}/0", free_port());
    let run = run_with(
        &["precompute", "--push", "--root", root],
        home.path(),
        &[("AIC_CACHE_REMOTE_URL", &url)],
    );
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("the push is incomplete"),
        "{}",
        run.stderr
    );
    // A directory store is written with three slashes: a host is refused.
    let run = run_with(
        &["precompute", "--push", "--root", root],
        home.path(),
        &[("AIC_CACHE_REMOTE_URL", "file://relative/dir")],
    );
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr.contains("file:///ABSOLUTE/DIR"),
        "{}",
        run.stderr
    );
    assert!(!Path::new("/dir/aic").exists());
}

#[test]
fn a_push_from_a_machine_that_computed_nothing_says_so() {
    let repo = fixture_repo("webapp", WEBAPP_MTIMES);
    let root = repo.path().to_str().unwrap();
    let store = directory();
    let home = private_tempdir();
    let run = run_with(
        &["cache", "push", "--root", root],
        home.path(),
        &[("AIC_CACHE_REMOTE_URL", store.url.as_str())],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("in neither this machine's cache nor the store"),
        "{}",
        run.stdout
    );
}
