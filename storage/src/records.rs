//! What aic remembers per project: the project registry, time-ordered logs
//! (compilations, guard findings, telemetry, quality snapshots, tool
//! invocations), config history and server sessions.
//!
//! The model: every per-project key starts with the 16-byte project id, so a
//! prefix range reads one project and never another's rows. Log keys continue
//! with the time (unix milliseconds, big endian) and a 16-byte row id (UUIDv7),
//! so a range scan returns rows in time order. Values are opaque bytes the
//! caller encodes (the binary stores JSON documents); this crate knows keys,
//! time order and sizes, not what a compilation is.
//!
//! | table | key | value |
//! | --- | --- | --- |
//! | `projects-v2` | project root (UTF-8) | id (16) ‖ created ms (8) ‖ last seen ms (8) |
//! | `compilation_log-v1`, `guard_findings-v1`, `telemetry_events-v1`, `quality_snapshots-v1`, `tool_invocation_log-v1` | [`LogKey`] | caller's bytes |
//! | `config_history-v1` | project id ‖ config hash (16) | created ms (8) ‖ caller's bytes |
//! | `server_sessions-v1` | session id (16, UUIDv7) | caller's bytes |
//! | `archive_summary-v1` | project id ‖ period end ms | caller's bytes |

use redb::{ReadableTable, TableDefinition};

use crate::store::{open_read, open_write};
use crate::{StorageError, Store};

const PROJECTS: TableDefinition<&str, &[u8]> = TableDefinition::new("projects-v2");
const CONFIG_HISTORY: TableDefinition<&[u8], &[u8]> = TableDefinition::new("config_history-v1");
const SERVER_SESSIONS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("server_sessions-v1");
const ARCHIVE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("archive_summary-v1");
/// Agentic session history: `project id ‖ session id (UTF-8)` → the caller's
/// encoded step list.
const SESSION_STATE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("session_state-v1");

/// A 16-byte id (project, compilation, session): the bytes of a UUIDv7.
pub type Id = [u8; 16];

/// Summarises the compilation rows of one project about to be pruned into one
/// archive row (`None`: nothing to keep).
pub type Archiver<'a> = dyn Fn(&Id, &[Vec<u8>]) -> Option<Vec<u8>> + 'a;

/// A new UUIDv7, time-ordered.
pub fn new_id() -> Id {
    *uuid::Uuid::now_v7().as_bytes()
}

/// The hyphenated lower-case form of an id.
pub fn id_string(id: &Id) -> String {
    uuid::Uuid::from_bytes(*id).hyphenated().to_string()
}

/// Parses the hyphenated (or simple) form of an id.
pub fn parse_id(text: &str) -> Option<Id> {
    uuid::Uuid::parse_str(text).ok().map(|id| *id.as_bytes())
}

/// A known project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectRecord {
    /// Its id.
    pub id: Id,
    /// Its root (absolute, canonical).
    pub root: String,
    /// When it was first seen, unix milliseconds.
    pub created_ms: u64,
    /// When it was last compiled, unix milliseconds.
    pub last_seen_ms: u64,
}

impl ProjectRecord {
    fn encode(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        out[..16].copy_from_slice(&self.id);
        out[16..24].copy_from_slice(&self.created_ms.to_be_bytes());
        out[24..].copy_from_slice(&self.last_seen_ms.to_be_bytes());
        out
    }

    fn decode(root: &str, bytes: &[u8]) -> Option<Self> {
        Some(Self {
            id: bytes.get(..16)?.try_into().ok()?,
            root: root.to_owned(),
            created_ms: u64::from_be_bytes(bytes.get(16..24)?.try_into().ok()?),
            last_seen_ms: u64::from_be_bytes(bytes.get(24..32)?.try_into().ok()?),
        })
    }
}

/// The time-ordered, per-project logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogTable {
    /// One row per compile (`compilation_log`).
    Compilations,
    /// One row per guard finding, never the secret (`guard_findings`).
    GuardFindings,
    /// Per-compile aggregates (`telemetry_events`).
    Telemetry,
    /// Per-compile quality metrics (`quality_snapshots`, read by `aic_quality_report`).
    QualitySnapshots,
    /// One row per MCP tool call, its parameters' shape only.
    ToolInvocations,
}

