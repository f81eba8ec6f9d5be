//! The diagnostics payloads (the MCP tools `aic_status`, `aic_last`,
//! `aic_projects`, `aic_chat_summary`, `aic_quality_report`; see
//! `docs/diagnostics.md`), built from the
//! database for one project. The CLI prints them as tables or `--json`; the
//! MCP tools return the same JSON.
//!
//! Every payload is bounded: lists carry at most [`ROW_LIMIT`] rows, with a
//! `truncated` count when more exist. No payload holds file content or a
//! secret: compilation rows store paths and scores only.

use std::collections::BTreeMap;
use std::path::Path;

use aic_stages::fit::ladder::InclusionTier;
use aic_stages::select::intent::TaskClass;
use aic_storage::{Id, LogTable, Store, id_string};
use serde::Serialize;
use serde_json::{Value, json};

use crate::clock::iso;
use crate::history::compilations::{
    CompilationRecord, GuardFindingRecord, QualitySnapshot, read_compilations,
};
use crate::history::servers::{SessionSummary, session_summary};
use crate::rules::RulesSummary;

/// The most rows a list in a payload holds.
pub const ROW_LIMIT: usize = 50;

/// Milliseconds per day.
const DAY_MS: u64 = 86_400_000;

/// A failure to build a payload: the message names the database and the fix.
pub type DiagnosticsResult<T> = Result<T, String>;

fn describe(error: &aic_storage::StorageError) -> String {
    format!("{error} ({})", error.hint())
}

/// The project id of `root`, or `None` for a project aic never compiled.
fn project_of(store: &Store, root: &Path) -> DiagnosticsResult<Option<Id>> {
    store
        .project(&root.to_string_lossy())
        .map(|p| p.map(|p| p.id))
        .map_err(|e| describe(&e))
}

