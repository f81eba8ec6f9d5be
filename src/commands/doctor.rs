//! `aic doctor [--root DIR] [--json]`: the startup self-check, per editor: is
//! the MCP server registered, are the hooks installed and current, is the
//! trigger rule there, and can the `aic` they name be found. Reads only; never
//! writes.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use aic_integrations::install::{
    HookOptions, RuleState, codex_has_server, cursor_rule_state, expected_handlers, found_argvs,
    zed_has_server,
};
use anyhow::Context;
use clap::ValueEnum;
use serde::Serialize;
use serde_json::Value;

use super::install::{Kind, Target, path_lookup, targets};
use crate::args::{DoctorArgs, InstallClient};
use crate::printer::print_stdout;

/// One checked file.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Check {
    /// `claude`, `cursor`, …
    client: String,
    /// `user` or `project`.
    scope: &'static str,
    /// What the file holds for aic (`hooks`, `MCP server`, `trigger rule`).
    what: &'static str,
    /// The file.
    path: PathBuf,
    /// `ok`, `absent` or `problem`.
    status: &'static str,
    /// What was found, or what is wrong and the fix.
    detail: String,
}

/// The report.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    /// `aic` as PATH finds it, when it does.
    aic_on_path: Option<PathBuf>,
    /// Whether that is this binary.
    on_path_is_this_binary: bool,
    /// This binary's version.
    version: &'static str,
    /// Every file checked for a client that is set up.
    checks: Vec<Check>,
    /// Clients with nothing of aic's in any of their files.
    not_set_up: Vec<String>,
    /// How many checks found a problem.
    problems: usize,
}

/// Runs `aic doctor`; returns how many problems it found (the exit code is
/// 1 when there are any).
pub fn run(args: &DoctorArgs) -> anyhow::Result<usize> {
    let exe = std::env::current_exe()
        .and_then(fs_err::canonicalize)
        .context("Cannot find the path of this aic binary")?;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .context("HOME is not set")?;
    let root = crate::root::given_or_discovered(args.root.as_deref());
    let project = fs_err::canonicalize(&root).unwrap_or(root);
    let on_path = path_lookup("aic");
    let mut checks = Vec::new();
    let mut not_set_up = Vec::new();
    for client in InstallClient::value_variants() {
        let name = client
            .to_possible_value()
            .map(|v| v.get_name().to_owned())
            .unwrap_or_default();
        let mut found = Vec::new();
        for (scope, project_scope) in [("user", false), ("project", true)] {
            let Ok(targets) = targets(*client, project_scope, &project, &home) else {
                continue;
            };
            let fix =
                reinstall_command(&name, project_scope.then_some(project.as_path()), &targets);
            for target in targets {
                // Run from the home directory, a project file can be the
                // user file itself: check it once.
                if found.iter().any(|c: &Check| c.path == target.path) {
                    continue;
                }
                found.push(check(&name, scope, &target, &fix));
            }
        }
        if found.iter().all(|c| c.status == "absent") {
            not_set_up.push(name);
        } else {
            checks.extend(
                found
                    .into_iter()
                    .filter(|c| c.status != "absent" || c.scope == "user"),
            );
        }
    }
    let report = Report {
        on_path_is_this_binary: on_path.as_ref() == Some(&exe),
        aic_on_path: on_path,
        version: env!("CARGO_PKG_VERSION"),
        problems: checks.iter().filter(|c| c.status == "problem").count(),
        checks,
        not_set_up,
    };
    let text = if args.json {
        let mut text = serde_json::to_string_pretty(&report).context("Cannot encode the report")?;
        text.push('\n');
        text
    } else {
        render(&report, &exe)
    };
    print_stdout(&text).context("Failed to write to stdout")?;
    Ok(report.problems)
}

