//! `aic bench`: the benchmark harness across repositories — selection quality
//! on task files, against baselines, and speed against peer tools, in one run
//! over a [`manifest`] (`docs/bench.md` is the user's guide).
//!
//! A run:
//! 1. reads the manifest and its task files, finds (or clones) each
//!    repository ([`checkout::find_clone`]);
//! 2. runs the tasks on `--jobs` worker threads; each worker keeps one scratch
//!    worktree per repository, checks out the task's `base_commit` there
//!    ([`checkout::Worktree::checkout`]) and runs [`quality::run_task`]: aic
//!    in-process, then the [`baselines`]; when the task has a fix, every
//!    prompt is measured by its [`edit_sites`] against the [`chunks`]
//!    baseline's. A task whose repository, commit or
//!    checkout is missing is a skip with its reason, never a failure of the
//!    run. Worktrees are removed at the end;
//! 3. takes the [`speed`] measurements per repository, one child process at a
//!    time, with nothing else running;
//! 4. summarises into [`report::Results`] and writes `results.json`,
//!    `report.md` and the [`charts`] into the output directory.

pub mod baselines;
pub mod charts;
pub mod checkout;
pub mod chunks;
pub mod edit_sites;
pub mod manifest;
pub mod metrics;
pub mod quality;
pub mod report;
pub mod speed;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::Context;

use crate::clock::SystemClock;
use crate::error::UserError;
use crate::home::AicHome;
use crate::host::Host;
use checkout::Worktree;
use manifest::Manifest;
use quality::{QualitySettings, Task, TaskResult};
use report::{RepoSpeed, Results, SetResults, Timings};

/// What `aic bench MANIFEST` was asked to do.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// The manifest file.
    pub manifest: PathBuf,
    /// Where results, worktrees, the harness's `AIC_HOME` and (by default)
    /// clones go.
    pub out: PathBuf,
    /// Tasks run at once (at least 1).
    pub jobs: usize,
    /// Only these repositories (`owner/name`); empty means all.
    pub only: Vec<String>,
    /// `{data}` override.
    pub data: Option<PathBuf>,
    /// `{clones}` override.
    pub clones: Option<PathBuf>,
    /// Skip the speed measurements even when the manifest asks for them.
    pub no_speed: bool,
    /// The aic executable the speed measurements run.
    pub exe: PathBuf,
}

/// Called as the run advances: `(done, total, what)`; `total` changes when
/// the run moves from tasks to speed measurements.
pub type Progress<'a> = &'a (dyn Fn(u64, u64, &str) + Sync);

/// The speed measurements' intent when a repository names none.
pub const DEFAULT_SPEED_INTENT: &str = "fix the error handling in the main module";

/// A task file's tasks.
struct TaskSet {
    name: String,
    file: String,
    tasks: Vec<Task>,
}

