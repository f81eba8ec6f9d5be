//! `aic precompute [--root DIR] [--json] [--shard I/N] [--push]`: fills the
//! per-file cache for a whole repository (or one shard of it), with a
//! progress bar on a terminal and a one-line summary; `--push` then writes
//! the rows the remote tier lacks to it.

use std::io::IsTerminal;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::args::PrecomputeArgs;
use crate::commands::with_database;
use crate::host::Host;
use crate::pipeline::precompute::{PrecomputeReport, PrecomputeRequest, precompute};
use crate::printer::print_stdout;

/// Runs the precompute and prints its summary.
pub fn run(args: &PrecomputeArgs, host: &Host) -> anyhow::Result<()> {
    let project_root = crate::root::given_or_discovered(args.root.as_deref());
    host.batch_remote();
    let pushing = if args.push {
        let project =
            crate::pipeline::prepare::Project::load(&project_root, args.config.as_deref())?;
        Some(crate::commands::cache::sync::require_remote(
            host, &project, true,
        )?)
    } else {
        None
    };
    let report = precompute_with_progress(
        &PrecomputeRequest {
            project_root,
            config_path: args.config.clone(),
            shard: args.shard,
            push: args.push,
        },
        host,
        !args.json,
    )?;
    for warning in &report.warnings {
        tracing::warn!("{warning}");
    }
    let text = if args.json {
        let mut json =
            serde_json::to_string_pretty(&report).context("Failed to serialise the report")?;
        json.push('\n');
        json
    } else {
        let seconds = (report.duration_ms as f64 / 1000.0).max(0.001);
        let megabytes = report.bytes as f64 / 1_000_000.0;
        // Under a tenth of a second (a warm run) in milliseconds, so that it
        // never reads "0.00 s" beside a rate.
        let took = if report.duration_ms < 100 {
            format!("{} ms", report.duration_ms)
        } else {
            format!("{seconds:.2} s")
        };
        let cache = &report.cache;
        let slowest = report
            .slowest
            .iter()
            .map(|file| format!("{} {:.1} ms", file.path, file.ms))
            .collect::<Vec<_>>()
            .join(", ");
        // Nothing computed (every file from the cache), or nothing that took
        // measurable time: no list.
        let slowest = if report.slowest.iter().all(|file| file.ms < 0.1) {
            String::new()
        } else {
            format!("Slowest: {slowest}\n")
        };
        let shard = report
            .shard
            .as_ref()
            .map_or_else(String::new, |shard| format!(" of shard {shard}"));
        let remote = cache.remote.as_ref().map_or_else(String::new, |remote| {
            let pushed = if args.push {
                format!(
                    ", {} rows pushed ({:.1} MB)",
                    remote.written,
                    remote.bytes_written as f64 / 1e6
                )
            } else {
                String::new()
            };
            format!(
                "; remote {}: {} hits, {} misses, {} rejected{pushed}",
                remote.store, remote.hits, remote.misses, remote.rejected,
            )
        });
        format!(
            "Precomputed {} {}{shard} ({megabytes:.1} MB) in {took} ({:.1} MB/s, {:.0} files/s): facts rows {} computed, {} already cached; {} rows written to {}{remote}\n{slowest}",
            report.files,
            files(report.files as u64),
            report.mb_per_second,
            report.files_per_second,
            cache.facts.computed,
            cache.facts.hits,
            cache.rows_written,
            cache
                .database
                .as_ref()
                .map_or_else(String::new, |path| path.display().to_string()),
        )
    };
    print_stdout(&text).context("Failed to write to stdout")?;
    // A push the store stopped taking fails the job: a CI run must not pass
    // with the remote cache left unfilled.
    if let Some(tier) = pushing
        && !tier.is_available()
    {
        return Err(crate::error::UserError::new(
            format!(
                "The remote cache `{}` stopped answering, so the push is incomplete",
                tier.shown()
            ),
            "check the store and its credentials (the warning above names the cause), then run `aic precompute --push` again",
        )
        .into());
    }
    Ok(())
}

/// "file" or "files", for `count` of them.
fn files(count: u64) -> &'static str {
    if count == 1 { "file" } else { "files" }
}

/// The progress line's keys: `{files}` ("1 file", "2000 files"),
/// `{of_files}` ("3/2717 files"), `{rate}` (whole files per second since the
/// start) and `{left}` (seconds left at that rate). indicatif's own
/// `{per_sec}` and `{eta}` follow a smoothed rate that lags far behind on runs
/// of a few seconds, and `{per_sec}` shows four decimals and no unit.
fn with_counts(style: ProgressStyle) -> ProgressStyle {
    fn rate(state: &indicatif::ProgressState) -> f64 {
        state.pos() as f64 / state.elapsed().as_secs_f64().max(0.001)
    }
    style
        .with_key(
            "files",
            |state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
                let _ = write!(out, "{} {}", state.pos(), files(state.pos()));
            },
        )
        .with_key(
            "of_files",
            |state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
                let total = state.len().unwrap_or(0);
                let _ = write!(out, "{}/{total} {}", state.pos(), files(total));
            },
        )
        .with_key(
            "rate",
            |state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
                let _ = write!(out, "{:.0} files/s", rate(state));
            },
        )
        .with_key(
            "left",
            |state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
                let left = state.len().unwrap_or(0).saturating_sub(state.pos());
                let rate = rate(state);
                let _ = if rate > 0.0 {
                    write!(out, "{:.0} s left", left as f64 / rate)
                } else {
                    write!(out, "time left unknown")
                };
            },
        )
}

/// [`precompute`] with a progress line on stderr when it is a terminal,
/// `show` is set and `-q` is not: a running count while the scan reads files
/// (their number is not known yet), then a bar.
///
/// # Errors
///
/// A [`UserError`](crate::error::UserError) when there is no database, a
/// [`DatabaseError::Damaged`](crate::home::DatabaseError::Damaged) when it is
/// damaged, and the errors of [`precompute`].
pub fn precompute_with_progress(
    request: &PrecomputeRequest,
    host: &Host,
    show: bool,
) -> anyhow::Result<PrecomputeReport> {
    // Without a database there is nothing to fill: say so as a user error.
    // A damaged one would take no rows: say that before the work, not after.
    with_database(host, |store| Ok(store.verify_pages()?))?;
    let bar = ProgressBar::hidden();
    // `-q` leaves stderr to errors: no progress bar either.
    let on_terminal =
        std::io::stderr().is_terminal() && show && tracing::enabled!(tracing::Level::WARN);
    if on_terminal {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {files} ({rate})")
                .map_or_else(|_| ProgressStyle::default_spinner(), with_counts),
        );
        bar.set_message("Reading and precomputing");
    }
    let set_total = |total: u64| {
        // The length first: the new style draws at once.
        bar.set_length(total);
        if on_terminal {
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} {msg} [{bar:30}] {of_files} ({rate}, {left})",
                )
                .map_or_else(|_| ProgressStyle::default_bar(), with_counts)
                .progress_chars("=> "),
            );
            bar.set_message("Precomputing");
        }
    };
    let report = precompute(request, host, &set_total, &|done| bar.set_position(done))?;
    bar.finish_and_clear();
    Ok(report)
}
