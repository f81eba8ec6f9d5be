//! `aic cache push|pull [--root DIR]`: moves a project's rows between the
//! local cache and the remote tier (`docs/remote-cache.md`), and the checks
//! `aic precompute --push` shares with them.

use std::sync::Arc;

use anyhow::Context;
use serde::Serialize;

use crate::args::RemoteSyncArgs;
use crate::cache::remote::location::URL_FORMS;
use crate::cache::remote::{RemoteTier, Stored};
use crate::cache::{FileCache, RemoteReport};
use crate::error::UserError;
use crate::host::Host;
use crate::pipeline::file_cache;
use crate::pipeline::precompute::{blob_scan_rows, project_keys, push_rows};
use crate::pipeline::prepare::Project;
use crate::printer::print_stdout;

/// The remote tier of `project`, for a command that needs one; `writing`
/// when it will write to it.
///
/// # Errors
///
/// A [`UserError`] when no remote tier is configured, it cannot be opened,
/// or it is read-only and `writing`.
pub fn require_remote(
    host: &Host,
    project: &Project,
    writing: bool,
) -> anyhow::Result<Arc<RemoteTier>> {
    let tier = host.remote_tier(&project.config.cache).ok_or_else(|| {
        UserError::new(
            "No usable remote cache is configured",
            format!(
                "set AIC_CACHE_REMOTE_URL or `cache.remote.url` in aic.config.json to one of {URL_FORMS}"
            ),
        )
    })?;
    if writing && tier.read_only() {
        return Err(UserError::new(
            format!("The remote cache `{}` is read-only", tier.shown()),
            "use credentials that may write and `cache.remote.readOnly: false` (or AIC_CACHE_REMOTE_READ_ONLY=0) where the cache is filled, e.g. in CI",
        )
        .into());
    }
    Ok(tier)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SyncOutput {
    store: String,
    files: usize,
    rows: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pushed: Option<Stored>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pulled: Option<RemoteReport>,
}

/// Runs `aic cache push` (`push`) or `aic cache pull`.
pub fn run(args: &RemoteSyncArgs, host: &Host, push: bool) -> anyhow::Result<()> {
    let root = crate::root::given_or_discovered(args.root.as_deref());
    host.batch_remote();
    let project = Project::load(&root, args.config.as_deref())?;
    // An unknown key (`readonly` for `readOnly`) must not pass in silence
    // before a write.
    for warning in &project.warnings {
        tracing::warn!("{warning}");
    }
    let tier = require_remote(host, &project, push)?;
    let mut cache = file_cache(host, &project)?;
    let snapshot = crate::pipeline::scan::scan(&project, Some(&cache), None, None);
    let tokenizer =
        aic_stages::fit::model::ModelProfile::for_model(project.config.model.id.as_deref())
            .tokenizer;
    let mut keys = project_keys(&cache, &snapshot.repo.files, tokenizer);
    // The git history row moves with the files' rows.
    keys.extend(crate::pipeline::scan::git::history_row_keys(
        &project.root,
        None,
    ));
    let mut output = SyncOutput {
        store: tier.shown().to_owned(),
        files: snapshot.repo.files.len(),
        rows: keys.len(),
        pushed: None,
        pulled: None,
    };
    if push {
        let (_, warning) = cache.finish();
        if let Some(warning) = warning {
            tracing::warn!("{warning}");
        }
        let now_secs = host.clock().now_secs();
        let built = blob_scan_rows(&cache, &project.root, &snapshot.repo.files, now_secs);
        keys.extend(built.keys());
        output.rows = keys.len();
        output.pushed = Some(push_rows(&cache, &keys, &built, now_secs));
    } else {
        cache.prefetch(keys.iter().copied());
        keep_fetched(&cache);
        let (report, warning) = cache.finish();
        if let Some(warning) = warning {
            tracing::warn!("{warning}");
        }
        output.pulled = report.remote;
    }
    if !tier.is_available() {
        return Err(UserError::new(
            format!("The remote cache `{}` stopped answering", tier.shown()),
            "check that the store is reachable from here (the warning above names the cause), then run the command again",
        )
        .into());
    }
    let text = if args.json {
        let mut json = serde_json::to_string_pretty(&output)?;
        json.push('\n');
        json
    } else if let Some(pushed) = output.pushed {
        let there =
            (output.rows as u64).saturating_sub(pushed.written + pushed.failed + pushed.not_local);
        let not_local = if pushed.not_local == 0 {
            String::new()
        } else {
            format!(
                "; {} rows are in neither this machine's cache nor the store: run `aic precompute --push` to compute and push them",
                pushed.not_local
            )
        };
        format!(
            "Pushed {} of {} rows ({:.1} MB) of {} files to {}; {there} were there already{}{not_local}\n",
            pushed.written,
            output.rows,
            pushed.bytes as f64 / 1e6,
            output.files,
            output.store,
            failed(pushed.failed)
        )
    } else {
        let pulled = output.pulled.clone().unwrap_or_default();
        format!(
            "Pulled {} rows ({:.1} MB) of {} files from {}: {} not there, {} rejected\n",
            pulled.hits,
            pulled.bytes_read as f64 / 1e6,
            output.files,
            output.store,
            pulled.misses,
            pulled.rejected
        )
    };
    print_stdout(&text).context("Failed to write to stdout")
}

fn failed(count: u64) -> String {
    if count == 0 {
        String::new()
    } else {
        format!(" ({count} failed)")
    }
}

/// Writes every row fetched ahead to the local tier, once it decodes as a
/// row kind this aic writes.
fn keep_fetched(cache: &FileCache) {
    cache.keep_fetched(&super::decodes);
}
