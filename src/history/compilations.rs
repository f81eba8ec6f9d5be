//! What `aic` remembers of each compile, per project, in the global database:
//! the compilation log row with its selection (paths and scores, never
//! content), guard findings (never the secret), telemetry aggregates, a
//! quality snapshot and the config snapshot by hash.
//!
//! Written by the caller of the pipeline after a successful compile, never by
//! a phase; a write failure is a warning and the compile still succeeds.
//! Rows are JSON documents (camelCase, the payloads the diagnostics return);
//! timestamps are ISO 8601 UTC with milliseconds and `Z`.

use std::collections::BTreeMap;

use aic_stages::fit::ladder::InclusionTier;
use aic_stages::select::intent::TaskClass;
use aic_storage::{Id, LogKey, LogRow, LogTable, Store, id_string, new_id};
use serde::{Deserialize, Serialize};

use crate::clock::iso;
use crate::host::Host;
use crate::pipeline::{Compilation, SelectionEntry};

/// Who asked for a compile and in which conversation.
#[derive(Clone, Debug, Default)]
pub struct CompileOrigin {
    /// `cli`, `mcp`, `hook:<event>`, …
    pub trigger_source: String,
    /// The agent conversation, when known.
    pub conversation_id: Option<String>,
    /// The agent session, when known.
    pub session_id: Option<String>,
}

/// One `compilation_log` row.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CompilationRecord {
    /// Row id (UUIDv7).
    pub id: String,
    /// The project's id.
    pub project_id: String,
    /// When, ISO 8601 UTC.
    pub created_at: String,
    /// The intent, verbatim.
    pub intent: String,
    /// Task class.
    pub task_class: TaskClass,
    /// Classifier confidence in `[0, 1]`.
    pub classifier_confidence: f64,
    /// Files in the prompt.
    pub files_selected: usize,
    /// Files in the RepoMap.
    pub files_total: usize,
    /// Estimated tokens of the whole RepoMap.
    pub tokens_raw: u32,
    /// Tokens of the prompt.
    pub tokens_compiled: u32,
    /// `(raw − compiled) / raw`, in `[0, 1]`.
    pub token_reduction_pct: f64,
    /// The total budget the prompt was fitted to, in tokens.
    pub allocated_total_budget: u32,
    /// Whether the prompt came from the prompt cache.
    pub cache_hit: bool,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// The editor or `cli`.
    pub editor_id: String,
    /// The model id or `unknown`.
    pub model_id: String,
    /// What triggered the compile.
    pub trigger_source: String,
    /// The conversation, when known.
    pub conversation_id: Option<String>,
    /// The session, when known.
    pub session_id: Option<String>,
    /// xxh3-128 of the config, hex.
    pub config_hash: String,
    /// Guard findings over the selected files.
    pub guard_finding_count: usize,
    /// Files the guard blocked.
    pub guard_block_count: usize,
    /// Tokens the transformers saved.
    pub transform_tokens_saved: u32,
    /// Files per tier.
    pub tiers: BTreeMap<InclusionTier, usize>,
    /// The selection trace: files, scores, tiers, reasons; no content.
    pub selection: Vec<SelectionEntry>,
}

/// One `guard_findings` row: the finding without the matched text.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct GuardFindingRecord {
    /// The compilation.
    pub compilation_id: String,
    /// `secret`, `excluded-file`, `prompt-injection`, `command-injection`.
    #[serde(rename = "type")]
    pub finding_type: String,
    /// `block` or `warn`.
    pub severity: String,
    /// The file.
    pub file: String,
    /// One-based line.
    pub line: Option<u32>,
    /// Description, without the secret.
    pub message: String,
    /// Pattern id.
    pub pattern: Option<String>,
    /// When, ISO 8601 UTC.
    pub created_at: String,
}

/// One `telemetry_events` row: the aggregates of one compile.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct TelemetryRecord {
    /// The compilation.
    pub compilation_id: String,
    /// The project id.
    pub repo_id: String,
    /// Findings.
    pub guard_findings: usize,
    /// Blocked files.
    pub guard_blocks: usize,
    /// Tokens saved by transformers.
    pub transform_savings: u32,
    /// Files per tier.
    pub tiers: BTreeMap<InclusionTier, usize>,
    /// When, ISO 8601 UTC.
    pub created_at: String,
}