impl LogTable {
    /// Every log table.
    pub const ALL: [Self; 5] = [
        Self::Compilations,
        Self::GuardFindings,
        Self::Telemetry,
        Self::QualitySnapshots,
        Self::ToolInvocations,
    ];

    const fn definition(self) -> TableDefinition<'static, &'static [u8], &'static [u8]> {
        TableDefinition::new(match self {
            Self::Compilations => "compilation_log-v1",
            Self::GuardFindings => "guard_findings-v1",
            Self::Telemetry => "telemetry_events-v1",
            Self::QualitySnapshots => "quality_snapshots-v1",
            Self::ToolInvocations => "tool_invocation_log-v1",
        })
    }

    /// The table's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Compilations => "compilation_log",
            Self::GuardFindings => "guard_findings",
            Self::Telemetry => "telemetry_events",
            Self::QualitySnapshots => "quality_snapshots",
            Self::ToolInvocations => "tool_invocation_log",
        }
    }
}

/// The key of a log row: project id, time (unix ms) and row id; ordered by
/// project, then time, then id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogKey {
    /// The project.
    pub project: Id,
    /// When, unix milliseconds.
    pub time_ms: u64,
    /// The row's id (a finding's row uses its compilation's id with the
    /// finding's index in the last two bytes).
    pub id: Id,
}

impl LogKey {
    const LEN: usize = 40;

    fn encode(&self) -> [u8; Self::LEN] {
        let mut out = [0u8; Self::LEN];
        out[..16].copy_from_slice(&self.project);
        out[16..24].copy_from_slice(&self.time_ms.to_be_bytes());
        out[24..].copy_from_slice(&self.id);
        out
    }

    fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != Self::LEN {
            return None;
        }
        Some(Self {
            project: bytes[..16].try_into().ok()?,
            time_ms: u64::from_be_bytes(bytes[16..24].try_into().ok()?),
            id: bytes[24..].try_into().ok()?,
        })
    }
}

/// One row to append.
#[derive(Clone, Debug)]
pub struct LogRow {
    /// Which log.
    pub table: LogTable,
    /// Its key.
    pub key: LogKey,
    /// The caller's bytes.
    pub value: Vec<u8>,
}

/// What retention pruned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Rows removed per log table name.
    pub removed: Vec<(&'static str, u64)>,
    /// Server session rows removed.
    pub sessions_removed: u64,
    /// Expired prompt cache entries removed.
    pub prompts_removed: u64,
}

impl Store {
    /// The id of the project rooted at `root` (absolute, canonical), registering
    /// it (UUIDv7) on first use. A read when the project is known.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the read or the write fails.
    pub fn project_id(&self, root: &str, now_ms: u64) -> Result<Id, StorageError> {
        if let Some(project) = self.project(root)? {
            return Ok(project.id);
        }
        self.register_project(root, now_ms).map(|p| p.id)
    }

    /// Registers the project at `root` first seen at `now_ms` without marking it
    /// as compiled (its last-seen time stays 0 until a compile).
    fn register_project(&self, root: &str, now_ms: u64) -> Result<ProjectRecord, StorageError> {
        let path = self.path();
        let write = self.begin_write()?;
        let record = {
            let mut table = open_write(&write, PROJECTS, path)?;
            let existing = table
                .get(root)
                .map_err(|error| StorageError::storage(path, error))?
                .and_then(|row| ProjectRecord::decode(root, row.value()));
            if let Some(record) = existing {
                record
            } else {
                let record = ProjectRecord {
                    id: new_id(),
                    root: root.to_owned(),
                    created_ms: now_ms,
                    last_seen_ms: 0,
                };
                table
                    .insert(root, record.encode().as_slice())
                    .map_err(|error| StorageError::storage(path, error))?;
                record
            }
        };
        self.commit(write)?;
        Ok(record)
    }

    /// The project rooted at `root`, if known.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the read fails.
    pub fn project(&self, root: &str) -> Result<Option<ProjectRecord>, StorageError> {
        let path = self.path();
        let read = self.begin_read()?;
        let Some(table) = open_read(&read, PROJECTS, path)? else {
            return Ok(None);
        };
        let row = table
            .get(root)
            .map_err(|error| StorageError::storage(path, error))?;
        Ok(row.and_then(|row| ProjectRecord::decode(root, row.value())))
    }

