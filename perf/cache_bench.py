#!/usr/bin/env python3
"""Cold, warm and incremental compiles and precompute throughput over the
per-file cache, on real or synthetic repositories (issue 4 measurements).

Superseded by `aic bench` (docs/bench.md: `cold`, `warm`, `edit3`, `precompute`);
kept for comparison with earlier records.

    python3 perf/cache_bench.py --aic target/release/aic \
        --repo deno=/work/perf-repos/deno --intent "fix the permission check in the fetch op"

For each repository, with a fresh AIC_HOME:
  1. cold compile with --no-cache (no database at all);
  2. cold compile with an empty cache (computes and writes rows);
  3. warm compile, median of 5 (nothing changed);
  4. `aic precompute` on a second fresh AIC_HOME: seconds, MB/s, rows;
  5. bytes of the database on disk per 1,000 files (after precompute);
  6. incremental: 3 files appended to (then restored), one compile.
Wall time and peak RSS come from /usr/bin/time. Nothing is written into the
repository except the 3 temporary edits, which are undone.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile


def run(cmd, env):
    out = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M"] + cmd,
        env=env,
        capture_output=True,
        text=True,
    )
    wall, rss = out.stderr.strip().splitlines()[-1].split()
    if out.returncode != 0:
        raise SystemExit(f"{cmd} failed:\n{out.stderr}")
    return float(wall), int(rss) / 1024.0, out.stdout


def bench(aic, name, root, intent):
    result = {"repo": name}
    home = tempfile.mkdtemp(prefix="aic-bench-home-")
    env = dict(os.environ, AIC_HOME=home)
    compile_cmd = [aic, "compile", intent, "--root", root]
    wall, rss, _ = run(compile_cmd + ["--no-cache"], env)
    result["cold_no_cache"] = (wall, rss)
    wall, rss, _ = run(compile_cmd, env)
    result["cold_empty_cache"] = (wall, rss)
    warm = [run(compile_cmd, env)[:2] for _ in range(5)]
    result["warm_median"] = (
        statistics.median(w for w, _ in warm),
        max(r for _, r in warm),
    )
    # `inspect` never answers from the prompt cache: the per-file cache alone.
    inspect_cmd = [aic, "inspect", intent, "--root", root, "--json"]
    files = [run(inspect_cmd, env)[:2] for _ in range(5)]
    result["warm_files_median"] = (
        statistics.median(w for w, _ in files),
        max(r for _, r in files),
    )
    # Incremental: edit 3 of the files the warm compile selected.
    _, _, trace = run([aic, "inspect", intent, "--root", root, "--json"], env)
    selected = [f["path"] for f in json.loads(trace)["selectedFiles"]][:3]
    backups = {}
    try:
        for path in selected:
            full = os.path.join(root, path)
            with open(full, "rb") as handle:
                backups[full] = handle.read()
            with open(full, "ab") as handle:
                handle.write(b"\n// edited by perf/cache_bench.py\n")
        wall, rss, trace = run([aic, "inspect", intent, "--root", root, "--json"], env)
        cache = json.loads(trace)["cache"]
        result["incremental"] = (wall, rss, cache["scan"]["computed"], cache["facts"]["computed"])
    finally:
        for full, data in backups.items():
            with open(full, "wb") as handle:
                handle.write(data)
    shutil.rmtree(home)

    home = tempfile.mkdtemp(prefix="aic-bench-home-")
    env = dict(os.environ, AIC_HOME=home)
    wall, rss, out = run([aic, "precompute", "--root", root, "--json"], env)
    report = json.loads(out)
    mb = report["bytes"] / 1e6
    result["precompute"] = (wall, rss, report["files"], mb, mb / wall, report["cache"]["rowsWritten"])
    _, _, stats = run([aic, "cache", "stats", "--json"], env)
    stats = json.loads(stats)
    result["disk_per_1000_files_mb"] = stats["fileBytes"] / 1e6 / (report["files"] / 1000)
    result["stored_per_1000_files_mb"] = stats["storedBytes"] / 1e6 / (report["files"] / 1000)
    wall, rss, _ = run(compile_cmd, env)
    result["first_compile_after_precompute"] = (wall, rss)
    shutil.rmtree(home)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aic", default="target/release/aic")
    parser.add_argument("--repo", action="append", required=True, help="name=path")
    parser.add_argument("--intent", default="fix the bug in the request handler")
    args = parser.parse_args()
    for spec in args.repo:
        name, root = spec.split("=", 1)
        r = bench(os.path.abspath(args.aic), name, os.path.abspath(root), args.intent)
        p = r["precompute"]
        print(f"### {name}")
        print("| measurement | wall s | peak RSS MiB | notes |")
        print("| --- | --- | --- | --- |")
        print(f"| cold compile, --no-cache | {r['cold_no_cache'][0]:.2f} | {r['cold_no_cache'][1]:.0f} | |")
        print(f"| cold compile, empty cache | {r['cold_empty_cache'][0]:.2f} | {r['cold_empty_cache'][1]:.0f} | writes rows |")
        print(f"| warm compile, same request (median of 5) | {r['warm_median'][0]:.2f} | {r['warm_median'][1]:.0f} | prompt cache hit |")
        print(f"| warm compile, per-file cache only (median of 5) | {r['warm_files_median'][0]:.2f} | {r['warm_files_median'][1]:.0f} | `aic inspect`: scan, select, ladder, assemble |")
        i = r["incremental"]
        print(f"| 3 files edited | {i[0]:.2f} | {i[1]:.0f} | scan recomputed {i[2]}, facts recomputed {i[3]} |")
        print(f"| precompute | {p[0]:.2f} | {p[1]:.0f} | {p[2]} files, {p[3]:.1f} MB, {p[4]:.1f} MB/s, {p[5]} rows |")
        f = r["first_compile_after_precompute"]
        print(f"| first compile after precompute | {f[0]:.2f} | {f[1]:.0f} | |")
        print(f"| database on disk per 1,000 files | | | {r['disk_per_1000_files_mb']:.2f} MB (stored, compressed: {r['stored_per_1000_files_mb']:.2f} MB) |")
        print()


if __name__ == "__main__":
    main()
