#!/usr/bin/env python3
"""Cold-compile timings of `aic compile` on real repositories.

Superseded by `aic bench` (docs/bench.md: the `cold` measurement) except for
--threads-compare; kept for comparison with earlier records.

Usage (from the aic checkout root):

    perf/cold_compile.py [--aic PATH] [--runs N] [--results FILE]
                         [--threads-compare 1,2] [--threads-compare-repo NAME]
                         NAME=PATH[:INTENT] [NAME=PATH[:INTENT] ...]

Example:

    perf/cold_compile.py --runs 5 \\
        click=/work/perf-repos/click:"fix the help formatting of options" \\
        vite=/work/perf-repos/vite \\
        deno=/work/perf-repos/deno --threads-compare 1,2

For every repository the script runs `aic compile INTENT --root PATH --json`
N times, each as a fresh process. aic has no persistent cache yet, so every run
is a cold compile; the OS page cache, however, is warm after the first run (and
possibly before it), so runs 2..N measure aic, not the disk. The first run's
time is reported on its own for that reason.

Recorded per repository: wall time of the child measured around the process
(median, min, max, first run), disk reads of the first run (`ru_inblock`),
aic's own `meta.durationMs` (median), user + system CPU time (median),
`meta.filesTotal`, `meta.filesSelected`, `meta.tokensRaw`,
`meta.tokensCompiled`, the peak RSS of the child (max of `ru_maxrss` from
`os.wait4` over the runs), and whether the compiled prompt was byte-identical
across the runs.

With --threads-compare, one repository (--threads-compare-repo, default: the one
with the most files) is compiled once per listed RAYON_NUM_THREADS value without
--json; wall time, stdout size and whether stdout bytes are identical go into
the notes under the table.

A dated section (machine, aic commit, exact command line, repository commits,
table) is appended to the results file, which is created with a header when it
does not exist. Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

AIC_CHECKOUT = Path(__file__).resolve().parent.parent

DEFAULT_INTENTS = {
    "click": "fix the help formatting of options",
    "vite": "add an option to the dev server for the HMR port",
    "deno": "fix the permission check for reading environment variables",
    "vscode": "fix the word wrap setting in the editor",
    "home-assistant": "add a config flow option to the MQTT integration",
    "kubernetes": "fix the kubelet eviction threshold for memory pressure",
    "moby": "fix the container restart policy when the daemon restarts",
}
GENERIC_INTENT = "explain how the main entry point works"

RESULTS_HEADER = """\
# aic cold-compile results

Wall-clock timings of `aic compile --json` on real repositories, appended by
`perf/cold_compile.py` (one dated section per invocation). Every run is a fresh
process and aic has no persistent cache yet, so every run is a cold compile;
the OS page cache is warm after the first run, which is why the first run is
also reported on its own.

To reproduce: build with `cargo build --release`, clone the repositories listed
in a section at the commits given there, and run the command line recorded in
that section from the aic checkout root (`perf/cold_compile.py --help` for
options). The repositories are public GitHub repositories cloned locally,
outside this checkout; none of their code is part of aic.

Columns: *files* is `meta.filesTotal` (files in scope after ignore rules),
*median / min–max / run 1 ms* are wall time measured around the process,
*run 1 read MiB* is what the first run read from disk (`ru_inblock`; 0 means
the page cache was already warm), *aic ms* is aic's own `meta.durationMs`
(median), *CPU ms* is user + system time of the child (median; less sensitive
than wall time to other load on the machine), *selected* is
`meta.filesSelected`, *tokens raw / compiled* are `meta.tokensRaw` /
`meta.tokensCompiled`, *peak RSS* is the max `ru_maxrss` of the child over the
runs, *same prompt* says whether the compiled prompt was byte-identical across
the runs.
"""


@dataclass
class RepoSpec:
    name: str
    path: Path
    intent: str


@dataclass
class RunResult:
    wall_ms: float
    cpu_ms: float
    inblock: int
    maxrss_kib: int
    returncode: int
    stdout: bytes
    stderr: str


@dataclass
class RepoResult:
    spec: RepoSpec
    commit: str
    runs: list[RunResult] = field(default_factory=list)
    metas: list[dict] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    error: str | None = None


def parse_spec(text: str) -> RepoSpec:
    name, sep, rest = text.partition("=")
    if not sep or not name or not rest:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH[:INTENT], got {text!r}")
    path, sep, intent = rest.partition(":")
    if not sep or not intent.strip():
        intent = DEFAULT_INTENTS.get(name, GENERIC_INTENT)
    return RepoSpec(name=name, path=Path(path).expanduser(), intent=intent.strip())


def run_child(argv: list[str], env: dict[str, str] | None = None) -> RunResult:
    """Runs one child process; wall time around it, rusage from os.wait4."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, env=env)
        assert proc.stdout is not None
        stdout = proc.stdout.read()
        proc.stdout.close()
        _, status, usage = os.wait4(proc.pid, 0)
        wall_ms = (time.perf_counter() - start) * 1000.0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    cpu_ms = (usage.ru_utime + usage.ru_stime) * 1000.0
    return RunResult(wall_ms, cpu_ms, usage.ru_inblock, usage.ru_maxrss,
                     proc.returncode, stdout, stderr)


