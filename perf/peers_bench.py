#!/usr/bin/env python3
"""aic next to the packers users would pick instead, in one run.

Superseded by `aic bench` with `[peers.NAME]` in the manifest (docs/bench.md);
kept for comparison with earlier records.

For each repository, runs each tool `--runs` times, interleaved (A B C … A B C …)
so that machine noise hits every tool alike, and prints a Markdown table of the
median wall time, median CPU time (user + system of the child) and peak RSS,
with each tool's CPU as a ratio of aic's cold compile.

The tools:
- `aic cold`: `aic compile INTENT --root REPO` with a fresh, empty `AIC_HOME`
  (reads, guards, transforms, counts and caches every file, then selects);
- `aic warm`: the same with the per-file cache filled by the cold run and a
  different intent each run (no prompt-cache hit);
- `aic precompute`: `aic precompute --root REPO` with an empty `AIC_HOME`;
- `yek`, `code2prompt`, `repomix`: pack the whole repository to a file (they
  read every file and select nothing), when found on PATH or given by flag.

Usage:
    perf/peers_bench.py --aic target/release/aic [--yek yek] [--code2prompt code2prompt]
        [--repomix repomix] [--runs 3] 'babel=/path/to/babel' 'deno=/path/to/deno'
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

INTENTS = [
    "fix the parser handling of typescript enums",
    "add a plugin option for decorators",
    "speed up the module resolution cache",
    "fix the error message for missing exports",
    "refactor the config loading into smaller functions",
]


def run(argv, env=None, cwd=None):
    """Runs argv; returns (wall s, cpu s, peak RSS MiB, exit code)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aic", required=True)
    parser.add_argument(
        "--aic-before",
        help="an older aic build, timed in the same interleaved rounds (cold, warm, precompute)",
    )
    parser.add_argument("--yek", default=shutil.which("yek"))
    parser.add_argument("--code2prompt", default=shutil.which("code2prompt"))
    parser.add_argument("--repomix", default=shutil.which("repomix"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("repos", nargs="+", help="NAME=PATH")
    args = parser.parse_args()

    scratch = tempfile.mkdtemp(prefix="aic-peers-")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} before the first run")
    for spec in args.repos:
        name, root = spec.split("=", 1)
        out = os.path.join(scratch, "out")
        tools = {}

        def aic_tools(label, binary):
            warm_home = os.path.join(scratch, f"{name}-{label}-warm")

            def cold(i):
                home = os.path.join(scratch, f"{name}-{label}-cold-{i}")
                env = dict(os.environ, AIC_HOME=home)
                result = run([binary, "compile", INTENTS[0], "--root", root], env=env)
                shutil.rmtree(home, ignore_errors=True)
                return result

            def warm(i):
                env = dict(os.environ, AIC_HOME=warm_home)
                intent = INTENTS[1 + i % (len(INTENTS) - 1)] + f" (run {i})"
                return run([binary, "compile", intent, "--root", root], env=env)

            def precompute(i):
                home = os.path.join(scratch, f"{name}-{label}-pre-{i}")
                env = dict(os.environ, AIC_HOME=home)
                result = run([binary, "precompute", "--root", root], env=env)
                shutil.rmtree(home, ignore_errors=True)
                return result

            # Fill the warm cache once before timing.
            run([binary, "precompute", "--root", root], env=dict(os.environ, AIC_HOME=warm_home))
            tools[f"{label} cold"] = cold
            tools[f"{label} warm"] = warm
            tools[f"{label} precompute"] = precompute

        aic_tools("aic", args.aic)
        if args.aic_before:
            aic_tools("aic before", args.aic_before)
        if args.yek:
            tools["yek"] = lambda i: run([args.yek, "--output-dir", out, root])
        if args.code2prompt:
            tools["code2prompt"] = lambda i: run(
                [args.code2prompt, root, "--output-file", out + ".c2p", "--no-clipboard"]
            )
        if args.repomix:
            tools["repomix"] = lambda i: run(
                [args.repomix, "--output", out + ".repomix.xml", "--quiet"], cwd=root
            )
        results = {tool: [] for tool in tools}
        for i in range(args.runs):
            for tool, call in tools.items():
                results[tool].append(call(i))
        cold_cpu = statistics.median(r[1] for r in results["aic cold"])
        print(f"\n{name} ({root})\n")
        print("| tool | median wall s | median CPU s | peak RSS MiB | CPU ÷ aic cold | exit codes |")
        print("| --- | ---: | ---: | ---: | ---: | --- |")
        for tool, runs in results.items():
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            rss = max(r[2] for r in runs)
            codes = ",".join(str(r[3]) for r in runs)
            print(f"| {tool} | {wall:.2f} | {cpu:.2f} | {rss:.0f} | {cpu / cold_cpu:.2f} | {codes} |")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
