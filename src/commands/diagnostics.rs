//! `aic status | last | projects | chat-summary | quality`: what aic did for a
//! project, in words and units (`cache hit rate  82 %`), or `--json`: the
//! payloads the MCP tools return, with their field names.

use std::fmt::Write as _;
use std::path::Path;

use aic_storage::Store;
use anyhow::{Context, anyhow};
use comfy_table::{Table, presets::UTF8_BORDERS_ONLY};
use serde_json::Value;

use crate::answer::inspect::thousands;
use crate::args::{DiagnosticsArgs, DiagnosticsCommand};
use crate::commands::with_database;
use crate::error::UserError;
use crate::history::diagnostics;
use crate::host::Host;
use crate::printer::print_stdout;
use crate::rules::RulesSummary;

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
    // Read before the database is opened: the rule files are the project's
    // and the user's, not aic's.
    let rules = matches!(command, DiagnosticsCommand::Status)
        .then(|| crate::rules::analyze(&root, crate::root::home().as_deref()).summary());
    let payload = with_database(host, |store| {
        // What these commands report rests on the whole database: damage in
        // a table they do not read (the per-file cache) is named here too.
        store.verify_pages()?;
        payload(command, args, store, &root, rules.as_ref(), now)
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
    rules: Option<&RulesSummary>,
    now: u64,
) -> anyhow::Result<Value> {
    let mut value = match command {
        DiagnosticsCommand::Status => {
            let loaded = crate::config::load_config(root, None).ok();
            let budget = loaded.map_or(0, |l| l.config.context_budget.max_tokens.0);
            let rules = rules.context("The rules summary of `aic status` was not read")?;
            diagnostics::status(store, root, args.days, budget, rules, now)
                .map_err(|m| anyhow!(m))?
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

/// A label-and-value table: one row per fact, the label in words.
struct Facts(Table);

impl Facts {
    fn new() -> Self {
        let mut table = Table::new();
        table.load_style(UTF8_BORDERS_ONLY);
        Self(table)
    }

    fn add(&mut self, label: &str, value: impl Into<String>) {
        self.0.add_row(vec![label.to_owned(), value.into()]);
    }

    fn finish(self) -> String {
        format!("{}\n", self.0)
    }
}

/// A table with a header row.
fn table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table.load_style(UTF8_BORDERS_ONLY);
    table.set_header(header.to_vec());
    table
}

/// A string field, or `–`.
fn text(value: &Value) -> String {
    value.as_str().map_or_else(|| "–".to_owned(), str::to_owned)
}

/// A count with thousands separators, or `–`.
fn number(value: &Value) -> String {
    value.as_u64().map_or_else(|| "–".to_owned(), thousands)
}

/// `n noun` or `n nouns`, the count with thousands separators.
fn count(value: &Value, noun: &str) -> String {
    match value.as_u64() {
        Some(1) => format!("1 {noun}"),
        Some(n) => format!("{} {noun}s", thousands(n)),
        None => "–".to_owned(),
    }
}

/// A percentage (`82 %`, `66.7 %`), or `–`.
fn percent(value: &Value) -> String {
    value.as_f64().map_or_else(|| "–".to_owned(), percent_of)
}

/// A share between 0 and 1 as a percentage.
fn share(value: &Value) -> String {
    value
        .as_f64()
        .map_or_else(|| "–".to_owned(), |ratio| percent_of(ratio * 100.0))
}

fn percent_of(value: f64) -> String {
    let rounded = (value * 10.0).round() / 10.0;
    if rounded.fract() == 0.0 {
        format!("{rounded:.0} %")
    } else {
        format!("{rounded:.1} %")
    }
}

/// `bugfix 5, feature 3` from `[{taskClass, count}]`.
fn task_classes(value: &Value) -> String {
    let classes: Vec<String> = value
        .as_array()
        .into_iter()
        .flatten()
        .map(|entry| format!("{} {}", text(&entry["taskClass"]), number(&entry["count"])))
        .collect();
    if classes.is_empty() {
        "–".to_owned()
    } else {
        classes.join(", ")
    }
}

/// The compilation counts, the cache hit rate, the reduction and the tokens
/// of `status` and `chat-summary`.
fn totals(facts: &mut Facts, payload: &Value) {
    facts.add("cache hit rate", percent(&payload["cacheHitRatePct"]));
    facts.add(
        "average token reduction",
        percent(&payload["avgReductionPct"]),
    );
    facts.add(
        "tokens",
        format!(
            "{} raw, {} compiled, {} saved",
            number(&payload["totalTokensRaw"]),
            number(&payload["totalTokensCompiled"]),
            number(&payload["totalTokensSaved"])
        ),
    );
}

/// The rows of one compilation (`lastCompilation`).
fn compilation(facts: &mut Facts, label: &str, row: &Value) {
    if row.is_null() {
        facts.add(label, "–");
        return;
    }
    facts.add(
        label,
        format!(
            "\"{}\" at {}",
            text(&row["intent"]),
            text(&row["createdAt"])
        ),
    );
    facts.add("  task class", text(&row["taskClass"]));
    facts.add(
        "  files",
        format!(
            "{} selected of {}",
            number(&row["filesSelected"]),
            number(&row["filesTotal"])
        ),
    );
    facts.add(
        "  tokens",
        format!(
            "{} of a {} budget ({} fewer than the files)",
            number(&row["tokensCompiled"]),
            number(&row["allocatedTotalBudget"]),
            percent(&row["tokenReductionPct"])
        ),
    );
    let answered = if row["cacheHit"] == true {
        "from the prompt cache"
    } else {
        "compiled"
    };
    facts.add(
        "  time",
        format!("{} ms, {answered}", number(&row["durationMs"])),
    );
    let mut caller = format!(
        "{}, model {}, trigger {}",
        text(&row["editorId"]),
        text(&row["modelId"]),
        text(&row["triggerSource"])
    );
    if let Some(conversation) = row["conversationId"].as_str() {
        let _ = write!(caller, ", conversation {conversation}");
    }
    facts.add("  caller", caller);
    facts.add(
        "  guard",
        format!(
            "{}, {} blocked",
            count(&row["guardFindingCount"], "finding"),
            count(&row["guardBlockCount"], "file")
        ),
    );
}

/// The server sessions rows of `status`.
fn sessions(facts: &mut Facts, sessions: &Value) {
    facts.add(
        "MCP server sessions",
        format!(
            "{}: {} crashed, {} running",
            number(&sessions["total"]),
            number(&sessions["crashes"]),
            number(&sessions["running"])
        ),
    );
    let last = &sessions["last"];
    if last.is_null() {
        return;
    }
    let stopped = match (last["stoppedAt"].as_str(), last["stopReason"].as_str()) {
        (Some(at), Some(reason)) => format!("stopped {at} ({reason})"),
        (Some(at), None) => format!("stopped {at}"),
        _ => "not stopped".to_owned(),
    };
    facts.add(
        "  last session",
        format!(
            "pid {}, aic {}, started {}, {stopped}",
            number(&last["pid"]),
            text(&last["version"]),
            text(&last["startedAt"])
        ),
    );
    let notes: Vec<String> = last["installationNotes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(text)
        .collect();
    facts.add(
        "  self-check",
        if notes.is_empty() {
            "ok".to_owned()
        } else {
            notes.join("; ")
        },
    );
}

fn render_status(payload: &Value) -> String {
    let mut facts = Facts::new();
    facts.add("project", text(&payload["projectRoot"]));
    if !payload["projectId"].is_null() {
        facts.add("project id", text(&payload["projectId"]));
    }
    let compilations = match payload["timeRangeDays"].as_u64() {
        Some(days) => format!(
            "{} in the last {}, {} in all",
            number(&payload["compilationsInRange"]),
            if days == 1 {
                "day".to_owned()
            } else {
                format!("{days} days")
            },
            number(&payload["compilationsTotal"])
        ),
        None => number(&payload["compilationsTotal"]),
    };
    facts.add("compilations", compilations);
    if let Some(message) = payload["message"].as_str() {
        facts.add("", message);
    } else {
        totals(&mut facts, payload);
        facts.add(
            "budget",
            format!(
                "{} tokens; the last compile used {}",
                number(&payload["budgetMaxTokens"]),
                percent(&payload["budgetUtilisationPct"])
            ),
        );
        let guard = &payload["guard"];
        let by_type: Vec<String> = guard["byType"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(kind, n)| format!("{kind} {}", number(n)))
            .collect();
        let mut findings = count(&guard["findings"], "finding");
        if !by_type.is_empty() {
            let _ = write!(findings, " ({})", by_type.join(", "));
        }
        facts.add(
            "guard",
            format!(
                "{findings}; {} blocked",
                count(&guard["blockedFiles"], "file")
            ),
        );
        facts.add("top task classes", task_classes(&payload["topTaskClasses"]));
        compilation(&mut facts, "last compilation", &payload["lastCompilation"]);
    }
    rules_row(&mut facts, &payload["rules"]);
    sessions(&mut facts, &payload["serverSessions"]);
    facts.finish()
}

/// The rules summary in one row: `3 files, 1,204 tokens on every prompt; 1
/// error, 2 warn, 0 info (details: `aic rules`)`.
fn rules_row(facts: &mut Facts, rules: &Value) {
    if rules.is_null() {
        return;
    }
    let findings = &rules["findings"];
    facts.add(
        "rule files",
        format!(
            "{}, {} tokens on every prompt; {} error, {} warn, {} info (details: `aic rules`)",
            count(&rules["files"], "file"),
            number(&rules["alwaysAppliedTokens"]),
            number(&findings["error"]),
            number(&findings["warn"]),
            number(&findings["info"]),
        ),
    );
}

fn render_last(payload: &Value) -> String {
    let mut facts = Facts::new();
    facts.add("project", text(&payload["projectRoot"]));
    facts.add("compilations", number(&payload["compilationCount"]));
    compilation(&mut facts, "last compilation", &payload["lastCompilation"]);
    let mut out = facts.finish();
    let selection = &payload["selection"];
    if let Some(files) = selection["files"].as_array() {
        let mut files_table = table(&["file", "score", "tier", "tokens", "reason"]);
        for file in files {
            files_table.add_row(vec![
                text(&file["path"]),
                file["score"]
                    .as_f64()
                    .map_or("–".to_owned(), |s| format!("{s:.2}")),
                text(&file["tier"]),
                number(&file["tokens"]),
                text(&file["reason"]),
            ]);
        }
        let _ = writeln!(out, "{files_table}");
        if selection["truncated"].as_u64().is_some_and(|n| n > 0) {
            let _ = writeln!(
                out,
                "{} more not shown: {}",
                number(&selection["truncated"]),
                text(&selection["continuation"])
            );
        }
    }
    out
}

fn render_chat_summary(payload: &Value) -> String {
    let mut facts = Facts::new();
    facts.add(
        "conversation",
        payload["conversationId"].as_str().map_or(
            "– (compilations without a conversation)".to_owned(),
            str::to_owned,
        ),
    );
    facts.add("project", text(&payload["projectRoot"]));
    facts.add(
        "compilations",
        number(&payload["compilationsInConversation"]),
    );
    totals(&mut facts, payload);
    facts.add("top task classes", task_classes(&payload["topTaskClasses"]));
    compilation(
        &mut facts,
        "last compilation",
        &payload["lastCompilationInConversation"],
    );
    facts.finish()
}

/// The medians and rates of one stratum of `quality`, as table cells.
fn stratum(value: &Value) -> Vec<String> {
    vec![
        number(&value["compilations"]),
        share(&value["medianTokenReduction"]),
        share(&value["medianSelectionRatio"]),
        share(&value["medianBudgetUtilisation"]),
        share(&value["cacheHitRate"]),
    ]
}

fn render_quality(payload: &Value) -> String {
    let mut facts = Facts::new();
    facts.add(
        "window",
        format!("the last {}", count(&payload["windowDays"], "day")),
    );
    let all = stratum(payload);
    for (label, value) in [
        "compilations",
        "median token reduction",
        "median share of files selected",
        "median budget use",
        "cache hit rate",
    ]
    .into_iter()
    .zip(all)
    {
        facts.add(label, value);
    }
    let tiers: Vec<String> = payload["tierDistribution"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(tier, value)| format!("{tier} {}", share(value)))
        .collect();
    facts.add("files per tier", tiers.join(", "));
    let confidence = &payload["classifierConfidence"];
    facts.add(
        "mean classifier confidence",
        confidence["mean"]
            .as_f64()
            .map_or("– (not recorded)".to_owned(), |mean| format!("{mean:.2}")),
    );
    let mut out = facts.finish();
    let header = [
        "compilations",
        "median token reduction",
        "median share of files selected",
        "median budget use",
        "cache hit rate",
    ];
    let mut classes = table(&[&["task class"][..], &header[..]].concat());
    for (class, value) in payload["byTaskClass"].as_object().into_iter().flatten() {
        if value["compilations"].as_u64().is_some_and(|n| n > 0) {
            let mut row = vec![class.clone()];
            row.extend(stratum(value));
            classes.add_row(row);
        }
    }
    if !classes.is_empty() {
        let _ = writeln!(out, "{classes}");
    }
    let mut days = table(&[&["day"][..], &header[..]].concat());
    for value in payload["seriesDaily"].as_array().into_iter().flatten() {
        let mut row = vec![text(&value["day"])];
        row.extend(stratum(value));
        days.add_row(row);
    }
    if !days.is_empty() {
        let _ = writeln!(out, "{days}");
    }
    out
}

fn render_projects(payload: &Value) -> String {
    let mut projects = table(&[
        "project",
        "compilations",
        "first seen",
        "last compiled",
        "id",
    ]);
    for project in payload.as_array().into_iter().flatten() {
        projects.add_row(vec![
            text(&project["projectRoot"]),
            number(&project["compilations"]),
            text(&project["createdAt"]),
            text(&project["lastSeenAt"]),
            text(&project["projectId"]),
        ]);
    }
    format!("{projects}\n")
}

fn render(command: DiagnosticsCommand, payload: &Value) -> String {
    match command {
        DiagnosticsCommand::Status => render_status(payload),
        DiagnosticsCommand::Last => render_last(payload),
        DiagnosticsCommand::Projects => render_projects(payload),
        DiagnosticsCommand::ChatSummary => render_chat_summary(payload),
        DiagnosticsCommand::Quality => render_quality(payload),
    }
}