/// Runs a bench manifest: scratch worktrees, the harness's `AIC_HOME` and
/// (by default) clones go under `options.out`; [`write_outputs`] then writes
/// the reports.
///
/// # Errors
///
/// A [`UserError`] for an unreadable manifest or task file; I/O errors
/// writing the outputs. Problems with one repository or task are skips
/// recorded in the results.
pub fn run(options: &BenchOptions, progress: Progress<'_>) -> anyhow::Result<Results> {
    let started = Instant::now();
    let manifest = Manifest::load(&options.manifest)?;
    fs_err::create_dir_all(&options.out)?;
    let out = fs_err::canonicalize(&options.out)?;
    let places = manifest.places(
        &options.manifest,
        &out,
        options.data.as_deref(),
        options.clones.as_deref(),
    );
    let load_before = speed::load_average();
    let wanted = |repo: &str| options.only.is_empty() || options.only.iter().any(|o| o == repo);
    let sets = load_sets(&manifest, &places, &wanted)?;

    let repos: Vec<&manifest::RepoSpec> =
        manifest.repos.iter().filter(|r| wanted(&r.name)).collect();
    let clones: BTreeMap<String, Result<PathBuf, String>> = repos
        .iter()
        .map(|spec| {
            let clone = checkout::find_clone(spec, &places).map_err(|e| format!("{e:#}"));
            (spec.name.clone(), clone)
        })
        .collect();

    let (mut results, jobs) = plan_tasks(&sets, &clones);

    let home = out.join("aic-home");
    crate::home::create_private_dir(&home)?;
    let host = Host::new(Some(AicHome::at(home)), None, Arc::new(SystemClock));
    let ranking_config = out.join("ranking").join(crate::config::CONFIG_FILE_NAME);
    fs_err::create_dir_all(ranking_config.parent().unwrap_or(&out))?;
    fs_err::write(
        &ranking_config,
        serde_json::json!({"contextSelector": {"heuristic": {"maxFiles": manifest.max_files}}})
            .to_string(),
    )?;
    let settings = QualitySettings {
        host: &host,
        ranking_config: &ranking_config,
        budgets: &manifest.budgets,
        baselines: &manifest.baselines,
    };

    let quality_started = Instant::now();
    let total = jobs.len() as u64;
    progress(0, total, "tasks");
    let mut ranking_seconds = Vec::new();
    let workers = options.jobs.max(1).min(jobs.len().max(1));
    let (sender, receiver) = crossbeam_channel::unbounded::<(usize, TaskResult, Option<f64>)>();
    let shared = Shared {
        settings: &settings,
        jobs: &jobs,
        sets: &sets,
        next: AtomicUsize::new(0),
        add_lock: std::sync::Mutex::new(()),
        out: &out,
    };
    std::thread::scope(|scope| {
        for worker in 0..workers {
            let sender = sender.clone();
            let shared = &shared;
            // The compiles' own warnings (truncation, slices) would bury the
            // progress bar: workers log nothing.
            scope.spawn(move || {
                tracing::subscriber::with_default(
                    tracing::subscriber::NoSubscriber::default(),
                    || shared.work(worker, &sender),
                );
            });
        }
        drop(sender);
        let mut done = 0;
        for (index, result, seconds) in &receiver {
            done += 1;
            progress(done, total, &result.id);
            let (set_index, task_index, _) = &jobs[index];
            results[*set_index][*task_index] = Some(result);
            ranking_seconds.extend(seconds);
        }
    });
    let quality_seconds = quality_started.elapsed().as_secs_f64();

    let mut methods = vec!["aic".to_owned()];
    methods.extend(
        manifest
            .baselines
            .iter()
            .filter(|b| *b != quality::CHUNK_BM25)
            .cloned(),
    );
    let mut edit_site_methods = vec!["aic".to_owned()];
    edit_site_methods.extend(
        manifest
            .baselines
            .iter()
            .filter(|b| *b == quality::CHUNK_BM25)
            .cloned(),
    );
    let budgets: Vec<String> = manifest.budgets.iter().map(|b| b.name()).collect();
    let sets: Vec<SetResults> = sets
        .into_iter()
        .zip(results)
        .map(|(set, tasks)| {
            let tasks: Vec<TaskResult> = tasks.into_iter().flatten().collect();
            summarise_set(set, tasks, &methods, &edit_site_methods, &budgets)
        })
        .collect();

    let speed = match &manifest.speed {
        Some(spec) if !options.no_speed => {
            run_speed(options, &manifest, spec, &repos, &clones, &out, progress)
        }
        _ => Vec::new(),
    };

    Ok(Results {
        schema: report::SCHEMA,
        aic_version: format!("aic {}", env!("CARGO_PKG_VERSION")),
        manifest: options
            .manifest
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        max_files: manifest.max_files,
        budgets,
        methods,
        edit_site_methods,
        sets,
        timings: Timings {
            machine: speed::Machine {
                cores: std::thread::available_parallelism().map_or(1, usize::from),
                load_before,
                load_after: speed::load_average(),
            },
            jobs: workers,
            wall_seconds: started.elapsed().as_secs_f64(),
            quality_seconds,
            ranking_median_seconds: metrics::median(&ranking_seconds),
            speed,
        },
    })
}

