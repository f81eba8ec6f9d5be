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
/// The start of every injected block (request, session or subagent).
const HEADER: &str = "Repository files aic selected for this";

struct HookRun {
    code: Option<i32>,
    stdout: String,
}

fn hook(event: &str, stdin: &str, home: &Path, cwd: &Path) -> HookRun {
    hook_as("claude", event, None, stdin, home, cwd)
}

fn payload(name: &str, root: &Path) -> String {
    fixture("claude", name, root)
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
        vec!["hook", "claude", "UserPromptSubmit", "--future-flag", "-x"],
        vec!["hook", "claude"],
        vec!["hook", "vim", "beforeSubmitPrompt"],
        vec!["hook"],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_aic"))
            .args(&args)
            .env("AIC_DAEMON", "off")
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

/// Runs `aic hook <editor> <event> [check]` in `cwd`.
fn hook_as(
    editor: &str,
    event: &str,
    check: Option<&str>,
    stdin: &str,
    home: &Path,
    cwd: &Path,
) -> HookRun {
    let mut args = vec!["hook", editor, event];
    args.extend(check);
    let mut child = Command::new(env!("CARGO_BIN_EXE_aic"))
        .args(&args)
        .env("AIC_DAEMON", "off")
        .env("AIC_HOME", home)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("CURSOR_PROJECT_DIR")
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
    assert_eq!(output.status.code(), Some(0), "aic {args:?} must exit 0");
    HookRun {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
    }
}

fn fixture(editor: &str, name: &str, root: &Path) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks")
        .join(editor)
        .join(format!("{name}.json"));
    fs_err::read_to_string(path)
        .unwrap()
        .replace("{{ROOT}}", &root.to_string_lossy())
}

/// Runs a Cursor hook on a recorded payload (`tests/fixtures/hooks/cursor/`).
fn cursor(event: &str, name: &str, check: Option<&str>, home: &Path, root: &Path) -> HookRun {
    hook_as(
        "cursor",
        event,
        check,
        &fixture("cursor", name, root),
        home,
        root,
    )
}

fn json_out(run: &HookRun) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", run.stdout))
}

#[test]
fn cursor_events_answer_in_cursors_format() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let root = repo.path();
    let run = |event: &str, name: &str| cursor(event, name, None, home.path(), root);
    // (f) sessionStart: {additional_context, env}.
    let start = json_out(&run("sessionStart", "sessionStart"));
    let context = start["additional_context"].as_str().unwrap();
    assert!(context.starts_with(HEADER), "{context:.200}");
    assert!(context.chars().count() <= 10_000);
    assert_eq!(start["env"]["AIC_CONVERSATION_ID"], "c-cursor-1");
    assert_eq!(
        start["env"]["AIC_PROJECT_ROOT"],
        root.to_string_lossy().as_ref()
    );
    // beforeSubmitPrompt: always {"continue": true}.
    assert_eq!(
        run("beforeSubmitPrompt", "beforeSubmitPrompt").stdout,
        "{\"continue\":true}\n"
    );
    // preToolUse on aic_compile: allowed, with the conversation id added.
    let call = json_out(&run("preToolUse", "preToolUse.aic_compile"));
    assert_eq!(call["permission"], "allow");
    assert_eq!(call["updated_input"]["conversationId"], "c-cursor-1");
    assert_eq!(call["updated_input"]["editorId"], "cursor");
    assert_eq!(
        call["updated_input"]["intent"],
        "fix the null check in the user service"
    );
    // Another tool: no objection, and no `allow` that could skip the
    // user's own approval.
    assert_eq!(run("preToolUse", "preToolUse.read").stdout, "{}\n");
    // sessionEnd prints nothing.
    assert_eq!(run("sessionEnd", "sessionEnd").stdout, "");
    // A Claude Code payload in a Cursor handler, and broken stdin: neutral.
    let claude_payload = payload("UserPromptSubmit", root);
    assert_eq!(
        hook_as(
            "cursor",
            "beforeSubmitPrompt",
            None,
            &claude_payload,
            home.path(),
            root
        )
        .stdout,
        "{\"continue\":true}\n"
    );
    assert_eq!(
        hook_as("cursor", "preToolUse", None, "{not json", home.path(), root).stdout,
        "{}\n"
    );
    assert_eq!(
        hook_as("cursor", "sessionStart", None, "", home.path(), root).stdout,
        "{}\n"
    );
}

