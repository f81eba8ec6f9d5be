//! What a bench run produces: [`Results`] (written as `results.json`), its
//! summaries, the tables shown on the terminal and in `report.md`, and
//! `--compare`'s differences.
//!
//! `results.json` is deterministic for the same manifest, tasks, clones and
//! aic build: tasks keep their task-file order, maps are sorted, and
//! everything measured in time (speed, wall times, the machine) sits under the
//! one top-level key `timings`.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::bench::edit_sites::EditSites;
use crate::bench::metrics::{self, RANK_METRICS, RankScores};
use crate::bench::quality::TaskResult;
use crate::bench::speed::{Machine, Stats};

/// The version of the `results.json` layout.
pub const SCHEMA: u32 = 1;

/// A whole run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Results {
    /// [`SCHEMA`].
    pub schema: u32,
    /// `aic --version` of the build that ran.
    pub aic_version: String,
    /// The manifest's file name.
    pub manifest: String,
    /// `maxFiles` of the ranking compile.
    pub max_files: usize,
    /// The budgets, by name, in manifest order.
    pub budgets: Vec<String>,
    /// The ranking methods: `aic`, then the ranking baselines in manifest
    /// order.
    pub methods: Vec<String>,
    /// The methods whose prompts are measured by edit sites: `aic`, then
    /// `chunk-bm25` when the manifest runs it.
    #[serde(default)]
    pub edit_site_methods: Vec<String>,
    /// One entry per task file.
    pub sets: Vec<SetResults>,
    /// Everything measured in time; the only part that differs between runs.
    pub timings: Timings,
}

/// One task file's results.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetResults {
    /// The set's name.
    pub name: String,
    /// The task file's name.
    pub file: String,
    /// Tasks in the file (after `--only`).
    pub tasks_total: usize,
    /// Tasks skipped, with their reasons in [`TaskResult::skipped`].
    pub tasks_skipped: usize,
    /// Summaries over the tasks that ran: `ALL`, then one per repository.
    pub groups: Vec<GroupSummary>,
    /// Every task, in file order.
    pub tasks: Vec<TaskResult>,
}

/// Means over a group of tasks.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupSummary {
    /// `ALL` or `owner/name`.
    pub name: String,
    /// Tasks that ran.
    pub tasks: usize,
    /// Mean ranking metrics per method.
    pub methods: BTreeMap<String, RankScores>,
    /// Mean recall@k for k = 1..=10 per method.
    pub recall_curve: BTreeMap<String, Vec<f64>>,
    /// aic's compiled prompts per budget, in manifest order.
    pub budgets: Vec<BudgetSummary>,
}

/// aic's prompts at one budget over a group.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetSummary {
    /// `default` or tokens.
    pub budget: String,
    /// Share of tasks with every gold file's body (full or sliced) in the prompt.
    pub gold_body: f64,
    /// Share of tasks with every gold file in the prompt at any tier.
    pub gold_any: f64,
    /// Compiles that failed (counted as gold absent).
    pub failures: usize,
    /// Median prompt tokens over the compiles that succeeded.
    pub tokens_median: Option<f64>,
    /// Largest prompt, in tokens.
    pub tokens_max: Option<u64>,
    /// Median of `1 − prompt ÷ raw tokens of the selected files`.
    pub reduction_median: Option<f64>,
    /// Edit sites per method, over the tasks with hunks; empty when no task
    /// has any.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub edit_sites: BTreeMap<String, EditSiteSummary>,
    /// aic's slices over the compiles that succeeded: their markers, the
    /// definitions they show, and how many have more markers than shown
    /// definitions plus one ([`metrics::SliceShape`]).
    #[serde(default)]
    pub slice_shape: metrics::SliceShape,
}