/// Every task's slot in the results — a skip with its reason already filled
/// in for a task that cannot run (repository unknown or not cloned, commit
/// missing) — and the jobs of the others: set, task and clone.
#[expect(
    clippy::type_complexity,
    reason = "a slot per task and a job list, used once"
)]
fn plan_tasks(
    sets: &[TaskSet],
    clones: &BTreeMap<String, Result<PathBuf, String>>,
) -> (Vec<Vec<Option<TaskResult>>>, Vec<(usize, usize, PathBuf)>) {
    let mut results: Vec<Vec<Option<TaskResult>>> =
        sets.iter().map(|s| vec![None; s.tasks.len()]).collect();
    let mut jobs: Vec<(usize, usize, PathBuf)> = Vec::new();
    for (set_index, set) in sets.iter().enumerate() {
        for (task_index, task) in set.tasks.iter().enumerate() {
            let reason = match clones.get(&task.repo) {
                None => Some(format!("repository `{}` is not in the manifest", task.repo)),
                Some(Err(error)) => Some(error.clone()),
                Some(Ok(clone)) if !checkout::has_commit(clone, &task.base_commit) => {
                    Some(format!(
                        "commit `{}` is not in the clone `{}` (fetch more history)",
                        task.base_commit,
                        clone.display()
                    ))
                }
                Some(Ok(clone)) => {
                    jobs.push((set_index, task_index, clone.clone()));
                    None
                }
            };
            if let Some(reason) = reason {
                results[set_index][task_index] = Some(TaskResult::skipped(task, reason));
            }
        }
    }
    (results, jobs)
}

/// What the task workers share.
struct Shared<'a> {
    settings: &'a QualitySettings<'a>,
    /// `(set, task, clone)` of every task that can run.
    jobs: &'a [(usize, usize, PathBuf)],
    sets: &'a [TaskSet],
    /// The next job to take.
    next: AtomicUsize,
    /// `git worktree add` writes the clone's administrative files: one at a time.
    add_lock: std::sync::Mutex<()>,
    out: &'a Path,
}

impl Shared<'_> {
    /// One worker: takes jobs until none is left, sends each result with its
    /// job index, then removes its worktrees.
    fn work(
        &self,
        worker: usize,
        sender: &crossbeam_channel::Sender<(usize, TaskResult, Option<f64>)>,
    ) {
        let mut trees: BTreeMap<String, Worktree> = BTreeMap::new();
        loop {
            let index = self.next.fetch_add(1, Ordering::Relaxed);
            let Some((set_index, task_index, clone)) = self.jobs.get(index) else {
                break;
            };
            let task = &self.sets[*set_index].tasks[*task_index];
            let (result, seconds) = self.run_one(&mut trees, clone, worker, task);
            if sender.send((index, result, seconds)).is_err() {
                break;
            }
        }
        for tree in trees.into_values() {
            tree.remove();
        }
    }

    /// Checks a task out in this worker's worktree of its repository (made
    /// on first use) and runs it; a failed worktree or checkout is a skip.
    fn run_one(
        &self,
        trees: &mut BTreeMap<String, Worktree>,
        clone: &Path,
        worker: usize,
        task: &Task,
    ) -> (TaskResult, Option<f64>) {
        if !trees.contains_key(&task.repo) {
            let path = self
                .out
                .join("work")
                .join(format!("{}-{worker}", task.repo.replace('/', "__")));
            let added = {
                let _guard = self
                    .add_lock
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                Worktree::add(clone, &path)
            };
            match added {
                Ok(tree) => {
                    trees.insert(task.repo.clone(), tree);
                }
                Err(error) => {
                    let reason = format!("cannot make a worktree of `{}`: {error:#}", task.repo);
                    return (TaskResult::skipped(task, reason), None);
                }
            }
        }
        let Some(tree) = trees.get(&task.repo) else {
            return (TaskResult::skipped(task, "no worktree".to_owned()), None);
        };
        match tree.checkout(&task.base_commit) {
            Ok(checkout) => {
                let (result, seconds) =
                    quality::run_task(self.settings, &tree.path, &checkout, task);
                (result, Some(seconds))
            }
            Err(error) => (
                TaskResult::skipped(
                    task,
                    format!("cannot check out `{}`: {error:#}", task.base_commit),
                ),
                None,
            ),
        }
    }
}

