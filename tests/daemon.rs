//! `aic daemon` against the real binary: answers byte-identical to
//! in-process compiles (prompts, JSON, hooks), edits, deletions, new
//! directories and branch switches seen by the next compile, a daemon of
//! another build or one that died never used, the socket's permissions, and
//! the idle exit.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{CliTest, Run, WEBAPP_MTIMES, aic, git};

const DATE: &str = "2024-01-01T00:00:00Z";

/// A daemon in a test's own home, stopped when dropped.
struct Daemon {
    home: PathBuf,
    exe: PathBuf,
}

impl Daemon {
    fn start(home: &Path, exe: &Path, extra: &[&str]) -> Self {
        let mut args = vec!["daemon", "start"];
        args.extend_from_slice(extra);
        let run = run_exe(exe, &args, home, "running", None);
        assert_eq!(run.code, 0, "daemon start failed: {}", run.stderr);
        Self {
            home: home.to_path_buf(),
            exe: exe.to_path_buf(),
        }
    }
}

/// Has the daemon index `root` (the first request about a project is
/// answered in-process while the daemon indexes it) and waits until it holds
/// it.
fn warm(home: &Path, root: &Path) {
    let run = run_exe(
        &exe(),
        &["compile", "warm up", "--root", root.to_str().unwrap()],
        home,
        "running",
        None,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Held, and its warm-up compile finished (so the daemon writes no more
    // rows for it).
    let deadline = Instant::now() + Duration::from_mins(1);
    while {
        let daemon = &status(home)["daemon"];
        daemon["projects"].as_array().is_none_or(Vec::is_empty) || daemon["indexing"] != 0
    } {
        assert!(
            Instant::now() < deadline,
            "the daemon did not index {}",
            root.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The webapp repository with a running daemon that has indexed it.
fn started() -> (CliTest, Daemon) {
    let test = repository();
    let daemon = Daemon::start(test.home(), &exe(), &[]);
    warm(test.home(), test.root());
    (test, daemon)
}

/// `aic inspect INTENT --json` on the test's project with `AIC_DAEMON=mode`.
fn inspect_json(test: &CliTest, intent: &str, mode: &str) -> Value {
    let root = test.root().to_str().unwrap();
    let run = run_exe(
        &exe(),
        &["inspect", intent, "--root", root, "--json"],
        test.home(),
        mode,
        None,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = run_exe(&self.exe, &["daemon", "stop"], &self.home, "running", None);
    }
}

fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_aic"))
}

/// Runs `exe` with `AIC_HOME=home` and `AIC_DAEMON=mode`, optionally with
/// stdin.
fn run_exe(exe: &Path, args: &[&str], home: &Path, mode: &str, stdin: Option<&str>) -> Run {
    let mut command = Command::new(exe);
    command
        .args(args)
        .env_remove("RUST_LOG")
        .env("AIC_HOME", home)
        .env("AIC_DAEMON", mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // A binary a test has just copied can be "busy" for a moment: another
    // test's child, forked while the copy was open for writing, holds that
    // descriptor until it runs its own program. Wait that out.
    let mut tries = 0;
    let mut child = loop {
        match command.spawn() {
            Err(error) if error.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            spawned => break spawned.expect("aic runs"),
        }
    };
    if let Some(stdin) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    let output = child.wait_with_output().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The daemon's status as JSON.
fn status(home: &Path) -> Value {
    status_with(&exe(), home)
}

fn status_with(exe: &Path, home: &Path) -> Value {
    let run = run_exe(exe, &["daemon", "status", "--json"], home, "running", None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

fn requests(home: &Path) -> u64 {
    status(home)["daemon"]["requests"].as_u64().unwrap_or(0)
}

/// `durationMs` differs between identical compiles, and `cacheHit` with
/// the order of compiles sharing one prompt cache.
fn without_durations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line_start = line.trim_start();
        if !line_start.starts_with("\"durationMs\"") && !line_start.starts_with("\"cacheHit\"") {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Asserts the daemon and an in-process compile print the same bytes (and
/// the same exit code), and that the daemon answered.
fn assert_same(test: &CliTest, args: &[&str]) -> String {
    let root = test.root().to_str().unwrap();
    let args: Vec<&str> = args
        .iter()
        .map(|arg| if *arg == "[ROOT]" { root } else { arg })
        .collect();
    let before = requests(test.home());
    let daemon = run_exe(&exe(), &args, test.home(), "running", None);
    assert_eq!(
        requests(test.home()),
        before + 1,
        "the daemon did not answer"
    );
    let local = run_exe(&exe(), &args, test.home(), "off", None);
    assert_eq!(
        daemon.code, local.code,
        "{}\n{}",
        daemon.stderr, local.stderr
    );
    assert_eq!(
        without_durations(&daemon.stdout),
        without_durations(&local.stdout),
        "daemon and in-process answers differ for {args:?}"
    );
    assert_eq!(daemon.stderr, local.stderr);
    daemon.stdout
}

fn repository() -> CliTest {
    let test = CliTest::with_fixture("webapp", WEBAPP_MTIMES);
    let root = test.root();
    git(root, &["init", "-q", "-b", "main"], DATE);
    git(root, &["add", "-A"], DATE);
    git(root, &["commit", "-qm", "base"], DATE);
    test
}

#[test]
fn daemon_answers_are_byte_identical_to_in_process_ones() {
    let (test, _daemon) = started();
    for args in [
        &[
            "compile",
            "fix the null check in the user service",
            "--root",
            "[ROOT]",
        ][..],
        &[
            "compile",
            "fix the null check in the user service",
            "--root",
            "[ROOT]",
        ],
        &[
            "compile",
            "how are tokens signed",
            "--root",
            "[ROOT]",
            "--json",
        ],
        &[
            "compile",
            "refactor prefix helpers",
            "--root",
            "[ROOT]",
            "--format",
            "xml",
            "--budget",
            "2000",
        ],
        &[
            "compile",
            "explain this project",
            "--root",
            "[ROOT]",
            "--format",
            "json",
        ],
        // An error: reported the same way, with the same exit code.
        &["compile", "   ", "--root", "[ROOT]"],
        &["compile", "fix it", "--root", "/nonexistent/aic-test-root"],
    ] {
        assert_same(&test, args);
    }
    let trace = inspect_json(&test, "fix the null check", "running");
    assert_eq!(trace["resident"]["answer"], "reused", "{trace:#}");
    let local = inspect_json(&test, "fix the null check", "off");
    assert!(local.get("resident").is_none());
    assert_eq!(trace["selectedFiles"], local["selectedFiles"]);
    let projects = &status(test.home())["daemon"]["projects"];
    assert_eq!(projects.as_array().unwrap().len(), 1, "{projects}");
    assert!(projects[0]["watchedDirectories"].as_u64().unwrap() >= 5);
}

/// The daemon writes a compile's log entry after its reply has left; the
/// next command still sees it (`aic last` asks the daemon to settle first;
/// the next compile waits for it).
#[test]
fn a_daemon_compile_is_logged_before_the_next_command_reads_the_log() {
    let (test, _daemon) = started();
    let root = test.root().to_str().unwrap();
    for round in 0..5 {
        let intent = format!("fix the null check in the user service, take {round}");
        let run = run_exe(
            &exe(),
            &["compile", &intent, "--root", root],
            test.home(),
            "running",
            None,
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        let last = run_exe(
            &exe(),
            &["last", "--root", root, "--json"],
            test.home(),
            "running",
            None,
        );
        assert_eq!(last.code, 0, "{}", last.stderr);
        assert!(last.stdout.contains(&intent), "{round}: {}", last.stdout);
    }
}

/// `aic cache clear` on a damaged database moves the file aside and stops
/// the daemon, which still had the old file open (it would go on logging
/// to it).
#[test]
fn clearing_a_damaged_database_stops_the_daemon_that_holds_it() {
    let (test, _daemon) = started();
    // The warm-up compile's log entry is written after its reply: `aic last`
    // waits for it, so no write of the daemon's repairs the damage below.
    let root = test.root().to_str().unwrap();
    let last = run_exe(
        &exe(),
        &["last", "--root", root],
        test.home(),
        "running",
        None,
    );
    assert_eq!(last.code, 0, "{}", last.stderr);
    let database = test.home().join("aic.redb");
    let mut bytes = fs_err::read(&database).unwrap();
    bytes[..64].fill(0);
    fs_err::write(&database, bytes).unwrap();
    let run = run_exe(&exe(), &["cache", "clear"], test.home(), "running", None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("moved it aside"), "{}", run.stdout);
    assert!(
        run.stdout.contains("stopped the running aic daemon"),
        "{}",
        run.stdout
    );
    let status = run_exe(&exe(), &["daemon", "status"], test.home(), "running", None);
    assert!(
        status.stdout.contains("No aic daemon runs"),
        "{}",
        status.stdout
    );
}

#[test]
fn edits_deletions_new_directories_and_ignore_rules_are_seen_at_once() {
    let (test, _daemon) = started();
    let root = test.root().to_path_buf();
    let intent = [
        "compile",
        "where is the session token refreshed",
        "--root",
        "[ROOT]",
        "--json",
    ];
    assert_same(&test, &intent);
    // An edit within the same second as the previous compile.
    let service = root.join("src/user/service.ts");
    let mut source = fs_err::read_to_string(&service).unwrap();
    source.push_str("\nexport function refreshSessionToken(token: string) { return token; }\n");
    fs_err::write(&service, &source).unwrap();
    let out = assert_same(&test, &intent);
    assert!(
        out.contains("refreshSessionToken"),
        "the edit is not in the prompt"
    );
    // A new directory with a file.
    fs_err::create_dir_all(root.join("src/session")).unwrap();
    fs_err::write(
        root.join("src/session/refresh.ts"),
        "export function refreshSession(token: string) { return token.trim(); }\n",
    )
    .unwrap();
    let out = assert_same(&test, &intent);
    assert!(
        out.contains("src/session/refresh.ts"),
        "the new file is not in the prompt"
    );
    // A deleted file.
    fs_err::remove_file(root.join("src/session/refresh.ts")).unwrap();
    let out = assert_same(&test, &intent);
    assert!(
        !out.contains("src/session/refresh.ts"),
        "a deleted file is still shown"
    );
    // A new ignore rule.
    fs_err::write(root.join(".gitignore"), "src/user/\n").unwrap();
    let out = assert_same(&test, &intent);
    assert!(
        !out.contains("src/user/service.ts"),
        "an ignored file is still shown"
    );
}

#[test]
fn a_branch_switch_touching_many_files_is_seen() {
    let test = repository();
    let root = test.root().to_path_buf();
    git(&root, &["checkout", "-q", "-b", "generated"], DATE);
    fs_err::create_dir_all(root.join("src/generated")).unwrap();
    for index in 0..1_200 {
        fs_err::write(
            root.join(format!("src/generated/token_{index}.ts")),
            format!("export const TOKEN_{index} = \"t{index}\";\n"),
        )
        .unwrap();
    }
    git(&root, &["add", "-A"], DATE);
    git(&root, &["commit", "-qm", "generated"], DATE);
    let _daemon = Daemon::start(test.home(), &exe(), &[]);
    warm(test.home(), test.root());
    let intent = [
        "compile",
        "which token constants exist",
        "--root",
        "[ROOT]",
        "--json",
    ];
    assert_same(&test, &intent);
    git(&root, &["checkout", "-q", "main"], DATE);
    let out = assert_same(&test, &intent);
    assert!(
        out.contains("\"filesTotal\": 12,"),
        "files of the other branch are counted"
    );
    git(&root, &["checkout", "-q", "generated"], DATE);
    let out = assert_same(&test, &intent);
    assert!(
        out.contains("\"filesTotal\": 1212,"),
        "files of the branch are missing"
    );
}

#[test]
fn hooks_through_the_daemon_print_what_they_print_in_process() {
    let test = repository();
    let payload = fs_err::read_to_string("tests/fixtures/hooks/claude/UserPromptSubmit.json")
        .unwrap()
        .replace("{{ROOT}}", test.root().to_str().unwrap());
    let args = ["hook", "claude", "UserPromptSubmit"];
    // The hook starts the daemon on first use.
    let first = run_exe(&exe(), &args, test.home(), "start", Some(&payload));
    let _daemon = Daemon {
        home: test.home().to_path_buf(),
        exe: exe(),
    };
    assert_eq!(first.code, 0);
    assert_eq!(status(test.home())["running"], true);
    warm(test.home(), test.root());
    let before = requests(test.home());
    let second = run_exe(&exe(), &args, test.home(), "start", Some(&payload));
    assert_eq!(requests(test.home()), before + 1);
    let local = run_exe(&exe(), &args, test.home(), "off", Some(&payload));
    // The first prompt of a session also gets the session's overview.
    assert!(
        first.stdout.contains("## Project structure"),
        "{}",
        first.stdout
    );
    assert!(!local.stdout.is_empty());
    assert_eq!(second.stdout, local.stdout);
}

#[test]
fn a_daemon_of_another_build_is_not_used_and_hooks_replace_it() {
    let test = repository();
    let other = tempfile::tempdir().unwrap();
    let other_exe = other.path().join("aic");
    fs_err::copy(exe(), &other_exe).unwrap();
    let daemon = Daemon::start(test.home(), &other_exe, &[]);
    let old_pid = status_with(&other_exe, test.home())["daemon"]["pid"].clone();
    let args = [
        "compile",
        "fix the null check",
        "--root",
        test.root().to_str().unwrap(),
    ];
    let run = run_exe(&exe(), &args, test.home(), "running", None);
    let local = run_exe(&exe(), &args, test.home(), "off", None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, local.stdout);
    // `status` with this build shows it and says it is another build.
    let status_run = run_exe(&exe(), &["daemon", "status"], test.home(), "running", None);
    assert_eq!(status_run.code, 0);
    assert!(
        status_run.stderr.contains("another aic build"),
        "{}",
        status_run.stderr
    );
    assert!(run.stderr.contains("another build"), "{}", run.stderr);
    drop(daemon);
    // A hook replaces a daemon of another build.
    let _old = Daemon::start(test.home(), &other_exe, &[]);
    let payload = fs_err::read_to_string("tests/fixtures/hooks/claude/UserPromptSubmit.json")
        .unwrap()
        .replace("{{ROOT}}", test.root().to_str().unwrap());
    let hook = run_exe(
        &exe(),
        &["hook", "claude", "UserPromptSubmit"],
        test.home(),
        "start",
        Some(&payload),
    );
    let _new = Daemon {
        home: test.home().to_path_buf(),
        exe: exe(),
    };
    assert!(!hook.stdout.is_empty());
    let now = status(test.home());
    assert_ne!(now["daemon"]["pid"], old_pid);
    let ours = run_exe(&exe(), &["--version"], test.home(), "off", None);
    assert!(ours.code == 0 && now["daemon"]["build"].as_str().is_some());
}

#[test]
fn a_dead_daemon_or_one_that_hangs_up_falls_back_to_in_process() {
    let (test, _daemon) = started();
    let pid = status(test.home())["daemon"]["pid"].as_u64().unwrap();
    let killed = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    std::thread::sleep(Duration::from_millis(100));
    let args = [
        "compile",
        "fix the null check",
        "--root",
        test.root().to_str().unwrap(),
    ];
    let local = run_exe(&exe(), &args, test.home(), "off", None);
    // The socket file is left behind: nobody listens on it.
    let run = run_exe(&exe(), &args, test.home(), "running", None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, local.stdout);
    // A peer that accepts the request and hangs up without an answer.
    let socket = test.home().join("daemon/daemon.sock");
    let _ = fs_err::remove_file(&socket);
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let peer = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        drop(stream);
    });
    let run = run_exe(&exe(), &args, test.home(), "running", None);
    peer.join().unwrap();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, local.stdout);
}

#[test]
fn the_socket_is_private_and_an_idle_daemon_exits() {
    use std::os::unix::fs::PermissionsExt;
    let test = repository();
    let _daemon = Daemon::start(test.home(), &exe(), &["--idle-minutes", "0.03"]);
    let dir = test.home().join("daemon");
    let mode = |path: &Path| fs_err::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("daemon.sock")), 0o600);
    let deadline = Instant::now() + Duration::from_secs(20);
    while status(test.home())["running"] == true {
        assert!(Instant::now() < deadline, "the idle daemon did not exit");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        !dir.join("daemon.sock").exists(),
        "the socket was left behind"
    );
    let again = aic(
        &["daemon", "status"],
        &[("AIC_HOME", test.home().to_str().unwrap())],
    );
    assert!(
        again.stdout.contains("No aic daemon runs"),
        "{}",
        again.stdout
    );
}

#[test]
fn a_project_over_the_watch_cap_is_walked_on_every_compile_with_the_same_answers() {
    let test = repository();
    let status = Command::new(exe())
        .args(["daemon", "start"])
        .env("AIC_HOME", test.home())
        .env("AIC_DAEMON", "running")
        .env("AIC_MAX_WATCHED_DIRECTORIES", "1")
        .status()
        .unwrap();
    assert!(status.success());
    let _daemon = Daemon {
        home: test.home().to_path_buf(),
        exe: exe(),
    };
    warm(test.home(), test.root());
    let intent = [
        "compile",
        "where is the token verified",
        "--root",
        "[ROOT]",
        "--json",
    ];
    assert_same(&test, &intent);
    let trace = inspect_json(&test, "where is the token verified", "running");
    assert_eq!(trace["resident"]["answer"], "walked", "{trace:#}");
    assert!(
        trace["resident"]["reason"]
            .as_str()
            .unwrap()
            .contains("AIC_MAX_WATCHED_DIRECTORIES"),
        "{trace:#}"
    );
    let projects = &status_with(&exe(), test.home())["daemon"]["projects"];
    assert!(
        projects[0]["unwatched"]
            .as_str()
            .unwrap()
            .contains("more than"),
        "{projects}"
    );
    // Edits are seen: every compile walks.
    fs_err::write(
        test.root().join("src/auth/verify.ts"),
        "export function verifyTokenSignature(token: string) { return token.length > 0; }\n",
    )
    .unwrap();
    let out = assert_same(&test, &intent);
    assert!(out.contains("src/auth/verify.ts"));
}

#[test]
fn a_moved_project_is_answered_at_its_new_path_and_refused_at_the_old_one() {
    let (test, _daemon) = started();
    let old_root = test.root().to_path_buf();
    let intent = |root: &Path| {
        vec![
            "compile".to_owned(),
            "fix the null check".to_owned(),
            "--root".to_owned(),
            root.to_str().unwrap().to_owned(),
        ]
    };
    let args = intent(&old_root);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(run_exe(&exe(), &args, test.home(), "running", None).code, 0);
    let elsewhere = tempfile::tempdir().unwrap();
    let new_root = elsewhere.path().join("moved");
    fs_err::rename(&old_root, &new_root).unwrap();
    let result = std::panic::catch_unwind(|| {
        let args = intent(&new_root);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let daemon = run_exe(&exe(), &args, test.home(), "running", None);
        let local = run_exe(&exe(), &args, test.home(), "off", None);
        assert_eq!(daemon.code, 0, "{}", daemon.stderr);
        assert_eq!(daemon.stdout, local.stdout);
        let args = intent(&old_root);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let daemon = run_exe(&exe(), &args, test.home(), "running", None);
        let local = run_exe(&exe(), &args, test.home(), "off", None);
        assert_ne!(daemon.code, 0);
        assert_eq!((daemon.code, &daemon.stderr), (local.code, &local.stderr));
    });
    // The temp dir's owner removes the original path.
    fs_err::rename(&new_root, &old_root).unwrap();
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn commits_resets_and_exclude_rules_are_seen() {
    let (test, _daemon) = started();
    let root = test.root().to_path_buf();
    let intent = [
        "compile",
        "where is the user model defined",
        "--root",
        "[ROOT]",
        "--json",
    ];
    assert_same(&test, &intent);
    // A commit of a changed file, then `git reset --soft` undoing it: only
    // refs and the reflog change, and recency with them.
    let model = root.join("src/user/model.ts");
    let mut source = fs_err::read_to_string(&model).unwrap();
    source.push_str("\nexport const GUEST: UserId = \"guest\";\n");
    fs_err::write(&model, &source).unwrap();
    git(&root, &["commit", "-qam", "guest"], "2024-06-01T00:00:00Z");
    assert_same(&test, &intent);
    git(&root, &["reset", "-q", "--soft", "HEAD~1"], DATE);
    let trace = inspect_json(&test, "where is the user model", "running");
    assert_eq!(
        trace["resident"]["gitReread"], true,
        "{:#}",
        trace["resident"]
    );
    assert_same(&test, &intent);
    // A rule in `.git/info/exclude`.
    fs_err::write(root.join(".git/info/exclude"), "src/user/\n").unwrap();
    let out = assert_same(&test, &intent);
    assert!(
        !out.contains("src/user/model.ts"),
        "an excluded file is still shown"
    );
}

/// The first request about a project is handed back while the daemon
/// indexes it, and the daemon's own indexing compile is in no counter: the
/// requests answered and the project's compiles agree from the start.
#[test]
fn the_counters_agree_from_the_first_request_on() {
    let (test, _daemon) = started();
    let daemon = &status(test.home())["daemon"];
    assert_eq!(daemon["requests"], 0, "{daemon}");
    assert_eq!(daemon["handedBack"], 1, "{daemon}");
    assert_eq!(daemon["projects"][0]["queries"], 0, "{daemon}");
    let root = test.root().to_str().unwrap();
    let run = run_exe(
        &exe(),
        &["compile", "fix the null check", "--root", root],
        test.home(),
        "running",
        None,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let daemon = &status(test.home())["daemon"];
    assert_eq!(daemon["requests"], 1, "{daemon}");
    assert_eq!(daemon["handedBack"], 1, "{daemon}");
    assert_eq!(daemon["projects"][0]["queries"], 1, "{daemon}");
    let shown = run_exe(&exe(), &["daemon", "status"], test.home(), "running", None).stdout;
    assert!(
        shown.contains("Answered 1 request (compiles and hook events), p50"),
        "{shown}"
    );
    assert!(shown.contains("handed 1 request back"), "{shown}");
    assert!(shown.contains("compiles"), "{shown}");
}

/// `aic precompute` saves the project's snapshot; a daemon started after it
/// seeds its first walk from the file and answers as in-process.
#[test]
fn a_new_daemon_starts_from_the_snapshot_precompute_saved() {
    let test = repository();
    let root = test.root().to_str().unwrap();
    let run = run_exe(
        &exe(),
        &["precompute", "--root", root],
        test.home(),
        "off",
        None,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let saved: Vec<_> = fs_err::read_dir(test.home().join("snapshots"))
        .unwrap()
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let daemon = Daemon::start(test.home(), &exe(), &[]);
    warm(test.home(), test.root());
    // Every file of the fixture (their mtimes are years old) came from it.
    let project = &status(test.home())["daemon"]["projects"][0];
    assert_eq!(project["seededFiles"], project["files"], "{project}");
    assert!(project["files"].as_u64().unwrap() > 10, "{project}");
    assert!(project.get("snapshotRefused").is_none(), "{project}");
    let expected = assert_same(
        &test,
        &[
            "compile",
            "fix the null check in the user service",
            "--root",
            "[ROOT]",
        ],
    );
    drop(daemon);
    // A damaged snapshot is refused whole, said in the status and the log,
    // and changes no answer.
    let snap = saved[0].as_ref().unwrap().path();
    let mut bytes = fs_err::read(&snap).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    fs_err::write(&snap, &bytes).unwrap();
    let _daemon = Daemon::start(test.home(), &exe(), &[]);
    warm(test.home(), test.root());
    let project = &status(test.home())["daemon"]["projects"][0];
    assert_eq!(project["seededFiles"], 0, "{project}");
    let refused = project["snapshotRefused"].as_str().unwrap_or_default();
    assert!(refused.contains("damaged"), "{project}");
    let log = fs_err::read_to_string(test.home().join("daemon").join("daemon.log")).unwrap();
    assert!(log.contains("was not used"), "{log}");
    let again = assert_same(
        &test,
        &[
            "compile",
            "fix the null check in the user service",
            "--root",
            "[ROOT]",
        ],
    );
    assert_eq!(again, expected);
}