fn compilations(
    store: &Store,
    project: &Id,
    since_ms: u64,
) -> DiagnosticsResult<Vec<CompilationRecord>> {
    Ok(read_compilations(store, project, since_ms)
        .map_err(|e| describe(&e))?
        .into_iter()
        .map(|(_, record)| record)
        .collect())
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// `aic status` (MCP `aic_status`): project-level aggregates over the
/// last `days` days (all time when `None`), with `rules`, the summary of the
/// project's rule and hook files (see [`crate::rules::RulesAnalysis::summary`]).
///
/// # Errors
///
/// A message when the database cannot be read.
pub fn status(
    store: &Store,
    root: &Path,
    days: Option<u32>,
    budget_max_tokens: u32,
    rules: &RulesSummary,
    now: u64,
) -> DiagnosticsResult<Value> {
    let since = days.map_or(0, |d| now.saturating_sub(u64::from(d) * DAY_MS));
    let sessions = session_summary(store).map_err(|e| describe(&e))?;
    let Some(project) = project_of(store, root)? else {
        return Ok(json!({
            "projectRoot": root,
            "projectId": Value::Null,
            "timeRangeDays": days,
            "compilationsTotal": 0,
            "compilationsInRange": 0,
            "message": "No compilation recorded for this project yet: run `aic compile` (or call aic_compile) first.",
            "rules": rules,
            "serverSessions": sessions,
        }));
    };
    let total = store
        .count_log(LogTable::Compilations, &project)
        .map_err(|e| describe(&e))?;
    let rows = compilations(store, &project, since)?;
    let findings: Vec<GuardFindingRecord> = store
        .read_log(LogTable::GuardFindings, &project, since, None)
        .map_err(|e| describe(&e))?
        .into_iter()
        .filter_map(|(_, value)| serde_json::from_slice(&value).ok())
        .collect();
    let n = rows.len();
    let hits = rows.iter().filter(|r| r.cache_hit).count();
    let raw: u64 = rows.iter().map(|r| u64::from(r.tokens_raw)).sum();
    let compiled: u64 = rows.iter().map(|r| u64::from(r.tokens_compiled)).sum();
    let mut by_class: BTreeMap<TaskClass, usize> = BTreeMap::new();
    for row in &rows {
        *by_class.entry(row.task_class).or_default() += 1;
    }
    let mut top: Vec<(TaskClass, usize)> = by_class.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut by_type: BTreeMap<String, usize> = BTreeMap::new();
    for finding in &findings {
        *by_type.entry(finding.finding_type.clone()).or_default() += 1;
    }
    let last = rows.last();
    let utilisation = last.map(|r| {
        round1(f64::from(r.tokens_compiled) * 100.0 / f64::from(r.allocated_total_budget.max(1)))
    });
    Ok(json!({
        "projectRoot": root,
        "projectId": id_string(&project),
        "timeRangeDays": days,
        "compilationsTotal": total,
        "compilationsInRange": n,
        "cacheHitRatePct": (n > 0).then(|| round1(hits as f64 * 100.0 / n as f64)),
        "avgReductionPct": (n > 0).then(|| round1(rows.iter().map(|r| r.token_reduction_pct).sum::<f64>() * 100.0 / n as f64)),
        "totalTokensRaw": raw,
        "totalTokensCompiled": compiled,
        "totalTokensSaved": raw.saturating_sub(compiled),
        "budgetMaxTokens": last.map_or(budget_max_tokens, |r| r.allocated_total_budget),
        "budgetUtilisationPct": utilisation,
        "guard": {
            "findings": findings.len(),
            "blockedFiles": rows.iter().map(|r| r.guard_block_count).sum::<usize>(),
            "byType": by_type,
        },
        "topTaskClasses": top.iter().take(5).map(|(c, k)| json!({"taskClass": c, "count": k})).collect::<Vec<_>>(),
        "lastCompilation": last.map(last_snapshot),
        "rules": rules,
        "serverSessions": sessions,
    }))
}

/// The compact snapshot of a compilation row (no selection).
fn last_snapshot(row: &CompilationRecord) -> Value {
    json!({
        "intent": row.intent,
        "taskClass": row.task_class,
        "filesSelected": row.files_selected,
        "filesTotal": row.files_total,
        "tokensCompiled": row.tokens_compiled,
        "tokenReductionPct": round1(row.token_reduction_pct * 100.0),
        "allocatedTotalBudget": row.allocated_total_budget,
        "cacheHit": row.cache_hit,
        "durationMs": row.duration_ms,
        "editorId": row.editor_id,
        "modelId": row.model_id,
        "triggerSource": row.trigger_source,
        "conversationId": row.conversation_id,
        "guardFindingCount": row.guard_finding_count,
        "guardBlockCount": row.guard_block_count,
        "createdAt": row.created_at,
    })
}

/// `aic last` (MCP `aic_last`): the most recent compilation of the
/// project with its selection (paths, scores, tiers; never content).
///
/// # Errors
///
/// A message when the database cannot be read.
pub fn last(store: &Store, root: &Path) -> DiagnosticsResult<Value> {
    let Some(project) = project_of(store, root)? else {
        return Ok(json!({
            "projectRoot": root,
            "compilationCount": 0,
            "lastCompilation": Value::Null,
            "promptSummary": {"tokenCount": Value::Null},
            "selection": Value::Null,
        }));
    };
    let count = store
        .count_log(LogTable::Compilations, &project)
        .map_err(|e| describe(&e))?;
    let last: Option<CompilationRecord> = store
        .read_log(LogTable::Compilations, &project, 0, Some(1))
        .map_err(|e| describe(&e))?
        .into_iter()
        .find_map(|(_, value)| serde_json::from_slice(&value).ok());
    let selection = last.as_ref().map(|row| {
        let shown: Vec<Value> = row
            .selection
            .iter()
            .take(ROW_LIMIT)
            .map(|entry| {
                json!({
                    "path": entry.path,
                    "score": entry.score,
                    "tier": entry.tier,
                    "tokens": entry.tokens,
                    "reason": entry.reason,
                })
            })
            .collect();
        let truncated = row.selection.len().saturating_sub(ROW_LIMIT);
        let mut selection = json!({
            "files": shown,
            "truncated": truncated,
        });
        if truncated > 0 {
            selection["continuation"] = json!(
                "the lowest-ranked files are left out; aic_inspect with the same intent (or `aic inspect --json`) lists every selected file"
            );
        }
        selection
    });
    Ok(json!({
        "projectRoot": root,
        "compilationCount": count,
        "lastCompilation": last.as_ref().map(last_snapshot),
        "promptSummary": {"tokenCount": last.as_ref().map(|r| r.tokens_compiled)},
        "selection": selection,
    }))
}

/// One known project, for `aic projects`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSummary {
    /// Its id.
    pub project_id: String,
    /// Its root.
    pub project_root: String,
    /// First seen, ISO 8601 UTC.
    pub created_at: String,
    /// Last compiled, ISO 8601 UTC; `None` when only precomputed or inspected.
    pub last_seen_at: Option<String>,
    /// Compilations logged (within retention).
    pub compilations: u64,
}

