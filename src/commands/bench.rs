//! `aic bench MANIFEST` and `aic bench --compare OLD NEW`: runs the benchmark
//! harness ([`crate::bench`](mod@crate::bench)) with a progress bar on a terminal, prints the
//! summary tables (or `results.json` with `--json`), and compares two runs.

use std::fmt::Write;
use std::io::IsTerminal;
use std::path::Path;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::args::BenchArgs;
use crate::bench::report::{self, Results};
use crate::bench::{self, BenchOptions};
use crate::error::UserError;
use crate::printer::print_stdout;

/// Runs `aic bench`.
pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    if args.exec_measured {
        return bench::speed::exec_measured(&args.exec_argv);
    }
    if let [old, new] = args.compare.as_slice() {
        let (old, new) = (read_results(old)?, read_results(new)?);
        print_stdout(&report::compare(&old, &new)).context("Failed to write to stdout")?;
        if let Some(max_drop) = args.max_drop {
            let dropped = report::regressions(&old, &new, max_drop);
            if !dropped.is_empty() {
                return Err(UserError::new(
                    format!(
                        "{} quality metrics dropped by more than {max_drop}:\n  {}",
                        dropped.len(),
                        dropped.join("\n  ")
                    ),
                    "look at the tasks whose rank or gold body changed in the new results.json",
                )
                .into());
            }
        }
        return Ok(());
    }
    let Some(manifest) = &args.manifest else {
        return Err(UserError::new(
            "`aic bench` needs a manifest, or --compare OLD.json NEW.json",
            "run `aic bench benches/dev.toml` (docs/bench.md describes the manifest)",
        )
        .into());
    };
    let options = BenchOptions {
        manifest: manifest.clone(),
        out: args.out.clone(),
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from)),
        only: args.only.clone(),
        data: args.data.clone(),
        clones: args.clones.clone(),
        no_speed: args.no_speed,
        exe: std::env::current_exe().context("Cannot find the aic executable")?,
    };
    let bar = ProgressBar::hidden();
    if std::io::stderr().is_terminal() && !args.json {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
    }
    let progress = |done: u64, total: u64, what: &str| {
        bar.set_length(total);
        bar.set_position(done);
        bar.set_message(what.to_owned());
    };
    let results = bench::run(&options, &progress)?;
    bar.finish_and_clear();
    let out = fs_err::canonicalize(&options.out)?;
    let written = bench::write_outputs(&results, &out)?;
    let text = if args.json {
        let mut json = serde_json::to_string_pretty(&results)?;
        json.push('\n');
        json
    } else {
        let mut text: String = report::tables(&results)
            .iter()
            .map(|table| table.terminal() + "\n")
            .collect();
        let _ = writeln!(
            text,
            "Wrote {} ({:.1} s)",
            written
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            results.timings.wall_seconds
        );
        text
    };
    print_stdout(&text).context("Failed to write to stdout")?;
    // A run where no task ran measured nothing: a CI job must not pass on it.
    let ran: usize = results
        .sets
        .iter()
        .map(|set| set.tasks_total - set.tasks_skipped)
        .sum();
    let total: usize = results.sets.iter().map(|set| set.tasks_total).sum();
    if ran == 0 && !results.sets.is_empty() {
        return Err(UserError::new(
            if total == 0 {
                "No task of the manifest matched (check --only and the task files' `repo` names)".to_owned()
            } else {
                format!("All {total} tasks were skipped; their reasons are in results.json and report.md")
            },
            "check the manifest's repository names and paths (and --clones); `aic bench --help` lists the options",
        )
        .into());
    }
    Ok(())
}

fn read_results(path: &Path) -> anyhow::Result<Results> {
    let text = fs_err::read_to_string(path).map_err(|error| {
        UserError::new(
            format!("Cannot read `{}`: {error}", path.display()),
            "pass two results.json files written by `aic bench`",
        )
    })?;
    serde_json::from_str(&text).map_err(|error| {
        UserError::new(
            format!(
                "`{}` is not an aic bench results.json: {error}",
                path.display()
            ),
            "pass two results.json files written by `aic bench` (same schema version)",
        )
        .into()
    })
}
