//! Shared fixtures: running the binary, copying fixture repositories into temp
//! dirs with controlled modification times, and finding dependency sources.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// The result of one run of the binary.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    fn from(output: &Output) -> Self {
        Self {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// The stdout parsed as JSON; panics with the run's output when it is not.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// An `AIC_HOME` shared by the tests that do not set their own, so that no test
/// writes to the user's `~/.aic`, and the tests exercise one database from many
/// processes at once.
fn shared_aic_home() -> &'static Path {
    static HOME: OnceLock<tempfile::TempDir> = OnceLock::new();
    HOME.get_or_init(private_tempdir).path()
}

/// A `HOME` shared by the tests that do not set their own: an empty
/// directory, so that what aic reads from the user's home (the user-level
/// rule and hook files of `aic rules` and `aic status`, git's global config)
/// is the same on every machine.
pub(crate) fn shared_user_home() -> &'static Path {
    static HOME: OnceLock<tempfile::TempDir> = OnceLock::new();
    HOME.get_or_init(private_tempdir).path()
}

/// A temp dir with mode 0700, as aic creates its home: `tempfile` leaves the
/// umask's 0755, which aic tightens with a warning.
pub(crate) fn private_tempdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .expect("chmod temp dir");
    }
    dir
}

/// Runs `aic` with `args` and extra environment variables (`AIC_HOME` and
/// `HOME` default to temp dirs shared by the test binary).
pub(crate) fn aic(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_aic"));
    command
        .args(args)
        .env_remove("RUST_LOG")
        // No daemon unless a test asks for one (tests/daemon.rs).
        .env("AIC_DAEMON", "off")
        .env("AIC_HOME", shared_aic_home())
        .env("HOME", shared_user_home());
    for (key, value) in env {
        command.env(key, value);
    }
    Run::from(&command.output().expect("the aic binary runs"))
}

/// Modification times for the `webapp` fixture (seconds after the base time):
/// the user service is the most recently touched file.
pub(crate) const WEBAPP_MTIMES: &[(&str, u64)] = &[
    ("src/user/service.ts", 500),
    ("src/user/model.ts", 400),
    ("src/auth/jwt.ts", 300),
    ("tests/service.test.ts", 200),
    ("src/user/legacy-user-keys.ts", 100),
];

/// Copies `tests/fixtures/<name>` into a new temp dir and gives every file a
/// fixed modification time, `mtimes` seconds after 2024-01-01 for listed files
/// (path → offset) and offset 0 for the rest, so recency ranks are the same on
/// every machine.
pub(crate) fn fixture_repo(name: &str, mtimes: &[(&str, u64)]) -> tempfile::TempDir {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&source, dir.path());
    let base = SystemTime::UNIX_EPOCH + Duration::from_hours(473_352);
    for file in files_under(dir.path()) {
        let relative = file
            .strip_prefix(dir.path())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let offset = mtimes
            .iter()
            .find(|(p, _)| *p == relative)
            .map_or(0, |(_, s)| *s);
        let handle = std::fs::File::options().write(true).open(&file).unwrap();
        handle
            .set_modified(base + Duration::from_secs(offset))
            .unwrap();
    }
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    for file in files_under(from) {
        let target = to.join(file.strip_prefix(from).unwrap());
        fs_err::create_dir_all(target.parent().unwrap()).unwrap();
        fs_err::copy(&file, &target).unwrap();
    }
}

/// Every regular file under `root`, sorted.
pub(crate) fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs_err::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The unpacked source directory of a dependency of this workspace, found with
/// `cargo metadata` (present on every machine that built the tests).
pub(crate) fn dependency_source(name: &str) -> PathBuf {
    let packages = dependency_packages();
    let package = packages
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not a dependency"));
    package_directory(package)
}

/// The unpacked source directories of every package of this workspace's
/// dependency graph for this platform (the workspace's own crates left out),
/// sorted and without duplicates.
pub(crate) fn dependency_sources() -> Vec<PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut directories: Vec<PathBuf> = dependency_packages()
        .iter()
        .map(package_directory)
        .filter(|directory| !directory.starts_with(workspace))
        .collect();
    directories.sort();
    directories.dedup();
    directories
}

