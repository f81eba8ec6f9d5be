#!/usr/bin/env python3
"""Warm answers through `aic daemon` against in-process compiles, on one
repository, in one run, with `git status` timed beside them as the floor.

For each new intent (lines of --intents, none asked before in this home) it
times, as seen by the caller (wall) and as CPU of the client process:

- `AIC_DAEMON=off aic compile INTENT` (in-process, warm per-file cache);
- `aic compile INTENT` answered by a running daemon (warm, new intent);
- the same after editing 3 files (an appended comment line, undone after);
- `aic hook claude UserPromptSubmit` end to end with the prompt as payload;

and reports medians, p95, the daemon's RSS and CPU per answer, and whether every daemon answer
was byte-identical to an in-process compile of the same intent with no cache at all (`durationMs`
and `cacheHit` aside). The timed in-process compile asks the daemon's intent with one more word:
the daemon's answer is in the prompt cache by then, and the same text would be a cache hit. The
check is a cold compile per intent (not timed): on a large tree it is most of the script's run
time (about 6 s an intent on the 66,526-file monorepo). The first answer after `aic daemon start`
is timed separately.

Usage: perf/daemon_bench.py --aic target/release/aic --repo /path/to/babel \
         --intents intents.txt [--runs 12] [--edit a.js --edit b.js --edit c.js] [--home DIR]
         [--suffix ' r2']

A home that already answered an intent answers it again from its prompt cache: a second run on
the same --home needs new intents, which --suffix makes by appending its text to every line.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


# Appended to an intent for the timed in-process compile, so that it is new to the
# home's prompt cache (the daemon has just answered the intent itself).
IN_PROCESS = " (in-process)"


def timed(cmd, env, cwd, stdin=None):
    """Runs cmd; returns (wall ms, child CPU ms, stdout bytes)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=cwd, input=stdin, capture_output=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000
    return wall, cpu, out.stdout


def comparable(stdout):
    lines = stdout.decode("utf-8", "replace").splitlines()
    return "\n".join(
        l for l in lines if not l.strip().startswith(('"durationMs"', '"cacheHit"'))
    )


def process_cpu_ms(pid):
    """User + system CPU of a running process so far, in ms (Linux /proc)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, round((len(values) - 1) * p))]


def summary(name, walls, cpus):
    return (
        f"| {name} | {len(walls)} | {statistics.median(walls):.0f} | {pct(walls, 0.95):.0f} "
        f"| {statistics.median(cpus):.0f} |"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aic", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--intents", required=True, help="one intent per line, all new")
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--edit", action="append", default=[], help="a file to edit (3)")
    parser.add_argument(
        "--home",
        help="an AIC_HOME already precomputed for this repository by this binary "
        "(default: a new one, precomputed first)",
    )
    parser.add_argument(
        "--suffix",
        default="",
        help="text appended to every intent, so a home that answered them before "
        "sees new ones (its prompt cache would answer the same text again)",
    )
    args = parser.parse_args()
    aic = os.path.abspath(args.aic)
    intents = [l.strip() + args.suffix for l in open(args.intents) if l.strip()]
    if len(intents) < 3 * args.runs + 1:
        sys.exit(f"need {3 * args.runs + 1} intents, got {len(intents)}")
    home = args.home or tempfile.mkdtemp(prefix="aic-daemon-bench-")
    os.chmod(home, 0o700)
    env = dict(os.environ, AIC_HOME=home, AIC_DAEMON="running")
    env.pop("RUST_LOG", None)
    off = dict(env, AIC_DAEMON="off")
    repo = args.repo
    # Warm the per-file cache (precompute), as a machine that has compiled before.
    subprocess.run([aic, "precompute", "--root", repo], env=off, capture_output=True)
    git = [timed(["git", "status", "--porcelain"], off, repo)[:2] for _ in range(5)]
    subprocess.run([aic, "daemon", "start"], env=env, check=True, capture_output=True)
    try:
        first = timed([aic, "compile", intents[0], "--root", repo], env, repo)
        rows, same = [], True
        in_process, daemon = ([], []), ([], [])
        for intent in intents[1 : args.runs + 1]:
            d = timed([aic, "compile", intent, "--root", repo, "--json"], env, repo)
            # The daemon's answer is now in the home's prompt cache: the timed
            # in-process compile gets a new intent of its own (the same words
            # and one more), and the check compiles the daemon's intent
            # in-process without any cache, which must give the same bytes.
            l = timed([aic, "compile", intent + IN_PROCESS, "--root", repo, "--json"], off, repo)
            check = subprocess.run(
                [aic, "compile", intent, "--root", repo, "--json", "--no-cache"],
                env=off, cwd=repo, capture_output=True,
            )
            same &= comparable(d[2]) == comparable(check.stdout)
            daemon[0].append(d[0]); daemon[1].append(d[1])
            in_process[0].append(l[0]); in_process[1].append(l[1])
        pid = json.loads(
            subprocess.run([aic, "daemon", "status", "--json"], env=env, capture_output=True).stdout
        )["daemon"]["pid"]
        daemon_cpu_before = process_cpu_ms(pid)
        edited = ([], [])
        for intent in intents[args.runs + 1 : 2 * args.runs + 1]:
            originals = {}
            for path in args.edit:
                full = os.path.join(repo, path)
                originals[full] = open(full, "rb").read()
                with open(full, "ab") as f:
                    f.write(b"\n// edited by perf/daemon_bench.py\n")
            try:
                d = timed([aic, "compile", intent, "--root", repo], env, repo)
                edited[0].append(d[0]); edited[1].append(d[1])
            finally:
                for full, data in originals.items():
                    with open(full, "wb") as f:
                        f.write(data)
        hooks = ([], [])
        for intent in intents[2 * args.runs + 1 : 3 * args.runs + 1]:
            payload = json.dumps(
                {"session_id": "bench", "cwd": repo, "hook_event_name": "UserPromptSubmit",
                 "prompt": intent}
            ).encode()
            h = timed([aic, "hook", "claude", "UserPromptSubmit"], env, repo, stdin=payload)
            hooks[0].append(h[0]); hooks[1].append(h[1])
        daemon_cpu = (process_cpu_ms(pid) - daemon_cpu_before) / (2 * args.runs)
        status = json.loads(
            subprocess.run([aic, "daemon", "status", "--json"], env=env, capture_output=True).stdout
        )
    finally:
        subprocess.run([aic, "daemon", "stop"], env=env, capture_output=True)
    print(f"repo: {repo}, files {status['daemon']['projects'][0]['files'] if status['daemon']['projects'] else '?'}")
    print(f"first answer after `aic daemon start` (precomputed cache): {first[0]:.0f} ms wall")
    print()
    print("| what | runs | median ms wall | p95 ms wall | median ms CPU (client) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(summary("git status --porcelain (floor)", [g[0] for g in git], [g[1] for g in git]))
    print(summary("in-process compile, new intent", *in_process))
    print(summary("daemon compile, new intent", *daemon))
    print(summary("daemon compile after editing 3 files", *edited))
    print(summary("hook UserPromptSubmit via daemon", *hooks))
    print()
    print(f"daemon: RSS {status['daemon']['rssBytes'] / 2**20:.0f} MiB, its own p50 "
          f"{status['daemon']['p50Ms']} ms, p95 {status['daemon']['p95Ms']} ms over "
          f"{status['daemon']['requests']} requests; its CPU {daemon_cpu:.1f} ms per answer "
          f"(mean over the edited and hook runs)")
    print(f"daemon answers byte-identical to in-process: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