#[test]
fn codex_hooks_print_json_context() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let root = repo.path();
    for event in ["UserPromptSubmit", "SessionStart"] {
        let run = hook_as(
            "codex",
            event,
            None,
            &fixture("codex", event, root),
            home.path(),
            root,
        );
        let context = nested_context(&run.stdout, event);
        assert!(context.starts_with(HEADER), "{event}: {context:.200}");
        assert!(context.chars().count() <= 10_000);
    }
    let run = hook_as(
        "codex",
        "UserPromptSubmit",
        None,
        &fixture("codex", "UserPromptSubmit", root),
        home.path(),
        root,
    );
    assert!(nested_context(&run.stdout, "UserPromptSubmit").contains("src/user/service.ts"));
}

#[test]
fn the_no_verify_blocker_refuses_only_hook_bypasses() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let root = repo.path();
    let bash = |command: &str| {
        serde_json::json!({
            "session_id": "s-gate", "cwd": root, "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command},
        })
        .to_string()
    };
    let denied = hook_as(
        "claude",
        "PreToolUse",
        Some("no-verify"),
        &bash("git commit --no-verify -m x"),
        home.path(),
        root,
    );
    let value = json_out(&denied);
    assert_eq!(value["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(value["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        value["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("--no-verify")
    );
    for allowed in ["git commit -m 'no --no-verify'", "cargo test"] {
        let run = hook_as(
            "claude",
            "PreToolUse",
            Some("no-verify"),
            &bash(allowed),
            home.path(),
            root,
        );
        assert_eq!(run.stdout, "", "{allowed}");
    }
    // The default PreToolUse handler (conversation id) ignores Bash.
    assert_eq!(
        hook_as(
            "claude",
            "PreToolUse",
            None,
            &bash("git commit --no-verify"),
            home.path(),
            root
        )
        .stdout,
        ""
    );
    let cursor = json_out(&cursor(
        "beforeShellExecution",
        "beforeShellExecution.no-verify",
        None,
        home.path(),
        root,
    ));
    assert_eq!(cursor["permission"], "deny");
    assert!(
        cursor["agent_message"]
            .as_str()
            .unwrap()
            .contains("--no-verify")
    );
}

#[test]
fn aic_compile_calls_get_the_conversation_id() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let root = repo.path();
    let call = |input: Value| {
        serde_json::json!({
            "session_id": "s-9", "transcript_path": "/t/conv-9.jsonl", "cwd": root,
            "hook_event_name": "PreToolUse", "tool_name": "mcp__aic__aic_compile",
            "tool_input": input,
        })
        .to_string()
    };
    let value = json_out(&hook_as(
        "claude",
        "PreToolUse",
        None,
        &call(serde_json::json!({"intent": "fix"})),
        home.path(),
        root,
    ));
    let output = &value["hookSpecificOutput"];
    assert_eq!(output["permissionDecision"], "allow");
    assert_eq!(
        output["updatedInput"],
        serde_json::json!({"intent": "fix", "conversationId": "conv-9", "editorId": "claude-code"})
    );
    // The model's own id stays, and then there is nothing to say.
    let own = call(serde_json::json!({"intent": "fix", "conversationId": "mine", "editorId": "x"}));
    assert_eq!(
        hook_as("claude", "PreToolUse", None, &own, home.path(), root).stdout,
        ""
    );
}

