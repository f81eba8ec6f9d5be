//! `aic install` / `aic uninstall` in a temp HOME, and a settings-driven
//! replay: the hooks the installer wrote are run exactly as Claude Code would
//! run them, with a recorded payload.

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
        .env_remove("CODEX_HOME")
        .env_remove("XDG_CONFIG_HOME")
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

/// Installs `client` over files the user already has, checks a second run
/// writes nothing, then uninstalls and checks every byte came back.
fn round_trip(client: &str, extra: &[&str], user_files: &[(&str, &str)]) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let aic_home = tempfile::tempdir().unwrap();
    for (path, text) in user_files {
        let path = home.path().join(path);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(&path, text).unwrap();
    }
    let root = home.path().join("project");
    fs_err::create_dir_all(&root).unwrap();
    let root_arg = root.to_string_lossy().into_owned();
    let mut args = vec!["install", client];
    if extra.contains(&"--project") {
        args.extend(["--root", root_arg.as_str()]);
    }
    args.extend(extra);
    let (code, out, err) = aic_in(home.path(), aic_home.path(), &args);
    assert_eq!(code, 0, "{client}: {err}");
    let snapshot = |dir: &Path| -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = walk(dir)
            .into_iter()
            .map(|p| {
                (
                    p.strip_prefix(dir).unwrap().to_string_lossy().into_owned(),
                    fs_err::read(&p).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    let installed = snapshot(home.path());
    let (code, again, _) = aic_in(home.path(), aic_home.path(), &args);
    assert_eq!(code, 0);
    assert!(
        !again.contains("updated") && !again.contains("created"),
        "{client} second run: {again}"
    );
    assert_eq!(
        snapshot(home.path()),
        installed,
        "{client}: a second run changed files"
    );
    let kept = tempfile::tempdir().unwrap();
    copy_dir(home.path(), kept.path());
    let mut un = vec!["uninstall", client];
    if extra.contains(&"--project") {
        un.extend(["--project", "--root", root_arg.as_str()]);
    }
    let (code, _, err) = aic_in(home.path(), aic_home.path(), &un);
    assert_eq!(code, 0, "{client} uninstall: {err}");
    for (path, text) in user_files {
        assert_eq!(
            fs_err::read_to_string(home.path().join(path)).unwrap(),
            *text,
            "{client}: {path}"
        );
    }
    let left: Vec<String> = snapshot(home.path()).into_iter().map(|(p, _)| p).collect();
    let expected: Vec<String> = {
        let mut v: Vec<String> = user_files.iter().map(|(p, _)| (*p).to_owned()).collect();
        v.sort();
        v
    };
    assert_eq!(
        left, expected,
        "{client}: files left after uninstall ({out})"
    );
    if user_files.is_empty() {
        // The configuration directories aic created went with its files.
        let dirs: Vec<_> = fs_err::read_dir(home.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        let project_dirs: Vec<_> = fs_err::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(dirs, ["project"], "{client}");
        assert!(project_dirs.is_empty(), "{client}: {project_dirs:?}");
    }
    kept
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in fs_err::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    for file in walk(from) {
        let target = to.join(file.strip_prefix(from).unwrap());
        fs_err::create_dir_all(target.parent().unwrap()).unwrap();
        fs_err::copy(&file, &target).unwrap();
    }
}

#[test]
fn cursor_install_writes_hooks_server_and_rule_and_uninstalls_cleanly() {
    let user_hooks =
        "{\n  \"version\": 1,\n  \"hooks\": {\"stop\": [{\"command\": \"./notify.sh\"}]}\n}\n";
    let kept = round_trip(
        "cursor",
        &["--with-gates"],
        &[(".cursor/hooks.json", user_hooks)],
    );
    let hooks: Value = serde_json::from_str(
        &fs_err::read_to_string(kept.path().join(".cursor/hooks.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(hooks["hooks"]["stop"][0]["command"], "./notify.sh");
    let stop = hooks["hooks"]["stop"][1]["command"].as_str().unwrap();
    assert!(stop.ends_with(" hook cursor stop"), "{stop}");
    for event in [
        "sessionStart",
        "beforeSubmitPrompt",
        "preToolUse",
        "subagentStop",
        "sessionEnd",
        "afterFileEdit",
        "beforeShellExecution",
    ] {
        assert!(hooks["hooks"][event].is_array(), "{event}");
    }
    let mcp: Value = serde_json::from_str(
        &fs_err::read_to_string(kept.path().join(".cursor/mcp.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(mcp["mcpServers"]["aic"]["args"], serde_json::json!(["mcp"]));
    // The project install adds the trigger rule.
    let kept = round_trip("cursor", &["--project"], &[]);
    let rule = fs_err::read_to_string(kept.path().join("project/.cursor/rules/AIC.mdc")).unwrap();
    assert!(
        rule.contains("alwaysApply: true") && rule.contains("aic_compile"),
        "{rule}"
    );
    let hooks: Value = serde_json::from_str(
        &fs_err::read_to_string(kept.path().join("project/.cursor/hooks.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        hooks["hooks"]["beforeSubmitPrompt"][0]["command"],
        "aic hook cursor beforeSubmitPrompt"
    );
}

#[test]
fn codex_install_edits_toml_in_place_and_uninstalls_cleanly() {
    let config = "# my settings\nmodel = \"gpt-5.3-codex\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\" # keep me\n";
    let agents = "# House rules\n\nUse tabs.\n";
    let kept = round_trip(
        "codex",
        &["--with-gates"],
        &[(".codex/config.toml", config), (".codex/AGENTS.md", agents)],
    );
    let toml = fs_err::read_to_string(kept.path().join(".codex/config.toml")).unwrap();
    assert!(toml.starts_with(config), "{toml}");
    assert!(toml.contains("[mcp_servers.aic]"), "{toml}");
    let hooks: Value = serde_json::from_str(
        &fs_err::read_to_string(kept.path().join(".codex/hooks.json")).unwrap(),
    )
    .unwrap();
    let prompt = hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(prompt.ends_with(" hook codex UserPromptSubmit"), "{prompt}");
    assert_eq!(hooks["hooks"]["PreToolUse"][0]["matcher"], "Bash");
    assert!(
        fs_err::read_to_string(kept.path().join(".codex/AGENTS.md"))
            .unwrap()
            .starts_with(agents)
    );
}

#[test]
fn zed_install_keeps_comments_and_uninstalls_cleanly() {
    let settings = "// Zed settings\n//\n// For information on how to configure Zed, see the Zed docs.\n{\n  \"theme\": \"One Dark\", // my theme\n  \"vim_mode\": true,\n}\n";
    let kept = round_trip("zed", &[], &[(".config/zed/settings.json", settings)]);
    let text = fs_err::read_to_string(kept.path().join(".config/zed/settings.json")).unwrap();
    assert!(
        text.contains("// my theme") && text.contains("\"context_servers\""),
        "{text}"
    );
    round_trip("zed", &["--project"], &[]);
    // Gates need hooks, which Zed has not.
    let home = tempfile::tempdir().unwrap();
    let (code, _, err) = aic_in(
        home.path(),
        home.path(),
        &["install", "zed", "--with-gates"],
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("--with-gates"), "{err}");
}

#[test]
fn doctor_reports_what_is_installed_and_what_is_stale() {
    let home = tempfile::tempdir().unwrap();
    let aic_home = tempfile::tempdir().unwrap();
    let (code, _, err) = aic_in(
        home.path(),
        aic_home.path(),
        &["install", "claude", "--with-gates"],
    );
    assert_eq!(code, 0, "{err}");
    let root = home.path().to_string_lossy().into_owned();
    let report = |home: &Path| -> Value {
        let (code, out, err) = aic_in(
            home,
            aic_home.path(),
            &["doctor", "--json", "--root", &root],
        );
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(code, i32::from(value["problems"] != 0), "{err}");
        value
    };
    let value = report(home.path());
    let checks = value["checks"].as_array().unwrap();
    let claude = |what: &str| {
        checks
            .iter()
            .find(|c| c["client"] == "claude" && c["scope"] == "user" && c["what"] == what)
            .unwrap_or_else(|| panic!("no {what} check: {value}"))
            .clone()
    };
    assert_eq!(claude("hooks")["status"], "ok", "{value}");
    assert!(
        claude("hooks")["detail"]
            .as_str()
            .unwrap()
            .contains("with gates")
    );
    assert_eq!(claude("MCP server")["status"], "ok");
    assert_eq!(claude("trigger rule")["status"], "ok");
    assert!(
        value["notSetUp"]
            .as_array()
            .unwrap()
            .contains(&Value::from("cursor"))
    );
    assert_eq!(value["problems"], 0);
    // A handler that names a binary that is gone is a problem.
    let settings = home.path().join(".claude/settings.json");
    let text = fs_err::read_to_string(&settings).unwrap();
    let exe = fs_err::canonicalize(env!("CARGO_BIN_EXE_aic")).unwrap();
    let moved = text.replace(&*exe.to_string_lossy(), "/nowhere/aic");
    if moved != text {
        fs_err::write(&settings, moved).unwrap();
        let value = report(home.path());
        assert_eq!(value["problems"], 1, "{value}");
    }
}

fn plugin_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("integrations/assets/claude-plugin")
}

/// The commands a plugin file runs, with `${CLAUDE_PLUGIN_ROOT}` as written.
fn plugin_commands(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(command) = map.get("command").and_then(Value::as_str) {
                out.push(command.to_owned());
            }
            map.values().for_each(|v| plugin_commands(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| plugin_commands(v, out)),
        _ => {}
    }
}

#[test]
fn the_plugin_stays_inside_its_directory_and_matches_the_installer() {
    let dir = plugin_dir();
    let manifest: Value = serde_json::from_str(
        &fs_err::read_to_string(dir.join(".claude-plugin/plugin.json")).unwrap(),
    )
    .unwrap();
    let name = manifest["name"].as_str().unwrap();
    assert!(
        name.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    );
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    let hooks: Value =
        serde_json::from_str(&fs_err::read_to_string(dir.join("hooks/hooks.json")).unwrap())
            .unwrap();
    let mcp: Value =
        serde_json::from_str(&fs_err::read_to_string(dir.join(".mcp.json")).unwrap()).unwrap();
    let mut commands = Vec::new();
    plugin_commands(&hooks, &mut commands);
    plugin_commands(&mcp, &mut commands);
    assert!(commands.len() >= 7, "{commands:?}");
    for command in &commands {
        let program = shlex_first(command);
        let relative = program
            .strip_prefix("${CLAUDE_PLUGIN_ROOT}/")
            .unwrap_or_else(|| panic!("{command} does not start inside the plugin"));
        assert!(!relative.split('/').any(|part| part == ".."), "{command}");
        let file = dir.join(relative);
        assert!(file.is_file(), "{command}: {} is missing", file.display());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert!(
                fs_err::metadata(&file).unwrap().permissions().mode() & 0o111 != 0,
                "{} is not executable",
                file.display()
            );
        }
    }
    // The same events, matchers and arguments as `aic install claude`.
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("p");
    fs_err::create_dir_all(&project).unwrap();
    let (code, _, err) = aic_in(
        home.path(),
        home.path(),
        &[
            "install",
            "claude",
            "--project",
            "--root",
            &project.to_string_lossy(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let installed: Value = serde_json::from_str(
        &fs_err::read_to_string(project.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    let shape = |value: &Value, from_plugin: bool| -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for (event, groups) in value["hooks"].as_object().unwrap() {
            for group in groups.as_array().unwrap() {
                let matcher = group["matcher"].as_str().unwrap_or("").to_owned();
                for handler in group["hooks"].as_array().unwrap() {
                    let args = if from_plugin {
                        let command = handler["command"].as_str().unwrap();
                        command.split_once(' ').unwrap().1.to_owned()
                    } else {
                        handler["args"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|a| a.as_str().unwrap())
                            .collect::<Vec<_>>()
                            .join(" ")
                    };
                    out.push((event.clone(), matcher.clone(), args));
                }
            }
        }
        out.sort();
        out
    };
    assert_eq!(shape(&hooks, true), shape(&installed, false));
}

fn shlex_first(command: &str) -> String {
    let command = command.trim_start();
    match command.strip_prefix('"') {
        Some(rest) => rest.split('"').next().unwrap().to_owned(),
        None => command.split_whitespace().next().unwrap().to_owned(),
    }
}

#[test]
fn the_plugin_runs_from_a_copy_as_claude_code_runs_it() {
    let repo = fixture_repo("webapp", &[]);
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("cache/aic/0.1.0");
    copy_dir(&plugin_dir(), &copy);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let launcher = copy.join("bin/aic-launch");
        fs_err::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let bin = elsewhere.path().join("bin");
    fs_err::create_dir_all(&bin).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_aic"), bin.join("aic")).unwrap();
    let hooks: Value =
        serde_json::from_str(&fs_err::read_to_string(copy.join("hooks/hooks.json")).unwrap())
            .unwrap();
    let command = hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    let stdin = serde_json::json!({
        "session_id": "s-plugin", "cwd": repo.path(), "hook_event_name": "UserPromptSubmit",
        "prompt": "fix the null check in the user service",
    })
    .to_string();
    let run = |path_var: &str| {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .env("CLAUDE_PLUGIN_ROOT", &copy)
            .env("PATH", path_var)
            .env("AIC_DAEMON", "off")
            .env("AIC_HOME", elsewhere.path().join("aic-home"))
            .env_remove("AIC_BIN")
            .env_remove("CLAUDE_PLUGIN_DATA")
            .current_dir(repo.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Without the binary the wrapper exits before reading stdin.
        let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
        let output = child.wait_with_output().unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let (code, stdout) = run(&format!("{}:/usr/bin:/bin", bin.display()));
    assert_eq!(code, Some(0));
    assert!(stdout.contains("src/user/service.ts"), "{stdout}");
    // Without the binary the hook fails open: exit 0, no output.
    let (code, stdout) = run("/usr/bin:/bin");
    assert_eq!((code, stdout.as_str()), (Some(0), ""));
}

/// A Cursor user install, then a project install in `<home>/p` with
/// `extra` options: the project's directory and the second run's result.
fn cursor_user_then_project(extra: &[&str]) -> (tempfile::TempDir, (i32, String, String)) {
    let home = tempfile::tempdir().unwrap();
    let aic_home = home.path().join(".aic");
    let project = home.path().join("p");
    fs_err::create_dir_all(&project).unwrap();
    let (code, _, err) = aic_in(home.path(), &aic_home, &["install", "cursor"]);
    assert_eq!(code, 0, "{err}");
    let root = project.to_string_lossy().into_owned();
    let mut args = vec!["install", "cursor", "--project", "--root", &root];
    args.extend(extra);
    let run = aic_in(home.path(), &aic_home, &args);
    (home, run)
}

#[test]
fn a_cursor_project_install_beside_a_user_install_writes_only_the_rule() {
    let (home, (code, out, err)) = cursor_user_then_project(&[]);
    let project = home.path().join("p");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("skipped"), "{out}");
    assert!(!project.join(".cursor/hooks.json").exists());
    assert!(project.join(".cursor/rules/AIC.mdc").exists());
    // The user's MCP entry serves the project too: no second `aic` server.
    assert!(!project.join(".cursor/mcp.json").exists());
}

#[test]
fn rules_come_back_byte_for_byte_and_backups_are_private() {
    let home = tempfile::tempdir().unwrap();
    let aic_home = tempfile::tempdir().unwrap();
    let project = home.path().join("p");
    fs_err::create_dir_all(&project).unwrap();
    let original = "# Team rules\n\nUse tabs.\n\n\n";
    fs_err::write(project.join("CLAUDE.md"), original).unwrap();
    let root = project.to_string_lossy().into_owned();
    let (code, _, err) = aic_in(
        home.path(),
        aic_home.path(),
        &["install", "claude", "--project", "--root", &root],
    );
    assert_eq!(code, 0, "{err}");
    let section = fs_err::read_to_string(project.join("CLAUDE.md")).unwrap();
    assert!(
        section.contains("`aic uninstall claude --project` removes it"),
        "{section}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let backups = aic_home.path().join("install-backups");
        assert_eq!(
            fs_err::metadata(&backups).unwrap().permissions().mode() & 0o777,
            0o700
        );
        for entry in fs_err::read_dir(&backups).unwrap() {
            let mode = entry.unwrap().metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }
    let (code, _, err) = aic_in(
        home.path(),
        aic_home.path(),
        &["uninstall", "claude", "--project", "--root", &root],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        fs_err::read_to_string(project.join("CLAUDE.md")).unwrap(),
        original
    );
}

#[test]
fn a_project_install_refuses_the_home_directory_and_root_without_project() {
    let home = tempfile::tempdir().unwrap();
    let home_arg = home.path().to_string_lossy().into_owned();
    let (code, _, err) = aic_in(
        home.path(),
        home.path(),
        &["install", "claude", "--project", "--root", &home_arg],
    );
    assert_eq!(code, 3, "{err}");
    assert!(!home.path().join(".mcp.json").exists());
    let (code, _, err) = aic_in(
        home.path(),
        home.path(),
        &["install", "claude", "--root", &home_arg],
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("--project"), "{err}");
}

#[test]
fn a_cursor_project_install_with_other_options_than_the_user_install_is_refused() {
    let (home, (code, _, err)) = cursor_user_then_project(&["--with-gates"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("other options"), "{err}");
    assert!(!home.path().join("p/.cursor").exists());
}

#[test]
fn doctor_sees_the_codex_agents_section() {
    let home = tempfile::tempdir().unwrap();
    let aic_home = tempfile::tempdir().unwrap();
    let (code, _, err) = aic_in(home.path(), aic_home.path(), &["install", "codex"]);
    assert_eq!(code, 0, "{err}");
    let root = home.path().join("elsewhere");
    fs_err::create_dir_all(&root).unwrap();
    let (_, out, err) = aic_in(
        home.path(),
        aic_home.path(),
        &["doctor", "--json", "--root", &root.to_string_lossy()],
    );
    let value: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    let rule = value["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["client"] == "codex" && c["what"] == "trigger rule")
        .cloned()
        .unwrap_or_default();
    assert_eq!(rule["status"], "ok", "{value}");
}

#[test]
fn uninstall_keeps_directories_that_were_there_before_install() {
    for client in ["cursor", "gemini"] {
        let home = tempfile::tempdir().unwrap();
        let aic_home = tempfile::tempdir().unwrap();
        let dir = home.path().join(format!(".{client}"));
        // Made by the user before aic: empty, and it stays.
        fs_err::create_dir_all(&dir).unwrap();
        let (code, _, stderr) = aic_in(home.path(), aic_home.path(), &["install", client]);
        assert_eq!(code, 0, "{client}: {stderr}");
        let (code, _, stderr) = aic_in(home.path(), aic_home.path(), &["uninstall", client]);
        assert_eq!(code, 0, "{client}: {stderr}");
        assert!(
            dir.is_dir(),
            "{client}: uninstall removed the user's {}",
            dir.display()
        );
        // Made by the install: gone again.
        let fresh = tempfile::tempdir().unwrap();
        let (code, _, _) = aic_in(fresh.path(), aic_home.path(), &["install", client]);
        assert_eq!(code, 0);
        let (code, _, _) = aic_in(fresh.path(), aic_home.path(), &["uninstall", client]);
        assert_eq!(code, 0);
        assert!(
            !fresh.path().join(format!(".{client}")).exists(),
            "{client}: the directory the install made is left"
        );
    }
}
