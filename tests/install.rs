//! `aic install` / `aic uninstall` in a temp HOME (integrations brief §5 B),
//! and the settings-driven replay of §5 D: the hooks the installer wrote are
//! run exactly as Claude Code would run them, with a recorded payload.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::fixture_repo;

fn aic_in(home: &Path, aic_home: &Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_aic"))
        .args(args)
        .env("HOME", home)
        .env("AIC_HOME", aic_home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

const USER_SETTINGS: &str = "{\n  \"model\": \"opus\",\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}]}\n}\n";

#[test]
fn install_is_idempotent_keeps_user_entries_and_uninstall_restores_bytes() {
    let home = tempfile::tempdir().unwrap();
    let aic_home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    fs_err::create_dir_all(settings.parent().unwrap()).unwrap();
    fs_err::write(&settings, USER_SETTINGS).unwrap();

    let (code, out, err) = aic_in(home.path(), aic_home.path(), &["install", "claude"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("updated") && out.contains("created"), "{out}");
    let installed: Value =
        serde_json::from_str(&fs_err::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(installed["model"], "opus");
    assert_eq!(
        installed["hooks"]["Stop"][0]["hooks"][0]["command"],
        "notify-send done"
    );
    for event in [
        "UserPromptSubmit",
        "SessionStart",
        "SubagentStart",
        "SubagentStop",
        "SessionEnd",
    ] {
        assert_eq!(installed["hooks"][event][0]["hooks"][0]["args"][2], event);
    }
    let mcp: Value =
        serde_json::from_str(&fs_err::read_to_string(home.path().join(".claude.json")).unwrap())
            .unwrap();
    assert_eq!(mcp["mcpServers"]["aic"]["args"][0], "mcp");
    let claude_md = fs_err::read_to_string(home.path().join(".claude/CLAUDE.md")).unwrap();
    assert!(claude_md.contains("aic_compile"));

    // A second run writes nothing.
    let before: Vec<_> = [&settings, &home.path().join(".claude.json")]
        .iter()
        .map(|p| fs_err::metadata(p).unwrap().modified().unwrap())
        .collect();
    let (code, out, _) = aic_in(home.path(), aic_home.path(), &["install", "claude"]);
    assert_eq!(code, 0);
    assert_eq!(out.matches("unchanged").count(), 3, "{out}");
    let after: Vec<_> = [&settings, &home.path().join(".claude.json")]
        .iter()
        .map(|p| fs_err::metadata(p).unwrap().modified().unwrap())
        .collect();
    assert_eq!(before, after);

    // Uninstall gives back the user's bytes and removes what aic created.
    let (code, _, err) = aic_in(home.path(), aic_home.path(), &["uninstall", "claude"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(fs_err::read_to_string(&settings).unwrap(), USER_SETTINGS);
    assert!(!home.path().join(".claude.json").exists());
    assert!(!home.path().join(".claude/CLAUDE.md").exists());
}

#[test]
fn a_malformed_file_stops_the_install_before_any_write() {
    let home = tempfile::tempdir().unwrap();
    let aic_home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    fs_err::create_dir_all(settings.parent().unwrap()).unwrap();
    fs_err::write(&settings, USER_SETTINGS).unwrap();
    fs_err::write(home.path().join(".claude.json"), "{\"mcpServers\": ").unwrap();
    let (code, _, err) = aic_in(home.path(), aic_home.path(), &["install", "claude"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains(".claude.json") && err.contains("not valid JSON"),
        "{err}"
    );
    assert_eq!(fs_err::read_to_string(&settings).unwrap(), USER_SETTINGS);
    assert_eq!(
        fs_err::read_to_string(home.path().join(".claude.json")).unwrap(),
        "{\"mcpServers\": "
    );
    assert!(!home.path().join(".claude/CLAUDE.md").exists());
}

#[test]
fn the_installed_hooks_inject_context_when_run_as_claude_code_runs_them() {
    let home = tempfile::tempdir().unwrap();
    let aic_home = tempfile::tempdir().unwrap();
    let repo = fixture_repo("webapp", &[]);
    let (code, _, err) = aic_in(home.path(), aic_home.path(), &["install", "claude"]);
    assert_eq!(code, 0, "{err}");
    let settings: Value = serde_json::from_str(
        &fs_err::read_to_string(home.path().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    let handler = &settings["hooks"]["UserPromptSubmit"][0]["hooks"][0];
    let command = handler["command"].as_str().unwrap();
    let args: Vec<&str> = handler["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let payload = serde_json::json!({
        "session_id": "replay-1",
        "transcript_path": "/tmp/replay-1.jsonl",
        "cwd": repo.path(),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "fix the null check in the user service",
    })
    .to_string();
    let mut child = Command::new(command)
        .args(&args)
        .env("HOME", home.path())
        .env("AIC_HOME", aic_home.path())
        .env("CLAUDE_PROJECT_DIR", repo.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    // Claude Code's rules: exit 0, stdout not starting with `{` is plain
    // context, at most 10,000 characters.
    assert_eq!(output.status.code(), Some(0));
    assert!(!stdout.starts_with('{'));
    assert!(stdout.chars().count() <= 10_000);
    assert!(stdout.contains("src/user/service.ts"), "{stdout}");
}
