//! `aic cache stats | clear | export FILE | import FILE | push | pull`: the
//! per-file cache in the database under `AIC_HOME` (default
//! `~/.aic/aic.redb`), and its remote tier ([`sync`]).

pub mod sync;

use std::fmt::Write as _;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

use aic_storage::{StorageError, Store};

use aic_stages::content_hash::ContentHash;
use aic_stages::language::Language;
use aic_stages::relative_path::RelativePath;
use aic_stages::row_codec::{decode_facts, decode_imports, decode_scan};
use anyhow::Context;
use serde::Serialize;

use crate::args::{CacheArgs, CacheCommand};
use crate::commands::with_database;
use crate::error::UserError;
use crate::home::{DATABASE_FILE, DatabaseError};
use crate::host::Host;
use crate::printer::print_stdout;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatsOutput {
    database: String,
    entries: u64,
    stored_bytes: u64,
    file_bytes: u64,
    projects: usize,
    path_index_rows: u64,
    remote: RemoteStats,
}

/// The remote tier in `aic cache stats`: the store named here (redacted)
/// and the running counts of every run that used one.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RemoteStats {
    store: Option<String>,
    hits: u64,
    misses: u64,
    rejected: u64,
    bytes_read: u64,
    written: u64,
    bytes_written: u64,
}

impl RemoteStats {
    fn of(store: &Store) -> anyhow::Result<Self> {
        let counts = store.counters()?;
        let count = |name: &str| counts.get(name).copied().unwrap_or(0);
        let root = crate::root::given_or_discovered(None);
        let config = crate::pipeline::prepare::Project::load(&root, None).map_or_else(
            |_| aic_stages::config::AicConfig::default().cache,
            |project| project.config.cache,
        );
        let shown = match crate::cache::remote::RemoteSettings::from_env(&config) {
            Ok(settings) => settings.map(|settings| settings.location.shown),
            Err(error) => Some(error.shown),
        };
        Ok(Self {
            store: shown,
            hits: count("remote.hits"),
            misses: count("remote.misses"),
            rejected: count("remote.rejected"),
            bytes_read: count("remote.bytesRead"),
            written: count("remote.written"),
            bytes_written: count("remote.bytesWritten"),
        })
    }
}

/// Whether an imported payload decodes as one of the row kinds this aic writes.
fn decodes(payload: &[u8]) -> bool {
    let path = RelativePath::new("import-check").unwrap_or_else(|| unreachable!());
    decode_scan(payload).is_ok()
        || decode_imports(payload).is_ok()
        || decode_facts(payload, &path, Language::Rust, ContentHash([0; 16])).is_ok()
        || crate::pipeline::scan::git::is_history_row(payload)
}

/// Runs a cache subcommand.
pub fn run(args: &CacheArgs, host: &Host) -> anyhow::Result<()> {
    match &args.command {
        CacheCommand::Push(sync) => return sync::run(sync, host, true),
        CacheCommand::Pull(sync) => return sync::run(sync, host, false),
        _ => {}
    }
    let now_secs = host.clock().now_secs();
    let text = match with_database(host, |store| command(store, args, now_secs)) {
        Err(error) if matches!(args.command, CacheCommand::Clear) && is_damage(&error) => {
            recover(host)?
        }
        other => other?,
    };
    let text = if matches!(args.command, CacheCommand::Clear) {
        clear_snapshots(host, text)?
    } else {
        text
    };
    print_stdout(&text).context("Failed to write to stdout")
}

/// Removes the saved resident snapshots (`$AIC_HOME/snapshots/`) after a
/// clear: they are a copy of the path index and scan rows, so a clear that
/// kept them would not make the next compile read every file again. Adds
/// how many were removed to `text`.
fn clear_snapshots(host: &Host, mut text: String) -> anyhow::Result<String> {
    let Some(home) = host.home() else {
        return Ok(text);
    };
    let directory = home.dir().join(crate::resident::SNAPSHOT_DIR);
    let entries = match fs_err::read_dir(&directory) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(text),
        Err(error) => return Err(error.into()),
    };
    let mut removed = 0;
    for entry in entries {
        let path = entry?.path();
        if path.is_file() {
            fs_err::remove_file(&path)?;
            removed += 1;
        }
    }
    if removed > 0 {
        let _ = writeln!(
            text,
            "Removed {removed} saved project snapshot{} from {}",
            if removed == 1 { "" } else { "s" },
            directory.display()
        );
    }
    Ok(text)
}

/// Whether an error says the database file is damaged (rather than busy,
/// unwritable or from a newer aic).
fn is_damage(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<DatabaseError>()
            .is_some_and(|error| match error {
                DatabaseError::Damaged { .. } => true,
                DatabaseError::Storage(error) => error.is_damage(),
                DatabaseError::NoHome => false,
            })
            || cause
                .downcast_ref::<StorageError>()
                .is_some_and(StorageError::is_damage)
    })
}

/// `aic cache clear` on a damaged database: the file is moved aside (kept
/// for inspection, never deleted) and an empty database is created in its
/// place.
fn recover(host: &Host) -> anyhow::Result<String> {
    let home = host.home().ok_or(DatabaseError::NoHome)?;
    let path = home.database_path();
    let aside = path.with_file_name(format!("{DATABASE_FILE}.damaged-{}", host.now_ms()));
    fs_err::rename(&path, &aside).with_context(|| {
        format!(
            "Failed to move the damaged database `{}` aside",
            path.display()
        )
    })?;
    home.open_database()?;
    // A running daemon still holds the old file open and would go on
    // writing to it: it is stopped, and the next hook or compile that
    // starts one opens the new file.
    let stopped = stop_daemon(home.dir());
    Ok(format!(
        "The aic database `{}` was damaged: moved it aside to `{}` and created an empty one (caches and logs start over){}\n",
        path.display(),
        aside.display(),
        if stopped {
            "; stopped the running aic daemon, which had the old file open (`aic daemon start` starts it again)"
        } else {
            ""
        }
    ))
}