/// Reads the manifest's task files, keeping tasks of wanted repositories.
fn load_sets(
    manifest: &Manifest,
    places: &manifest::Places,
    wanted: &dyn Fn(&str) -> bool,
) -> anyhow::Result<Vec<TaskSet>> {
    manifest
        .task_sets
        .iter()
        .map(|spec| {
            let path = places.resolve(&spec.file);
            let text = fs_err::read_to_string(&path).map_err(|error| {
                UserError::new(
                    format!("Cannot read the task file `{}`: {error}", path.display()),
                    "fix `file` in the manifest's [[tasks]] entry, or point {data} elsewhere with --data DIR or AIC_BENCH_DATA",
                )
            })?;
            let patches = spec
                .patches
                .as_ref()
                .map(|file| load_patches(&places.resolve(file)))
                .transpose()?
                .unwrap_or_default();
            let mut tasks = Vec::new();
            for (number, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let mut task: Task = serde_json::from_str(line).map_err(|error| {
                    UserError::new(
                        format!("Task file `{}` line {}: {error}", path.display(), number + 1),
                        "each line must be a JSON object with id, repo, base_commit, intent and gold_files",
                    )
                })?;
                if task.gold_patch.is_none() {
                    task.gold_patch = patches.get(&task.id).cloned();
                }
                if wanted(&task.repo) {
                    tasks.push(task);
                }
            }
            let stem = path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            Ok(TaskSet {
                name: spec.name.clone().unwrap_or_else(|| stem.clone()),
                file: path
                    .file_name()
                    .map_or(stem, |n| n.to_string_lossy().into_owned()),
                tasks,
            })
        })
        .collect()
}

/// A patches file (`{"id", "gold_patch"}` lines) as `id → patch`.
fn load_patches(path: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    #[derive(serde::Deserialize)]
    struct Line {
        id: String,
        gold_patch: String,
    }
    let text = fs_err::read_to_string(path).map_err(|error| {
        UserError::new(
            format!("Cannot read the patches file `{}`: {error}", path.display()),
            "fix `patches` in the manifest's [[tasks]] entry, or point {data} elsewhere with --data DIR or AIC_BENCH_DATA",
        )
    })?;
    let mut patches = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line: Line = serde_json::from_str(line).map_err(|error| {
            UserError::new(
                format!(
                    "Patches file `{}` line {}: {error}",
                    path.display(),
                    number + 1
                ),
                "each line must be a JSON object with id and gold_patch",
            )
        })?;
        patches.insert(line.id, line.gold_patch);
    }
    Ok(patches)
}

/// A set's record with its summaries: `ALL`, then each repository's when
/// there are several.
fn summarise_set(
    set: TaskSet,
    tasks: Vec<TaskResult>,
    methods: &[String],
    edit_site_methods: &[String],
    budgets: &[String],
) -> SetResults {
    let all: Vec<&TaskResult> = tasks.iter().collect();
    let mut groups = vec![report::summarise(
        "ALL",
        &all,
        methods,
        edit_site_methods,
        budgets,
    )];
    let repos: std::collections::BTreeSet<&str> = tasks.iter().map(|t| t.repo.as_str()).collect();
    if repos.len() > 1 {
        for repo in repos {
            let members: Vec<&TaskResult> = tasks.iter().filter(|t| t.repo == repo).collect();
            groups.push(report::summarise(
                repo,
                &members,
                methods,
                edit_site_methods,
                budgets,
            ));
        }
    }
    SetResults {
        name: set.name,
        file: set.file,
        tasks_total: tasks.len(),
        tasks_skipped: tasks.iter().filter(|t| t.skipped.is_some()).count(),
        groups,
        tasks,
    }
}