def git_short_head(path: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True,
        )
        return out.stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "(not a git checkout)"


def git_is_dirty(path: Path) -> bool:
    out = subprocess.run(
        ["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True, text=True,
    )
    return bool(out.stdout.strip())


def git_origin(path: Path) -> str:
    """The clone's origin; a local mirror `.../owner+name/...` is shown as the
    GitHub repository it mirrors."""
    out = subprocess.run(
        ["git", "-C", str(path), "config", "--get", "remote.origin.url"],
        capture_output=True, text=True,
    )
    url = out.stdout.strip()
    mirror = re.search(r"/([A-Za-z0-9_.-]+)\+([A-Za-z0-9_.-]+)/repo/?$", url)
    if mirror:
        return f"github.com/{mirror[1]}/{mirror[2]} (local mirror)"
    return url


def aic_checkout_of(binary: Path) -> Path:
    """The git checkout the binary was built in (`<checkout>/target/...`), else
    the checkout this script lives in."""
    for parent in binary.parents:
        if parent.name == "target" and (parent.parent / "Cargo.toml").exists():
            return parent.parent
    return AIC_CHECKOUT


def machine_info() -> dict[str, str]:
    info = {"nproc": str(len(os.sched_getaffinity(0))), "memory": "?", "cpu": "?"}
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                kib = int(line.split()[1])
                info["memory"] = f"{kib / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info["kernel"] = platform.release()

    return info


def measure(aic: str, spec: RepoSpec, runs: int) -> RepoResult:
    result = RepoResult(spec=spec, commit=git_short_head(spec.path))
    argv = [aic, "compile", spec.intent, "--root", str(spec.path), "--json"]
    for i in range(runs):
        run = run_child(argv)
        if run.returncode != 0:
            result.error = f"run {i + 1} exited {run.returncode}: {run.stderr.strip()[-500:]}"
            print(f"  {spec.name}: {result.error}", file=sys.stderr)
            return result
        doc = json.loads(run.stdout)
        result.runs.append(run)
        result.metas.append(doc["meta"])
        result.prompts.append(doc["compiledPrompt"])
        run.stdout = b""  # keep memory small
        print(f"  {spec.name} run {i + 1}/{runs}: {run.wall_ms:.0f} ms wall, "
              f"{run.cpu_ms:.0f} ms CPU, read {run.inblock * 512 / 2**20:.1f} MiB, "
              f"maxrss {run.maxrss_kib / 1024:.1f} MiB", file=sys.stderr)
    return result


def threads_compare(aic: str, spec: RepoSpec, counts: list[int]) -> list[str]:
    """Compiles once per RAYON_NUM_THREADS value (no --json); notes lines."""
    argv = [aic, "compile", spec.intent, "--root", str(spec.path)]
    digests = []
    lines = [f"RAYON_NUM_THREADS comparison on **{spec.name}** "
             f"(`aic compile` without `--json`, one run each, page cache warm):", ""]
    for n in counts:
        env = dict(os.environ, RAYON_NUM_THREADS=str(n))
        run = run_child(argv, env=env)
        if run.returncode != 0:
            lines.append(f"- RAYON_NUM_THREADS={n}: exited {run.returncode}: "
                         f"{run.stderr.strip()[-300:]}")
            continue
        digest = hashlib.sha256(run.stdout).hexdigest()
        digests.append(digest)
        lines.append(f"- RAYON_NUM_THREADS={n}: {run.wall_ms:.0f} ms wall, "
                     f"{run.cpu_ms:.0f} ms CPU, "
                     f"peak RSS {run.maxrss_kib / 1024:.1f} MiB, stdout "
                     f"{len(run.stdout)} bytes, sha256 `{digest[:16]}`")
        print(f"  threads={n}: {run.wall_ms:.0f} ms", file=sys.stderr)
    if len(digests) == len(counts) and len(counts) > 1:
        same = len(set(digests)) == 1
        lines.append(f"- stdout byte-identical across thread counts: "
                     f"**{'yes' if same else 'NO'}**")
    return lines


def fmt_int(value) -> str:
    return f"{int(value):,}" if value is not None else "?"


def render_section(args, results: list[RepoResult], notes: list[str]) -> str:
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    m = machine_info()
    checkout = aic_checkout_of(Path(args.aic).resolve())
    aic_commit = git_short_head(checkout)
    if git_is_dirty(checkout):
        aic_commit += " + uncommitted changes"
    built = dt.datetime.fromtimestamp(Path(args.aic).resolve().stat().st_mtime,
                                      dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = shlex.join([sys.argv[0], *sys.argv[1:]])
    if os.environ.get("RAYON_NUM_THREADS"):
        command = f"RAYON_NUM_THREADS={os.environ['RAYON_NUM_THREADS']} {command}"
    out = [
        f"## {now}",
        "",
        f"- machine: {m['nproc']} CPUs ({m['cpu']}), {m['memory']} RAM, Linux {m['kernel']}; "
        f"1-min load average before the first run {args.load_before:.2f}",
        f"- aic: commit `{aic_commit}` of `{checkout}`, binary `{args.aic}` "
        f"(built {built})",
        f"- command: `{command}`",
        f"- runs per repository: {args.runs}, each a fresh process (cold compile: no "
        "persistent cache; OS page cache normally warm after the first run, see run 1 read MiB)",
        "- repositories:",
    ]
    for r in results:
        origin = git_origin(r.spec.path)
        origin = f", origin {origin}" if origin else ""
        out.append(f"  - {r.spec.name}: `{r.spec.path}` at `{r.commit}`{origin}; "
                   f"intent \"{r.spec.intent}\"")
    out += [
        "",
        "| repo | files | median ms | min–max ms | run 1 ms | run 1 read MiB | aic ms "
        "| CPU ms | selected | tokens raw | tokens compiled | peak RSS MiB | same prompt |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: | --- |",
    ]
    for r in results:
        if r.error or not r.runs:
            error = " ".join(str(r.error).split()).replace("|", "\\|")
            out.append(f"| {r.spec.name} | failed: {error} |" + "  |" * 11)
            continue
        walls = [run.wall_ms for run in r.runs]
        meta = r.metas[-1]
        aic_ms = statistics.median(mm.get("durationMs", 0) for mm in r.metas)
        rss = max(run.maxrss_kib for run in r.runs) / 1024
        cpu_ms = statistics.median(run.cpu_ms for run in r.runs)
        read_mib = r.runs[0].inblock * 512 / 2**20
        same = "yes" if len(set(r.prompts)) == 1 else "NO"
        out.append(
            f"| {r.spec.name} | {fmt_int(meta.get('filesTotal'))} "
            f"| {statistics.median(walls):.0f} | {min(walls):.0f}–{max(walls):.0f} "
            f"| {walls[0]:.0f} | {read_mib:.1f} | {aic_ms:.0f} | {cpu_ms:.0f} "
            f"| {fmt_int(meta.get('filesSelected'))} "
            f"| {fmt_int(meta.get('tokensRaw'))} | {fmt_int(meta.get('tokensCompiled'))} "
            f"| {rss:.1f} | {same} |"
        )
    if notes:
        out += [""] + notes
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--aic", default="target/release/aic", help="aic binary")
    parser.add_argument("--runs", type=int, default=5, help="runs per repository")
    parser.add_argument("--results", default="perf/RESULTS.md", help="results file")
    parser.add_argument("--threads-compare", default="",
                        help="comma-separated RAYON_NUM_THREADS values, e.g. 1,2")
    parser.add_argument("--threads-compare-repo", default=None,
                        help="repository NAME for --threads-compare "
                             "(default: the one with the most files)")
    parser.add_argument("repos", nargs="+", type=parse_spec, metavar="NAME=PATH[:INTENT]")
    args = parser.parse_args()

    aic = str(Path(args.aic).resolve())
    if not os.access(aic, os.X_OK):
        parser.error(f"aic binary not found or not executable: {aic}")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    for spec in args.repos:
        if not spec.path.is_dir():
            parser.error(f"{spec.name}: not a directory: {spec.path}")

    args.load_before = os.getloadavg()[0]
    results = []
    for spec in args.repos:
        print(f"{spec.name}: {spec.path} — \"{spec.intent}\"", file=sys.stderr)
        results.append(measure(aic, spec, args.runs))

    notes: list[str] = []
    if args.threads_compare:
        counts = [int(x) for x in args.threads_compare.split(",") if x.strip()]
        ok = [r for r in results if r.metas]
        if args.threads_compare_repo:
            target = next((r for r in results if r.spec.name == args.threads_compare_repo), None)
        else:
            target = max(ok, key=lambda r: r.metas[-1].get("filesTotal", 0), default=None)
        if target is None:
            print("threads compare: no repository to compare on", file=sys.stderr)
        else:
            notes = threads_compare(aic, target.spec, counts)

    section = render_section(args, results, notes)
    results_path = Path(args.results)
    results_path.parent.mkdir(parents=True, exist_ok=True)
    existing = results_path.read_text() if results_path.exists() else RESULTS_HEADER
    results_path.write_text(existing.rstrip("\n") + "\n\n" + section)
    print(section)
    return 0 if all(not r.error for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
