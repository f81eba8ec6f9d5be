//! `aic daemon start [--foreground] | stop | status [--json]`.

use std::time::Duration;
use tracing::level_filters::LevelFilter;

use anyhow::Context;
use serde::Serialize;

use crate::args::{DaemonArgs, DaemonCommand, DaemonStartArgs};
use crate::daemon::DaemonPaths;
use crate::daemon::client::{exchange, start_background, wait_gone};
use crate::daemon::protocol::{DaemonStatus, Reply, Request};
use crate::error::UserError;
use crate::home::AicHome;
use crate::printer::print_stdout;

/// Runs `aic daemon`.
///
/// # Errors
///
/// No home directory; a daemon that cannot start, or one of another build
/// for `status`.
pub fn run(args: &DaemonArgs) -> anyhow::Result<()> {
    let home = AicHome::from_env().ok_or_else(|| {
        UserError::new(
            "No aic home directory: neither AIC_HOME nor HOME is set",
            "set AIC_HOME to a directory aic may write to",
        )
    })?;
    let paths = DaemonPaths::new(home.dir());
    match &args.command {
        DaemonCommand::Start(start) => run_start(&paths, *start),
        DaemonCommand::Stop => {
            match exchange(&paths, &Request::Stop, Duration::from_secs(5)) {
                Ok(Reply::Stopping) => {
                    wait_gone(&paths);
                    tracing::warn!(target: crate::logging::NOTE_TARGET, "stopped the aic daemon");
                }
                Ok(_) => anyhow::bail!("the daemon on `{}` did not stop", paths.socket().display()),
                Err(_) => tracing::warn!(target: crate::logging::NOTE_TARGET, "no aic daemon runs"),
            }
            Ok(())
        }
        DaemonCommand::Status { json } => run_status(&paths, *json),
    }
}

fn run_start(paths: &DaemonPaths, args: DaemonStartArgs) -> anyhow::Result<()> {
    let minutes = |value: f64, flag: &str| {
        if value == 0.0 {
            Ok(Duration::MAX)
        } else if value.is_finite() && value > 0.0 {
            Ok(Duration::from_secs_f64(value * 60.0))
        } else {
            Err(UserError::new(
                format!("`{flag} {value}` is not a number of minutes"),
                format!("pass {flag} with a number of minutes, such as 30, or 0 for never"),
            ))
        }
    };
    let idle = minutes(args.idle_minutes, "--idle-minutes")?;
    let project_idle = minutes(args.project_idle_minutes, "--project-idle-minutes")?;
    if let Ok(Reply::Status(status)) = exchange(paths, &Request::Status, Duration::from_secs(2)) {
        if status.build == crate::daemon::build_id() {
            tracing::warn!(
                target: crate::logging::NOTE_TARGET,
                "an aic daemon already runs (pid {}, idle {} min, project idle {} min); `aic daemon stop` first to start one with other settings",
                status.pid,
                status.idle_minutes,
                status.project_idle_minutes
            );
            if !status.same_environment {
                tracing::warn!(target: crate::logging::NOTE_TARGET, "{OTHER_ENVIRONMENT}");
            }
            return Ok(());
        }
        tracing::warn!(
            target: crate::logging::NOTE_TARGET,
            "replacing the running aic daemon of another build ({}, pid {})",
            status.build,
            status.pid
        );
        let _ = exchange(paths, &Request::Stop, Duration::from_secs(5));
        wait_gone(paths);
    }
    if args.foreground {
        #[cfg(unix)]
        return crate::daemon::server::serve(
            paths,
            crate::daemon::server::ServeOptions { idle, project_idle },
        );
        #[cfg(not(unix))]
        anyhow::bail!("aic daemon runs on Unix systems only; commands compile in-process here");
    }
    let mut extra = vec![
        format!("--idle-minutes={}", args.idle_minutes),
        format!("--project-idle-minutes={}", args.project_idle_minutes),
    ];
    // The background daemon logs what `start -v` (or `-vv`) asked for.
    match LevelFilter::current() {
        LevelFilter::TRACE => extra.push("-vvv".to_owned()),
        LevelFilter::DEBUG => extra.push("-vv".to_owned()),
        LevelFilter::INFO => extra.push("-v".to_owned()),
        _ => {}
    }
    let pid = start_background(paths, &extra).context("The daemon did not start")?;
    tracing::warn!(
        target: crate::logging::NOTE_TARGET,
        "started the aic daemon (pid {pid}, socket {}, log {})",
        paths.socket().display(),
        paths.log().display()
    );
    Ok(())
}