/// `aic projects` (MCP `aic_projects`): every known project, most
/// recently seen first.
///
/// # Errors
///
/// A message when the database cannot be read.
pub fn projects(store: &Store) -> DiagnosticsResult<Vec<ProjectSummary>> {
    let mut out = Vec::new();
    for project in store.projects().map_err(|e| describe(&e))? {
        out.push(ProjectSummary {
            project_id: id_string(&project.id),
            project_root: project.root.clone(),
            created_at: iso(project.created_ms),
            last_seen_at: (project.last_seen_ms > 0).then(|| iso(project.last_seen_ms)),
            compilations: store
                .count_log(LogTable::Compilations, &project.id)
                .map_err(|e| describe(&e))?,
        });
    }
    out.sort_by(|a, b| {
        b.last_seen_at
            .cmp(&a.last_seen_at)
            .then(a.project_root.cmp(&b.project_root))
    });
    Ok(out)
}

/// `aic chat-summary` (MCP `aic_chat_summary`): the compilations of one
/// conversation, or of the project's most recent conversation when none is
/// given (all of the project's compilations when none has a conversation).
///
/// # Errors
///
/// A message when the database cannot be read.
pub fn chat_summary(
    store: &Store,
    root: &Path,
    conversation: Option<&str>,
) -> DiagnosticsResult<Value> {
    let rows = match project_of(store, root)? {
        Some(project) => compilations(store, &project, 0)?,
        None => Vec::new(),
    };
    let conversation = conversation
        .map(str::to_owned)
        .or_else(|| rows.iter().rev().find_map(|r| r.conversation_id.clone()));
    let rows: Vec<&CompilationRecord> = rows
        .iter()
        .filter(|r| conversation.is_none() || r.conversation_id == conversation)
        .collect();
    let n = rows.len();
    let raw: u64 = rows.iter().map(|r| u64::from(r.tokens_raw)).sum();
    let compiled: u64 = rows.iter().map(|r| u64::from(r.tokens_compiled)).sum();
    let mut by_class: BTreeMap<TaskClass, usize> = BTreeMap::new();
    for row in &rows {
        *by_class.entry(row.task_class).or_default() += 1;
    }
    let mut top: Vec<(TaskClass, usize)> = by_class.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(json!({
        "conversationId": conversation,
        "projectRoot": root,
        "compilationsInConversation": n,
        "cacheHitRatePct": (n > 0).then(|| round1(rows.iter().filter(|r| r.cache_hit).count() as f64 * 100.0 / n as f64)),
        "avgReductionPct": (n > 0).then(|| round1(rows.iter().map(|r| r.token_reduction_pct).sum::<f64>() * 100.0 / n as f64)),
        "totalTokensRaw": raw,
        "totalTokensCompiled": compiled,
        "totalTokensSaved": (n > 0).then(|| raw.saturating_sub(compiled)),
        "lastCompilationInConversation": rows.last().map(|r| last_snapshot(r)),
        "topTaskClasses": top.iter().take(5).map(|(c, k)| json!({"taskClass": c, "count": k})).collect::<Vec<_>>(),
    }))
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[(values.len() - 1) / 2]
}

