//! `aic bench` end to end on a fixture repository written by the test (no
//! network): results.json, report.md and the charts are produced, a known
//! ranking scores as expected, a missing commit and an unknown repository are
//! skips with their reasons, the run is deterministic apart from `timings`,
//! edit sites are measured from a patches file and from a task's commit, and
//! `--compare` prints signed differences.

use std::path::{Path, PathBuf};

use crate::support::{aic, git};

/// A fixture repository with three commits, a task file, a patches file and
/// a manifest, in a temp dir; returns the dir and the first two commits (the
/// third is `t-render`'s fix).
fn fixture() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    fs_err::create_dir_all(repo.join("src")).unwrap();
    fs_err::create_dir_all(repo.join("docs")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"], "2024-01-01T00:00:00Z");
    let files = [
        (
            "src/config_parser.py",
            "def parse_config(text):\n    \"\"\"Parse the config file.\"\"\"\n    if not text:\n        return {}\n    return dict(line.split('=') for line in text.splitlines())\n",
        ),
        (
            "src/table_render.py",
            "def render_table(rows):\n    \"\"\"Render rows as a table.\"\"\"\n    return '\\n'.join(' | '.join(r) for r in rows)\n",
        ),
        (
            "src/app.py",
            "from config_parser import parse_config\nfrom table_render import render_table\n\ndef main():\n    print(render_table([['a']]))\n",
        ),
        ("docs/guide.md", "# Guide\n\nRun the app.\n"),
    ];
    for (path, text) in files {
        fs_err::write(repo.join(path), text).unwrap();
    }
    git(&repo, &["add", "."], "2024-01-01T00:00:00Z");
    git(
        &repo,
        &["commit", "-q", "-m", "first"],
        "2024-01-01T00:00:00Z",
    );
    let first = head(&repo);
    fs_err::write(
        repo.join("src/table_render.py"),
        "def render_table(rows, colour=False):\n    \"\"\"Render rows as a table.\"\"\"\n    return '\\n'.join(' | '.join(r) for r in rows)\n",
    )
    .unwrap();
    git(
        &repo,
        &["commit", "-q", "-am", "second"],
        "2024-02-01T00:00:00Z",
    );
    let second = head(&repo);
    fs_err::write(
        repo.join("src/table_render.py"),
        "def render_table(rows, colour=False):\n    \"\"\"Render rows as a table.\"\"\"\n    return '\\n'.join(' | '.join(map(str, r)) for r in rows)\n",
    )
    .unwrap();
    git(
        &repo,
        &["commit", "-q", "-am", "third"],
        "2024-03-01T00:00:00Z",
    );
    let third = head(&repo);
    let tasks = [
        serde_json::json!({"id": "t-parser", "repo": "fix/repo", "base_commit": first,
            "intent": "fix parse_config in src/config_parser.py when the config text is empty",
            "gold_files": ["src/config_parser.py"]}),
        serde_json::json!({"id": "t-render", "repo": "fix/repo", "base_commit": second,
            "intent": "render_table in src/table_render.py should print colours",
            "gold_files": ["src/table_render.py"], "commit": third}),
        serde_json::json!({"id": "t-missing", "repo": "fix/repo",
            "base_commit": "0123456789abcdef0123456789abcdef01234567",
            "intent": "anything", "gold_files": ["src/app.py"]}),
        serde_json::json!({"id": "t-elsewhere", "repo": "other/repo", "base_commit": first,
            "intent": "anything", "gold_files": ["x.py"]}),
    ];
    let lines = tasks
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    fs_err::create_dir_all(dir.path().join("data")).unwrap();
    fs_err::write(dir.path().join("data/tasks.jsonl"), lines).unwrap();
    let patch = "diff --git a/src/config_parser.py b/src/config_parser.py\n--- a/src/config_parser.py\n+++ b/src/config_parser.py\n@@ -1,5 +1,5 @@\n def parse_config(text):\n     \"\"\"Parse the config file.\"\"\"\n-    if not text:\n+    if not text or not text.strip():\n         return {}\n     return dict(line.split('=') for line in text.splitlines())\n";
    fs_err::write(
        dir.path().join("data/patches.jsonl"),
        serde_json::json!({"id": "t-parser", "gold_patch": patch}).to_string() + "\n",
    )
    .unwrap();
    fs_err::write(
        dir.path().join("bench.toml"),
        "data = \"data\"\nbudgets = [\"default\", 2000]\n\n[[repos]]\nname = \"fix/repo\"\npath = \"repo\"\n\n[[tasks]]\nname = \"fixture\"\nfile = \"{data}/tasks.jsonl\"\npatches = \"{data}/patches.jsonl\"\n",
    )
    .unwrap();
    (dir, first, second)
}

