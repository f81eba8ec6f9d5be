//! Quality metrics of one ranking and one compiled prompt, and the statistics
//! the reports use. Every ranking metric is computed from the gold files'
//! ranks, so a task's record in `results.json` (its `goldRanks`) is enough to
//! recompute them.
//!
//! Definitions (k ∈ {1, 5, 10}; ranks are 1-based in the normalised ranking —
//! `./` dropped, repeats after the first dropped, as `score.py` reads it):
//!
//! | metric | per task |
//! | --- | --- |
//! | `acc@k` | 1 when at least one gold file is in the top k, else 0 |
//! | `recall@k` | gold files in the top k ÷ gold files |
//! | `all@10` | 1 when every gold file is in the top 10, else 0 |
//! | `mrr` | 1 ÷ rank of the first gold file; 0 when none is ranked |

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

/// The ranking metrics of one task, or their means over tasks; each in `[0, 1]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankScores {
    /// Share with a gold file at rank 1.
    #[serde(rename = "acc@1")]
    pub acc1: f64,
    /// Share with a gold file in the top 5.
    #[serde(rename = "acc@5")]
    pub acc5: f64,
    /// Share with a gold file in the top 10.
    #[serde(rename = "acc@10")]
    pub acc10: f64,
    /// Gold files at rank 1 ÷ gold files.
    #[serde(rename = "recall@1")]
    pub recall1: f64,
    /// Gold files in the top 5 ÷ gold files.
    #[serde(rename = "recall@5")]
    pub recall5: f64,
    /// Gold files in the top 10 ÷ gold files.
    #[serde(rename = "recall@10")]
    pub recall10: f64,
    /// Share with every gold file in the top 10.
    #[serde(rename = "all@10")]
    pub all10: f64,
    /// Mean reciprocal rank of the first gold file.
    pub mrr: f64,
}

/// Reads one metric of a [`RankScores`].
pub type MetricOf = fn(&RankScores) -> f64;

/// The metric names in report order, with their accessors.
pub const RANK_METRICS: [(&str, MetricOf); 8] = [
    ("acc@1", |s| s.acc1),
    ("acc@5", |s| s.acc5),
    ("acc@10", |s| s.acc10),
    ("recall@1", |s| s.recall1),
    ("recall@5", |s| s.recall5),
    ("recall@10", |s| s.recall10),
    ("all@10", |s| s.all10),
    ("mrr", |s| s.mrr),
];

/// A ranking as `score.py` reads it: `./` dropped, repeats after the first
/// dropped.
pub fn normalise(ranked: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    ranked
        .iter()
        .map(|path| path.strip_prefix("./").unwrap_or(path).to_owned())
        .filter(|path| seen.insert(path.clone()))
        .collect()
}

/// The 1-based rank of each gold file in `ranked` (normalised first), `None`
/// when it is not ranked; in the order of `gold`, repeats dropped.
pub fn gold_ranks(gold: &[String], ranked: &[String]) -> Vec<Option<usize>> {
    let position: HashMap<String, usize> = normalise(ranked)
        .into_iter()
        .enumerate()
        .map(|(index, path)| (path, index + 1))
        .collect();
    unique(gold)
        .iter()
        .map(|path| position.get(path.as_str()).copied())
        .collect()
}

/// `gold` with repeats after the first dropped.
pub fn unique(gold: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    gold.iter().filter(|g| seen.insert(*g)).cloned().collect()
}

/// Gold files at rank ≤ `k` ÷ gold files (0 with no gold file).
pub fn recall_at(ranks: &[Option<usize>], k: usize) -> f64 {
    if ranks.is_empty() {
        return 0.0;
    }
    ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count() as f64 / ranks.len() as f64
}

/// The ranking metrics of one task from its gold files' ranks.
pub fn rank_scores(ranks: &[Option<usize>]) -> RankScores {
    let first = ranks.iter().flatten().min().copied();
    let within = |k: usize| f64::from(u8::from(first.is_some_and(|r| r <= k)));
    RankScores {
        acc1: within(1),
        acc5: within(5),
        acc10: within(10),
        recall1: recall_at(ranks, 1),
        recall5: recall_at(ranks, 5),
        recall10: recall_at(ranks, 10),
        all10: f64::from(u8::from(
            !ranks.is_empty() && ranks.iter().all(|r| r.is_some_and(|r| r <= 10)),
        )),
        mrr: first.map_or(0.0, |r| 1.0 / r as f64),
    }
}

