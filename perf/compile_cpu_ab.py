#!/usr/bin/env python3
"""CPU of one compile, two aic binaries side by side, on the dev tasks.

For every second issue report of tasks-dev-issues.jsonl and every fourth commit task
of tasks-dev.jsonl, checks out the task's base commit in the worktrees that
perf/selection_quality.py made under --work, and runs

    aic compile INTENT --root WORKTREE --json [--no-cache]

three times per binary, interleaved (A, B, A, B, ...), keeping the last two runs.
Prints per binary the median over tasks of the per-task median CPU (user + system of
the child) and wall time, and the per-task CPU ratio B/A (median and max). Nothing is
asserted; record the output in perf/RESULTS.md with the command.

Usage:
    perf/compile_cpu_ab.py A_BINARY B_BINARY [--no-cache] [--work /work/perf-work]
"""

import argparse
import json
import resource
import statistics
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent.parent / "shared" / "bench"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--no-cache", action="store_true", help="compile cold (--no-cache)")
    ap.add_argument("--work", default="/work/perf-work")
    args = ap.parse_args()
    extra = ["--no-cache"] if args.no_cache else []
    load = lambda name: [json.loads(l) for l in open(BENCH / name) if l.strip()]
    tasks = load("tasks-dev-issues.jsonl")[::2] + load("tasks-dev.jsonl")[::4]
    bins = [args.a, args.b]
    runs = {b: {} for b in bins}
    for task in tasks:
        worktree = Path(args.work) / task["repo"].replace("/", "__")
        subprocess.run(["git", "-c", "advice.detachedHead=false", "checkout", "-q", "--force",
                        "--detach", task["base_commit"]], cwd=worktree, capture_output=True)
        for rep in range(3):
            for b in bins:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.monotonic()
                subprocess.run([b, "compile", task["intent"], "--root", str(worktree), "--json",
                                *extra], capture_output=True)
                wall = time.monotonic() - started
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                if rep > 0:
                    runs[b].setdefault(task["id"], []).append((cpu, wall))
    for b in bins:
        cpus = [statistics.median(c for c, _ in v) for v in runs[b].values()]
        walls = [statistics.median(w for _, w in v) for v in runs[b].values()]
        print(f"{b}: {len(cpus)} tasks, median CPU {statistics.median(cpus):.3f} s, "
              f"median wall {statistics.median(walls):.3f} s, total CPU {sum(cpus):.2f} s")
    ratios = sorted(
        (statistics.median(c for c, _ in runs[args.b][k])
         / max(1e-3, statistics.median(c for c, _ in runs[args.a][k])), k)
        for k in runs[args.a])
    print(f"per-task CPU ratio B/A: median {statistics.median(r for r, _ in ratios):.2f}, "
          f"max {ratios[-1][0]:.2f} ({ratios[-1][1]})")


if __name__ == "__main__":
    main()
