#!/usr/bin/env python3
"""Writes a synthetic source tree for scale tests: N files (default 100,000) of
TypeScript, Python, Rust and Markdown in nested packages, with imports between
neighbouring modules, deterministic for a given seed.

    python3 perf/synthetic_tree.py /tmp/synthetic-100k --files 100000

The content is templated code with varied identifiers (so term statistics and
symbol extraction do real work), about 2 KB per file on average.
"""
import argparse
import os
import random

WORDS = (
    "user account order invoice payment session token cache queue worker "
    "router handler service model schema parser lexer render layout widget "
    "config loader store index search rank score budget ledger audit report "
    "metric event stream buffer socket client server request response retry "
    "policy guard filter mapper reducer adapter bridge plugin module"
).split()


def ident(rng, parts=2, sep="_"):
    return sep.join(rng.choice(WORDS) for _ in range(parts))


def camel(rng, parts=2):
    return "".join(w.capitalize() for w in (rng.choice(WORDS) for _ in range(parts)))


def ts_file(rng, neighbours):
    lines = []
    for n in neighbours[:3]:
        lines.append(f'import {{ {camel(rng)} }} from "./{n}";')
    for _ in range(rng.randint(3, 9)):
        name = ident(rng, 2, "_")
        cls = camel(rng)
        lines += [
            f"/** Computes the {name.replace('_', ' ')} for a {cls}. */",
            f"export function {name}(input: {cls}, limit: number): number {{",
            f"  const total = input.items.filter((x) => x.{ident(rng, 1)} > limit).length;",
            f"  if (total === 0) {{ return -1; }}",
            f"  return total * {rng.randint(2, 99)};",
            "}",
            "",
        ]
    lines.append(f"export class {camel(rng, 3)} {{ constructor(private readonly {ident(rng, 1)}: string) {{}} }}")
    return "\n".join(lines) + "\n"


def py_file(rng, neighbours):
    lines = [f"from .{n} import {ident(rng, 1)}" for n in neighbours[:3]]
    for _ in range(rng.randint(3, 9)):
        name = ident(rng, 2)
        lines += [
            "",
            f"def {name}(items, limit={rng.randint(1, 50)}):",
            f'    """Return the {name.replace("_", " ")} of the items above limit."""',
            f"    kept = [x for x in items if x.{ident(rng, 1)} > limit]",
            "    return len(kept) or None",
        ]
    lines += ["", f"class {camel(rng, 3)}:", f"    {ident(rng, 1)}: int = {rng.randint(0, 9)}"]
    return "\n".join(lines) + "\n"


def rs_file(rng, neighbours):
    lines = [f"use super::{n}::{camel(rng)};" for n in neighbours[:3]]
    for _ in range(rng.randint(3, 9)):
        name = ident(rng, 2)
        lines += [
            "",
            f"/// Computes the {name.replace('_', ' ')}.",
            f"pub fn {name}(items: &[u32], limit: u32) -> Option<usize> {{",
            "    let kept = items.iter().filter(|x| **x > limit).count();",
            "    (kept > 0).then_some(kept)",
            "}",
        ]
    lines += ["", f"pub struct {camel(rng, 3)} {{ pub {ident(rng, 1)}: u64 }}"]
    return "\n".join(lines) + "\n"


def md_file(rng, _neighbours):
    title = " ".join(rng.choice(WORDS) for _ in range(3)).capitalize()
    body = "\n\n".join(
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))).capitalize() + "."
        for _ in range(rng.randint(2, 6))
    )
    return f"# {title}\n\n{body}\n"


KINDS = [("ts", ts_file, 4), ("py", py_file, 3), ("rs", rs_file, 2), ("md", md_file, 1)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    weighted = [k for k in KINDS for _ in range(k[2])]
    per_dir = 40
    written = 0
    while written < args.files:
        d = written // per_dir
        directory = os.path.join(args.out, f"pkg{d // 50:03d}", f"mod{d % 50:02d}")
        os.makedirs(directory, exist_ok=True)
        names = [f"{ident(rng, 2)}_{i}" for i in range(min(per_dir, args.files - written))]
        for i, name in enumerate(names):
            ext, render, _ = rng.choice(weighted)
            neighbours = [names[j] for j in (i - 1, i + 1, i + 2) if 0 <= j < len(names)]
            with open(os.path.join(directory, f"{name}.{ext}"), "w") as handle:
                handle.write(render(rng, neighbours))
            written += 1
    print(f"wrote {written} files under {args.out}")


if __name__ == "__main__":
    main()