fn head(repo: &Path) -> String {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(repo)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Runs `aic bench MANIFEST --out OUT --json EXTRA…`; returns results.json,
/// checking that stdout holds the same.
fn bench_json(manifest: &Path, out: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "bench",
        manifest.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    let run = aic(&args, &[]);
    assert_eq!(run.code, 0, "stderr:\n{}", run.stderr);
    let written: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(run.json(), written, "--json prints results.json");
    written
}

/// Writes `text` as `DIR/extra.toml` and runs it into `DIR/out`; returns the
/// output directory and results.json.
fn run_manifest(dir: &Path, text: &str) -> (PathBuf, serde_json::Value) {
    let manifest = dir.join("extra.toml");
    fs_err::write(&manifest, text).unwrap();
    let out = dir.join("out");
    let results = bench_json(&manifest, &out, &[]);
    (out, results)
}

/// Runs the fixture manifest into `out` with `jobs`; returns results.json.
fn run(dir: &Path, out: &Path, jobs: &str) -> serde_json::Value {
    bench_json(&dir.join("bench.toml"), out, &["--jobs", jobs])
}

fn task<'a>(results: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    results["sets"][0]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap()
}

fn close(value: &serde_json::Value, expected: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() < 1e-9)
}

#[test]
fn fixture_manifest_end_to_end() {
    let (dir, first, _) = fixture();
    let out = dir.path().join("out");
    let results = run(dir.path(), &out, "2");

    for file in ["report.md", "recall-fixture.svg", "budget-fixture.svg"] {
        assert!(out.join(file).is_file(), "{file} written");
    }
    for chart in ["recall-fixture.svg", "budget-fixture.svg"] {
        let svg = fs_err::read_to_string(out.join(chart)).unwrap();
        assert!(
            svg.starts_with("<svg") && !svg.contains("<script"),
            "{chart}"
        );
    }
    let report = fs_err::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("| ALL / aic | 2 | 1.000 |"), "{report}");
    assert!(report.contains("![fixture: recall@k per method](recall-fixture.svg)"));
    assert!(
        report.contains("`t-missing`: commit `0123456789abcdef"),
        "{report}"
    );

    // The known ranking: the file the intent names comes first.
    let parser = task(&results, "t-parser");
    assert_eq!(parser["baseCommit"], first.as_str());
    assert_eq!(
        parser["methods"]["aic"]["goldRanks"],
        serde_json::json!([1])
    );
    assert!(close(&parser["methods"]["aic"]["scores"]["mrr"], 1.0));
    assert_eq!(
        parser["methods"]["aic"]["ranked"][0],
        "src/config_parser.py"
    );
    assert_eq!(parser["budgets"][0]["budget"], "default");
    assert_eq!(parser["budgets"][0]["gold"]["body"], true);
    assert_eq!(parser["budgets"][1]["budget"], "2000");
    assert!(parser["methods"]["bm25"]["ranked"].as_array().is_some());
    assert!(parser["methods"]["recency"]["rankedTotal"].as_u64() == Some(4));

    let set = &results["sets"][0];
    assert_eq!(set["tasksTotal"], 4);
    assert_eq!(set["tasksSkipped"], 2);
    let all = &set["groups"][0];
    assert_eq!(all["name"], "ALL");
    assert_eq!(all["tasks"], 2);
    assert!(close(&all["methods"]["aic"]["acc@1"], 1.0));
    assert!(close(&all["methods"]["aic"]["recall@10"], 1.0));
    assert!(close(&all["budgets"][0]["goldBody"], 1.0));

    // Edit sites: t-parser's fix from the patches file, t-render's from its
    // commit; the fixture's files are whole in aic's default prompt, and the
    // chunk baseline packs to aic's default prompt tokens there.
    assert_eq!(parser["patch"], "gold_patch");
    assert_eq!(
        parser["hunks"],
        serde_json::json!(["src/config_parser.py:1-5"])
    );
    let sites = &parser["budgets"][0]["editSites"];
    assert_eq!(sites["aic"]["hunks"], 1);
    assert_eq!(sites["aic"]["covered"], serde_json::json!([true]));
    assert!(close(&sites["aic"]["hunkCoverage"], 1.0), "{sites}");
    assert_eq!(sites["aic"]["allHunksCovered"], true);
    assert_eq!(
        sites["aic"]["tokensPerCoveredHunk"].as_f64(),
        parser["budgets"][0]["promptTokens"].as_f64()
    );
    let baseline = &sites["chunk-bm25"];
    assert_eq!(
        baseline["budgetTokens"],
        parser["budgets"][0]["promptTokens"]
    );
    assert!(
        baseline["promptTokens"].as_u64().unwrap() <= baseline["budgetTokens"].as_u64().unwrap()
    );
    let coverage = baseline["hunkCoverage"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&coverage), "{baseline}");
    assert!(parser["budgets"][1]["editSites"]["chunk-bm25"]["budgetTokens"].is_null());
    let render = task(&results, "t-render");
    assert_eq!(render["patch"], "commit");
    assert_eq!(
        render["hunks"],
        serde_json::json!(["src/table_render.py:1-3"])
    );
    assert_eq!(render["budgets"][0]["editSites"]["aic"]["hunks"], 1);
    assert_eq!(
        results["editSiteMethods"],
        serde_json::json!(["aic", "chunk-bm25"])
    );
    assert_eq!(
        results["methods"],
        serde_json::json!(["aic", "bm25", "path-keywords", "recency"])
    );
    let summary = &all["budgets"][0]["editSites"];
    assert_eq!(summary["aic"]["tasks"], 2);
    assert!(close(&summary["aic"]["hunkCoverage"], 1.0), "{summary}");
    assert_eq!(summary["chunk-bm25"]["tasks"], 2);
    assert!(
        report.contains("fixture: edit sites (the fix's hunks) in the prompt, aic vs chunk-bm25"),
        "{report}"
    );
    assert!(
        report.contains("| ALL / default / aic | 2 | 2 | 1.000 | 1.000 |"),
        "{report}"
    );

    let missing = task(&results, "t-missing");
    let reason = missing["skipped"].as_str().unwrap();
    assert!(reason.contains("is not in the clone"), "{reason}");
    let elsewhere = task(&results, "t-elsewhere");
    assert_eq!(
        elsewhere["skipped"],
        "repository `other/repo` is not in the manifest"
    );

    // The scratch worktrees are gone, from the disk and from the clone.
    let work: Vec<PathBuf> = fs_err::read_dir(out.join("work"))
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    assert!(work.is_empty(), "left over: {work:?}");
    let listed = std::process::Command::new("git")
        .args(["worktree", "list"])
        .current_dir(dir.path().join("repo"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&listed.stdout).lines().count(), 1);
}

