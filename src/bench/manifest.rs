//! The bench manifest: a TOML file naming repositories, task files, compile
//! budgets, baselines, speed measurements and peer tools (`docs/bench.md`
//! documents every field).
//!
//! Paths in a manifest are relative to the manifest file. Two placeholders let
//! one manifest serve several machines: `{data}` (where task files live:
//! `--data`, else `AIC_BENCH_DATA`, else the manifest's `data`, else the
//! manifest's directory) and `{clones}` (where repositories are found or
//! cloned: `--clones`, else `AIC_BENCH_CLONES`, else the manifest's `clones`,
//! else `<out>/clones`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::UserError;

/// The manifest as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Where task files are: the value of `{data}` (relative to the manifest).
    #[serde(default)]
    pub data: Option<String>,
    /// Where repositories are found or cloned: the value of `{clones}`.
    #[serde(default)]
    pub clones: Option<String>,
    /// The repositories, by `owner/name` as the task files spell them.
    #[serde(default, rename = "repos")]
    pub repos: Vec<RepoSpec>,
    /// The task files.
    #[serde(default, rename = "tasks")]
    pub task_sets: Vec<TaskSetSpec>,
    /// Compile budgets for the "gold body present" metric, in tokens;
    /// `"default"` compiles without `--budget` (the config's budget).
    #[serde(default = "default_budgets")]
    pub budgets: Vec<BudgetSpec>,
    /// `maxFiles` of the ranking compile (the inspect trace's selected files
    /// then its near misses make the ranking). Default 30.
    #[serde(default = "default_max_files")]
    pub max_files: usize,
    /// Baselines run on the same worktrees: the rankings `bm25`,
    /// `path-keywords`, `recency`, and the prompt baseline `chunk-bm25`
    /// (measured by edit sites only). Default: all four.
    #[serde(default = "default_baselines")]
    pub baselines: Vec<String>,
    /// Speed measurements; none when absent.
    #[serde(default)]
    pub speed: Option<SpeedSpec>,
    /// Peer tools by name, run interleaved with aic's cold compile.
    #[serde(default)]
    pub peers: BTreeMap<String, PeerSpec>,
}

/// One repository.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoSpec {
    /// `owner/name`, as the task files' `repo` field spells it.
    pub name: String,
    /// A local clone or bare mirror with the history the tasks need
    /// (placeholders allowed). When absent or missing, `url` is cloned into
    /// `{clones}/<owner>+<name>/repo`, which is also looked at first.
    #[serde(default)]
    pub path: Option<String>,
    /// A git URL (or path) to clone from when no local clone exists.
    #[serde(default)]
    pub url: Option<String>,
    /// The commit of the speed measurements (default: the clone's `HEAD`).
    #[serde(default)]
    pub commit: Option<String>,
    /// The intent of the speed measurements (default: a generic one).
    #[serde(default)]
    pub intent: Option<String>,
}

/// One task file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSetSpec {
    /// The set's name in reports (default: the file's stem).
    #[serde(default)]
    pub name: Option<String>,
    /// The JSONL file (placeholders allowed).
    pub file: String,
    /// A JSONL file of `{"id", "gold_patch"}` lines (placeholders allowed):
    /// each task's fix as a unified diff, joined by id, for tasks whose line
    /// has no `gold_patch` of its own.
    #[serde(default)]
    pub patches: Option<String>,
}

/// A compile budget: a number of tokens or the word `"default"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(
    untagged,
    expecting = "a number of tokens (e.g. 8000) or \"default\" (the config's budget)"
)]
pub enum BudgetSpec {
    /// Tokens.
    Tokens(u32),
    /// `"default"`: no budget override.
    Named(DefaultBudget),
}

/// The word `default`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DefaultBudget {
    /// The config's budget.
    Default,
}

impl BudgetSpec {
    /// The budget override (`None` for `default`).
    pub fn tokens(self) -> Option<u32> {
        match self {
            Self::Tokens(tokens) => Some(tokens),
            Self::Named(DefaultBudget::Default) => None,
        }
    }

    /// Its name in reports: `default` or the number of tokens.
    pub fn name(self) -> String {
        self.tokens()
            .map_or_else(|| "default".to_owned(), |t| t.to_string())
    }
}

/// What speed measurements to take, per repository.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpeedSpec {
    /// Runs per measurement (default 5).
    #[serde(default = "default_runs")]
    pub runs: usize,
    /// Which measurements: `cold`, `warm`, `prompt-cache`, `edit3`,
    /// `precompute`, `mcp`, `mcp-warm` (default: all).
    #[serde(default = "default_speed_metrics")]
    pub metrics: Vec<String>,
}

/// A peer tool.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerSpec {
    /// The command line, split like a shell would (no shell runs it);
    /// `{root}` is replaced by the repository's worktree.
    pub command: String,
}

fn default_budgets() -> Vec<BudgetSpec> {
    vec![
        BudgetSpec::Named(DefaultBudget::Default),
        BudgetSpec::Tokens(8000),
        BudgetSpec::Tokens(2500),
    ]
}

fn default_max_files() -> usize {
    30
}

fn default_runs() -> usize {
    5
}

/// Every baseline the harness implements.
pub const BASELINES: [&str; 4] = ["bm25", "path-keywords", "recency", "chunk-bm25"];

/// Every speed measurement the harness implements.
pub const SPEED_METRICS: [&str; 7] = [
    "cold",
    "warm",
    "prompt-cache",
    "edit3",
    "precompute",
    "mcp",
    "mcp-warm",
];