fn render(report: &Report, exe: &Path) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "aic {}", report.version);
    let _ = match (&report.aic_on_path, report.on_path_is_this_binary) {
        (Some(path), true) => writeln!(out, "aic on PATH: {} (this binary)", path.display()),
        (Some(path), false) => writeln!(
            out,
            "aic on PATH: {} (another binary; this one is {})",
            path.display(),
            exe.display()
        ),
        (None, _) => writeln!(
            out,
            "aic on PATH: not found (hooks and servers that name a bare `aic` will not start; this binary is {})",
            exe.display()
        ),
    };
    if !report.checks.is_empty() {
        let mut table = comfy_table::Table::new();
        table.load_style(comfy_table::presets::UTF8_BORDERS_ONLY);
        table.set_header(["client", "scope", "what", "status", "detail"]);
        for check in &report.checks {
            table.add_row([
                check.client.clone(),
                check.scope.to_owned(),
                check.what.to_owned(),
                check.status.to_owned(),
                format!("{} ({})", check.detail, check.path.display()),
            ]);
        }
        let _ = writeln!(out, "\n{table}");
    }
    if !report.not_set_up.is_empty() {
        let _ = writeln!(
            out,
            "\nNot set up: {} (`aic install <client>` registers aic).",
            report.not_set_up.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\n{}",
        match report.problems {
            0 => "No problems found.".to_owned(),
            1 => "1 problem found.".to_owned(),
            n => format!("{n} problems found."),
        }
    );
    out
}

fn check(client: &str, scope: &'static str, target: &Target, fix: &str) -> Check {
    let (status, detail) = status_of(target, fix);
    Check {
        client: client.to_owned(),
        scope,
        what: target.what,
        path: target.path.clone(),
        status,
        detail,
    }
}

fn status_of(target: &Target, fix: &str) -> (&'static str, String) {
    let text = match fs_err::read_to_string(&target.path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return ("absent", "no file".to_owned());
        }
        Err(error) => return ("problem", format!("cannot read: {error}")),
    };
    let version = env!("CARGO_PKG_VERSION");
    let install_again = format!("run `{fix}` again");
    match target.kind {
        Kind::TriggerRule(client) => {
            let begin = if client == "codex" {
                "<!-- aic:codex:begin -->"
            } else {
                "<!-- aic:begin -->"
            };
            if !text.contains(begin) {
                ("absent", "no aic section".to_owned())
            } else if text.contains(&format!("managed by aic {version};")) {
                ("ok", format!("aic section of {version}"))
            } else {
                (
                    "problem",
                    format!("aic section of another version: {install_again}"),
                )
            }
        }
        Kind::CursorRule => match cursor_rule_state(&text, version) {
            RuleState::Current => ("ok", format!("rule of {version}")),
            RuleState::Stale => (
                "problem",
                format!("rule of another version: {install_again}"),
            ),
            RuleState::Foreign => ("problem", "a file aic did not write".to_owned()),
        },
        Kind::CodexConfig => {
            let Ok(table) = text.parse::<toml::Table>() else {
                return ("problem", "not valid TOML".to_owned());
            };
            if !codex_has_server(&text) {
                return ("absent", "no [mcp_servers.aic]".to_owned());
            }
            let command = table
                .get("mcp_servers")
                .and_then(|s| s.get("aic"))
                .and_then(|a| a.get("command"))
                .and_then(toml::Value::as_str)
                .unwrap_or_default();
            command_status("[mcp_servers.aic]", command, &install_again)
        }
        Kind::ZedSettings => {
            let Some(value) = jsonc_parser::cst::CstRootNode::parse(
                &text,
                &jsonc_parser::ParseOptions::default(),
            )
            .ok()
            .and_then(|root| root.to_serde_value()) else {
                return ("problem", "not valid JSON with comments".to_owned());
            };
            if !zed_has_server(&text) {
                return ("absent", "no context_servers.aic".to_owned());
            }
            let command = value["context_servers"]["aic"]["command"]
                .as_str()
                .unwrap_or_default();
            command_status("context_servers.aic", command, &install_again)
        }
        Kind::McpServers(key) => {
            let Ok(value) = serde_json::from_str::<Value>(&text) else {
                return ("problem", "not valid JSON".to_owned());
            };
            match value.get(key).and_then(|servers| servers.get("aic")) {
                None => ("absent", format!("no {key}.aic")),
                Some(entry) => {
                    let command = entry.get("command").and_then(Value::as_str).unwrap_or("");
                    command_status(&format!("{key}.aic"), command, &install_again)
                }
            }
        }
        Kind::GroupedHooks(_) | Kind::CursorHooks => {
            let Ok(value) = serde_json::from_str::<Value>(&text) else {
                return ("problem", "not valid JSON".to_owned());
            };
            let (editor, grouped) = match target.kind {
                Kind::GroupedHooks(editor) => (editor, true),
                _ => ("cursor", false),
            };
            let found = found_argvs(&value, editor, grouped).unwrap_or_default();
            let Some((_, first)) = found.first() else {
                return ("absent", "no aic handlers".to_owned());
            };
            let binary = first[0].clone();
            if !runnable(&binary) {
                let fix = if Path::new(&binary).is_absolute() {
                    install_again.clone()
                } else {
                    format!("put `{binary}` on PATH")
                };
                return (
                    "problem",
                    format!("handlers run `{binary}`, which cannot be found: {fix}"),
                );
            }
            let variants = [(false, false), (true, false), (false, true), (true, true)];
            let current = variants.iter().find(|(gates, compile_gate)| {
                let options = HookOptions {
                    gates: *gates,
                    compile_gate: *compile_gate,
                };
                expected_handlers(editor, &binary, &target.kind.hook_specs(options)) == found
            });
            match current {
                Some((gates, compile_gate)) => {
                    let mut extras = Vec::new();
                    if *gates {
                        extras.push("gates");
                    }
                    if *compile_gate {
                        extras.push("compile gate");
                    }
                    let extras = if extras.is_empty() {
                        String::new()
                    } else {
                        format!(", with {}", extras.join(" and "))
                    };
                    ("ok", format!("{} handlers{extras}", found.len()))
                }
                None => (
                    "problem",
                    format!(
                        "{} aic handlers, not the set this version installs: {install_again}",
                        found.len()
                    ),
                ),
            }
        }
    }
}