#[test]
fn results_are_deterministic_apart_from_timings() {
    let (dir, _, _) = fixture();
    let mut one = run(dir.path(), &dir.path().join("one"), "1");
    let mut two = run(dir.path(), &dir.path().join("two"), "2");
    assert!(one["timings"]["wallSeconds"].is_number());
    one.as_object_mut().unwrap().remove("timings");
    two.as_object_mut().unwrap().remove("timings");
    assert_eq!(one, two);
}

#[test]
fn compare_prints_signed_differences() {
    let (dir, _, _) = fixture();
    let new = dir.path().join("new");
    let mut old = run(dir.path(), &new, "2");
    let mrr = &mut old["sets"][0]["groups"][0]["methods"]["aic"]["mrr"];
    *mrr = serde_json::json!(0.75);
    let old_path = dir.path().join("old.json");
    fs_err::write(&old_path, old.to_string()).unwrap();
    let compared = aic(
        &[
            "bench",
            "--compare",
            old_path.to_str().unwrap(),
            new.join("results.json").to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(compared.code, 0, "{}", compared.stderr);
    let line = compared
        .stdout
        .lines()
        .find(|l| l.starts_with("fixture/ALL/aic/mrr "))
        .unwrap_or_else(|| panic!("{}", compared.stdout));
    assert!(line.ends_with("+0.250"), "{line}");
    let same = compared
        .stdout
        .lines()
        .find(|l| l.starts_with("fixture/ALL/aic/acc@1 "))
        .unwrap();
    assert!(same.ends_with('='), "{same}");
}

#[test]
fn speed_runs_cold_mcp_and_a_peer_interleaved() {
    let (dir, _, _) = fixture();
    let (out, results) = run_manifest(
        dir.path(),
        "[[repos]]\nname = \"fix/repo\"\npath = \"repo\"\nintent = \"fix parse_config\"\n\n[speed]\nruns = 1\nmetrics = [\"cold\", \"prompt-cache\", \"mcp\", \"mcp-warm\"]\n\n[peers.git]\ncommand = \"git -C {root} ls-files\"\n",
    );
    let repo = &results["timings"]["speed"][0];
    assert!(repo["error"].is_null(), "{repo}");
    let names: Vec<&str> = repo["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m[0].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["cold", "peer:git", "prompt-cache", "mcp", "mcp-warm"]
    );
    for measurement in repo["measurements"].as_array().unwrap() {
        let stats = &measurement[1];
        assert_eq!(stats["runs"], 1, "{measurement}");
        assert!(stats["medianMs"].as_f64().unwrap() > 0.0);
        assert!(stats["peakRssMib"].as_f64().unwrap() > 0.0);
    }
    assert!(out.join("latency.svg").is_file());
    assert!(results["timings"]["machine"]["cores"].as_u64().unwrap() >= 1);
}

#[test]
fn bad_manifest_is_a_user_error() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("bad.toml");
    fs_err::write(
        &manifest,
        "baselines = [\"bm99\"]\n[[tasks]]\nfile = \"t.jsonl\"\n",
    )
    .unwrap();
    let run = aic(&["bench", manifest.to_str().unwrap()], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("unknown baseline `bm99`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: use one of: bm25"),
        "{}",
        run.stderr
    );
}

#[test]
fn clones_a_url_once_into_the_clones_dir() {
    let (dir, _, _) = fixture();
    let (out, results) = run_manifest(
        dir.path(),
        "data = \"data\"\nbaselines = []\nbudgets = [\"default\"]\n\n[[repos]]\nname = \"fix/repo\"\nurl = \"repo\"\n\n[[tasks]]\nfile = \"{data}/tasks.jsonl\"\n",
    );
    let manifest = dir.path().join("extra.toml");
    assert!(
        out.join("clones/fix+repo/repo/HEAD").is_file(),
        "a bare clone"
    );
    let parser = task(&results, "t-parser");
    assert!(parser["skipped"].is_null(), "{parser}");
    assert_eq!(
        parser["methods"]["aic"]["goldRanks"],
        serde_json::json!([1])
    );
    assert_eq!(results["methods"], serde_json::json!(["aic"]));
    assert_eq!(results["sets"][0]["name"], "tasks");
    // A second run finds the clone instead of cloning again.
    let again = bench_json(
        &manifest,
        &dir.path().join("out2"),
        &["--clones", out.join("clones").to_str().unwrap()],
    );
    assert!(!dir.path().join("out2/clones").exists());
    assert_eq!(again["sets"], results["sets"]);
}