/// One `quality_snapshots` row, what `aic_quality_report` aggregates.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct QualitySnapshot {
    /// The compilation.
    pub compilation_id: String,
    /// When, ISO 8601 UTC.
    pub created_at: String,
    /// Task class.
    pub task_class: TaskClass,
    /// `(raw − compiled) / raw`.
    pub token_reduction_ratio: f64,
    /// Files in the prompt over files in the RepoMap.
    pub selection_ratio: f64,
    /// Prompt tokens over the budget.
    pub budget_utilisation: f64,
    /// From the prompt cache.
    pub cache_hit: bool,
    /// Files at L0, L1, L2, L3.
    pub tiers: [usize; 4],
    /// Classifier confidence.
    pub classifier_confidence: f64,
}

/// One `tool_invocation_log` row: an MCP tool call's name, the names of the
/// arguments it carried (never their values), its outcome and duration.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ToolInvocationRecord {
    /// Row id (UUIDv7).
    pub id: String,
    /// When, ISO 8601 UTC.
    pub created_at: String,
    /// The tool.
    pub tool: String,
    /// The argument names given, sorted.
    pub argument_names: Vec<String>,
    /// `ok`, `tool-error` (an `isError` result) or `protocol-error`.
    pub outcome: String,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// The MCP connection's session id.
    pub session_id: String,
}

/// Appends one `tool_invocation_log` row for the project at `root` (canonical).
///
/// # Errors
///
/// A message naming the database when the write fails.
pub fn record_tool_invocation(
    store: &Store,
    root: &std::path::Path,
    record: &ToolInvocationRecord,
    now: u64,
) -> Result<(), String> {
    let describe = |error: aic_storage::StorageError| format!("{error} ({})", error.hint());
    let project = store
        .project_id(&root.to_string_lossy(), now)
        .map_err(describe)?;
    let id = aic_storage::parse_id(&record.id).unwrap_or_else(new_id);
    let row = LogRow {
        table: LogTable::ToolInvocations,
        key: LogKey {
            project,
            time_ms: now,
            id,
        },
        value: json(record),
    };
    store.append_logs(&[row], None).map_err(describe)
}

/// Records a successful compile in the host's database, stamped by its clock.
/// Returns a message naming the database and the fix on failure (a damaged
/// database included); the compile's result stands either way.
pub fn record(
    host: &Host,
    compilation: &Compilation,
    origin: &CompileOrigin,
) -> Result<(), String> {
    let store = host.database().map_err(|error| error.with_hint())?;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        record_compilation(&store, compilation, origin, host.now_ms())
    }))
    .unwrap_or_else(|_| {
        Err(format!(
            "the aic database `{}` is damaged (`aic cache clear` moves it aside and starts an empty one)",
            store.path().display()
        ))
    })
}

/// Records a successful compile at `now` (unix ms). Returns a warning message
/// on failure; the compile's result stands either way.
pub fn record_compilation(
    store: &Store,
    compilation: &Compilation,
    origin: &CompileOrigin,
    now: u64,
) -> Result<(), String> {
    let describe = |error: aic_storage::StorageError| format!("{error} ({})", error.hint());
    let root = compilation.project_root.to_string_lossy();
    let project = store.touch_project(&root, now).map_err(describe)?;
    let rows = compilation_rows(compilation, origin, project.id, now);
    let config_hash = u128::from_str_radix(&compilation.config_hash, 16)
        .unwrap_or_default()
        .to_be_bytes();
    store
        .append_logs(
            &rows,
            Some((
                project.id,
                config_hash,
                now,
                compilation.config_json.as_bytes(),
            )),
        )
        .map_err(describe)
}