#[test]
fn the_quality_gate_blocks_a_stop_until_the_check_passes() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let root = repo.path();
    fs_err::write(
        root.join("aic.config.json"),
        r#"{"qualityGate": {"commands": ["! grep -n FIXME"], "timeoutSeconds": 20}}"#,
    )
    .unwrap();
    let service = root.join("src/user/service.ts");
    let original = fs_err::read_to_string(&service).unwrap();
    fs_err::write(&service, format!("{original}\n// FIXME: null check\n")).unwrap();
    let event = |name: &str, extra: Value| {
        let mut value = serde_json::json!({
            "session_id": "s-q", "transcript_path": "/t/conv-q.jsonl", "cwd": root,
            "hook_event_name": name,
        });
        value
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        value.to_string()
    };
    // A stop before any edit: nothing to check.
    let stop = event("Stop", serde_json::json!({"stop_hook_active": false}));
    assert_eq!(
        hook_as("claude", "Stop", None, &stop, home.path(), root).stdout,
        ""
    );
    let edit = event(
        "PostToolUse",
        serde_json::json!({"tool_name": "Edit", "tool_input": {"file_path": service}, "tool_response": {}}),
    );
    assert_eq!(
        hook_as("claude", "PostToolUse", None, &edit, home.path(), root).stdout,
        ""
    );
    let blocked = json_out(&hook_as("claude", "Stop", None, &stop, home.path(), root));
    assert_eq!(blocked["decision"], "block");
    let reason = blocked["reason"].as_str().unwrap();
    assert!(
        reason.contains("! grep -n FIXME") && reason.contains("FIXME: null check"),
        "{reason}"
    );
    assert!(reason.contains("src/user/service.ts"), "{reason}");
    // Cursor's stop gives the same reason as a follow-up message.
    assert_eq!(
        cursor("afterFileEdit", "afterFileEdit", None, home.path(), root).stdout,
        ""
    );
    let followup = json_out(&cursor("stop", "stop", None, home.path(), root));
    assert!(
        followup["followup_message"]
            .as_str()
            .unwrap()
            .contains("FIXME")
    );
    // Fixed: the stop goes through, and the edit list is cleared.
    fs_err::write(&service, &original).unwrap();
    assert_eq!(
        hook_as("claude", "Stop", None, &stop, home.path(), root).stdout,
        ""
    );
    assert_eq!(
        cursor("stop", "stop", None, home.path(), root).stdout,
        "{}\n"
    );
}

#[test]
fn the_compile_gate_waits_for_aic_compile_in_the_turn() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let root = repo.path();
    let gate = |name: &str| cursor("preToolUse", name, Some("compile-gate"), home.path(), root);
    // No turn seen yet: the gate cannot tell, and lets the tool run.
    assert_eq!(json_out(&gate("preToolUse.read")).get("permission"), None);
    cursor(
        "beforeSubmitPrompt",
        "beforeSubmitPrompt",
        None,
        home.path(),
        root,
    );
    let denied = json_out(&gate("preToolUse.read"));
    assert_eq!(denied["permission"], "deny");
    assert!(
        denied["agent_message"]
            .as_str()
            .unwrap()
            .contains("fix the null check in the user service")
    );
    // aic's own tool passes the gate, and marks the turn compiled.
    assert_eq!(
        json_out(&gate("preToolUse.aic_compile")).get("permission"),
        None
    );
    cursor(
        "preToolUse",
        "preToolUse.aic_compile",
        None,
        home.path(),
        root,
    );
    assert_eq!(json_out(&gate("preToolUse.read")).get("permission"), None);
    // A new turn closes the gate again; devMode + skipCompileGate opens it.
    cursor(
        "beforeSubmitPrompt",
        "beforeSubmitPrompt",
        None,
        home.path(),
        root,
    );
    assert_eq!(json_out(&gate("preToolUse.read"))["permission"], "deny");
    fs_err::write(
        root.join("aic.config.json"),
        r#"{"devMode": true, "skipCompileGate": true}"#,
    )
    .unwrap();
    assert_eq!(json_out(&gate("preToolUse.read")).get("permission"), None);
    // Claude Code: the UserPromptSubmit hook's own compile counts.
    let prompt = payload("UserPromptSubmit", root);
    fs_err::remove_file(root.join("aic.config.json")).unwrap();
    hook("UserPromptSubmit", &prompt, home.path(), root);
    let read = serde_json::json!({
        "session_id": "s-1", "cwd": root, "hook_event_name": "PreToolUse",
        "tool_name": "Read", "tool_input": {"file_path": "a"},
    });
    let mut read = read;
    let prompt_value: Value = serde_json::from_str(&prompt).unwrap();
    for key in ["session_id", "transcript_path"] {
        if let Some(v) = prompt_value.get(key) {
            read[key] = v.clone();
        }
    }
    assert_eq!(
        hook_as(
            "claude",
            "PreToolUse",
            Some("compile-gate"),
            &read.to_string(),
            home.path(),
            root
        )
        .stdout,
        ""
    );
}

