#!/usr/bin/env python3
"""Selection quality of aic on real tasks, scored with ../shared/bench/score.py.

For each task of a tasks JSONL (see ../shared/bench/README.md) this checks out the
task's `base_commit` in a scratch worktree of a local clone, runs

    aic inspect INTENT --root WORKTREE --json --config CFG     (maxFiles = --max-files)
    aic compile INTENT --root WORKTREE --json                  (default budget)

and writes `{id, ranked_files}` (the selected files best first, then the near misses)
to a predictions JSONL, which score.py scores (recall@5, recall@10, all@10, MRR). It also
reports how often every gold file reached the compiled prompt at the default budget.

Usage:
    perf/selection_quality.py --repo pallets/click=/path/to/click \\
        --repo vitejs/vite=/path/to/vite [--aic target/release/aic] \\
        [--tasks ../shared/bench/tasks-dev.jsonl] [--max-files 30] \\
        [--label "what changed"] [--results perf/RESULTS.md]

Clones must have full history (`git clone https://github.com/pallets/click`). Worktrees
are made under perf/work/ (git-ignored); the clones themselves are not touched. Nothing
is asserted: the numbers are appended to RESULTS.md with the command that made them.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_TASKS = ROOT.parent / "shared" / "bench" / "tasks-dev.jsonl"
SCORE = ROOT.parent / "shared" / "bench" / "score.py"


def load_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def worktree_for(clone, name, work):
    """One detached worktree per repository, reused across its tasks."""
    path = work / name.replace("/", "__")
    if not path.exists():
        git("worktree", "add", "--detach", "--force", str(path), "HEAD", cwd=clone)
    return path


def checkout(worktree, commit):
    git("checkout", "--quiet", "--force", "--detach", commit, cwd=worktree)
    git("clean", "-fdxq", cwd=worktree)


def run_aic(aic, args):
    proc = subprocess.run([aic, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[:1]
    return json.loads(proc.stdout), None


def headings(prompt):
    out = []
    for line in prompt.splitlines():
        if line.startswith("### "):
            heading = line[4:]
            out.append(heading.rsplit(" [", 1)[0])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", action="append", required=True,
                    help="OWNER/NAME=PATH of a local clone with full history")
    ap.add_argument("--tasks", default=str(DEFAULT_TASKS))
    ap.add_argument("--aic", default=str(ROOT / "target" / "release" / "aic"))
    ap.add_argument("--max-files", type=int, default=30)
    ap.add_argument("--work", default=str(HERE / "work"))
    ap.add_argument("--pred", default=None, help="predictions file (default under --work)")
    ap.add_argument("--label", default="", help="what this run measures")
    ap.add_argument("--results", default=None, help="append a section to this Markdown file")
    ap.add_argument("--only", default=None, help="only task ids containing this string")
    args = ap.parse_args()

    clones = dict(spec.split("=", 1) for spec in args.repo)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    pred_path = Path(args.pred) if args.pred else work / "pred.jsonl"
    config = Path(tempfile.mkdtemp()) / "aic.config.json"
    config.write_text(json.dumps({"contextSelector": {"heuristic": {"maxFiles": args.max_files}}}))

    tasks = [t for t in load_jsonl(args.tasks) if t["repo"] in clones]
    if args.only:
        tasks = [t for t in tasks if args.only in t["id"]]
    by_repo = {}
    for task in tasks:
        by_repo.setdefault(task["repo"], []).append(task)

    preds, in_prompt, failures, seconds = [], [], [], []
    for repo, repo_tasks in sorted(by_repo.items()):
        worktree = worktree_for(Path(clones[repo]).resolve(), repo, work)
        for task in repo_tasks:
            checkout(worktree, task["base_commit"])
            started = time.monotonic()
            trace, error = run_aic(args.aic, ["inspect", task["intent"], "--root", str(worktree),
                                              "--json", "--config", str(config)])
            seconds.append(time.monotonic() - started)
            ranked = []
            if trace is not None:
                ranked = [f["path"] for f in trace["selectedFiles"]]
                ranked += [f["path"] for f in trace.get("nearMisses", [])]
            else:
                failures.append((task["id"], error))
            preds.append({"id": task["id"], "ranked_files": ranked})
            compiled, _ = run_aic(args.aic, ["compile", task["intent"], "--root", str(worktree), "--json"])
            prompt_files = set(headings(compiled["compiledPrompt"])) if compiled else set()
            gold = set(task["gold_files"])
            in_prompt.append(bool(gold) and gold <= prompt_files)
            print(f"{task['id']:<22} gold {len(gold)} top10 {len(gold & set(ranked[:10]))} "
                  f"prompt {len(gold & prompt_files)}", file=sys.stderr)

    with open(pred_path, "w") as f:
        for pred in preds:
            f.write(json.dumps(pred) + "\n")
    scored = subprocess.run([sys.executable, str(SCORE), str(pred_path), "--tasks", args.tasks,
                             "--by", "repo"], capture_output=True, text=True, check=True).stdout
    overall = subprocess.run([sys.executable, str(SCORE), str(pred_path), "--tasks", args.tasks],
                             capture_output=True, text=True, check=True).stdout
    share = sum(in_prompt) / len(in_prompt) if in_prompt else 0.0
    summary = (f"{overall.strip()}\n\n{scored.strip()}\n\n"
               f"all gold files in the compiled prompt (default budget): "
               f"{sum(in_prompt)}/{len(in_prompt)} = {share:.3f}\n"
               f"inspect wall time per task: median {sorted(seconds)[len(seconds) // 2]:.2f} s\n")
    if failures:
        summary += f"failed tasks: {failures}\n"
    print(summary)

    if args.results:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True).stdout.strip()
        command = "perf/selection_quality.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        with open(args.results, "a") as f:
            f.write(f"\n## Selection quality — {time.strftime('%Y-%m-%d')} — aic {commit}"
                    f"{' — ' + args.label if args.label else ''}\n\n")
            f.write(f"Command: `{command}`\n\n```\n{summary}```\n")


if __name__ == "__main__":
    main()
