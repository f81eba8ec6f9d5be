//! `aic cache stats | clear | export FILE | import FILE`: the per-file cache in
//! the database under `AIC_HOME` (default `~/.aic/aic.redb`).

use std::io::{BufReader, BufWriter, Write};

use aic_stages::facts_codec::{decode_facts, decode_imports, decode_scan};
use aic_stages::repo_map::{ContentHash, Language, RelativePath};
use anyhow::{Context, anyhow};
use serde::Serialize;

use crate::cli::{CacheArgs, CacheCommand};
use crate::facts_cache::{now_secs, open_store};
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
}

/// Whether an imported payload decodes as one of the row kinds this aic writes.
fn decodes(payload: &[u8]) -> bool {
    let path = RelativePath::new("import-check").unwrap_or_else(|| unreachable!());
    decode_scan(payload).is_ok()
        || decode_imports(payload).is_ok()
        || decode_facts(payload, &path, Language::Rust, ContentHash([0; 16])).is_ok()
}

/// Runs a cache subcommand.
pub fn run(args: &CacheArgs) -> anyhow::Result<()> {
    let store = open_store().map_err(|message| anyhow!(message))?;
    let text = match &args.command {
        CacheCommand::Stats { json } => {
            let stats = store.cache_stats()?;
            let output = StatsOutput {
                database: store.path().display().to_string(),
                entries: stats.entries,
                stored_bytes: stats.stored_bytes,
                file_bytes: stats.file_bytes,
                projects: stats.path_rows.len(),
                path_index_rows: stats.path_rows.values().sum(),
            };
            if *json {
                let mut json = serde_json::to_string_pretty(&output)?;
                json.push('\n');
                json
            } else {
                let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
                format!(
                    "database      {}\nrows          {}\nstored        {:.1} MiB (compressed)\nfile on disk  {:.1} MiB\nprojects      {}\npath index    {} files\n",
                    output.database,
                    output.entries,
                    mib(output.stored_bytes),
                    mib(output.file_bytes),
                    output.projects,
                    output.path_index_rows
                )
            }
        }
        CacheCommand::Clear => {
            store.clear_cache()?;
            store.clear_spec_cache()?;
            format!(
                "Cleared the per-file cache and the spec cache in {}\n",
                store.path().display()
            )
        }
        CacheCommand::Export { file } => {
            let out = fs_err::File::create(file)?;
            let mut out = BufWriter::new(out);
            let rows = store
                .export_cache(&mut out)
                .with_context(|| format!("Failed to export the cache to `{}`", file.display()))?;
            out.flush()?;
            format!("Exported {rows} rows to {}\n", file.display())
        }
        CacheCommand::Import { file } => {
            let input = fs_err::File::open(file)?;
            let mut input = BufReader::new(input);
            let report = store
                .import_cache(&mut input, u64::MAX, now_secs(), &decodes)
                .with_context(|| format!("Failed to import the cache from `{}`", file.display()))?;
            format!(
                "Imported {} rows from {} ({} already present, {} skipped as undecodable)\n",
                report.imported,
                file.display(),
                report.present,
                report.skipped
            )
        }
    };
    print_stdout(&text).context("Failed to write to stdout")
}