    /// Registers the project at `root` if new and sets its last-seen time to
    /// `now_ms` (when later than the recorded one; 0 leaves it).
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails.
    pub fn touch_project(&self, root: &str, now_ms: u64) -> Result<ProjectRecord, StorageError> {
        let path = self.path();
        let write = self.begin_write()?;
        let record = {
            let mut table = open_write(&write, PROJECTS, path)?;
            let existing = table
                .get(root)
                .map_err(|error| StorageError::storage(path, error))?
                .and_then(|row| ProjectRecord::decode(root, row.value()));
            let record = match existing {
                Some(mut record) => {
                    record.last_seen_ms = record.last_seen_ms.max(now_ms);
                    if record.created_ms == 0 {
                        record.created_ms = now_ms;
                    }
                    record
                }
                None => ProjectRecord {
                    id: new_id(),
                    root: root.to_owned(),
                    created_ms: now_ms,
                    last_seen_ms: now_ms,
                },
            };
            table
                .insert(root, record.encode().as_slice())
                .map_err(|error| StorageError::storage(path, error))?;
            record
        };
        self.commit(write)?;
        Ok(record)
    }

    /// Every known project, by root.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the read fails.
    pub fn projects(&self) -> Result<Vec<ProjectRecord>, StorageError> {
        let path = self.path();
        let storage = |error| StorageError::storage(path, error);
        let read = self.begin_read()?;
        let Some(table) = open_read(&read, PROJECTS, path)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for row in table.iter().map_err(storage)? {
            let (root, value) = row.map_err(storage)?;
            if let Some(record) = ProjectRecord::decode(root.value(), value.value()) {
                out.push(record);
            }
        }
        Ok(out)
    }

    /// Appends log rows, and optionally a config history row, in one write
    /// transaction.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails; then nothing was written.
    pub fn append_logs(
        &self,
        rows: &[LogRow],
        config: Option<(Id, [u8; 16], u64, &[u8])>,
    ) -> Result<(), StorageError> {
        let path = self.path();
        let storage = |error| StorageError::storage(path, error);
        let write = self.begin_write()?;
        for table in LogTable::ALL {
            let mine: Vec<&LogRow> = rows.iter().filter(|row| row.table == table).collect();
            if mine.is_empty() {
                continue;
            }
            let mut opened = open_write(&write, table.definition(), path)?;
            for row in mine {
                opened
                    .insert(row.key.encode().as_slice(), row.value.as_slice())
                    .map_err(storage)?;
            }
        }
        if let Some((project, hash, now_ms, json)) = config {
            let mut table = open_write(&write, CONFIG_HISTORY, path)?;
            let mut key = project.to_vec();
            key.extend_from_slice(&hash);
            if table.get(key.as_slice()).map_err(storage)?.is_none() {
                let mut value = now_ms.to_be_bytes().to_vec();
                value.extend_from_slice(json);
                table
                    .insert(key.as_slice(), value.as_slice())
                    .map_err(storage)?;
            }
        }
        self.commit(write)
    }

    /// The rows of one project in one log from `since_ms` on, oldest first, at
    /// most `limit` of the newest when `limit` is given.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the read fails.
    pub fn read_log(
        &self,
        table: LogTable,
        project: &Id,
        since_ms: u64,
        limit: Option<usize>,
    ) -> Result<Vec<(LogKey, Vec<u8>)>, StorageError> {
        let path = self.path();
        let storage = |error| StorageError::storage(path, error);
        let read = self.begin_read()?;
        let Some(opened) = open_read(&read, table.definition(), path)? else {
            return Ok(Vec::new());
        };
        let start = LogKey {
            project: *project,
            time_ms: since_ms,
            id: [0; 16],
        }
        .encode();
        let end = LogKey {
            project: *project,
            time_ms: u64::MAX,
            id: [0xff; 16],
        }
        .encode();
        let range = opened
            .range(start.as_slice()..=end.as_slice())
            .map_err(storage)?;
        let mut out = Vec::new();
        match limit {
            Some(limit) => {
                for row in range.rev().take(limit) {
                    let (key, value) = row.map_err(storage)?;
                    if let Some(key) = LogKey::decode(key.value()) {
                        out.push((key, value.value().to_vec()));
                    }
                }
                out.reverse();
            }
            None => {
                for row in range {
                    let (key, value) = row.map_err(storage)?;
                    if let Some(key) = LogKey::decode(key.value()) {
                        out.push((key, value.value().to_vec()));
                    }
                }
            }
        }
        Ok(out)
    }