/// The log rows of one compile: compilation, findings, telemetry, quality.
fn compilation_rows(
    compilation: &Compilation,
    origin: &CompileOrigin,
    project: Id,
    now: u64,
) -> Vec<LogRow> {
    let meta = &compilation.meta;
    let id = new_id();
    let id_text = id_string(&id);
    let created_at = iso(now);
    let key = LogKey {
        project,
        time_ms: now,
        id,
    };
    let record = CompilationRecord {
        id: id_text.clone(),
        project_id: id_string(&project),
        created_at: created_at.clone(),
        intent: redacted_intent(&meta.intent),
        task_class: meta.task_class,
        classifier_confidence: compilation.classifier_confidence,
        files_selected: meta.files_selected,
        files_total: meta.files_total,
        tokens_raw: meta.tokens_raw.0,
        tokens_compiled: meta.tokens_compiled.0,
        // Stored as a fraction, as rows have always been.
        token_reduction_pct: meta.token_reduction_pct / 100.0,
        allocated_total_budget: meta.budget.0,
        cache_hit: meta.cache_hit,
        duration_ms: meta.duration_ms,
        editor_id: meta.editor_id.clone(),
        model_id: meta.model_id.clone(),
        trigger_source: origin.trigger_source.clone(),
        conversation_id: origin.conversation_id.clone(),
        session_id: origin.session_id.clone(),
        config_hash: compilation.config_hash.clone(),
        guard_finding_count: meta.guard.findings.len(),
        guard_block_count: meta.guard.files_blocked.len(),
        transform_tokens_saved: meta.transform_tokens_saved.0,
        tiers: meta.summarisation_tiers.clone(),
        selection: compilation.selection.clone(),
    };
    let mut rows = vec![LogRow {
        table: LogTable::Compilations,
        key,
        value: json(&record),
    }];
    for (index, finding) in meta.guard.findings.iter().enumerate() {
        let mut finding_id = id;
        finding_id[14..].copy_from_slice(&(index as u16).to_be_bytes());
        let record = GuardFindingRecord {
            compilation_id: id_text.clone(),
            finding_type: serde_json::to_value(finding.finding_type)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            severity: serde_json::to_value(finding.severity)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            file: finding.file.to_string(),
            line: finding.line,
            message: finding.message.clone(),
            pattern: finding.pattern.clone(),
            created_at: created_at.clone(),
        };
        rows.push(LogRow {
            table: LogTable::GuardFindings,
            key: LogKey {
                id: finding_id,
                ..key
            },
            value: json(&record),
        });
    }
    rows.push(LogRow {
        table: LogTable::Telemetry,
        key,
        value: json(&TelemetryRecord {
            compilation_id: id_text.clone(),
            repo_id: id_string(&project),
            guard_findings: meta.guard.findings.len(),
            guard_blocks: meta.guard.files_blocked.len(),
            transform_savings: meta.transform_tokens_saved.0,
            tiers: meta.summarisation_tiers.clone(),
            created_at: created_at.clone(),
        }),
    });
    let tier = |t: InclusionTier| meta.summarisation_tiers.get(&t).copied().unwrap_or(0);
    rows.push(LogRow {
        table: LogTable::QualitySnapshots,
        key,
        value: json(&QualitySnapshot {
            compilation_id: id_text,
            created_at,
            task_class: meta.task_class,
            token_reduction_ratio: meta.token_reduction_pct / 100.0,
            selection_ratio: if meta.files_total == 0 {
                0.0
            } else {
                meta.files_selected as f64 / meta.files_total as f64
            },
            budget_utilisation: if meta.budget.0 == 0 {
                0.0
            } else {
                f64::from(meta.tokens_compiled.0) / f64::from(meta.budget.0)
            },
            cache_hit: meta.cache_hit,
            tiers: [
                tier(InclusionTier::L0),
                tier(InclusionTier::L1),
                tier(InclusionTier::L2),
                tier(InclusionTier::L3),
            ],
            classifier_confidence: compilation.classifier_confidence,
        }),
    });
    rows
}

/// The decodable `compilation_log` rows of a project from `since_ms` on,
/// oldest first, with their keys (rows that do not decode are skipped).
///
/// # Errors
///
/// [`aic_storage::StorageError`] when the database cannot be read.
pub fn read_compilations(
    store: &Store,
    project: &Id,
    since_ms: u64,
) -> Result<Vec<(LogKey, CompilationRecord)>, aic_storage::StorageError> {
    Ok(store
        .read_log(LogTable::Compilations, project, since_ms, None)?
        .into_iter()
        .filter_map(|(key, value)| {
            serde_json::from_slice::<CompilationRecord>(&value)
                .ok()
                .map(|record| (key, record))
        })
        .collect())
}

/// The intent as logged: a secret pasted into an intent is replaced by the
/// guard's typed placeholder, so the log (and `aic last`, `aic status`) never
/// holds it. The compile has redacted it already; this keeps the log safe for
/// any other writer.
fn redacted_intent(intent: &str) -> String {
    aic_stages::guard::redact_secrets(intent).unwrap_or_else(|| intent.to_owned())
}

/// A row's JSON bytes (the row types always serialise).
fn json<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}
