#!/usr/bin/env python3
"""Selection quality of aic on real tasks: ranking, and whether the gold files reach the prompt.

Superseded by `aic bench benches/dev-commits.toml` / `benches/dev-issues.toml`
(docs/bench.md), which reproduces these numbers task by task, adds baselines and
runs tasks in parallel; kept for comparison with earlier records.

For each task of a tasks JSONL (see ../shared/bench/README.md) this checks out the task's
`base_commit` in a scratch worktree of a local clone and runs

    aic inspect INTENT --root WORKTREE --json --config CFG   (CFG sets maxFiles = --max-files)
    aic compile INTENT --root WORKTREE --json [--budget B]   (once per --budgets entry)

The ranking is the inspect trace's selectedFiles (best first), then its nearMisses; it is
written as `{id, ranked_files}` lines to a predictions JSONL that ../shared/bench/score.py
also reads. Reported per task set, overall and per repository:

  acc@1/5/10   share of tasks with at least one gold file in the top 1/5/10
               (for single-gold tasks, as in tasks-dev-issues.jsonl, this is recall@k)
  recall@5/10  mean |gold ∩ top k| / |gold|
  all@10       share of tasks with every gold file in the top 10
  MRR          mean 1 / rank of the first gold file (0 when none is ranked)

and, for each compile budget (default: the config's budget, then 8000 and 2500 tokens):

  gold body    share of tasks where every gold file is in the compiled prompt with its body:
               its `### path [tier]` heading has tier `full` (or `sliced`, or `full` with a
               body starting `[sliced: kept lines`), not `signatures+docs`,
               `signatures-only` or `names-only`
  gold any     share of tasks where every gold file has a heading in the prompt, any tier
  tokens       median and max of meta.tokensCompiled over the compiles that succeeded

plus the median wall time of one `aic inspect`. A failed inspect ranks nothing; a failed
compile (non-zero exit) counts as gold absent; both are listed with their first stderr
line. Caches are left on (aic's own cache directory), as an editor would use them.

A per-task line goes to stderr as each task finishes: id, rank of the first gold file (- when
not ranked), the gold file's tier at each budget (- absent, FAIL compile failed; with several
gold files the weakest tier and how many had their body), and meta.tokensCompiled at the
first budget.

Checkout: clones may be bare mirrors that lack a few large blobs, so each repository gets
one worktree, `git worktree add --no-checkout --detach WORK/OWNER__NAME HEAD` (a broken one
left by an earlier run is removed first), and per task the tree of `base_commit` is listed,
blobs the clone does not have are found with `git cat-file --batch-check`, and the
checkout runs with a non-cone sparse checkout (`/*` then `!/path` per missing blob, written
to the worktree's own info/sparse-checkout and enabled with `-c core.sparseCheckout=true`
on the command line, so the clone's config is not touched) that leaves them out; with no
missing blob the pattern is `/*` alone, which brings every file back. Then
`git checkout --force --detach COMMIT` and `git clean -fdxq`. Gold files left out this way
are counted and listed; they stay gold (aic cannot find them).

Usage:
    perf/selection_quality.py --repo pallets/click=/path/to/click \\
        --repo vitejs/vite=/path/to/vite [--aic target/release/aic] \\
        [--tasks ../shared/bench/tasks-dev.jsonl] [--max-files 30] \\
        [--budgets default,8000,2500] [--work perf/work] [--pred FILE] [--only ID-PART] \\
        [--label "what changed"] [--results perf/RESULTS.md]

Clones need the history up to each base_commit (a full clone or a bare mirror); the
worktrees are made under --work (default perf/work/, git-ignored) and the clones' objects
and refs are not changed. Nothing is asserted: the summary is printed and, with --results,
appended to that Markdown file with the command that made it. perf/selection_quality_all.sh
runs both task sets of ../shared/bench. Python standard library only.
"""

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_TASKS = ROOT.parent / "shared" / "bench" / "tasks-dev.jsonl"
SCORE = ROOT.parent / "shared" / "bench" / "score.py"

GIT = ["git", "-c", "advice.detachedHead=false"]
# Tiers from most to least of the file; `sliced` is a `full` tier cut to the relevant lines.
BODY_TIERS = ("full", "sliced")
TIER_ORDER = ["full", "sliced", "signatures+docs", "signatures-only", "names-only"]
SHORT = {"signatures+docs": "sig+docs", "signatures-only": "sig-only", "names-only": "names"}
AIC_TIMEOUT = 900