/// One method's edit sites at one budget over a group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditSiteSummary {
    /// Tasks with hunks measured.
    pub tasks: usize,
    /// Their hunks in all.
    pub hunks: usize,
    /// Mean hunk coverage per task.
    pub hunk_coverage: f64,
    /// Share of tasks with every hunk covered.
    pub all_hunks_covered: f64,
    /// Median tokens per covered hunk, over the tasks with one covered.
    pub tokens_per_covered_hunk_median: Option<f64>,
    /// Median prompt tokens.
    pub tokens_median: Option<f64>,
}

/// Wall times, speed measurements and the machine.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Timings {
    /// Cores and load.
    pub machine: Machine,
    /// Tasks run at once (`--jobs`).
    pub jobs: usize,
    /// Wall time of the whole run, in seconds.
    pub wall_seconds: f64,
    /// Wall time of the quality part, in seconds.
    pub quality_seconds: f64,
    /// Median wall time of a ranking compile, in seconds.
    pub ranking_median_seconds: Option<f64>,
    /// Per repository, its speed measurements.
    pub speed: Vec<RepoSpeed>,
}

/// One repository's speed measurements.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RepoSpeed {
    /// `owner/name`.
    pub repo: String,
    /// The commit measured.
    pub commit: String,
    /// Measurements in the order taken (`cold`, …, `peer:NAME`).
    pub measurements: Vec<(String, Stats)>,
    /// Why the repository was not measured, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The summary of `tasks` (skipped ones left out) under `name`: ranking
/// `methods`, and per budget aic's prompts and each of `edit_site_methods`'
/// edit sites.
pub fn summarise(
    name: &str,
    tasks: &[&TaskResult],
    methods: &[String],
    edit_site_methods: &[String],
    budgets: &[String],
) -> GroupSummary {
    let ran: Vec<&&TaskResult> = tasks.iter().filter(|t| t.skipped.is_none()).collect();
    let mut by_method = BTreeMap::new();
    let mut curves = BTreeMap::new();
    for method in methods {
        let results: Vec<_> = ran.iter().filter_map(|t| t.methods.get(method)).collect();
        let scores: Vec<RankScores> = results.iter().map(|m| m.scores).collect();
        by_method.insert(method.clone(), metrics::mean_scores(&scores));
        let n = results.len().max(1) as f64;
        let curve = (1..=10)
            .map(|k| {
                results
                    .iter()
                    .map(|m| metrics::recall_at(&m.gold_ranks, k))
                    .sum::<f64>()
                    / n
            })
            .collect();
        curves.insert(method.clone(), curve);
    }
    let budgets = budgets
        .iter()
        .enumerate()
        .map(|(index, budget)| {
            let compiles: Vec<_> = ran.iter().filter_map(|t| t.budgets.get(index)).collect();
            let n = compiles.len().max(1) as f64;
            let share = |pick: fn(&metrics::GoldInPrompt) -> bool| {
                compiles
                    .iter()
                    .filter(|c| c.gold.as_ref().is_some_and(pick))
                    .count() as f64
                    / n
            };
            let tokens: Vec<f64> = compiles
                .iter()
                .filter_map(|c| c.prompt_tokens)
                .map(|t| t as f64)
                .collect();
            let reductions: Vec<f64> = compiles.iter().filter_map(|c| c.reduction).collect();
            let edit_sites = edit_site_methods
                .iter()
                .filter_map(|method| {
                    let sites: Vec<&EditSites> = compiles
                        .iter()
                        .filter_map(|c| c.edit_sites.get(method))
                        .collect();
                    summarise_edit_sites(&sites).map(|summary| (method.clone(), summary))
                })
                .collect();
            BudgetSummary {
                budget: budget.clone(),
                gold_body: share(|g| g.body),
                gold_any: share(|g| g.any),
                failures: compiles.iter().filter(|c| c.gold.is_none()).count(),
                tokens_median: metrics::median(&tokens),
                tokens_max: compiles.iter().filter_map(|c| c.prompt_tokens).max(),
                reduction_median: metrics::median(&reductions),
                edit_sites,
                slice_shape: compiles.iter().filter_map(|c| c.slice_shape.as_ref()).fold(
                    metrics::SliceShape::default(),
                    |mut sum, shape| {
                        sum.slices += shape.slices;
                        sum.markers += shape.markers;
                        sum.definitions += shape.definitions;
                        sum.over_marked += shape.over_marked;
                        sum
                    },
                ),
            }
        })
        .collect();
    GroupSummary {
        name: name.to_owned(),
        tasks: ran.len(),
        methods: by_method,
        recall_curve: curves,
        budgets,
    }
}

