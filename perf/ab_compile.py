#!/usr/bin/env python3
"""A/B of two aic binaries on one repository: precompute, cold compile, warm compile.
Interleaved runs; median CPU (user+sys of the child) and wall. Usage: perf/ab_compile.py REPO RUNS A_BINARY B_BINARY [...]"""
import os, resource, statistics, subprocess, sys, tempfile, time, shutil
repo, runs, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
INTENTS = ["fix the dev server's handling of css imports", "add an option to the build for worker bundling",
           "speed up the module graph invalidation", "fix the error message for missing exports"]
def run(cmd, env):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t1 = time.perf_counter(); r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert p.returncode == 0, (cmd, p.returncode)
    return (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime), t1 - t0
res = {b: {"precompute": [], "cold": [], "warm": []} for b in bins}
for i in range(runs):
    for b in bins:
        home = tempfile.mkdtemp(); env = dict(os.environ, AIC_HOME=home)
        res[b]["precompute"].append(run([b, "precompute", "--root", repo], env)); shutil.rmtree(home)
        home = tempfile.mkdtemp(); env = dict(os.environ, AIC_HOME=home)
        res[b]["cold"].append(run([b, "compile", INTENTS[i % 4], "--root", repo], env))
        res[b]["warm"].append(run([b, "compile", INTENTS[(i + 1) % 4], "--root", repo], env)); shutil.rmtree(home)
print("| binary | precompute CPU s | wall s | cold CPU s | wall s | warm CPU s | wall s |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for b in bins:
    row = [os.path.basename(b)]
    for k in ("precompute", "cold", "warm"):
        row += [f"{statistics.median(c for c, _ in res[b][k]):.2f}", f"{statistics.median(w for _, w in res[b][k]):.2f}"]
    print("| " + " | ".join(row) + " |")