    /// Counts the rows of one project in one log.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the read fails.
    pub fn count_log(&self, table: LogTable, project: &Id) -> Result<u64, StorageError> {
        let path = self.path();
        let storage = |error| StorageError::storage(path, error);
        let read = self.begin_read()?;
        let Some(opened) = open_read(&read, table.definition(), path)? else {
            return Ok(0);
        };
        let start = [project.as_slice(), &[0u8; 24]].concat();
        let end = [project.as_slice(), &[0xffu8; 24]].concat();
        let mut count = 0;
        for row in opened
            .range(start.as_slice()..=end.as_slice())
            .map_err(storage)?
        {
            row.map_err(storage)?;
            count += 1;
        }
        Ok(count)
    }

    /// Replaces log rows in place (same keys), e.g. to reparent compilations to
    /// another conversation.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails.
    pub fn rewrite_logs(&self, rows: &[LogRow]) -> Result<(), StorageError> {
        self.append_logs(rows, None)
    }

    /// Writes or replaces a server session row.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails.
    pub fn put_server_session(&self, id: &Id, value: &[u8]) -> Result<(), StorageError> {
        let path = self.path();
        let write = self.begin_write()?;
        open_write(&write, SERVER_SESSIONS, path)?
            .insert(id.as_slice(), value)
            .map_err(|error| StorageError::storage(path, error))?;
        self.commit(write)
    }

    /// The recorded steps of one agentic session of a project, as the caller
    /// encoded them; `None` for a new session.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the read fails.
    pub fn session_state(
        &self,
        project: &Id,
        session: &str,
    ) -> Result<Option<Vec<u8>>, StorageError> {
        let path = self.path();
        let storage = |error| StorageError::storage(path, error);
        let read = self.begin_read()?;
        let Some(table) = open_read(&read, SESSION_STATE, path)? else {
            return Ok(None);
        };
        let key = [project.as_slice(), session.as_bytes()].concat();
        Ok(table
            .get(key.as_slice())
            .map_err(storage)?
            .map(|value| value.value().to_vec()))
    }

    /// Replaces the recorded steps of one agentic session.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails; then nothing was written.
    pub fn put_session_state(
        &self,
        project: &Id,
        session: &str,
        value: &[u8],
    ) -> Result<(), StorageError> {
        let path = self.path();
        let write = self.begin_write()?;
        let key = [project.as_slice(), session.as_bytes()].concat();
        open_write(&write, SESSION_STATE, path)?
            .insert(key.as_slice(), value)
            .map_err(|error| StorageError::storage(path, error))?;
        self.commit(write)
    }

    /// Every server session row, oldest first.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the read fails.
    pub fn server_sessions(&self) -> Result<Vec<(Id, Vec<u8>)>, StorageError> {
        let path = self.path();
        let storage = |error| StorageError::storage(path, error);
        let read = self.begin_read()?;
        let Some(table) = open_read(&read, SERVER_SESSIONS, path)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for row in table.iter().map_err(storage)? {
            let (key, value) = row.map_err(storage)?;
            if let Ok(id) = Id::try_from(key.value()) {
                out.push((id, value.value().to_vec()));
            }
        }
        Ok(out)
    }

    /// The config snapshot of a project under `hash`, if recorded.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the read fails.
    pub fn config_snapshot(
        &self,
        project: &Id,
        hash: &[u8; 16],
    ) -> Result<Option<(u64, Vec<u8>)>, StorageError> {
        let path = self.path();
        let read = self.begin_read()?;
        let Some(table) = open_read(&read, CONFIG_HISTORY, path)? else {
            return Ok(None);
        };
        let key = [project.as_slice(), hash.as_slice()].concat();
        let row = table
            .get(key.as_slice())
            .map_err(|error| StorageError::storage(path, error))?;
        Ok(row.and_then(|row| {
            let value = row.value();
            let created = u64::from_be_bytes(value.get(..8)?.try_into().ok()?);
            Some((created, value[8..].to_vec()))
        }))
    }