/// Stops the daemon of the aic home at `dir` if one runs; whether one was
/// stopped.
fn stop_daemon(dir: &Path) -> bool {
    let paths = crate::daemon::DaemonPaths::new(dir);
    let stopped = matches!(
        crate::daemon::client::exchange(
            &paths,
            &crate::daemon::protocol::Request::Stop,
            std::time::Duration::from_secs(2),
        ),
        Ok(crate::daemon::protocol::Reply::Stopping)
    );
    if stopped {
        crate::daemon::client::wait_gone(&paths);
    }
    stopped
}

/// A user error for a file argument that cannot be used.
fn bad_file(file: &Path, what: &str, hint: &str) -> anyhow::Error {
    UserError::new(format!("`{}` {what}", file.display()), hint).into()
}

fn command(store: &Store, args: &CacheArgs, now_secs: u64) -> anyhow::Result<String> {
    Ok(match &args.command {
        CacheCommand::Stats { json } => {
            // Damage in any table, not only the cache's, is named here.
            store.verify_pages()?;
            let stats = store.cache_stats()?;
            let output = StatsOutput {
                database: store.path().display().to_string(),
                entries: stats.entries,
                stored_bytes: stats.stored_bytes,
                file_bytes: stats.file_bytes,
                projects: stats.path_rows.len(),
                path_index_rows: stats.path_rows.values().sum(),
                remote: RemoteStats::of(store)?,
            };
            if *json {
                let mut json = serde_json::to_string_pretty(&output)?;
                json.push('\n');
                json
            } else {
                let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
                let remote = &output.remote;
                format!(
                    "database      {}\nrows          {}\nstored        {:.1} MiB (compressed)\nfile on disk  {:.1} MiB\nprojects      {}\npath index    {} files\nremote        {}\nremote reads  {} hits, {} misses, {} rejected, {:.1} MiB read\nremote writes {} rows, {:.1} MiB written\n",
                    output.database,
                    output.entries,
                    mib(output.stored_bytes),
                    mib(output.file_bytes),
                    output.projects,
                    output.path_index_rows,
                    remote.store.as_deref().unwrap_or("none"),
                    remote.hits,
                    remote.misses,
                    remote.rejected,
                    mib(remote.bytes_read),
                    remote.written,
                    mib(remote.bytes_written),
                )
            }
        }
        CacheCommand::Push(_) | CacheCommand::Pull(_) => String::new(),
        CacheCommand::Clear => {
            store.clear_cache()?;
            aic_storage::SPEC_CACHE.clear(store)?;
            aic_storage::PROMPT_CACHE.clear(store)?;
            format!(
                "Cleared the per-file cache, the prompt cache and the spec cache in {} (logs are kept)\n",
                store.path().display()
            )
        }
        CacheCommand::Export { file } => {
            let database =
                fs_err::canonicalize(store.path()).unwrap_or_else(|_| store.path().to_path_buf());
            if fs_err::canonicalize(file).is_ok_and(|target| target == database) {
                return Err(bad_file(
                    file,
                    "is the aic database itself",
                    "export to another file, e.g. `aic cache export aic-cache.bin`",
                ));
            }
            let directory = file
                .parent()
                .filter(|parent| !parent.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if !directory.is_dir() {
                return Err(bad_file(
                    file,
                    "cannot be written: its directory does not exist",
                    "create the directory first, or export elsewhere",
                ));
            }
            // Written next to the target and renamed into place: a failed
            // export leaves no partial file, and the file is private (0600)
            // like the database, since it holds source code.
            let temporary = tempfile::Builder::new()
                .prefix(".aic-export-")
                .tempfile_in(directory)
                .with_context(|| format!("Failed to create a file in `{}`", directory.display()))?;
            let mut out = BufWriter::new(temporary.as_file());
            let rows = store
                .export_cache(&mut out)
                .with_context(|| format!("Failed to export the cache to `{}`", file.display()))?;
            out.flush()?;
            drop(out);
            temporary
                .persist(file)
                .with_context(|| format!("Failed to write `{}`", file.display()))?;
            format!("Exported {rows} rows to {}\n", file.display())
        }
        CacheCommand::Import { file } => {
            if file.is_dir() {
                return Err(bad_file(
                    file,
                    "is a directory",
                    "pass the file `aic cache export` wrote",
                ));
            }
            let input = fs_err::File::open(file).map_err(|error| {
                bad_file(
                    file,
                    &format!("cannot be read ({})", error.kind()),
                    "pass the file `aic cache export` wrote",
                )
            })?;
            let mut input = BufReader::new(input);
            let report = store
                .import_cache(&mut input, u64::MAX, now_secs, &decodes)
                .map_err(|error| match error {
                    aic_storage::ExchangeError::NotAnExport
                    | aic_storage::ExchangeError::Version { .. } => bad_file(
                        file,
                        &error.to_string(),
                        "pass a file written by `aic cache export` of this aic version",
                    ),
                    other => anyhow::Error::new(other).context(format!(
                        "Failed to import the cache from `{}`",
                        file.display()
                    )),
                })?;
            if report.truncated {
                tracing::warn!(
                    "`{}` ends in the middle of a row: it was cut short; the rows before the cut were imported",
                    file.display()
                );
            }
            format!(
                "Imported {} rows from {} ({} already present, {} skipped as undecodable)\n",
                report.imported,
                file.display(),
                report.present,
                report.skipped
            )
        }
    })
}