fn default_baselines() -> Vec<String> {
    BASELINES.iter().map(|&name| name.to_owned()).collect()
}

fn default_speed_metrics() -> Vec<String> {
    SPEED_METRICS.iter().map(|&name| name.to_owned()).collect()
}

/// Where the manifest's placeholders point.
#[derive(Clone, Debug)]
pub struct Places {
    /// The manifest's directory.
    pub base: PathBuf,
    /// `{data}`.
    pub data: PathBuf,
    /// `{clones}`.
    pub clones: PathBuf,
}

impl Places {
    /// Replaces `{data}` and `{clones}` in `text` and resolves the result
    /// against the manifest's directory.
    pub fn resolve(&self, text: &str) -> PathBuf {
        let replaced = text
            .replace("{data}", &self.data.to_string_lossy())
            .replace("{clones}", &self.clones.to_string_lossy());
        self.base.join(replaced)
    }
}

impl Manifest {
    /// Reads and checks a manifest.
    ///
    /// # Errors
    ///
    /// A [`UserError`] naming the file and the field when it cannot be read,
    /// is not valid TOML, or names an unknown baseline or speed measurement.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = fs_err::read_to_string(path).map_err(|error| {
            UserError::new(
                format!(
                    "Cannot read the bench manifest `{}`: {error}",
                    path.display()
                ),
                "pass the path of a manifest TOML file (see docs/bench.md)",
            )
        })?;
        let manifest: Self = toml::from_str(&text).map_err(|error| {
            UserError::new(
                format!("Invalid bench manifest `{}`: {error}", path.display()),
                "fix the field named above (docs/bench.md lists the fields)",
            )
        })?;
        manifest.check(path)?;
        Ok(manifest)
    }

    fn check(&self, path: &Path) -> Result<(), UserError> {
        let unknown = |field: &str, value: &str, known: &[&str]| {
            UserError::new(
                format!(
                    "Bench manifest `{}`: unknown {field} `{value}`",
                    path.display()
                ),
                format!("use one of: {}", known.join(", ")),
            )
        };
        if let Some(name) = self
            .baselines
            .iter()
            .find(|b| !BASELINES.contains(&b.as_str()))
        {
            return Err(unknown("baseline", name, &BASELINES));
        }
        if let Some(speed) = &self.speed
            && let Some(name) = speed
                .metrics
                .iter()
                .find(|m| !SPEED_METRICS.contains(&m.as_str()))
        {
            return Err(unknown("speed metric", name, &SPEED_METRICS));
        }
        if self.task_sets.is_empty() && self.speed.is_none() {
            return Err(UserError::new(
                format!(
                    "Bench manifest `{}` has neither [[tasks]] nor [speed]: nothing to measure",
                    path.display()
                ),
                "add a [[tasks]] entry with `file = \"tasks.jsonl\"` or a [speed] table",
            ));
        }
        Ok(())
    }

    /// The placeholders' values: `data_override`/`clones_override` (command
    /// line) win over `AIC_BENCH_DATA`/`AIC_BENCH_CLONES`, which win over the
    /// manifest's fields; the defaults are the manifest's directory and
    /// `<out>/clones`.
    pub fn places(
        &self,
        manifest_path: &Path,
        out: &Path,
        data_override: Option<&Path>,
        clones_override: Option<&Path>,
    ) -> Places {
        let base = manifest_path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        // Absolute, so `{data}` and `{clones}` resolve the same from anywhere.
        let base = fs_err::canonicalize(&base).unwrap_or(base);
        let pick = |flag: Option<&Path>, var: &str, field: Option<&String>, default: PathBuf| {
            flag.map(Path::to_path_buf)
                .or_else(|| std::env::var_os(var).map(PathBuf::from))
                .or_else(|| field.map(|f| base.join(f)))
                .unwrap_or(default)
        };
        Places {
            data: pick(
                data_override,
                "AIC_BENCH_DATA",
                self.data.as_ref(),
                base.clone(),
            ),
            clones: pick(
                clones_override,
                "AIC_BENCH_CLONES",
                self.clones.as_ref(),
                out.join("clones"),
            ),
            base,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_budgets_peers_and_defaults() {
        let manifest: Manifest = toml::from_str(
            r#"
            budgets = ["default", 8000]
            [[repos]]
            name = "o/r"
            path = "{clones}/o+r/repo"
            [[tasks]]
            file = "{data}/t.jsonl"
            [peers.yek]
            command = "yek --json {root}"
            "#,
        )
        .unwrap();
        assert_eq!(manifest.budgets[0].name(), "default");
        assert_eq!(manifest.budgets[1].tokens(), Some(8000));
        assert_eq!(manifest.max_files, 30);
        assert_eq!(manifest.baselines.len(), 4);
        assert_eq!(manifest.peers["yek"].command, "yek --json {root}");
        let places = Places {
            base: PathBuf::from("/m"),
            data: PathBuf::from("/d"),
            clones: PathBuf::from("/c"),
        };
        assert_eq!(
            places.resolve("{data}/t.jsonl"),
            PathBuf::from("/d/t.jsonl")
        );
        assert_eq!(places.resolve("x/y"), PathBuf::from("/m/x/y"));
    }

    #[test]
    fn rejects_unknown_baseline() {
        let manifest: Manifest = toml::from_str(
            r#"
            baselines = ["bm99"]
            [[tasks]]
            file = "t.jsonl"
            "#,
        )
        .unwrap();
        let error = manifest.check(Path::new("m.toml")).unwrap_err();
        assert!(error.message.contains("bm99"), "{}", error.message);
    }
}