/// The mean of each metric over `scores` (all 0 when empty).
pub fn mean_scores(scores: &[RankScores]) -> RankScores {
    if scores.is_empty() {
        return RankScores::default();
    }
    let n = scores.len() as f64;
    let mean = |get: fn(&RankScores) -> f64| scores.iter().map(get).sum::<f64>() / n;
    RankScores {
        acc1: mean(|s| s.acc1),
        acc5: mean(|s| s.acc5),
        acc10: mean(|s| s.acc10),
        recall1: mean(|s| s.recall1),
        recall5: mean(|s| s.recall5),
        recall10: mean(|s| s.recall10),
        all10: mean(|s| s.all10),
        mrr: mean(|s| s.mrr),
    }
}

/// Tiers a file block can have, from most of the file to least; `sliced` is a
/// `full` block cut to the relevant lines.
pub const TIER_ORDER: [&str; 5] = [
    "full",
    "sliced",
    "signatures+docs",
    "signatures-only",
    "names-only",
];

/// Calls `visit(path, tier, body)` for each file block of a compiled prompt,
/// in prompt order: a `### path [tier]` heading followed by a fence opens a
/// block, whose body (the lines between the fences) runs to the matching
/// fence.
fn for_each_block<'a>(prompt: &'a str, mut visit: impl FnMut(&'a str, &'a str, &[&'a str])) {
    let lines: Vec<&str> = prompt.split('\n').collect();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        let next = lines.get(index + 1).copied().unwrap_or("");
        let heading = line
            .strip_prefix("### ")
            .and_then(|rest| rest.strip_suffix(']'))
            .and_then(|rest| rest.rsplit_once(" ["));
        if let (Some((path, tier)), true) = (heading, next.starts_with("```")) {
            let fence = &next[..next.len() - next.trim_start_matches('`').len()];
            index += 2;
            let start = index;
            while index < lines.len() && lines[index] != fence {
                index += 1;
            }
            visit(path, tier, &lines[start..index.min(lines.len())]);
        }
        index += 1;
    }
}

/// The file blocks of a compiled prompt, `path → tier`: a `### path [tier]`
/// heading followed by a fence opens a block, whose body runs to the matching
/// fence. A `full` block whose body starts with `[sliced: kept lines` counts
/// as `sliced`. The first block of a path wins.
pub fn file_blocks(prompt: &str) -> BTreeMap<String, String> {
    let mut blocks = BTreeMap::new();
    for_each_block(prompt, |path, tier, body| {
        let first = body.first().copied().unwrap_or("");
        let tier = if tier == "full" && first.starts_with("[sliced: kept lines") {
            "sliced"
        } else {
            tier
        };
        blocks
            .entry(path.to_owned())
            .or_insert_with(|| tier.to_owned());
    });
    blocks
}

/// The code lines of each file block of a compiled prompt, `path → lines`
/// in prompt order (blocks read as [`file_blocks`] reads them, at any tier).
/// A slice's notes are not code and are left out: the `[sliced: …]` line
/// that opens a sliced body and the `… lines N–M cut (K lines) …` / `… line N
/// cut …` lines that stand for its gaps. Several blocks of one path are
/// joined.
pub fn file_block_lines(prompt: &str) -> BTreeMap<String, Vec<String>> {
    let mut blocks: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for_each_block(prompt, |path, _, body| {
        let lines = blocks.entry(path.to_owned()).or_default();
        for (index, line) in body.iter().enumerate() {
            let note = (index == 0 && line.starts_with("[sliced: ")) || is_gap_marker(line);
            if !note {
                lines.push((*line).to_owned());
            }
        }
    });
    blocks
}

/// Whether `line` is a slice's marker for a run of lines left out:
/// `… lines N–M cut (K lines) …` or `… line N cut …`, indented or not.
fn is_gap_marker(line: &str) -> bool {
    line.trim_start().starts_with("… line") && line.ends_with(" …") && line.contains(" cut")
}

/// Whether a tier shows a file's body (`full` or `sliced`).
pub fn is_body_tier(tier: &str) -> bool {
    matches!(tier, "full" | "sliced")
}

/// Where the gold files stand in one compiled prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoldInPrompt {
    /// Every gold file has its body (full or sliced) in the prompt.
    pub body: bool,
    /// Every gold file has a block in the prompt, at any tier.
    pub any: bool,
    /// Gold files with their body in the prompt.
    pub body_count: usize,
    /// The weakest tier among the gold files, `-` when one is absent.
    pub weakest: String,
}

