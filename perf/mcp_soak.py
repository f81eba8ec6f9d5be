#!/usr/bin/env python3
"""Memory of a long-lived MCP server over many distinct compiles.

Starts `aic mcp` with a fresh AIC_HOME, sends N `aic_compile` calls with
distinct intents (five random words from a fixed list and a counter, seeded,
so two runs send the same intents) on one repository, and prints the
server's resident memory (VmRSS) every 50 calls.

Usage:
    perf/mcp_soak.py AIC REPO N
"""

import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_bench import Server  # noqa: E402

WORDS = (
    "parse option help format command group context error param type choice "
    "prompt echo style path file test bug fix add remove rename"
).split()


def main():
    aic, root, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    server = Server(aic, tempfile.mkdtemp(prefix="aic-soak-"), root)
    server.initialize()
    rng = random.Random(7)

    def rss_mib():
        with open(f"/proc/{server.proc.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    started = time.time()
    for i in range(count):
        intent = " ".join(rng.choice(WORDS) for _ in range(5)) + f" case {i}"
        server.compile(root, intent)
        if i % 50 == 0 or i == count - 1:
            print(i, f"{rss_mib():.1f} MiB", f"{time.time() - started:.0f}s", flush=True)
    server.close()


if __name__ == "__main__":
    main()