fn package_directory(package: &serde_json::Value) -> PathBuf {
    PathBuf::from(package["manifest_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `cargo metadata`'s packages for this platform.
fn dependency_packages() -> Vec<serde_json::Value> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    // Only this platform's packages: every one of them was unpacked to build the
    // tests, so no download is needed.
    let host = env!("AIC_TEST_HOST");
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--filter-platform",
            host,
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    metadata["packages"].as_array().unwrap().clone()
}

/// The `path` fields of `meta`-less trace JSON's selected files that reached the
/// prompt, best first.
pub(crate) fn prompt_files(trace: &serde_json::Value) -> Vec<String> {
    trace["selectedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["tier"].is_null())
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect()
}

/// The `### <path> [tier]` headings of a prompt, in order.
pub(crate) fn prompt_headings(prompt: &str) -> Vec<String> {
    prompt
        .lines()
        .filter_map(|line| line.strip_prefix("### "))
        .map(|heading| {
            heading
                .rsplit_once(" [")
                .map_or(heading, |(path, _)| path)
                .to_owned()
        })
        .collect()
}

/// A command-line test in its own project and `AIC_HOME` (after ruff's
/// `CliTest`): runs the binary there and renders a run for a snapshot, with
/// the temp paths, times and ids that vary between runs redacted.
pub(crate) struct CliTest {
    repo: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl CliTest {
    /// A test in a copy of `tests/fixtures/<name>` with fixed modification
    /// times (see [`fixture_repo`]).
    pub(crate) fn with_fixture(name: &str, mtimes: &[(&str, u64)]) -> Self {
        Self {
            repo: fixture_repo(name, mtimes),
            home: private_tempdir(),
        }
    }

    /// The project root.
    pub(crate) fn root(&self) -> &Path {
        self.repo.path()
    }

    /// The test's `AIC_HOME`.
    pub(crate) fn home(&self) -> &Path {
        self.home.path()
    }

    /// Runs `aic` with `args`; an argument `[ROOT]` is the project root.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        let root = self.root().to_str().expect("UTF-8 temp path");
        let args: Vec<&str> = args
            .iter()
            .map(|arg| if *arg == "[ROOT]" { root } else { arg })
            .collect();
        let home = self.home.path().to_str().expect("UTF-8 temp path");
        aic(&args, &[("AIC_HOME", home)])
    }

    /// The run as a snapshot: its exit code, stdout and stderr.
    pub(crate) fn render(run: &Run) -> String {
        format!(
            "exit code: {}\n----- stdout -----\n{}\n----- stderr -----\n{}",
            run.code, run.stdout, run.stderr
        )
    }

    /// The filters that make a run's output the same on every machine.
    pub(crate) fn filters(&self) -> Vec<(String, String)> {
        let mut filters = Vec::new();
        for (path, name) in [(self.root(), "[ROOT]"), (self.home.path(), "[AIC_HOME]")] {
            let canonical = fs_err::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            for form in [canonical.as_path(), path] {
                filters.push((regex_escape(&form.display().to_string()), name.to_owned()));
            }
        }
        for (pattern, replacement) in [
            (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "[TIME]"),
            (
                r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                "[ID]",
            ),
            (r#""(durationMs|ms)": [0-9.]+"#, r#""$1": "[TIME]""#),
            (r"\d+(\.\d+)? ms\b", "[TIME] ms"),
        ] {
            filters.push((pattern.to_owned(), replacement.to_owned()));
        }
        filters
    }
}

/// `text` as a regex matching itself.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Asserts an inline snapshot of `$value` with `$test`'s filters.
macro_rules! cli_snapshot {
    ($test:expr, $value:expr, @$snapshot:literal) => {{
        let filters = $test.filters();
        let filters: Vec<(&str, &str)> = filters
            .iter()
            .map(|(pattern, replacement)| (pattern.as_str(), replacement.as_str()))
            .collect();
        insta::with_settings!({filters => filters}, {
            insta::assert_snapshot!($value, @$snapshot);
        });
    }};
}
pub(crate) use cli_snapshot;

/// Runs `git ARGS` in `root` with a fixed identity and `date` as the author
/// and committer date, ignoring the user's git config; panics when it fails.
pub(crate) fn git(root: &Path, args: &[&str], date: &str) {
    let status = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .env("GIT_AUTHOR_NAME", "aic tests")
        .env("GIT_AUTHOR_EMAIL", "tests@example.invalid")
        .env("GIT_COMMITTER_NAME", "aic tests")
        .env("GIT_COMMITTER_EMAIL", "tests@example.invalid")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?} failed");
}