    /// Retention: stores `archive(project, rows)` summaries (the caller
    /// aggregates the compilation rows it is given) under the period's end, then
    /// deletes every log row and server session older than `before_ms`, and
    /// every expired prompt cache entry, in one write transaction.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the write fails; then nothing was pruned.
    pub fn prune(
        &self,
        before_ms: u64,
        now_ms: u64,
        archive: &Archiver<'_>,
    ) -> Result<PruneReport, StorageError> {
        let path = self.path();
        let storage = |error| StorageError::storage(path, error);
        let write = self.begin_write()?;
        let mut report = PruneReport::default();
        let projects: Vec<Id> = {
            let table = open_write(&write, PROJECTS, path)?;
            let mut ids = Vec::new();
            for row in table.iter().map_err(storage)? {
                let (root, value) = row.map_err(storage)?;
                if let Some(record) = ProjectRecord::decode(root.value(), value.value()) {
                    ids.push(record.id);
                }
            }
            ids
        };
        for table in LogTable::ALL {
            let mut opened = open_write(&write, table.definition(), path)?;
            let mut removed = 0;
            for project in &projects {
                let start = [project.as_slice(), &[0u8; 24]].concat();
                let end = LogKey {
                    project: *project,
                    time_ms: before_ms,
                    id: [0; 16],
                }
                .encode();
                let mut old: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
                for row in opened
                    .range(start.as_slice()..end.as_slice())
                    .map_err(storage)?
                {
                    let (key, value) = row.map_err(storage)?;
                    old.push((key.value().to_vec(), value.value().to_vec()));
                }
                if old.is_empty() {
                    continue;
                }
                if table == LogTable::Compilations {
                    let values: Vec<Vec<u8>> = old.iter().map(|(_, v)| v.clone()).collect();
                    if let Some(summary) = archive(project, &values) {
                        let mut key = project.to_vec();
                        key.extend_from_slice(&before_ms.to_be_bytes());
                        open_write(&write, ARCHIVE, path)?
                            .insert(key.as_slice(), summary.as_slice())
                            .map_err(storage)?;
                    }
                }
                for (key, _) in &old {
                    opened.remove(key.as_slice()).map_err(storage)?;
                    removed += 1;
                }
            }
            report.removed.push((table.name(), removed));
        }
        {
            let mut sessions = open_write(&write, SERVER_SESSIONS, path)?;
            let mut old = Vec::new();
            for row in sessions.iter().map_err(storage)? {
                let (key, _) = row.map_err(storage)?;
                let id = key.value().to_vec();
                // UUIDv7: the first 6 bytes are the unix milliseconds.
                let mut millis = [0u8; 8];
                millis[2..].copy_from_slice(&id[..6.min(id.len())]);
                if u64::from_be_bytes(millis) < before_ms {
                    old.push(id);
                }
            }
            for id in old {
                sessions.remove(id.as_slice()).map_err(storage)?;
                report.sessions_removed += 1;
            }
        }
        report.prompts_removed = crate::PROMPT_CACHE.sweep(&write, path, now_ms)?;
        self.commit(write)?;
        Ok(report)
    }