def load_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def git(*args, cwd, input=None):
    """Run git; raise with its stderr when it fails; return stdout bytes."""
    proc = subprocess.run([*GIT, *args], cwd=cwd, input=input, capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:3])} in {cwd}: "
                           f"{proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def common_dir(path):
    proc = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
                          cwd=path, capture_output=True, text=True)
    return Path(proc.stdout.strip()).resolve() if proc.returncode == 0 else None


def worktree_for(clone, name, work):
    """One detached worktree per repository, reused across its tasks (files checked out later)."""
    clone = Path(clone).resolve()
    git_dir = Path(git("rev-parse", "--path-format=absolute", "--git-dir", cwd=clone)
                   .decode().strip()).resolve()
    path = Path(work).resolve() / name.replace("/", "__")
    if path.exists() and common_dir(path) != git_dir:
        print(f"removing broken or foreign worktree {path}", file=sys.stderr)
        shutil.rmtree(path)
    git("worktree", "prune", cwd=clone)
    if not path.exists():
        git("worktree", "add", "--no-checkout", "--detach", "--force", str(path), "HEAD", cwd=clone)
    return path


def escape_pattern(path):
    """A path as a literal gitignore-style pattern anchored at the root."""
    out = "".join("\\" + c if c in "\\*?[]!#" else c for c in path)
    if out.endswith(" "):
        out = out[:-1] + "\\ "
    return "/" + out


def missing_blobs(worktree, commit):
    """Paths of COMMIT's tree whose blobs the clone does not have."""
    listing = git("ls-tree", "-r", "-z", "--full-tree", commit, cwd=worktree)
    entries = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        _mode, kind, oid = meta.split(b" ")
        if kind == b"blob":
            entries.append((oid.decode(), path.decode("utf-8", errors="surrogateescape")))
    if not entries:
        return []
    out = git("cat-file", "--batch-check=%(objectname)",
              cwd=worktree, input="".join(oid + "\n" for oid, _ in entries).encode())
    missing = {line.split()[0] for line in out.decode().splitlines() if line.endswith(" missing")}
    return sorted(path for oid, path in entries if oid in missing)


def checkout(worktree, commit):
    """Check COMMIT out in WORKTREE, leaving out files whose blobs are missing; returns those."""
    missing = missing_blobs(worktree, commit)
    sparse = Path(git("rev-parse", "--path-format=absolute", "--git-path", "info/sparse-checkout",
                      cwd=worktree).decode().strip())
    sparse.parent.mkdir(parents=True, exist_ok=True)
    sparse.write_text("/*\n" + "".join("!" + escape_pattern(p) + "\n"
                                       for p in missing if "\n" not in p))
    git("-c", "core.sparseCheckout=true", "-c", "core.sparseCheckoutCone=false",
        "checkout", "--quiet", "--force", "--detach", commit, cwd=worktree)
    git("clean", "-fdxq", cwd=worktree)
    return missing


def run_aic(aic, args):
    """(parsed JSON stdout, None) or (None, [first stderr line]) when aic fails."""
    try:
        proc = subprocess.run([aic, *args], capture_output=True, text=True, timeout=AIC_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, [f"timed out after {AIC_TIMEOUT} s"]
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}, no stderr"]
        return None, lines[:1]
    try:
        return json.loads(proc.stdout), None
    except json.JSONDecodeError as err:
        return None, [f"stdout is not JSON: {err}"]


def file_blocks(prompt):
    """{path: tier} of the prompt's file blocks: `### path [tier]`, then a fenced body."""
    lines = prompt.split("\n")
    blocks, i = {}, 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.startswith("### ") and line.endswith("]") and " [" in line and nxt.startswith("```"):
            path, tier = line[4:-1].rsplit(" [", 1)
            fence = nxt[:len(nxt) - len(nxt.lstrip("`"))]
            body_first = lines[i + 2] if i + 2 < len(lines) else ""
            if tier == "full" and body_first.startswith("[sliced: kept lines"):
                tier = "sliced"
            blocks.setdefault(path, tier)
            i += 2
            while i < len(lines) and lines[i] != fence:
                i += 1
        i += 1
    return blocks


def normalise(ranked):
    """score.py's reading of a ranking: './' dropped, duplicates after the first dropped."""
    seen, out = set(), []
    for path in ranked:
        path = path[2:] if path.startswith("./") else path
        if path not in seen:
            seen.add(path)
            out.append(path)
    return out