/// The gold files' presence among a prompt's [`file_blocks`].
pub fn gold_in_prompt(gold: &[String], blocks: &BTreeMap<String, String>) -> GoldInPrompt {
    let gold = unique(gold);
    let tiers: Vec<Option<&String>> = gold.iter().map(|g| blocks.get(g)).collect();
    let body_count = tiers
        .iter()
        .filter(|t| t.is_some_and(|t| is_body_tier(t)))
        .count();
    let weakest = if tiers.iter().any(Option::is_none) || tiers.is_empty() {
        "-".to_owned()
    } else {
        tiers
            .iter()
            .flatten()
            .max_by_key(|t| {
                TIER_ORDER
                    .iter()
                    .position(|o| *o == t.as_str())
                    .unwrap_or(TIER_ORDER.len())
            })
            .map_or_else(|| "-".to_owned(), |t| (*t).clone())
    };
    GoldInPrompt {
        body: !gold.is_empty() && body_count == gold.len(),
        any: !gold.is_empty() && tiers.iter().all(Option::is_some),
        body_count,
        weakest,
    }
}

/// The median of `values` (mean of the middle two for an even count); `None`
/// when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some(f64::midpoint(sorted[n / 2 - 1], sorted[n / 2])),
    }
}

/// The 95th percentile of `values` by nearest rank (the smallest value with at
/// least 95% of the values at or below it); `None` when empty.
pub fn p95(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return None;
    }
    let rank = (0.95 * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|&s| s.to_owned()).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn hand_computed_ranking() {
        // gold a, b; ranking x a ./x y b: normalised x a y b → ranks a=2, b=4.
        let gold = strings(&["a", "b"]);
        let ranked = strings(&["x", "a", "./x", "y", "b"]);
        let ranks = gold_ranks(&gold, &ranked);
        assert_eq!(ranks, vec![Some(2), Some(4)]);
        let s = rank_scores(&ranks);
        assert!(close(s.acc1, 0.0));
        assert!(close(s.acc5, 1.0));
        assert!(close(s.recall1, 0.0));
        assert!(close(s.recall5, 1.0));
        assert!(close(s.all10, 1.0));
        assert!(close(s.mrr, 0.5));
    }

    #[test]
    fn unranked_gold_scores_zero_and_partial_recall() {
        let gold = strings(&["a", "b", "c"]);
        let mut ranked: Vec<String> = (0..12).map(|i| format!("f{i}")).collect();
        ranked.insert(6, "a".to_owned()); // rank 7
        ranked.push("b".to_owned()); // rank 14
        let s = rank_scores(&gold_ranks(&gold, &ranked));
        assert!(close(s.acc5, 0.0));
        assert!(close(s.acc10, 1.0));
        assert!(close(s.recall10, 1.0 / 3.0));
        assert!(close(s.all10, 0.0));
        assert!(close(s.mrr, 1.0 / 7.0));
        let none = rank_scores(&gold_ranks(&gold, &[]));
        assert_eq!(none, RankScores::default());
        let mean = mean_scores(&[s, none]);
        assert!(close(mean.mrr, 1.0 / 14.0));
    }

    #[test]
    fn reads_file_blocks_and_gold_tiers() {
        let prompt = "## Context\n### a.py [full]\n```python\n### not a heading [x]\n```\n\
                      ### b.py [full]\n````\n[sliced: kept lines 1-3]\n````\n\
                      ### c.py [signatures-only]\n```\ndef f(): ...\n```\n";
        let blocks = file_blocks(prompt);
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks["a.py"], "full");
        assert_eq!(blocks["b.py"], "sliced");
        let both = gold_in_prompt(&strings(&["a.py", "b.py"]), &blocks);
        assert!(both.body && both.any);
        assert_eq!(both.weakest, "sliced");
        let weak = gold_in_prompt(&strings(&["a.py", "c.py"]), &blocks);
        assert!(!weak.body && weak.any);
        assert_eq!(weak.weakest, "signatures-only");
        let absent = gold_in_prompt(&strings(&["a.py", "z.py"]), &blocks);
        assert!(!absent.any);
        assert_eq!(absent.weakest, "-");
        assert_eq!(absent.body_count, 1);
    }

    #[test]
    fn block_lines_leave_out_slice_notes() {
        let prompt = "### a.py [full]\n```python\n[sliced: kept lines 1, 5–6 of 9; the other 6 lines are left out]\n\
                      def f():\n… lines 2–4 cut (3 lines) …\n    return 1\n… line 7 cut …\n```\n\
                      ### b.py [signatures-only]\n```\ndef g(): ...\n```\n";
        let lines = file_block_lines(prompt);
        assert_eq!(lines["a.py"], strings(&["def f():", "    return 1"]));
        assert_eq!(lines["b.py"], strings(&["def g(): ..."]));
    }

    #[test]
    fn a_slice_with_more_markers_than_definitions_and_one_is_over_marked() {
        // Two definitions shown, three gaps: one marker per elided run.
        let tidy = "### a.py [full]\n```python\n[sliced: kept lines 3–4, 8–9 of 12; the other 8 lines are left out]\n\
                    … lines 1–2 cut (2 lines) …\ndef f():\n    return 1\n… lines 5–7 cut (3 lines) …\n\
                    def g():\n    return 2\n… lines 10–12 cut (3 lines) …\n```\n";
        let shape = slice_shape(tidy);
        assert_eq!((shape.slices, shape.markers, shape.definitions), (1, 3, 2));
        assert_eq!(shape.over_marked, 0);
        // Lines torn out of one function: three markers, one definition.
        let confetti = "### b.py [full]\n```python\n[sliced: kept lines 1, 3, 5 of 9; the other 6 lines are left out]\n\
                        def f(x):\n… line 2 cut …\n    y = x\n… line 4 cut …\n    z = y\n… lines 6–9 cut (4 lines) …\n```\n\
                        ### c.py [full]\n```python\ndef whole():\n    pass\n```\n";
        let shape = slice_shape(confetti);
        assert_eq!((shape.slices, shape.markers, shape.definitions), (1, 3, 1));
        assert_eq!(shape.over_marked, 1);
        assert_eq!(shape.over_marked_paths, vec!["b.py".to_owned()]);
    }

    #[test]
    fn a_definition_shown_by_one_window_is_not_over_marked_and_by_two_is() {
        // A head, one window of the body, a class skeleton: one marker per
        // run between units, one inside the windowed function.
        let window = "### a.py [full]\n```python\n[sliced: kept lines 1–2, 9–10, 20, 22, 24 of 30; the other 23 lines are left out]\n\
                      def big(x):\n    \"\"\"Doc.\"\"\"\n    … lines 3–8 cut (6 lines) …\n    y = x + 1\n    return y\n\
                      … lines 11–19 cut (9 lines) …\nclass C:\n    … line 21 cut …\n    def a(self):\n    … line 23 cut …\n\
                      \x20   def b(self):\n… lines 25–30 cut (6 lines) …\n```\n";
        let shape = slice_shape(window);
        assert_eq!((shape.markers, shape.definitions), (5, 4));
        assert_eq!(shape.over_marked, 0, "{shape:?}");
        // The same function by two windows: two markers inside it.
        let scattered = "### b.py [full]\n```python\n[sliced: kept lines 1, 5–6, 12–13 of 20; the other 15 lines are left out]\n\
                         def big(x):\n    … lines 2–4 cut (3 lines) …\n    y = x + 1\n    z = y * 2\n\
                         \x20   … lines 7–11 cut (5 lines) …\n    w = z - 3\n    return w\n… lines 14–20 cut (7 lines) …\n```\n";
        let shape = slice_shape(scattered);
        assert_eq!(shape.over_marked, 1, "{shape:?}");
        // A data module: one table by a window, the next by its first line.
        let tables = "### c.py [full]\n```python\n[sliced: kept lines 4, 300–302, 900 of 990; the other 985 lines are left out]\n\
                      … lines 1–3 cut (3 lines) …\nNAMES = {\n    … lines 5–299 cut (295 lines) …\n    0x10: 'PatientName',\n\
                      \x20   0x20: 'PatientID',\n    0x21: 'Issuer',\n… lines 303–899 cut (597 lines) …\nREPEATERS = {\n\
                      \x20   … lines 901–990 cut (90 lines) …\n```\n";
        let shape = slice_shape(tables);
        assert_eq!(shape.over_marked, 0, "{shape:?}");
    }

    #[test]
    fn median_and_p95() {
        assert!(median(&[]).is_none());
        assert!(close(median(&[3.0, 1.0, 2.0]).unwrap(), 2.0));
        assert!(close(median(&[4.0, 1.0, 2.0, 3.0]).unwrap(), 2.5));
        let values: Vec<f64> = (1..=20).map(f64::from).collect();
        assert!(close(p95(&values).unwrap(), 19.0));
        assert!(close(p95(&[5.0]).unwrap(), 5.0));
    }
}

