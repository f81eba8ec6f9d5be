#!/usr/bin/env python3
"""Before/after check for refactors that must not change behaviour.

Compiles the same intents on the same repositories with two `aic` binaries
(typically a build of `main` before the change and one after it) and compares
what a user sees, byte for byte:

- `aic compile` stdout (the prompt);
- `aic compile --json` with `meta.durationMs` removed (the only field that
  varies between identical runs);
- both on a cold per-file cache (a fresh `AIC_HOME`) and again on the warm one,
  so the cache paths are compared too.

Each binary gets its own `AIC_HOME`, so neither reads rows the other wrote.
Exit status 0 when every case matches, 1 otherwise (the first differing line of
each mismatch is printed).

Usage:
    perf/prompt_identity.py --before OLD/aic --after NEW/aic \\
        'click=/path/to/click' 'vite=/path/to/vite' [--budgets 0,8000,3000]

Intents come from `--intents FILE` (one per line, `#` comments) or a built-in
list of short, long and @-target intents; the repository name before `=` picks
the built-in list for that repository, with a generic list for others.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

GENERIC = [
    "fix the help formatting of options",
    "how does the configuration get loaded",
    "speed it up",
    "add a test for the error handling",
    "document the public API",
    "refactor the command line parsing into smaller functions",
]

BUILT_IN = {
    "click": [
        "fix the help formatting of options",
        "Fix metavar for Choice options when show_choices=False",
        "progressbar: fix regression with hidden bars. The documentation of the progress bar states that the progress bar is hidden when the output is not a terminal, but since 8.2 it is shown anyway; restore the old behaviour and add a test",
        "why does @src/click/core.py drop options",
        "Deprecate `isolated_filesystem` and document its limits",
        "speed it up",
        "Traceback (most recent call last):\n  File \"src/click/types.py\", line 120, in convert\n    raise BadParameter(msg)\nclick.exceptions.BadParameter: invalid choice",
    ],
    "vite": [
        "add an option to the dev server for the HMR port",
        "fix(ssr): track for statements as block scope",
        "fix(build): decode urls in CSS files",
        "perf: add filter to asset plugin",
        "fix(dev): handle concurrent restarts in `_createServer`",
        "make it better",
    ],
    "deno": [
        "fix the permission check for reading environment variables",
        "fix(ext/node_sqlite): invalidate sessions on database close",
        "add a test for the fetch redirect handling",
    ],
}


def run(binary, home, repo, intent, budget, json_out):
    command = [binary, "compile", intent, "--root", repo]
    if budget:
        command += ["--budget", str(budget)]
    if json_out:
        command.append("--json")
    env = dict(os.environ, AIC_HOME=home)
    done = subprocess.run(command, capture_output=True, env=env)
    out = done.stdout
    if json_out and done.returncode == 0:
        value = json.loads(out)
        value["meta"].pop("durationMs", None)
        out = json.dumps(value, indent=1, sort_keys=True).encode()
    return done.returncode, out, done.stderr


def first_difference(a, b):
    left = a.decode(errors="replace").splitlines()
    right = b.decode(errors="replace").splitlines()
    for index, (x, y) in enumerate(zip(left, right)):
        if x != y:
            return f"line {index + 1}:\n  before: {x[:200]}\n  after:  {y[:200]}"
    return f"lengths differ: {len(left)} vs {len(right)} lines"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--budgets", default="0,8000,3000")
    parser.add_argument("--intents", help="one intent per line")
    parser.add_argument("repos", nargs="+", metavar="NAME=PATH")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    custom = None
    if args.intents:
        with open(args.intents, encoding="utf-8") as file:
            custom = [line.rstrip("\n") for line in file if line.strip() and not line.startswith("#")]
    homes = {name: tempfile.mkdtemp(prefix=f"aic-identity-{name}-") for name in ("before", "after")}
    cases = mismatches = 0
    for spec in args.repos:
        name, _, path = spec.partition("=")
        intents = custom or BUILT_IN.get(name, GENERIC)
        for rounds in ("cold", "warm"):
            for intent in intents:
                for budget in budgets:
                    for json_out in (False, True):
                        results = {
                            which: run(binary, homes[which], path, intent, budget, json_out)
                            for which, binary in (("before", args.before), ("after", args.after))
                        }
                        cases += 1
                        (code_a, out_a, err_a), (code_b, out_b, err_b) = results["before"], results["after"]
                        if code_a == code_b and out_a == out_b:
                            continue
                        mismatches += 1
                        label = f"{name} {rounds} budget={budget or 'auto'} json={json_out} intent={intent[:60]!r}"
                        print(f"MISMATCH {label}: exit {code_a} vs {code_b}")
                        if out_a != out_b:
                            print("  " + first_difference(out_a, out_b).replace("\n", "\n  "))
                        if code_a != code_b:
                            print(f"  stderr before: {err_a.decode(errors='replace')[:300]}")
                            print(f"  stderr after:  {err_b.decode(errors='replace')[:300]}")
    print(f"{cases} cases, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
