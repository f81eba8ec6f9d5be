//! `aic hook claude <Event>` against the real binary, recorded payloads
//! (`tests/fixtures/hooks/claude/`, `{{ROOT}}` replaced by a copy of the
//! `webapp` fixture) and the assertions of the integrations brief §5 A: exit
//! code always 0; UserPromptSubmit prints plain text; SessionStart and
//! SubagentStart print nested `hookSpecificOutput` JSON; at most 10,000
//! characters injected; SessionEnd and PreCompact print nothing; broken input
//! prints nothing; the dual path for Claude Code bug #10373.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::fixture_repo;

/// The first line of every injected block.
const HEADER: &str = "Repository files aic selected for this request";

struct HookRun {
    code: Option<i32>,
    stdout: String,
}

fn hook(event: &str, stdin: &str, home: &Path, cwd: &Path) -> HookRun {
    let mut child = Command::new(env!("CARGO_BIN_EXE_aic"))
        .args(["hook", "claude", event])
        .env("AIC_HOME", home)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("RUST_LOG")
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("aic hook runs");
    // A hook may exit before reading all of a broken stdin.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let output = child.wait_with_output().unwrap();
    HookRun {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
    }
}

fn payload(name: &str, root: &Path) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks/claude")
        .join(format!("{name}.json"));
    fs_err::read_to_string(path)
        .unwrap()
        .replace("{{ROOT}}", &root.to_string_lossy())
}

fn nested_context(stdout: &str, event: &str) -> String {
    let value: Value = serde_json::from_str(stdout)
        .unwrap_or_else(|e| panic!("{event} stdout is not JSON ({e}): {stdout}"));
    assert!(
        value.get("additionalContext").is_none(),
        "flat additionalContext"
    );
    assert_eq!(value["hookSpecificOutput"]["hookEventName"], event);
    value["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn user_prompt_submit_injects_plain_text_within_the_cap() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    for name in ["UserPromptSubmit", "UserPromptSubmit.ide"] {
        let run = hook(
            "UserPromptSubmit",
            &payload(name, repo.path()),
            home.path(),
            repo.path(),
        );
        assert_eq!(run.code, Some(0));
        assert!(
            !run.stdout.starts_with('{'),
            "{name}: JSON on UserPromptSubmit"
        );
        assert!(
            run.stdout.chars().count() <= 10_000,
            "{name}: {} characters",
            run.stdout.chars().count()
        );
        assert!(
            run.stdout.contains("src/user/service.ts"),
            "{name}: {}",
            run.stdout
        );
        assert!(
            !run.stdout.contains("<ide_selection>"),
            "{name}: IDE markup kept"
        );
        // No SessionStart ran: the first prompt of each session also carries
        // the session context (dual path).
        assert_eq!(run.stdout.matches(HEADER).count(), 2, "{name}");
        assert!(!run.stdout.contains("## Task") && !run.stdout.contains("## Constraints"));
    }
}

#[test]
fn session_start_marks_the_session_so_prompts_skip_the_session_block() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let start = hook(
        "SessionStart",
        &payload("SessionStart.startup", repo.path()),
        home.path(),
        repo.path(),
    );
    assert_eq!(start.code, Some(0));
    let context = nested_context(&start.stdout, "SessionStart");
    assert!(context.chars().count() <= 10_000);
    assert!(context.starts_with(HEADER), "{context}");
    assert!(context.contains("package.json"), "{context}");
    // The same session's prompt: no second session block.
    let prompt = payload("UserPromptSubmit", repo.path()).replace(
        "9f1c2d3e-0000-4000-8000-000000000001",
        "9f1c2d3e-0000-4000-8000-000000000004",
    );
    let run = hook("UserPromptSubmit", &prompt, home.path(), repo.path());
    assert_eq!(run.stdout.matches(HEADER).count(), 1, "{}", run.stdout);
    // SessionEnd removes the marker: the next prompt of that session gets the
    // block again.
    let end = hook(
        "SessionEnd",
        &payload("SessionEnd", repo.path()),
        home.path(),
        repo.path(),
    );
    assert_eq!((end.code, end.stdout.as_str()), (Some(0), ""));
    let run = hook("UserPromptSubmit", &prompt, home.path(), repo.path());
    assert_eq!(run.stdout.matches(HEADER).count(), 2);
    // Compaction re-injects through SessionStart.
    let compact = hook(
        "SessionStart",
        &payload("SessionStart.compact", repo.path()),
        home.path(),
        repo.path(),
    );
    nested_context(&compact.stdout, "SessionStart");
}

#[test]
fn subagent_start_nests_its_context_and_stop_reparents() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let start = hook(
        "SubagentStart",
        &payload("SubagentStart", repo.path()),
        home.path(),
        repo.path(),
    );
    assert_eq!(start.code, Some(0));
    let context = nested_context(&start.stdout, "SubagentStart");
    assert!(
        context.starts_with(HEADER) && context.contains("### "),
        "{context}"
    );
    assert!(context.chars().count() <= 10_000);
    let stop = hook(
        "SubagentStop",
        &payload("SubagentStop", repo.path()),
        home.path(),
        repo.path(),
    );
    assert_eq!((stop.code, stop.stdout.as_str()), (Some(0), ""));
}

#[test]
fn events_without_context_and_broken_input_print_nothing() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let cases = [
        ("PreCompact", payload("PreCompact", repo.path())),
        ("SessionEnd", payload("SessionEnd", repo.path())),
        (
            "UserPromptSubmit",
            payload("UserPromptSubmit.cursor", repo.path()),
        ),
        (
            "UserPromptSubmit",
            payload("UserPromptSubmit.missing-cwd", repo.path()),
        ),
        ("UserPromptSubmit", String::new()),
        (
            "UserPromptSubmit",
            "{\"session_id\": \"x\", \"prompt\": ".to_owned(),
        ),
        ("UserPromptSubmit", "not json at all".to_owned()),
        ("UserPromptSubmit", "[1, 2, 3]".to_owned()),
        ("NoSuchEvent", payload("UserPromptSubmit", repo.path())),
    ];
    for (event, stdin) in cases {
        let run = hook(event, &stdin, home.path(), repo.path());
        assert_eq!(run.code, Some(0), "{event} {stdin:.60}");
        assert_eq!(run.stdout, "", "{event} {stdin:.60}");
    }
    // Each failure left one line in the hook log.
    let log = fs_err::read_to_string(home.path().join("hook.log")).unwrap();
    assert!(log.contains("stdin is not a JSON object"), "{log}");
    assert!(log.contains("does not exist"), "{log}");
    assert!(log.contains("a Cursor payload"), "{log}");
    // A missing event or an unknown editor is logged, not a usage error.
    for args in [
        vec!["hook", "claude"],
        vec!["hook", "vim", "beforeSubmitPrompt"],
        vec!["hook"],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_aic"))
            .args(&args)
            .env("AIC_HOME", home.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn a_huge_prompt_still_fits_the_cap() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let long = "fix the null check in the user service ".repeat(400);
    let stdin = serde_json::json!({
        "session_id": "s-huge",
        "cwd": repo.path(),
        "hook_event_name": "UserPromptSubmit",
        "prompt": long,
    })
    .to_string();
    let run = hook("UserPromptSubmit", &stdin, home.path(), repo.path());
    assert_eq!(run.code, Some(0));
    assert!(run.stdout.chars().count() <= 10_000);
    assert!(run.stdout.contains("src/user/service.ts"), "{}", run.stdout);
}
