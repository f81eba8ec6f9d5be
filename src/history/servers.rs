//! Server lifecycle tracking and the startup self-check (`docs/diagnostics.md`).
//!
//! A server process calls [`ServerSession::start`] once: it backfills every
//! earlier session that has no stop time as a `crash` (stopped at this start),
//! records its own row with the self-check's results, and prunes rows older
//! than `retention.days` after archiving them. [`ServerSession::stop`]
//! marks a graceful stop (SIGINT, SIGTERM, stdin EOF). No heartbeat: a
//! process killed with `kill -9` is found by the next start.

use std::path::Path;

use aic_storage::{Id, LogTable, PruneReport, Store, id_string, new_id};
use serde::{Deserialize, Serialize};

use crate::clock::{Clock, iso};
use crate::history::compilations::CompilationRecord;

/// One `server_sessions` row.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ServerSessionRecord {
    /// The session id (UUIDv7).
    pub session_id: String,
    /// Start, ISO 8601 UTC.
    pub started_at: String,
    /// Stop, ISO 8601 UTC; `None` while running (or until a crash is found).
    pub stopped_at: Option<String>,
    /// `graceful` or `crash`.
    pub stop_reason: Option<String>,
    /// The process id.
    pub pid: u32,
    /// The aic version.
    pub version: String,
    /// Whether the self-check found everything in place.
    pub installation_ok: bool,
    /// What the self-check found missing.
    pub installation_notes: Vec<String>,
}

/// Whether another process with this pid is running (always `false` for this
/// process's own pid, and where `/proc` does not exist).
fn process_alive(pid: u32) -> bool {
    pid != std::process::id() && Path::new(&format!("/proc/{pid}")).exists()
}

/// Counts over the recorded server sessions, for `status`.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// Sessions recorded (within retention).
    pub total: usize,
    /// Sessions that ended in a crash.
    pub crashes: usize,
    /// Sessions with no stop time (running now, or crashed and not yet found).
    pub running: usize,
    /// The most recent session.
    pub last: Option<ServerSessionRecord>,
}

/// A running server's session.
#[derive(Debug)]
pub struct ServerSession {
    id: Id,
    record: ServerSessionRecord,
}

/// What a start found and did.
#[derive(Debug)]
pub struct StartReport {
    /// Earlier sessions marked `crash`.
    pub crashes_backfilled: usize,
    /// What retention pruned.
    pub pruned: PruneReport,
}

impl ServerSession {
    /// Starts a session: backfills crashes, records this session with the
    /// self-check `notes` (empty when healthy), then applies retention of
    /// `retention_days`.
    ///
    /// # Errors
    ///
    /// [`aic_storage::StorageError`] when the database cannot be written.
    pub fn start(
        store: &Store,
        notes: Vec<String>,
        retention_days: u32,
        clock: &dyn Clock,
    ) -> Result<(Self, StartReport), aic_storage::StorageError> {
        Self::start_with_id(store, &id_string(&new_id()), notes, retention_days, clock)
    }

    /// As [`ServerSession::start`], with the session id chosen by the caller (a
    /// UUIDv7 string; a new one when it does not parse). A session of another
    /// process that is still running (Linux: `/proc/<pid>` exists) is not a
    /// crash: several editors each run their own server.
    ///
    /// # Errors
    ///
    /// [`aic_storage::StorageError`] when the database cannot be written.
    pub fn start_with_id(
        store: &Store,
        session_id: &str,
        notes: Vec<String>,
        retention_days: u32,
        clock: &dyn Clock,
    ) -> Result<(Self, StartReport), aic_storage::StorageError> {
        let now = clock.now_ms();
        let started_at = iso(now);
        let mut crashes = 0;
        for (id, bytes) in store.server_sessions()? {
            let Ok(mut record) = serde_json::from_slice::<ServerSessionRecord>(&bytes) else {
                continue;
            };
            if record.stopped_at.is_none() && !process_alive(record.pid) {
                record.stopped_at = Some(started_at.clone());
                record.stop_reason = Some("crash".to_owned());
                store.put_server_session(&id, &serde_json::to_vec(&record).unwrap_or_default())?;
                crashes += 1;
            }
        }
        let id = aic_storage::parse_id(session_id).unwrap_or_else(new_id);
        let record = ServerSessionRecord {
            session_id: id_string(&id),
            started_at,
            stopped_at: None,
            stop_reason: None,
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            installation_ok: notes.is_empty(),
            installation_notes: notes,
        };
        store.put_server_session(&id, &serde_json::to_vec(&record).unwrap_or_default())?;
        let before = now.saturating_sub(u64::from(retention_days) * 86_400_000);
        let pruned = store.prune(before, now, &archive)?;
        Ok((
            Self { id, record },
            StartReport {
                crashes_backfilled: crashes,
                pruned,
            },
        ))
    }