/// How a prompt's slices are cut: their elision markers against the
/// definitions they show. A slice by definitions shows whole definitions and
/// signatures (and the file's import block) with one marker per elided run
/// between them, and a definition larger than its share by its head and one
/// window of its body. So in each scope (the file's top level, or one shown
/// definition) a slice has at most one marker more than the units it shows
/// there (definitions nested directly in it, and at the top level the import
/// block): the runs between them and at the ends, one of them the run inside
/// a definition shown by a window. A scope with more is confetti: lines
/// torn out of one definition, or windows scattered through it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SliceShape {
    /// Sliced file blocks in the prompt.
    pub slices: usize,
    /// Elision markers (`… lines N–M cut …`) in them.
    pub markers: usize,
    /// Definitions whose header line they show (whole or as a signature),
    /// found by the definition index on the shown text.
    pub definitions: usize,
    /// Slices with a scope holding more markers than the units shown in
    /// it plus one.
    pub over_marked: usize,
    /// The paths of those slices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over_marked_paths: Vec<String>,
}

/// Whether a slice's `markers` (each as the count of shown lines before
/// it) are more, in some scope, than the units shown there plus one: see
/// [`SliceShape`]. `definitions` is the index of the shown lines, `imports`
/// 1 when the slice shows an import block.
fn is_confetti(
    markers: &[(u32, bool)],
    definitions: &[aic_stages::select::definitions::Definition],
    imports: usize,
) -> bool {
    // Units per scope: the last entry is the top level.
    let top = definitions.len();
    let mut units = vec![0usize; top + 1];
    for definition in definitions {
        units[definition.parent.map_or(top, |p| p as usize)] += 1;
    }
    units[top] += imports;
    // The innermost definition holding shown lines `first..=last`.
    let scope_of = |first: u32, last: u32| {
        definitions
            .iter()
            .enumerate()
            .filter(|(_, d)| d.start <= first && d.end >= last)
            .max_by_key(|(_, d)| d.start)
            .map_or(top, |(i, _)| i)
    };
    let mut held = vec![0usize; top + 1];
    for &(at, deeper) in markers {
        if at == 0 {
            held[top] += 1;
            continue;
        }
        // A marker indented under a line no definition starts at stands for
        // the body of a block the index cannot see without it (`TABLE = {`
        // and its elided entries): that line is a unit of its own.
        if deeper
            && !definitions
                .iter()
                .any(|d| (d.header_start..=d.header_end).contains(&(at - 1)))
        {
            units[scope_of(at - 1, at - 1)] += 1;
        }
        // The innermost definition with shown lines on both sides of it.
        held[scope_of(at - 1, at)] += 1;
    }
    held.iter()
        .zip(&units)
        .any(|(held, units)| *held > units + 1)
}

