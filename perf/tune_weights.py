#!/usr/bin/env python3
"""Search the selector's signal weights on the dev tasks, offline.

Runs `aic inspect --json` once per task with a large maxFiles, keeps every scored
candidate's raw signals, rule-pack boosts and penalties, then replays the selector's
scoring formula for each weight vector of a coarse grid and reports recall@10, all@10
and MRR (the definitions of ../shared/bench/score.py) overall and per task class.
The grid is coarse on purpose: 45 tasks cannot support fine-tuning, and the tasks kept
aside must not be fitted.

Usage:
    perf/tune_weights.py --repo pallets/click=/path/to/click --repo vitejs/vite=/path/to/vite \\
        [--aic target/release/aic] [--tasks ../shared/bench/tasks-dev.jsonl] [--cache perf/work/signals.json]
"""

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import selection_quality as sq  # noqa: E402

SIGNALS = ["pathRelevance", "importProximity", "symbolRelevance", "contentRelevance", "recency", "sizePenalty"]


def collect(args):
    clones = dict(spec.split("=", 1) for spec in args.repo)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    config = Path(tempfile.mkdtemp()) / "aic.config.json"
    config.write_text(json.dumps({"contextSelector": {"heuristic": {"maxFiles": 400}}}))
    rows = []
    for task in sq.load_jsonl(args.tasks):
        if task["repo"] not in clones:
            continue
        worktree = sq.worktree_for(Path(clones[task["repo"]]).resolve(), task["repo"], work)
        sq.checkout(worktree, task["base_commit"])
        trace, error = sq.run_aic(args.aic, ["inspect", task["intent"], "--root", str(worktree),
                                             "--json", "--config", str(config)])
        if trace is None:
            print(f"{task['id']}: {error}", file=sys.stderr)
            continue
        rows.append({
            "id": task["id"],
            "gold": task["gold_files"],
            "taskClass": trace["taskClass"]["taskClass"],
            "confidence": trace["taskClass"]["confidence"],
            "files": [
                {"path": f["path"], "signals": [f["signals"][s] for s in SIGNALS],
                 "modifier": 0.2 * (len(f.get("boostedBy", [])) - len(f.get("penalizedBy", [])))}
                for f in trace["selectedFiles"]
            ],
        })
    return rows


def evaluate(rows, weights):
    recall, all10, mrr = 0.0, 0.0, 0.0
    for row in rows:
        scale = 0.5 if row["confidence"] < 0.5 else 1.0
        scored = []
        for f in row["files"]:
            s = f["signals"]
            base = sum(w * v for w, v in zip(weights, s)) - weights[4] * s[4] * (1 - scale)
            scored.append((-min(1.0, max(0.0, base + f["modifier"])), f["path"]))
        ranked = [p for _, p in sorted(scored)]
        gold = set(row["gold"])
        top = set(ranked[:10])
        recall += len(gold & top) / len(gold)
        all10 += 1.0 if gold <= top else 0.0
        for rank, path in enumerate(ranked, 1):
            if path in gold:
                mrr += 1 / rank
                break
    n = len(rows)
    return recall / n, all10 / n, mrr / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", action="append", required=True)
    ap.add_argument("--tasks", default=str(sq.DEFAULT_TASKS))
    ap.add_argument("--aic", default=str(sq.ROOT / "target" / "release" / "aic"))
    ap.add_argument("--work", default=str(HERE / "work"))
    ap.add_argument("--cache", default=str(HERE / "work" / "signals.json"))
    ap.add_argument("--refresh", action="store_true", help="re-run aic even if the cache exists")
    args = ap.parse_args()

    cache = Path(args.cache)
    if cache.exists() and not args.refresh:
        rows = json.loads(cache.read_text())
    else:
        rows = collect(args)
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(rows))

    grid = {
        "path": [0.1, 0.2, 0.3, 0.4],
        "import": [0.0],
        "symbol": [0.0, 0.1, 0.2, 0.3],
        "content": [0.2, 0.3, 0.4, 0.5],
        "recency": [0.0, 0.05, 0.1, 0.2],
        "size": [0.0, 0.04, 0.08],
    }
    results = []
    for weights in itertools.product(*grid.values()):
        results.append((evaluate(rows, weights), weights))
    results.sort(key=lambda r: (r[0][1], r[0][0], r[0][2]), reverse=True)
    print("weights = (path, import, symbol, content, recency, size)")
    print("best 10 overall by all@10, recall@10, MRR:")
    for (recall, all10, mrr), weights in results[:10]:
        print(f"  {weights}  recall@10 {recall:.3f}  all@10 {all10:.3f}  mrr {mrr:.3f}")
    classes = sorted({r["taskClass"] for r in rows})
    for task_class in classes:
        subset = [r for r in rows if r["taskClass"] == task_class]
        best = max(((evaluate(subset, w), w) for _, w in results[:200]), key=lambda r: (r[0][1], r[0][0], r[0][2]))
        print(f"{task_class:<9} n={len(subset):<3} best of the top 200: {best[1]}  "
              f"recall@10 {best[0][0]:.3f} all@10 {best[0][1]:.3f} mrr {best[0][2]:.3f}")


if __name__ == "__main__":
    main()