    /// This session's id.
    pub fn id(&self) -> String {
        id_string(&self.id)
    }

    /// Marks the session stopped gracefully.
    ///
    /// # Errors
    ///
    /// [`aic_storage::StorageError`] when the database cannot be written.
    pub fn stop(
        mut self,
        store: &Store,
        clock: &dyn Clock,
    ) -> Result<(), aic_storage::StorageError> {
        self.record.stopped_at = Some(iso(clock.now_ms()));
        self.record.stop_reason = Some("graceful".to_owned());
        store.put_server_session(
            &self.id,
            &serde_json::to_vec(&self.record).unwrap_or_default(),
        )
    }
}

/// The archive row for compilations about to be pruned: counts and token
/// totals, one row per project.
fn archive(project: &Id, rows: &[Vec<u8>]) -> Option<Vec<u8>> {
    let records: Vec<CompilationRecord> = rows
        .iter()
        .filter_map(|r| serde_json::from_slice(r).ok())
        .collect();
    let summary = serde_json::json!({
        "projectId": id_string(project),
        "compilations": records.len(),
        "tokensRaw": records.iter().map(|r| u64::from(r.tokens_raw)).sum::<u64>(),
        "tokensCompiled": records.iter().map(|r| u64::from(r.tokens_compiled)).sum::<u64>(),
        "guardFindings": records.iter().map(|r| r.guard_finding_count).sum::<usize>(),
        "guardBlocks": records.iter().map(|r| r.guard_block_count).sum::<usize>(),
        "cacheHits": records.iter().filter(|r| r.cache_hit).count(),
        "from": records.first().map(|r| r.created_at.clone()),
        "to": records.last().map(|r| r.created_at.clone()),
    });
    serde_json::to_vec(&summary).ok()
}

/// Counts over the recorded sessions.
///
/// # Errors
///
/// [`aic_storage::StorageError`] when the database cannot be read.
pub fn session_summary(store: &Store) -> Result<SessionSummary, aic_storage::StorageError> {
    let records: Vec<ServerSessionRecord> = store
        .server_sessions()?
        .into_iter()
        .filter_map(|(_, bytes)| serde_json::from_slice(&bytes).ok())
        .collect();
    Ok(SessionSummary {
        total: records.len(),
        crashes: records
            .iter()
            .filter(|r| r.stop_reason.as_deref() == Some("crash"))
            .count(),
        running: records.iter().filter(|r| r.stopped_at.is_none()).count(),
        last: records.last().cloned(),
    })
}

/// The startup self-check for a project: what is missing for
/// context to be compiled on every prompt. Empty when healthy. The editor
/// integrations extend it as they land; today it checks that the database
/// is writable and the project root exists.
pub fn self_check(store: &Store, project_root: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    if !project_root.is_dir() {
        notes.push(format!(
            "project root `{}` is not a directory",
            project_root.display()
        ));
    }
    if store.count_log(LogTable::Compilations, &[0; 16]).is_err() {
        notes.push(format!(
            "database `{}` cannot be read",
            store.path().display()
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SystemClock;

    #[test]
    fn a_session_that_never_stopped_is_a_crash_at_the_next_start() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(&home.path().join("aic.redb")).unwrap();
        let (first, report) = ServerSession::start(&store, Vec::new(), 90, &SystemClock).unwrap();
        assert_eq!(report.crashes_backfilled, 0);
        // The first process dies without stopping (kill -9).
        drop(first);
        let (second, report) =
            ServerSession::start(&store, vec!["x".to_owned()], 90, &SystemClock).unwrap();
        assert_eq!(report.crashes_backfilled, 1);
        let summary = session_summary(&store).unwrap();
        assert_eq!((summary.total, summary.crashes, summary.running), (2, 1, 1));
        assert_eq!(summary.last.as_ref().unwrap().installation_notes, ["x"]);
        second.stop(&store, &SystemClock).unwrap();
        let summary = session_summary(&store).unwrap();
        assert_eq!(summary.running, 0);
        assert_eq!(
            summary.last.unwrap().stop_reason.as_deref(),
            Some("graceful")
        );
        // A graceful stop is not a crash at the next start.
        let (_third, report) = ServerSession::start(&store, Vec::new(), 90, &SystemClock).unwrap();
        assert_eq!(report.crashes_backfilled, 0);
    }
}