/// The means and medians of one method's edit sites over tasks; `None` for
/// no task.
fn summarise_edit_sites(sites: &[&EditSites]) -> Option<EditSiteSummary> {
    if sites.is_empty() {
        return None;
    }
    let n = sites.len() as f64;
    let per_hunk: Vec<f64> = sites
        .iter()
        .filter_map(|s| s.tokens_per_covered_hunk)
        .collect();
    let tokens: Vec<f64> = sites.iter().map(|s| s.prompt_tokens as f64).collect();
    Some(EditSiteSummary {
        tasks: sites.len(),
        hunks: sites.iter().map(|s| s.hunks).sum(),
        hunk_coverage: sites.iter().map(|s| s.hunk_coverage).sum::<f64>() / n,
        all_hunks_covered: sites.iter().filter(|s| s.all_hunks_covered).count() as f64 / n,
        tokens_per_covered_hunk_median: metrics::median(&per_hunk),
        tokens_median: metrics::median(&tokens),
    })
}

/// A table of text cells, rendered for the terminal or as Markdown.
#[derive(Clone, Debug, Default)]
pub struct Table {
    /// The title above it.
    pub title: String,
    /// Column names.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Markdown, with the title as a bold line.
    pub fn markdown(&self) -> String {
        let mut out = format!("**{}**\n\n| {} |\n|", self.title, self.header.join(" | "));
        for (index, _) in self.header.iter().enumerate() {
            out.push_str(if index == 0 { " --- |" } else { " ---: |" });
        }
        out.push('\n');
        for row in &self.rows {
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        out
    }

    /// A terminal table (comfy-table), with the title above it.
    pub fn terminal(&self) -> String {
        let mut table = comfy_table::Table::new();
        table
            .load_style(comfy_table::presets::UTF8_FULL_CONDENSED)
            .set_header(&self.header);
        for row in &self.rows {
            table.add_row(row);
        }
        for index in 1..self.header.len() {
            if let Some(column) = table.column_mut(index) {
                column.set_cell_alignment(comfy_table::CellAlignment::Right);
            }
        }
        format!("{}\n{table}\n", self.title)
    }
}

fn three(value: f64) -> String {
    format!("{value:.3}")
}

fn optional(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
}

/// The tables of a run: per set, the ranking metrics per group and method and
/// the prompts per budget; then speed per repository.
pub fn tables(results: &Results) -> Vec<Table> {
    let mut tables = Vec::new();
    for set in &results.sets {
        let mut header = vec!["group / method".to_owned(), "n".to_owned()];
        header.extend(RANK_METRICS.iter().map(|(name, _)| (*name).to_owned()));
        let mut rows = Vec::new();
        for group in &set.groups {
            for method in &results.methods {
                let Some(scores) = group.methods.get(method) else {
                    continue;
                };
                let mut row = vec![
                    format!("{} / {method}", group.name),
                    group.tasks.to_string(),
                ];
                row.extend(RANK_METRICS.iter().map(|(_, get)| three(get(scores))));
                rows.push(row);
            }
        }
        tables.push(Table {
            title: format!(
                "{} ({}): ranking, {} tasks, {} skipped",
                set.name, set.file, set.tasks_total, set.tasks_skipped
            ),
            header,
            rows,
        });
        let header = [
            "group / budget",
            "gold body",
            "gold any",
            "failed",
            "tokens median",
            "tokens max",
            "reduction median",
            "slices over-marked",
        ]
        .map(str::to_owned)
        .to_vec();
        let rows = set
            .groups
            .iter()
            .flat_map(|group| {
                group.budgets.iter().map(move |b| {
                    vec![
                        format!("{} / {}", group.name, b.budget),
                        three(b.gold_body),
                        three(b.gold_any),
                        b.failures.to_string(),
                        optional(b.tokens_median, 0),
                        b.tokens_max
                            .map_or_else(|| "-".to_owned(), |t| t.to_string()),
                        optional(b.reduction_median, 3),
                        format!("{} of {}", b.slice_shape.over_marked, b.slice_shape.slices),
                    ]
                })
            })
            .collect();
        tables.push(Table {
            title: format!("{}: gold files in aic's compiled prompt", set.name),
            header,
            rows,
        });
        if let Some(table) = edit_sites_table(results, set) {
            tables.push(table);
        }
    }
    if !results.timings.speed.is_empty() {
        let header = [
            "repository / measurement",
            "runs",
            "median ms",
            "p95 ms",
            "CPU s",
            "peak RSS MiB",
            "MB/s",
        ]
        .map(str::to_owned)
        .to_vec();
        let mut rows = Vec::new();
        for repo in &results.timings.speed {
            if let Some(error) = &repo.error {
                let mut row = vec![format!("{} (not measured: {error})", repo.repo)];
                row.resize(header.len(), "-".to_owned());
                rows.push(row);
                continue;
            }
            for (name, stats) in &repo.measurements {
                rows.push(vec![
                    format!("{} / {name}", repo.repo),
                    format!("{}{}", stats.runs, failed_note(stats.failed)),
                    optional(stats.median_ms, 1),
                    optional(stats.p95_ms, 1),
                    optional(stats.cpu_seconds, 3),
                    optional(stats.peak_rss_mib, 1),
                    optional(stats.mb_per_second, 1),
                ]);
            }
        }
        let machine = &results.timings.machine;
        tables.push(Table {
            title: format!(
                "Speed ({} cores; load {} before, {} after)",
                machine.cores,
                load_text(machine.load_before),
                load_text(machine.load_after)
            ),
            header,
            rows,
        });
    }
    tables
}

/// Per group, budget and edit-site method: tasks, hunks, mean hunk coverage,
/// share with all hunks covered, median tokens per covered hunk and median
/// prompt tokens; `None` when no task of the set has hunks.
fn edit_sites_table(results: &Results, set: &SetResults) -> Option<Table> {
    let header = [
        "group / budget / method",
        "tasks",
        "hunks",
        "hunk coverage",
        "all hunks",
        "tokens / covered hunk",
        "tokens median",
    ]
    .map(str::to_owned)
    .to_vec();
    let mut rows = Vec::new();
    for group in &set.groups {
        for budget in &group.budgets {
            for method in &results.edit_site_methods {
                let Some(sites) = budget.edit_sites.get(method) else {
                    continue;
                };
                rows.push(vec![
                    format!("{} / {} / {method}", group.name, budget.budget),
                    sites.tasks.to_string(),
                    sites.hunks.to_string(),
                    three(sites.hunk_coverage),
                    three(sites.all_hunks_covered),
                    optional(sites.tokens_per_covered_hunk_median, 0),
                    optional(sites.tokens_median, 0),
                ]);
            }
        }
    }
    (!rows.is_empty()).then(|| Table {
        title: match results.edit_site_methods.get(1..) {
            Some(baselines) if !baselines.is_empty() => format!(
                "{}: edit sites (the fix's hunks) in the prompt, aic vs {}",
                set.name,
                baselines.join(", ")
            ),
            _ => format!("{}: edit sites (the fix's hunks) in aic's prompt", set.name),
        },
        header,
        rows,
    })
}

fn failed_note(failed: usize) -> String {
    if failed == 0 {
        String::new()
    } else {
        format!(" ({failed} failed)")
    }
}

fn load_text(load: Option<[f64; 3]>) -> String {
    load.map_or_else(
        || "-".to_owned(),
        |[one, five, fifteen]| format!("{one:.2} {five:.2} {fifteen:.2}"),
    )
}

/// `report.md`: the tables, the charts (`charts` are file names beside it),
/// the skipped tasks with their reasons, and the run's settings.
pub fn markdown(results: &Results, charts: &[(String, String)]) -> String {
    let mut out = format!(
        "# aic bench — {}\n\n{} · maxFiles {} · budgets {} · methods {}\n\n",
        results.manifest,
        results.aic_version,
        results.max_files,
        results.budgets.join(", "),
        results.methods.join(", ")
    );
    for table in tables(results) {
        out.push_str(&table.markdown());
        out.push('\n');
    }
    for (title, file) in charts {
        let _ = writeln!(out, "![{title}]({file})\n");
    }
    let skipped: Vec<&TaskResult> = results
        .sets
        .iter()
        .flat_map(|s| &s.tasks)
        .filter(|t| t.skipped.is_some())
        .collect();
    if !skipped.is_empty() {
        let _ = writeln!(out, "## Skipped tasks\n");
        for task in skipped {
            let _ = writeln!(
                out,
                "- `{}`: {}",
                task.id,
                task.skipped.as_deref().unwrap_or("")
            );
        }
        out.push('\n');
    }
    let t = &results.timings;
    let _ = writeln!(
        out,
        "Run: {:.1} s wall ({:.1} s quality) with {} jobs; median ranking compile {} s.",
        t.wall_seconds,
        t.quality_seconds,
        t.jobs,
        optional(t.ranking_median_seconds, 3)
    );
    out
}

/// Every number of a run by a path-like key (`set/group/method/metric`,
/// `set/group/budget B/metric`, `set/group/budget B/method/edit-site
/// metric`, `speed/repo/measurement/stat`), in report order.
pub fn flatten(results: &Results) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for set in &results.sets {
        for group in &set.groups {
            let prefix = format!("{}/{}", set.name, group.name);
            for (method, scores) in &group.methods {
                for (name, get) in RANK_METRICS {
                    out.push((format!("{prefix}/{method}/{name}"), get(scores)));
                }
            }
            for b in &group.budgets {
                let key = format!("{prefix}/budget {}", b.budget);
                out.push((format!("{key}/gold body"), b.gold_body));
                out.push((format!("{key}/gold any"), b.gold_any));
                if let Some(tokens) = b.tokens_median {
                    out.push((format!("{key}/tokens median"), tokens));
                }
                for (method, sites) in &b.edit_sites {
                    let key = format!("{key}/{method}");
                    out.push((format!("{key}/hunk coverage"), sites.hunk_coverage));
                    out.push((format!("{key}/all hunks covered"), sites.all_hunks_covered));
                    if let Some(tokens) = sites.tokens_per_covered_hunk_median {
                        out.push((format!("{key}/{TOKENS_PER_COVERED_HUNK}"), tokens));
                    }
                }
            }
        }
    }
    for repo in &results.timings.speed {
        for (name, stats) in &repo.measurements {
            let key = format!("speed/{}/{name}", repo.repo);
            let values = [
                ("median ms", stats.median_ms),
                ("p95 ms", stats.p95_ms),
                ("CPU s", stats.cpu_seconds),
                ("peak RSS MiB", stats.peak_rss_mib),
                ("MB/s", stats.mb_per_second),
            ];
            for (stat, value) in values {
                if let Some(value) = value {
                    out.push((format!("{key}/{stat}"), value));
                }
            }
        }
    }
    out
}