/// The [`SliceShape`] of a compiled Markdown prompt.
pub fn slice_shape(prompt: &str) -> SliceShape {
    let mut shape = SliceShape::default();
    for_each_block(prompt, |path, _, body| {
        if !body
            .first()
            .is_some_and(|line| line.starts_with("[sliced: kept lines"))
        {
            return;
        }
        // Each marker as the count of shown lines before it, and whether it
        // stands under the line before it (indented deeper, or as deep after
        // a line that opens a bracket): a body elided under its header.
        let mut markers: Vec<(u32, bool)> = Vec::new();
        let mut shown = String::new();
        let mut count = 0u32;
        let mut previous = "";
        let indent = |line: &str| line.len() - line.trim_start().len();
        for line in &body[1..] {
            if is_gap_marker(line) {
                let opens = previous.trim_end().ends_with(['{', '[', '(', ':']);
                let under =
                    indent(line) > indent(previous) || (opens && indent(line) == indent(previous));
                markers.push((count, count > 0 && under));
            } else {
                previous = line;
                shown.push_str(line);
                shown.push('\n');
                count += 1;
            }
        }
        let language = aic_stages::relative_path::RelativePath::new(path)
            .map_or(aic_stages::language::Language::Unknown, |p| {
                aic_stages::language::Language::detect(&p)
            });
        let definitions = aic_stages::select::definitions::definition_index(&shown, language);
        // The import block a slice shows is a unit of its own, like a
        // definition: the runs before and after it are two markers.
        let imports = usize::from(
            body[1..]
                .iter()
                .any(|line| aic_stages::select::definitions::is_import_line(line)),
        );
        shape.slices += 1;
        shape.markers += markers.len();
        shape.definitions += definitions.len();
        if is_confetti(&markers, &definitions, imports) {
            shape.over_marked += 1;
            shape.over_marked_paths.push(path.to_owned());
        }
    });
    shape
}