#[cfg(unix)]
#[test]
fn a_check_past_its_time_is_stopped_with_its_children() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let root = repo.path();
    let marker = format!("{}", std::process::id());
    // A check that outlives its limit, with a child of its own.
    fs_err::write(
        root.join("aic.config.json"),
        format!(
            r#"{{"qualityGate": {{"commands": ["sh -c 'sleep 37.{marker}' ; true"], "timeoutSeconds": 1}}}}"#
        ),
    )
    .unwrap();
    let event = |name: &str, extra: &str| {
        format!(
            r#"{{"session_id":"s-t","transcript_path":"/t/conv-t.jsonl","cwd":{},"hook_event_name":"{name}"{extra}}}"#,
            serde_json::to_string(root).unwrap()
        )
    };
    let service = root.join("src/user/service.ts");
    let edit = event(
        "PostToolUse",
        &format!(
            r#","tool_name":"Write","tool_input":{{"file_path":{}}}"#,
            serde_json::to_string(&service).unwrap()
        ),
    );
    hook_as("claude", "PostToolUse", None, &edit, home.path(), root);
    let blocked = json_out(&hook_as(
        "claude",
        "Stop",
        None,
        &event("Stop", ""),
        home.path(),
        root,
    ));
    assert!(
        blocked["reason"]
            .as_str()
            .unwrap()
            .contains("stopped after 1 s"),
        "{blocked}"
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    // pgrep exits 1 when no process matches.
    let left = Command::new("pgrep")
        .args(["-f", &format!("sleep 37.{marker}")])
        .output()
        .expect("`pgrep` (procps) runs");
    assert_eq!(
        left.status.code(),
        Some(1),
        "the check's process group is still running: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn a_stopped_or_failed_cursor_loop_is_not_sent_back_to_work() {
    let repo = fixture_repo("webapp", &[]);
    let home = tempfile::tempdir().unwrap();
    let root = repo.path();
    fs_err::write(
        root.join("aic.config.json"),
        r#"{"qualityGate": {"commands": ["false"]}}"#,
    )
    .unwrap();
    cursor("afterFileEdit", "afterFileEdit", None, home.path(), root);
    for status in ["aborted", "error"] {
        let stop =
            fixture("cursor", "stop", root).replace("\"completed\"", &format!("\"{status}\""));
        assert_eq!(
            hook_as("cursor", "stop", None, &stop, home.path(), root).stdout,
            "{}\n",
            "{status}"
        );
    }
    let completed = json_out(&cursor("stop", "stop", None, home.path(), root));
    assert!(completed["followup_message"].is_string());
}

#[test]
fn a_prompt_from_a_subdirectory_compiles_the_whole_work_tree() {
    let repo = fixture_repo("webapp", &[]);
    fs_err::create_dir_all(repo.path().join(".git")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let subdirectory = repo.path().join("src/user");
    let run = hook(
        "UserPromptSubmit",
        &payload("UserPromptSubmit", &subdirectory),
        home.path(),
        &subdirectory,
    );
    // Paths are the work tree's, and files outside the subdirectory count.
    assert!(run.stdout.contains("src/user/service.ts"), "{}", run.stdout);
    assert!(!run.stdout.contains("### service.ts"), "{}", run.stdout);
}

#[test]
fn session_start_orients_with_the_readme_manifest_map_and_central_modules() {
    let repo = fixture_repo("webapp", &[]);
    // A second importer makes the user model the module the code builds on.
    fs_err::write(
        repo.path().join("src/user/admin.ts"),
        "import { User } from \"./model\";\n\nexport function isAdmin(user: User): boolean {\n  return user.name === \"admin\";\n}\n",
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = hook(
        "SessionStart",
        &payload("SessionStart.startup", repo.path()),
        home.path(),
        repo.path(),
    );
    let context = nested_context(&run.stdout, "SessionStart");
    assert!(context.contains("## Project structure"), "{context}");
    let headings: Vec<&str> = context
        .lines()
        .filter_map(|line| line.strip_prefix("### "))
        .map(|h| h.rsplit_once(" [").map_or(h, |(path, _)| path))
        .collect();
    assert_eq!(headings[..2], ["README.md", "package.json"], "{headings:?}");
    // Never lock files; the module the others import is there.
    assert!(!headings.contains(&"package-lock.json"), "{headings:?}");
    assert!(headings.contains(&"src/user/model.ts"), "{headings:?}");
}