/// The key suffix of the median tokens per covered hunk in [`flatten`].
const TOKENS_PER_COVERED_HUNK: &str = "tokens per covered hunk";

/// Quality metrics (aic's ranking scores, gold body, gold any, aic's hunk
/// coverage and all hunks covered; higher is better) that are lower in `new`
/// than in `old` by more than `max_drop`, as `metric: old → new` lines, in
/// `old`'s order. Speed and token figures are not judged: they vary with the
/// machine or are not better when higher.
pub fn regressions(old: &Results, new: &Results, max_drop: f64) -> Vec<String> {
    let new: BTreeMap<String, f64> = flatten(new).into_iter().collect();
    flatten(old)
        .into_iter()
        .filter(|(key, _)| {
            (key.contains("/aic/") && !key.ends_with(TOKENS_PER_COVERED_HUNK))
                || key.ends_with("/gold body")
                || key.ends_with("/gold any")
        })
        .filter_map(|(key, before)| {
            let after = *new.get(&key)?;
            (before - after > max_drop + 1e-9).then(|| format!("{key}: {before:.3} → {after:.3}"))
        })
        .collect()
}

/// `--compare`: one line per metric present in either run — old, new and the
/// signed difference (`+0.023`, `-0.011`, `=` when equal, `new`/`gone` when
/// one side lacks it).
pub fn compare(old: &Results, new: &Results) -> String {
    let old_values = flatten(old);
    let new_values = flatten(new);
    // The old run's order, then what only the new run has.
    let mut keys: Vec<&String> = old_values.iter().map(|(key, _)| key).collect();
    let known: std::collections::HashSet<&String> = keys.iter().copied().collect();
    keys.extend(
        new_values
            .iter()
            .map(|(key, _)| key)
            .filter(|key| !known.contains(key)),
    );
    let old: BTreeMap<&String, f64> = old_values.iter().map(|(k, v)| (k, *v)).collect();
    let new: BTreeMap<&String, f64> = new_values.iter().map(|(k, v)| (k, *v)).collect();
    let width = keys.iter().map(|k| k.len()).max().unwrap_or(6).max(6);
    let mut out = format!(
        "{:<width$} {:>12} {:>12} {:>12}\n",
        "metric", "old", "new", "diff"
    );
    let number = |v: f64| {
        if v.abs() >= 100.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.3}")
        }
    };
    for key in keys {
        let (a, b) = (old.get(key).copied(), new.get(key).copied());
        let diff = match (a, b) {
            (Some(a), Some(b)) if (b - a).abs() < 5e-4 => "=".to_owned(),
            (Some(a), Some(b)) => {
                let d = b - a;
                let sign = if d > 0.0 { "+" } else { "-" };
                format!("{sign}{}", number(d.abs()))
            }
            (None, Some(_)) => "new".to_owned(),
            (Some(_), None) => "gone".to_owned(),
            (None, None) => continue,
        };
        let cell = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), number);
        let _ = writeln!(
            out,
            "{key:<width$} {:>12} {:>12} {diff:>12}",
            cell(a),
            cell(b)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drop_past_the_allowance_is_a_regression() {
        let (old, new) = (results(0.80, 100.0), results(0.78, 300.0));
        assert_eq!(regressions(&old, &new, 0.05), Vec::<String>::new());
        let found = regressions(&old, &new, 0.01);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("/aic/mrr: 0.800 → 0.780"), "{found:?}");
        // Slower is not judged.
        assert!(regressions(&new, &old, 0.0).is_empty());
    }

    fn results(mrr: f64, median_ms: f64) -> Results {
        let mut methods = BTreeMap::new();
        methods.insert(
            "aic".to_owned(),
            RankScores {
                mrr,
                ..RankScores::default()
            },
        );
        Results {
            schema: SCHEMA,
            aic_version: "aic 0".to_owned(),
            manifest: "m.toml".to_owned(),
            max_files: 30,
            budgets: vec![],
            methods: vec!["aic".to_owned()],
            edit_site_methods: vec!["aic".to_owned()],
            sets: vec![SetResults {
                name: "s".to_owned(),
                file: "s.jsonl".to_owned(),
                tasks_total: 1,
                tasks_skipped: 0,
                groups: vec![GroupSummary {
                    name: "ALL".to_owned(),
                    tasks: 1,
                    methods,
                    recall_curve: BTreeMap::new(),
                    budgets: vec![],
                }],
                tasks: vec![],
            }],
            timings: Timings {
                speed: vec![RepoSpeed {
                    repo: "o/r".to_owned(),
                    commit: "c".to_owned(),
                    measurements: vec![(
                        "cold".to_owned(),
                        Stats {
                            median_ms: Some(median_ms),
                            ..Stats::default()
                        },
                    )],
                    error: None,
                }],
                ..Timings::default()
            },
        }
    }

    #[test]
    fn compare_signs_differences() {
        let text = compare(&results(0.5, 100.0), &results(0.625, 80.0));
        let line = |key: &str| {
            text.lines()
                .find(|l| l.starts_with(key))
                .unwrap_or_default()
                .to_owned()
        };
        assert!(line("s/ALL/aic/mrr ").ends_with("+0.125"), "{text}");
        assert!(line("s/ALL/aic/acc@1 ").ends_with('='), "{text}");
        assert!(
            line("speed/o/r/cold/median ms").ends_with("-20.000"),
            "{text}"
        );
    }

    fn with_edit_sites(aic: f64, baseline: f64, per_hunk: f64) -> Results {
        let mut results = results(0.5, 100.0);
        results.budgets = vec!["8000".to_owned()];
        results.edit_site_methods = vec!["aic".to_owned(), "chunk-bm25".to_owned()];
        let summary = |coverage: f64| EditSiteSummary {
            tasks: 2,
            hunks: 3,
            hunk_coverage: coverage,
            all_hunks_covered: coverage / 2.0,
            tokens_per_covered_hunk_median: Some(per_hunk),
            tokens_median: Some(7000.0),
        };
        results.sets[0].groups[0].budgets = vec![BudgetSummary {
            budget: "8000".to_owned(),
            gold_body: 1.0,
            gold_any: 1.0,
            failures: 0,
            tokens_median: Some(7000.0),
            tokens_max: Some(7900),
            reduction_median: None,
            slice_shape: metrics::SliceShape::default(),
            edit_sites: BTreeMap::from([
                ("aic".to_owned(), summary(aic)),
                ("chunk-bm25".to_owned(), summary(baseline)),
            ]),
        }];
        results
    }

    #[test]
    fn edit_sites_are_tabled_compared_and_judged_for_aic_only() {
        let old = with_edit_sites(0.75, 0.5, 4000.0);
        let table = tables(&old)
            .into_iter()
            .find(|t| t.title.contains("edit sites"))
            .unwrap();
        assert_eq!(
            table.title,
            "s: edit sites (the fix's hunks) in the prompt, aic vs chunk-bm25"
        );
        assert_eq!(
            table.rows[1],
            [
                "ALL / 8000 / chunk-bm25",
                "2",
                "3",
                "0.500",
                "0.250",
                "4000",
                "7000"
            ]
        );
        let text = compare(&old, &with_edit_sites(0.5, 0.75, 2000.0));
        assert!(
            text.lines()
                .any(|l| l.starts_with("s/ALL/budget 8000/aic/hunk coverage ")
                    && l.ends_with("-0.250")),
            "{text}"
        );
        // A lower baseline and fewer tokens per hunk are not regressions.
        let worse = regressions(&old, &with_edit_sites(0.5, 0.25, 2000.0), 0.01);
        assert_eq!(
            worse,
            [
                "s/ALL/budget 8000/aic/hunk coverage: 0.750 → 0.500",
                "s/ALL/budget 8000/aic/all hunks covered: 0.375 → 0.250"
            ]
        );
    }

    #[test]
    fn markdown_table_aligns_numbers_right() {
        let table = Table {
            title: "t".to_owned(),
            header: vec!["a".to_owned(), "b".to_owned()],
            rows: vec![vec!["x".to_owned(), "1".to_owned()]],
        };
        assert_eq!(
            table.markdown(),
            "**t**\n\n| a | b |\n| --- | ---: |\n| x | 1 |\n"
        );
    }
}