fn stratum(rows: &[&QualitySnapshot]) -> Value {
    let built: Vec<&&QualitySnapshot> = rows.iter().filter(|r| !r.cache_hit).collect();
    json!({
        "compilations": rows.len(),
        "medianTokenReduction": median(built.iter().map(|r| r.token_reduction_ratio).collect()),
        "medianSelectionRatio": median(built.iter().map(|r| r.selection_ratio).collect()),
        "medianBudgetUtilisation": median(rows.iter().map(|r| r.budget_utilisation).collect()),
        "cacheHitRate": if rows.is_empty() { 0.0 } else { rows.iter().filter(|r| r.cache_hit).count() as f64 / rows.len() as f64 },
    })
}

/// `aic quality` (MCP `aic_quality_report`): rolling-window metrics
/// over the project's quality snapshots; `window_days` in 1..=365.
///
/// # Errors
///
/// A message for a window out of range or a database that cannot be read.
pub fn quality(store: &Store, root: &Path, window_days: u32, now: u64) -> DiagnosticsResult<Value> {
    if !(1..=365).contains(&window_days) {
        return Err(format!(
            "windowDays must be between 1 and 365, got {window_days}"
        ));
    }
    let since = now.saturating_sub(u64::from(window_days) * DAY_MS);
    let snapshots: Vec<QualitySnapshot> = match project_of(store, root)? {
        Some(project) => store
            .read_log(LogTable::QualitySnapshots, &project, since, None)
            .map_err(|e| describe(&e))?
            .into_iter()
            .filter_map(|(_, value)| serde_json::from_slice(&value).ok())
            .collect(),
        None => Vec::new(),
    };
    let all: Vec<&QualitySnapshot> = snapshots.iter().collect();
    let mut by_class = serde_json::Map::new();
    for class in TaskClass::ALL {
        let rows: Vec<&QualitySnapshot> = all
            .iter()
            .copied()
            .filter(|r| r.task_class == class)
            .collect();
        by_class.insert(class.as_str().to_owned(), stratum(&rows));
    }
    let tier_totals: [usize; 4] = all.iter().fold([0; 4], |mut acc, r| {
        for (a, t) in acc.iter_mut().zip(r.tiers) {
            *a += t;
        }
        acc
    });
    let tier_sum: usize = tier_totals.iter().sum();
    let share = |i: usize| {
        if tier_sum == 0 {
            0.0
        } else {
            tier_totals[i] as f64 / tier_sum as f64
        }
    };
    let mut days: BTreeMap<String, Vec<&QualitySnapshot>> = BTreeMap::new();
    for row in &all {
        days.entry(row.created_at.get(..10).unwrap_or_default().to_owned())
            .or_default()
            .push(row);
    }
    let series: Vec<Value> = days
        .iter()
        .map(|(day, rows)| {
            let mut value = stratum(rows);
            value["day"] = json!(day);
            value
        })
        .collect();
    let mut payload = stratum(&all);
    payload["windowDays"] = json!(window_days);
    payload["tierDistribution"] = json!({
        InclusionTier::L0.name(): share(0),
        InclusionTier::L1.name(): share(1),
        InclusionTier::L2.name(): share(2),
        InclusionTier::L3.name(): share(3),
    });
    payload["byTaskClass"] = Value::Object(by_class);
    payload["classifierConfidence"] = if all.is_empty() {
        json!({"available": false})
    } else {
        json!({"available": true, "mean": all.iter().map(|r| r.classifier_confidence).sum::<f64>() / all.len() as f64})
    };
    payload["seriesDaily"] = json!(series);
    Ok(payload)
}

/// Keeps [`SessionSummary`] in this module's public surface for the CLI.
pub type ServerSessions = SessionSummary;