/// What `start` and `status` say of a daemon the caller's compiles cannot use.
const OTHER_ENVIRONMENT: &str = "the running daemon was started with another HOME, AIC_HOME or AIC_ALLOWED_ROOTS than this shell's, so compiles from here run in-process; `aic daemon stop` and start it again from here to use it";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusJson<'a> {
    running: bool,
    socket: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    daemon: Option<&'a DaemonStatus>,
}

fn run_status(paths: &DaemonPaths, json: bool) -> anyhow::Result<()> {
    let status = match exchange(paths, &Request::Status, Duration::from_secs(5)) {
        Ok(Reply::Status(status)) => Some(status),
        _ => None,
    };
    if let Some(status) = &status {
        if status.build != crate::daemon::build_id() {
            tracing::warn!(
                target: crate::logging::NOTE_TARGET,
                "the running daemon is another aic build ({}; this is {}), so compiles from here run in-process; `aic daemon start` replaces it",
                status.build,
                crate::daemon::build_id()
            );
        } else if !status.same_environment {
            tracing::warn!(target: crate::logging::NOTE_TARGET, "{OTHER_ENVIRONMENT}");
        }
    }
    let text = if json {
        let mut text = serde_json::to_string_pretty(&StatusJson {
            running: status.is_some(),
            socket: paths.socket().display().to_string(),
            daemon: status.as_ref(),
        })?;
        text.push('\n');
        text
    } else {
        status.as_ref().map_or_else(
            || {
                format!(
                    "No aic daemon runs (socket {}).\n",
                    paths.socket().display()
                )
            },
            render_status,
        )
    };
    print_stdout(&text).context("Failed to write to stdout")
}

/// `1 request`, `2 requests`.
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn render_status(status: &DaemonStatus) -> String {
    use std::fmt::Write;
    let after = |minutes: f64| {
        if minutes == 0.0 {
            "never".to_owned()
        } else {
            format!("after {minutes} min")
        }
    };
    let mut out = format!(
        "aic daemon {}: pid {}, up {} s, {} MiB resident; exits idle {}, drops a project unused {}\n",
        status.build,
        status.pid,
        status.uptime_secs,
        status.rss_bytes >> 20,
        after(status.idle_minutes),
        after(status.project_idle_minutes)
    );
    let _ = write!(
        out,
        "Answered {} (compiles and hook events)",
        count(status.requests, "request")
    );
    if status.requests > 0 {
        let _ = write!(out, ", p50 {} ms, p95 {} ms", status.p50_ms, status.p95_ms);
    }
    if status.handed_back > 0 {
        let _ = write!(
            out,
            "; handed {} back to the client while indexing its project",
            count(status.handed_back, "request")
        );
    }
    out.push_str(".\n");
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::UTF8_BORDERS_ONLY);
    table.set_header([
        "project",
        "files",
        "watched dirs",
        "last event",
        "compiles",
        "idle",
    ]);
    for project in &status.projects {
        let last_event = if project.last_event_ms == 0 {
            "-".to_owned()
        } else {
            crate::clock::iso(project.last_event_ms)
        };
        let watched = project
            .unwatched
            .clone()
            .unwrap_or_else(|| project.watched_directories.to_string());
        table.add_row([
            project.root.display().to_string(),
            project.files.to_string(),
            watched,
            last_event,
            project.queries.to_string(),
            format!("{} s", project.idle_secs),
        ]);
    }
    if status.projects.is_empty() {
        out.push_str("No project is resident.\n");
    } else {
        let _ = writeln!(out, "{table}");
    }
    out
}