    /// Archive summaries of one project, oldest first.
    ///
    /// # Errors
    ///
    /// [`StorageError`] when the read fails.
    pub fn archive_summaries(&self, project: &Id) -> Result<Vec<Vec<u8>>, StorageError> {
        let path = self.path();
        let storage = |error| StorageError::storage(path, error);
        let read = self.begin_read()?;
        let Some(table) = open_read(&read, ARCHIVE, path)? else {
            return Ok(Vec::new());
        };
        let start = [project.as_slice(), &[0u8; 8]].concat();
        let end = [project.as_slice(), &[0xffu8; 8]].concat();
        let mut out = Vec::new();
        for row in table
            .range(start.as_slice()..=end.as_slice())
            .map_err(storage)?
        {
            let (_, value) = row.map_err(storage)?;
            out.push(value.value().to_vec());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(&home.path().join("aic.redb")).unwrap();
        (home, store)
    }

    fn row(table: LogTable, project: Id, time_ms: u64, n: u8, value: &str) -> LogRow {
        let mut id = [0u8; 16];
        id[15] = n;
        LogRow {
            table,
            key: LogKey {
                project,
                time_ms,
                id,
            },
            value: value.as_bytes().to_vec(),
        }
    }

    #[test]
    fn projects_are_registered_once_and_touched() {
        let (_home, store) = store();
        let a = store.touch_project("/repo/a", 100).unwrap();
        let again = store.touch_project("/repo/a", 200).unwrap();
        assert_eq!(a.id, again.id);
        assert_eq!((again.created_ms, again.last_seen_ms), (100, 200));
        assert_eq!(store.project_id("/repo/a", 300).unwrap(), a.id);
        let b = store.project_id("/repo/b", 300).unwrap();
        assert_ne!(a.id, b);
        let roots: Vec<String> = store
            .projects()
            .unwrap()
            .into_iter()
            .map(|p| p.root)
            .collect();
        assert_eq!(roots, ["/repo/a", "/repo/b"]);
        assert_eq!(parse_id(&id_string(&a.id)), Some(a.id));
    }

    #[test]
    fn logs_are_per_project_and_time_ordered() {
        let (_home, store) = store();
        let (p, q) = ([1u8; 16], [2u8; 16]);
        store
            .append_logs(
                &[
                    row(LogTable::Compilations, p, 30, 1, "p30"),
                    row(LogTable::Compilations, p, 10, 2, "p10"),
                    row(LogTable::Compilations, q, 20, 3, "q20"),
                    row(LogTable::GuardFindings, p, 10, 4, "finding"),
                ],
                Some((p, [9; 16], 10, b"{}")),
            )
            .unwrap();
        let values = |rows: Vec<(LogKey, Vec<u8>)>| {
            rows.into_iter()
                .map(|(_, v)| String::from_utf8(v).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            values(store.read_log(LogTable::Compilations, &p, 0, None).unwrap()),
            ["p10", "p30"]
        );
        assert_eq!(
            values(
                store
                    .read_log(LogTable::Compilations, &p, 0, Some(1))
                    .unwrap()
            ),
            ["p30"]
        );
        assert_eq!(
            values(
                store
                    .read_log(LogTable::Compilations, &p, 20, None)
                    .unwrap()
            ),
            ["p30"]
        );
        assert_eq!(
            values(store.read_log(LogTable::Compilations, &q, 0, None).unwrap()),
            ["q20"]
        );
        assert_eq!(store.count_log(LogTable::Compilations, &p).unwrap(), 2);
        assert_eq!(store.count_log(LogTable::Telemetry, &p).unwrap(), 0);
        assert_eq!(
            store.config_snapshot(&p, &[9; 16]).unwrap(),
            Some((10, b"{}".to_vec()))
        );
    }

    #[test]
    fn retention_archives_then_prunes_old_rows() {
        let (_home, store) = store();
        let project = store.touch_project("/repo", 1).unwrap().id;
        store
            .append_logs(
                &[
                    row(LogTable::Compilations, project, 10, 1, "old"),
                    row(LogTable::Compilations, project, 500, 2, "new"),
                    row(LogTable::Telemetry, project, 10, 1, "old"),
                ],
                None,
            )
            .unwrap();
        crate::PROMPT_CACHE
            .put(&store, &[1; 32], b"x", 0, 50)
            .unwrap();
        let report = store
            .prune(100, 60, &|_, rows| {
                Some(format!("{} archived", rows.len()).into_bytes())
            })
            .unwrap();
        assert!(report.removed.contains(&("compilation_log", 1)));
        assert!(report.removed.contains(&("telemetry_events", 1)));
        assert_eq!(report.prompts_removed, 1);
        assert_eq!(
            store.count_log(LogTable::Compilations, &project).unwrap(),
            1
        );
        assert_eq!(
            store.archive_summaries(&project).unwrap(),
            [b"1 archived".to_vec()]
        );
    }

    #[test]
    fn server_sessions_round_trip() {
        let (_home, store) = store();
        let id = new_id();
        store.put_server_session(&id, b"running").unwrap();
        store.put_server_session(&id, b"stopped").unwrap();
        assert_eq!(
            store.server_sessions().unwrap(),
            [(id, b"stopped".to_vec())]
        );
    }
}