/// The install command that rewrites a client's files in one scope: the
/// client, `--project --root DIR` for project files, and the gate options
/// its hooks file shows (so following the hint keeps them).
fn reinstall_command(client: &str, project: Option<&Path>, targets: &[Target]) -> String {
    let mut command = format!("aic install {client}");
    if let Some(project) = project {
        let root = project.to_string_lossy();
        let root =
            shlex::try_quote(&root).map_or_else(|_| root.to_string(), std::borrow::Cow::into_owned);
        let _ = write!(command, " --project --root {root}");
    }
    let hooks_text = targets
        .iter()
        .filter(|t| matches!(t.kind, Kind::GroupedHooks(_) | Kind::CursorHooks))
        .find_map(|t| fs_err::read_to_string(&t.path).ok());
    if let Some(text) = hooks_text {
        if text.contains("no-verify") || text.contains("beforeShellExecution") {
            command.push_str(" --with-gates");
        }
        if text.contains("compile-gate") {
            command.push_str(" --with-compile-gate");
        }
    }
    command
}

/// The status of an MCP entry's command: `ok` when it can be started, else
/// a problem with its fix.
fn command_status(entry: &str, command: &str, install_again: &str) -> (&'static str, String) {
    if runnable(command) {
        ("ok", format!("{entry} runs `{command}`"))
    } else if Path::new(command).is_absolute() {
        (
            "problem",
            format!("{entry} runs `{command}`, which is gone: {install_again}"),
        )
    } else {
        (
            "problem",
            format!("{entry} runs `{command}`, which PATH does not find: put it on PATH"),
        )
    }
}

/// Whether a command a configuration names can be started: an absolute path
/// to a file, or a name PATH finds.
fn runnable(command: &str) -> bool {
    let path = Path::new(command);
    if path.is_absolute() {
        return path.is_file();
    }
    !command.is_empty() && path_lookup(command).is_some()
}
