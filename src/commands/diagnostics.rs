//! `aic status | last | projects | chat-summary | quality`: what aic did for a
//! project, as a table or `--json` (the payloads the MCP tools return).

use std::path::Path;

use aic_storage::Store;
use anyhow::{Context, anyhow};
use comfy_table::{Table, presets::UTF8_BORDERS_ONLY};
use serde_json::Value;

use crate::args::{DiagnosticsArgs, DiagnosticsCommand};
use crate::commands::with_database;
use crate::error::UserError;
use crate::history::diagnostics;
use crate::host::Host;
use crate::printer::print_stdout;

/// Runs a diagnostics subcommand.
pub fn run(command: DiagnosticsCommand, args: &DiagnosticsArgs, host: &Host) -> anyhow::Result<()> {
    // `aic projects` lists every project: it needs no root.
    let root = match command {
        DiagnosticsCommand::Projects => args.root.clone(),
        _ => crate::root::resolve_root(&args.root)?,
    };
    if matches!(command, DiagnosticsCommand::Quality)
        && let Some(days) = args.days.filter(|days| *days > 365)
    {
        return Err(UserError::new(
            format!("--days {days} is out of range for `aic quality`"),
            "pass --days between 1 and 365",
        )
        .into());
    }
    // A daemon writes a compile's log entry just after its answer: wait
    // for the entries of the answers already sent.
    crate::daemon::client::settle();
    let now = host.now_ms();
    let payload = with_database(host, |store| {
        // What these commands report rests on the whole database: damage in
        // a table they do not read (the per-file cache) is named here too.
        store.verify_pages()?;
        payload(command, args, store, &root, now)
    })?;
    let text = if args.json {
        let mut json = serde_json::to_string_pretty(&payload)?;
        json.push('\n');
        json
    } else {
        render(command, &payload)
    };
    print_stdout(&text).context("Failed to write to stdout")
}

fn payload(
    command: DiagnosticsCommand,
    args: &DiagnosticsArgs,
    store: &Store,
    root: &Path,
    now: u64,
) -> anyhow::Result<Value> {
    let mut value = match command {
        DiagnosticsCommand::Status => {
            let loaded = crate::config::load_config(root, None).ok();
            let budget = loaded.map_or(0, |l| l.config.context_budget.max_tokens.0);
            diagnostics::status(store, root, args.days, budget, now).map_err(|m| anyhow!(m))?
        }
        DiagnosticsCommand::Last => diagnostics::last(store, root).map_err(|m| anyhow!(m))?,
        DiagnosticsCommand::Projects => {
            serde_json::to_value(diagnostics::projects(store).map_err(|m| anyhow!(m))?)?
        }
        DiagnosticsCommand::ChatSummary => {
            diagnostics::chat_summary(store, root, args.conversation.as_deref())
                .map_err(|m| anyhow!(m))?
        }
        DiagnosticsCommand::Quality => {
            diagnostics::quality(store, root, args.days.unwrap_or(7), now)
                .map_err(|m| anyhow!(m))?
        }
    };
    aic_stages::rounded::round_floats(&mut value);
    Ok(value)
}

/// A value as a table cell: strings bare, null as `–`, numbers and the rest as JSON.
fn cell(value: &Value) -> String {
    match value {
        Value::Null => "–".to_owned(),
        Value::String(text) => text.clone(),
        Value::Array(items) if items.is_empty() => "–".to_owned(),
        other => other.to_string(),
    }
}

/// A two-column table of the payload's fields, nested objects flattened to
/// `outer.inner` rows at any depth (so no row holds a JSON blob).
fn key_values(payload: &Value, skip: &[&str]) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_BORDERS_ONLY);
    if let Value::Object(map) = payload {
        for (key, value) in map {
            if !skip.contains(&key.as_str()) {
                add_rows(&mut table, key, value);
            }
        }
    }
    format!("{table}\n")
}

/// Adds `value` under `key`: one row, or one per field of an object.
fn add_rows(table: &mut Table, key: &str, value: &Value) {
    match value {
        Value::Object(inner) if !inner.is_empty() => {
            for (inner_key, inner_value) in inner {
                add_rows(table, &format!("{key}.{inner_key}"), inner_value);
            }
        }
        Value::Array(items)
            if items
                .iter()
                .all(|item| !item.is_object() && !item.is_array()) =>
        {
            let items: Vec<String> = items.iter().map(cell).collect();
            table.add_row(vec![
                key.to_owned(),
                if items.is_empty() {
                    "–".to_owned()
                } else {
                    items.join(", ")
                },
            ]);
        }
        other => {
            table.add_row(vec![key.to_owned(), cell(other)]);
        }
    }
}

fn render(command: DiagnosticsCommand, payload: &Value) -> String {
    match command {
        DiagnosticsCommand::Projects => {
            let mut table = Table::new();
            table.load_style(UTF8_BORDERS_ONLY);
            table.set_header(vec![
                "project",
                "compilations",
                "first seen",
                "last compiled",
                "id",
            ]);
            for project in payload.as_array().into_iter().flatten() {
                table.add_row(vec![
                    cell(&project["projectRoot"]),
                    cell(&project["compilations"]),
                    cell(&project["createdAt"]),
                    cell(&project["lastSeenAt"]),
                    cell(&project["projectId"]),
                ]);
            }
            format!("{table}\n")
        }
        DiagnosticsCommand::Last => {
            let mut out = key_values(payload, &["selection"]);
            if let Some(files) = payload["selection"]["files"].as_array() {
                let mut table = Table::new();
                table.load_style(UTF8_BORDERS_ONLY);
                table.set_header(vec!["file", "score", "tier", "tokens", "reason"]);
                for file in files {
                    table.add_row(vec![
                        cell(&file["path"]),
                        file["score"]
                            .as_f64()
                            .map_or("–".to_owned(), |s| format!("{s:.2}")),
                        cell(&file["tier"]),
                        cell(&file["tokens"]),
                        cell(&file["reason"]),
                    ]);
                }
                out.push_str(&table.to_string());
                out.push('\n');
            }
            out
        }
        DiagnosticsCommand::Quality => key_values(payload, &["byTaskClass", "seriesDaily"]),
        DiagnosticsCommand::Status | DiagnosticsCommand::ChatSummary => {
            key_values(payload, &["topTaskClasses"])
        }
    }
}