def ranking_metrics(gold, ranked):
    gold, ranked = set(gold), normalise(ranked)
    first = next((i + 1 for i, p in enumerate(ranked) if p in gold), None)
    row = {"rank": first, "mrr": 1.0 / first if first else 0.0}
    for k in (1, 5, 10):
        row[f"acc@{k}"] = 1.0 if first is not None and first <= k else 0.0
    for k in (5, 10):
        row[f"recall@{k}"] = len(gold & set(ranked[:k])) / len(gold)
    row["all@10"] = 1.0 if gold <= set(ranked[:10]) else 0.0
    return row


RANK_METRICS = ["acc@1", "acc@5", "acc@10", "recall@5", "recall@10", "all@10", "mrr"]


def parse_budgets(text):
    budgets = []
    for item in text.split(","):
        item = item.strip()
        if item:
            budgets.append(None if item == "default" else int(item))
    return budgets


def budget_name(budget):
    return "default" if budget is None else str(budget)


def gold_tier(gold, blocks):
    """(weakest tier of the gold files or '-', how many gold files have their body)."""
    tiers = [blocks.get(g) for g in gold]
    body = sum(t in BODY_TIERS for t in tiers)
    if any(t is None for t in tiers):
        weakest = "-"
    else:
        weakest = max(tiers, key=lambda t: TIER_ORDER.index(t) if t in TIER_ORDER else len(TIER_ORDER))
    label = SHORT.get(weakest, weakest)
    return (label if len(gold) == 1 else f"{label}({body}/{len(gold)})"), body