/// The speed measurements of every repository with a clone, one at a time.
fn run_speed(
    options: &BenchOptions,
    manifest: &Manifest,
    spec: &manifest::SpeedSpec,
    repos: &[&manifest::RepoSpec],
    clones: &BTreeMap<String, Result<PathBuf, String>>,
    out: &Path,
    progress: Progress<'_>,
) -> Vec<RepoSpeed> {
    let per_run = speed::steps_per_run(&spec.metrics, manifest.peers.len());
    let total = (repos.len() * per_run * spec.runs) as u64;
    let done = AtomicUsize::new(0);
    progress(0, total, "speed");
    repos
        .iter()
        .map(|repo| {
            let fail = |commit: &str, error: String| RepoSpeed {
                repo: repo.name.clone(),
                commit: commit.to_owned(),
                measurements: Vec::new(),
                error: Some(error),
            };
            let clone = match clones.get(&repo.name) {
                Some(Ok(clone)) => clone,
                Some(Err(error)) => return fail("", error.clone()),
                None => return fail("", "no clone".to_owned()),
            };
            let wanted = repo.commit.as_deref().unwrap_or("HEAD");
            let commit =
                match checkout::git(clone, &["rev-parse", &format!("{wanted}^{{commit}}")], None) {
                    Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_owned(),
                    Err(error) => return fail(wanted, format!("{error:#}")),
                };
            let path = out
                .join("work")
                .join(format!("{}-speed", repo.name.replace('/', "__")));
            let tree = match Worktree::add(clone, &path) {
                Ok(tree) => tree,
                Err(error) => return fail(&commit, format!("{error:#}")),
            };
            let measured = tree.checkout(&commit).and_then(|_| {
                let root = tree.path.to_string_lossy().into_owned();
                let peers: Vec<(String, Vec<String>)> = manifest
                    .peers
                    .iter()
                    .map(|(name, peer)| {
                        let words = shlex::split(&peer.command)
                            .unwrap_or_default()
                            .into_iter()
                            .map(|w| w.replace("{root}", &root))
                            .collect();
                        (name.clone(), words)
                    })
                    .collect();
                let intent = repo
                    .intent
                    .clone()
                    .unwrap_or_else(|| DEFAULT_SPEED_INTENT.to_owned());
                let scratch = out.join("speed").join(repo.name.replace('/', "__"));
                fs_err::create_dir_all(&scratch)?;
                speed::measure(
                    &speed::SpeedTarget {
                        exe: &options.exe,
                        root: &tree.path,
                        intent: &intent,
                        scratch: &scratch,
                        runs: spec.runs,
                        metrics: &spec.metrics,
                        peers: &peers,
                    },
                    &|| {
                        let now = done.fetch_add(1, Ordering::Relaxed) as u64 + 1;
                        progress(now, total, &repo.name);
                    },
                )
                .context("speed measurement failed")
            });
            tree.remove();
            match measured {
                Ok(measurements) => RepoSpeed {
                    repo: repo.name.clone(),
                    commit,
                    measurements,
                    error: None,
                },
                Err(error) => fail(&commit, format!("{error:#}")),
            }
        })
        .collect()
}

/// Writes `results.json`, the charts and `report.md` into `out`; returns the
/// files written.
///
/// # Errors
///
/// I/O errors, or a chart that cannot be drawn.
pub fn write_outputs(results: &Results, out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let mut json = serde_json::to_string_pretty(results)?;
    json.push('\n');
    let path = out.join("results.json");
    fs_err::write(&path, json)?;
    written.push(path);
    let mut charts = Vec::new();
    for set in &results.sets {
        let slug: String = set
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if let Some(all) = set.groups.first() {
            let name = format!("recall-{slug}.svg");
            let title = format!("{}: recall@k per method", set.name);
            fs_err::write(
                out.join(&name),
                charts::recall_curves(&title, all, &results.methods)?,
            )?;
            charts.push((title, name));
        }
        if !results.budgets.is_empty() {
            let name = format!("budget-{slug}.svg");
            let title = format!("{}: gold body present by budget", set.name);
            fs_err::write(
                out.join(&name),
                charts::gold_body_by_budget(&title, &set.groups, &results.budgets)?,
            )?;
            charts.push((title, name));
        }
    }
    if results
        .timings
        .speed
        .iter()
        .any(|r| !r.measurements.is_empty())
    {
        let name = "latency.svg".to_owned();
        fs_err::write(out.join(&name), charts::latency(&results.timings.speed)?)?;
        charts.push(("Median wall time per measurement".to_owned(), name));
    }
    for (_, name) in &charts {
        written.push(out.join(name));
    }
    let path = out.join("report.md");
    fs_err::write(&path, report::markdown(results, &charts))?;
    written.push(path);
    Ok(written)
}
