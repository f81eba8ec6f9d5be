//! `aic tree [--root DIR] [--threshold N] [--directories] [--json]`: the
//! repository's token-count tree and what the scan leaves out.

use std::fmt::Write;

use anyhow::Context;

use crate::answer::inspect::thousands;
use crate::args::TreeArgs;
use crate::commands::precompute::precompute_with_progress;
use crate::host::Host;
use crate::pipeline::precompute::PrecomputeRequest;
use crate::pipeline::prepare::Project;
use crate::pipeline::tree::{TokenTree, token_tree};
use crate::printer::print_stdout;

/// Computes the facts of every file (through the cache, with a progress bar
/// on a terminal) and prints the tree.
pub fn run(args: &TreeArgs, host: &Host) -> anyhow::Result<()> {
    let root = crate::root::given_or_discovered(args.root.as_deref());
    let request = PrecomputeRequest {
        project_root: root.clone(),
        config_path: args.config.clone(),
        shard: None,
        push: false,
    };
    let report = precompute_with_progress(&request, host, !args.json)?;
    for warning in &report.warnings {
        tracing::warn!("{warning}");
    }
    let project = Project::load(&root, args.config.as_deref())?;
    let mut tree = token_tree(&project, host)?;
    let text = if args.json {
        // The same entries the text shows.
        tree.entries
            .retain(|e| e.raw_tokens >= args.threshold && (e.directory || !args.directories));
        let mut json =
            serde_json::to_string_pretty(&tree).context("Failed to serialise the tree")?;
        json.push('\n');
        json
    } else {
        render(&tree, args.threshold, args.directories)
    };
    print_stdout(&text).context("Failed to write to stdout")
}

/// The tree as text: one line per directory and file (indented by depth),
/// raw and compiled tokens right-aligned, then what was left out.
fn render(tree: &TokenTree, threshold: u64, directories_only: bool) -> String {
    let mut out = String::new();
    let total = tree.entries.iter().find(|e| e.path.is_empty());
    let (files, raw, compiled) =
        total.map_or((0, 0, 0), |t| (t.files, t.raw_tokens, t.compiled_tokens));
    let _ = writeln!(
        out,
        "{} — {files} files, {} raw tokens, {} compiled ({}% of raw)\n",
        tree.project_root.display(),
        thousands(raw),
        thousands(compiled),
        if raw == 0 {
            100
        } else {
            (compiled * 100).div_ceil(raw)
        }
    );
    let _ = writeln!(out, "{:>12} {:>12}  path", "raw", "compiled");
    let mut hidden = 0usize;
    for entry in &tree.entries {
        if (directories_only && !entry.directory) || entry.raw_tokens < threshold {
            hidden += usize::from(!entry.directory);
            continue;
        }
        let depth = entry.path.trim_end_matches('/').matches('/').count()
            + usize::from(!entry.path.is_empty());
        let name = if entry.path.is_empty() {
            "./".to_owned()
        } else {
            let trimmed = entry.path.trim_end_matches('/');
            let name = trimmed.rsplit('/').next().unwrap_or(trimmed);
            if entry.directory {
                format!("{name}/")
            } else {
                name.to_owned()
            }
        };
        let _ = writeln!(
            out,
            "{:>12} {:>12}  {}{name}",
            thousands(entry.raw_tokens),
            thousands(entry.compiled_tokens),
            "  ".repeat(depth)
        );
    }
    if hidden > 0 {
        let _ = writeln!(
            out,
            "({hidden} files not shown: --directories, or under --threshold {threshold})"
        );
    }
    let skipped = &tree.skipped;
    let _ = writeln!(
        out,
        "\nSkipped by the scan: {} binary, {} too large, {} unreadable, {} symbolic links",
        skipped.binary, skipped.too_large, skipped.unreadable, skipped.symlinks
    );
    if !tree.left_out.is_empty() {
        let _ = writeln!(
            out,
            "Tracked by git but not in scope ({}):",
            tree.left_out.len()
        );
        for file in &tree.left_out {
            let _ = writeln!(out, "  - {}", file.reason);
        }
    }
    out
}