def table(rows, groups, keys, fmt):
    head = f"{'group':<30} {'n':>3} " + " ".join(f"{k:>9}" for k in keys)
    out = [head]
    for name, members in groups:
        n = len(members)
        cells = [fmt(sum(rows[i][k] for i in members) / n if n else 0.0) for k in keys]
        out.append(f"{name:<30} {n:>3} " + " ".join(f"{c:>9}" for c in cells))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", action="append", required=True,
                    help="OWNER/NAME=PATH of a local clone or bare mirror with the history")
    ap.add_argument("--tasks", default=str(DEFAULT_TASKS))
    ap.add_argument("--aic", default=str(ROOT / "target" / "release" / "aic"))
    ap.add_argument("--max-files", type=int, default=30, help="maxFiles for inspect's ranking")
    ap.add_argument("--budgets", default="default,8000,2500",
                    help="comma-separated compile budgets; 'default' = no --budget")
    ap.add_argument("--work", default=str(HERE / "work"), help="where the worktrees go")
    ap.add_argument("--pred", default=None,
                    help="predictions file (default WORK/pred-<tasks file name>.jsonl)")
    ap.add_argument("--label", default="", help="what this run measures")
    ap.add_argument("--results", default=None, help="append a section to this Markdown file")
    ap.add_argument("--only", default=None, help="only task ids containing this string")
    args = ap.parse_args()

    clones = dict(spec.split("=", 1) for spec in args.repo)
    budgets = parse_budgets(args.budgets)
    aic = str(Path(args.aic).resolve())
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    tasks_path = Path(args.tasks)
    pred_path = Path(args.pred) if args.pred else work / f"pred-{tasks_path.stem}.jsonl"
    config = Path(tempfile.mkdtemp()) / "aic.config.json"
    config.write_text(json.dumps({"contextSelector": {"heuristic": {"maxFiles": args.max_files}}}))

    all_tasks = load_jsonl(tasks_path)
    tasks = [t for t in all_tasks if t["repo"] in clones]
    skipped_repos = sorted({t["repo"] for t in all_tasks} - set(clones))
    if args.only:
        tasks = [t for t in tasks if args.only in t["id"]]
    by_repo = {}
    for task in tasks:
        by_repo.setdefault(task["repo"], []).append(task)

    names = [budget_name(b) for b in budgets]
    print(f"{'task':<34} {'rank':>4} " + " ".join(f"{n:>12}" for n in names) + f" {'tokens':>7}",
          file=sys.stderr)
    rows, order, preds, seconds = [], [], [], []
    failures, sparse_gold, sparse_repos = [], [], {}
    tokens = {b: [] for b in names}
    for repo, repo_tasks in sorted(by_repo.items()):
        worktree = worktree_for(clones[repo], repo, work)
        for task in repo_tasks:
            left_out = checkout(worktree, task["base_commit"])
            if left_out:
                sparse_repos.setdefault(repo, set()).update(left_out)
            gold = list(dict.fromkeys(task["gold_files"]))
            for g in gold:
                if g in left_out or not (worktree / g).exists():
                    sparse_gold.append((task["id"], g, "left out (blob missing)"
                                        if g in left_out else "not in the tree"))

            started = time.monotonic()
            trace, error = run_aic(aic, ["inspect", task["intent"], "--root", str(worktree),
                                         "--json", "--config", str(config)])
            seconds.append(time.monotonic() - started)
            ranked = []
            if trace is not None:
                ranked = [f["path"] for f in trace["selectedFiles"]]
                ranked += [f["path"] for f in trace.get("nearMisses", [])]
            else:
                failures.append((task["id"], "inspect", error[0]))
            preds.append({"id": task["id"], "ranked_files": ranked})
            row = ranking_metrics(gold, ranked)

            cells, first_tokens = [], None
            for index, (budget, name) in enumerate(zip(budgets, names)):
                cmd = ["compile", task["intent"], "--root", str(worktree), "--json"]
                if budget is not None:
                    cmd += ["--budget", str(budget)]
                compiled, error = run_aic(aic, cmd)
                if compiled is None:
                    failures.append((task["id"], f"compile {name}", error[0]))
                    row[f"body {name}"] = row[f"any {name}"] = 0.0
                    cells.append("FAIL")
                    continue
                blocks = file_blocks(compiled["compiledPrompt"])
                label, body = gold_tier(gold, blocks)
                row[f"body {name}"] = 1.0 if body == len(gold) else 0.0
                row[f"any {name}"] = 1.0 if all(g in blocks for g in gold) else 0.0
                used = compiled["meta"].get("tokensCompiled")
                if used is not None:
                    tokens[name].append(used)
                if index == 0:
                    first_tokens = used
                cells.append(label)
            rows.append(row)
            order.append(task)
            rank = str(row["rank"]) if row["rank"] else "-"
            print(f"{task['id']:<34} {rank:>4} " + " ".join(f"{c:>12}" for c in cells)
                  + f" {first_tokens if first_tokens is not None else '-':>7}", file=sys.stderr)

    with open(pred_path, "w") as f:
        for pred in preds:
            f.write(json.dumps(pred) + "\n")

    groups = [("ALL", list(range(len(rows))))]
    if len(by_repo) > 1:
        for repo in sorted(by_repo):
            groups.append((repo, [i for i, t in enumerate(order) if t["repo"] == repo]))
    n = len(rows)
    summary = [f"{tasks_path.name}: {n} tasks"
               + (f" (ids containing {args.only!r})" if args.only else "")
               + (f"; skipped repositories without --repo: {', '.join(skipped_repos)}"
                  if skipped_repos else ""),
               f"ranking: aic inspect --json, maxFiles {args.max_files}, selectedFiles then nearMisses",
               "", table(rows, groups, RANK_METRICS, lambda v: f"{v:.3f}"), ""]
    keys = [f"{kind} {name}" for kind in ("body", "any") for name in names]
    summary += ["gold in the compiled prompt (share of tasks with every gold file there; "
                "body = full or sliced tier, any = any tier):",
                table(rows, groups, keys, lambda v: f"{v:.3f}"), ""]
    for name in names:
        vals = tokens[name]
        if vals:
            summary.append(f"tokensCompiled at {name:>7}: median {statistics.median(vals):,.0f}, "
                           f"max {max(vals):,} ({len(vals)} compiles)")
        else:
            summary.append(f"tokensCompiled at {name:>7}: no successful compile")
    if seconds:
        summary.append(f"inspect wall time per task: median {statistics.median(seconds):.2f} s, "
                       f"max {max(seconds):.2f} s")
    if sparse_repos:
        summary.append("left out of the checkout (blobs the clone lacks): " + "; ".join(
            f"{repo} {len(paths)} paths" for repo, paths in sorted(sparse_repos.items())))
    summary.append(f"gold files missing from the worktree: {len(sparse_gold)}")
    for task_id, path, why in sparse_gold:
        summary.append(f"  {task_id} {path}: {why}")
    summary.append(f"failures: {len(failures)}")
    for task_id, what, line in failures:
        summary.append(f"  {task_id} {what}: {line}")
    summary = "\n".join(summary) + "\n"
    print(summary)

    if args.results:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True).stdout.strip()
        version = subprocess.run([aic, "--version"], capture_output=True, text=True).stdout.strip()
        command = "perf/selection_quality.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        with open(args.results, "a") as f:
            f.write(f"\n## Selection quality — {time.strftime('%Y-%m-%d')} — {tasks_path.name} — "
                    f"repo at {commit}{' — ' + args.label if args.label else ''}\n\n")
            f.write(f"Command: `{command}` ({version or 'aic'} at `{aic}`)\n\n```\n{summary}```\n")


if __name__ == "__main__":
    main()
