#!/usr/bin/env python3
"""Scores the Context Guard on an injection corpus laid out as a blind author
writes it (issue 37; `docs/guard.md`, "An independent held-out corpus"):

    CORPUS/attacks/NNN/<the file's real path>   one attack per directory
    CORPUS/benign/NNN/<the file's real path>    one look-alike per directory
    CORPUS/intents.jsonl                         {"id", "label": "attack"|"benign", "intent"}

A file case is caught when a finding blocks it (`guard_scan --injection-warnings`
lists `blocked`, `warned`, `path`); an intent is reported when `aic compile`
puts a prompt-injection finding on `<intent>` in `meta.guard`, in a two-file
project made under the scratch directory.

    cargo build --release --example guard_scan --bin aic
    python3 perf/injection_corpus.py /tmp/inj5 --bin target/release [--list]

`--list` also prints every case that went the wrong way (an attack not
blocked, a benign case blocked, an intent misjudged) with its findings.
Keep a corpus out of the repository, and measure a held-out one once.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile


def scan_group(guard_scan, root):
    """{case: state} for the cases under root, and {case: [finding lines]}."""
    out = subprocess.run(
        [guard_scan, root, "--injection-warnings"], capture_output=True, text=True, check=True
    ).stdout
    states = {case: "none" for case in os.listdir(root)}
    details = collections.defaultdict(list)
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2 or parts[0] not in ("blocked", "warned", "redacted", "path"):
            continue
        case = parts[1].split("/")[0]
        if parts[0] == "blocked":
            states[case] = "blocked"
        elif parts[0] in ("warned", "path") and states[case] == "none":
            states[case] = parts[0]
        details[case].append(line)
    return states, details


def project(scratch):
    """A two-file git project to compile intents against."""
    root = os.path.join(scratch, "project")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "calc.py"), "w") as f:
        f.write("def add(a, b):\n    return a + b\n")
    with open(os.path.join(root, "main.py"), "w") as f:
        f.write("from calc import add\nprint(add(1, 2))\n")
    subprocess.run(["git", "init", "-q", root], check=True)
    return root


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--bin", required=True, help="a target directory: BIN/aic, BIN/examples/guard_scan")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    # Absolute: the intents are compiled from inside the scratch project.
    guard_scan = os.path.abspath(os.path.join(args.bin, "examples", "guard_scan"))
    aic = os.path.abspath(os.path.join(args.bin, "aic"))
    for tool in (guard_scan, aic):
        if not os.access(tool, os.X_OK):
            sys.exit(f"{tool} is missing: build it with `cargo build --release --example guard_scan --bin aic`")
    for group, wanted in (("attacks", "blocked"), ("benign", "none")):
        root = os.path.join(args.corpus, group)
        if not os.path.isdir(root):
            sys.exit(f"{root} is missing: a corpus holds attacks/ and benign/ directories")
        states, details = scan_group(guard_scan, root)
        counts = collections.Counter(states.values())
        print(f"{group}: {len(states)} cases; blocked {counts['blocked']}, warned {counts['warned']}, "
              f"by path {counts['path']}, no finding {counts['none']}")
        if args.list:
            for case in sorted(states):
                caught = states[case] == "blocked"
                if caught != (wanted == "blocked"):
                    print(f"   {group}/{case}: {states[case]} {' | '.join(details[case])}")
    intents = os.path.join(args.corpus, "intents.jsonl")
    if not os.path.exists(intents):
        return
    with tempfile.TemporaryDirectory() as scratch:
        root = project(scratch)
        env = dict(os.environ, AIC_HOME=os.path.join(scratch, "home"), AIC_DAEMON="off")
        counts = collections.Counter()
        for line in open(intents):
            if not line.strip():
                continue
            task = json.loads(line)
            done = subprocess.run([aic, "compile", "--related", "calc.py", "--json", task["intent"]],
                                  cwd=root, capture_output=True, text=True, env=env)
            try:
                findings = json.loads(done.stdout)["meta"]["guard"]["findings"]
            except (ValueError, KeyError) as error:
                sys.exit(f"intent {task['id']}: no JSON from aic ({error}): {done.stderr[:300]}")
            patterns = [f["pattern"] for f in findings
                        if f.get("file") == "<intent>" and f.get("type") == "prompt-injection"]
            reported = bool(patterns)
            counts[(task["label"], reported)] += 1
            if args.list and reported != (task["label"] == "attack"):
                print(f"   intent {task['id']} ({task['label']}): reported={reported} {patterns}")
        attacks = counts[("attack", True)] + counts[("attack", False)]
        benign = counts[("benign", True)] + counts[("benign", False)]
        print(f"intents: injected reported {counts[('attack', True)]} / {attacks}, "
              f"ordinary reported {counts[('benign', True)]} / {benign}")


if __name__ == "__main__":
    main()
