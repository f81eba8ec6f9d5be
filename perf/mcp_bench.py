#!/usr/bin/env python3
"""MCP server latency (issue 7): process start to the first tools/list answer, and
aic_compile round trips on a real repository, over raw JSON-RPC lines on stdio.

    python3 perf/mcp_bench.py --aic target/release/aic --repo /work/perf-repos/deno \
        --intent "fix the permission check in the fetch op" --runs 20

1. start → first `tools/list` answer: spawn `aic mcp`, write initialize,
   notifications/initialized and tools/list at once, time until the tools/list
   response arrives; median and max of --runs spawns (fresh AIC_HOME each).
2. In one server with a fresh AIC_HOME:
   - the cold compile (empty cache);
   - warm, same intent: the prompt-cache path, median of --runs calls;
   - warm, new intents: the per-file cache with a fresh selection each time
     (the intent gets a distinct suffix word), median of --runs calls;
   - warm after 3 files are touched (appended to, then restored).
Every time is the wall time from writing the request line to reading its answer.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


class Server:
    def __init__(self, aic, home, cwd):
        env = dict(os.environ, AIC_HOME=home)
        env.pop("RUST_LOG", None)
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [aic, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=env, cwd=cwd,
        )
        self.next_id = 1

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def wait(self, request_id):
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("the server closed stdout")
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    def request(self, method, params=None):
        request_id = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        started = time.perf_counter()
        self.send(message)
        answer = self.wait(request_id)
        return answer, (time.perf_counter() - started) * 1000.0

    def initialize(self):
        self.request("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "mcp-bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def compile(self, root, intent):
        answer, ms = self.request("tools/call", {
            "name": "aic_compile", "arguments": {"intent": intent, "projectRoot": root}})
        result = answer.get("result", {})
        if "error" in answer or result.get("isError"):
            raise SystemExit(f"compile failed: {json.dumps(answer)[:1000]}")
        return result["structuredContent"]["meta"], ms

    def peak_rss_mib(self):
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
        return float("nan")

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def first_tools_list(aic, runs):
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as home:
            server = Server(aic, home, home)
            server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "mcp-bench", "version": "1"}}})
            server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            server.wait(2)
            times.append((time.perf_counter() - server.started) * 1000.0)
            server.close()
    return times


def touch_three(root):
    edited = []
    for dirpath, _, names in os.walk(root):
        if "/." in dirpath or "node_modules" in dirpath:
            continue
        for name in sorted(names):
            if name.endswith((".ts", ".rs", ".py", ".go", ".js")):
                edited.append(os.path.join(dirpath, name))
                if len(edited) == 3:
                    return edited
    return edited


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--aic", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--intent", required=True)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    aic = os.path.abspath(args.aic)
    root = os.path.abspath(args.repo)

    times = first_tools_list(aic, args.runs)
    print(f"start → first tools/list: median {statistics.median(times):.1f} ms, "
          f"max {max(times):.1f} ms ({args.runs} spawns)")

    with tempfile.TemporaryDirectory() as home:
        server = Server(aic, home, home)
        server.initialize()
        meta, cold = server.compile(root, args.intent)
        print(f"cold aic_compile: {cold:.0f} ms ({meta['filesTotal']} files, "
              f"{meta['tokensCompiled']} tokens)")
        same = [server.compile(root, args.intent)[1] for _ in range(args.runs)]
        print(f"warm aic_compile, same intent (prompt cache): median {statistics.median(same):.1f} ms, "
              f"max {max(same):.1f} ms")
        fresh = []
        for i in range(args.runs):
            meta, ms = server.compile(root, f"{args.intent} variant{i}")
            if meta["cacheHit"]:
                raise SystemExit("a new intent hit the prompt cache")
            fresh.append(ms)
        print(f"warm aic_compile, new intent each call: median {statistics.median(fresh):.1f} ms, "
              f"max {max(fresh):.1f} ms")
        edited = touch_three(root)
        originals = {path: open(path, "rb").read() for path in edited}
        try:
            for path in edited:
                with open(path, "ab") as handle:
                    handle.write(b"\n// edited by mcp_bench\n")
            _, ms = server.compile(root, args.intent)
            print(f"aic_compile after editing 3 files: {ms:.0f} ms")
        finally:
            for path, data in originals.items():
                with open(path, "wb") as handle:
                    handle.write(data)
        print(f"server peak RSS: {server.peak_rss_mib():.0f} MiB")
        server.close()


if __name__ == "__main__":
    main()
