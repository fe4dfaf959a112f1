#!/usr/bin/env python3
"""Benchmark: MCP servers must not slow a session's start nor bloat its first request.

Three stdio servers are configured (npm's filesystem server with 14 tools, npm's
everything server with 13, and bench/mcp_fake_server.py with 20: 47 tools), installed by
scripts/test.sh under target/peers/. `atto exec` runs a one-reply task against the
scripted model server (atto-testkit); for each of N runs this reports the time from process
start to the first model request and that request's body size, and the same without any
MCP server for comparison. Targets: first request <= 15 ms after start, body <= 10 KB.
(An MCP call's overhead is measured by `cargo bench -p atto-mcp --bench call`.)

Usage: python3 bench/mcp.py [--runs N] [--no-build]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exec_task import ATTO, ROOT, TESTKIT, build  # noqa: E402

NPM = os.path.join(ROOT, "target", "peers", "mcp-npm", "node_modules", "@modelcontextprotocol")
FAKE = os.path.join(ROOT, "bench", "mcp_fake_server.py")


def config(with_mcp):
    if not with_mcp:
        return ""
    servers = {
        "fs": ["node", os.path.join(NPM, "server-filesystem", "dist", "index.js"), "."],
        "every": ["node", os.path.join(NPM, "server-everything", "dist", "index.js")],
        "bench": ["python3", FAKE, "20"],
    }
    out = ""
    for name, (command, *args) in servers.items():
        out += f"[mcp_servers.{name}]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n\n"
    return out


def one_run(tmp, i, with_mcp):
    home = os.path.join(tmp, f"home{i}")
    os.makedirs(os.path.join(home, ".config", "atto"))
    with open(os.path.join(home, ".config", "atto", "config.toml"), "w") as f:
        f.write(config(with_mcp))
    repo = os.path.join(tmp, f"repo{i}")
    os.makedirs(repo)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATTO_") and "KEY" not in k}
    env.update(HOME=home, ATTO_HOME=os.path.join(home, "data"),
               XDG_CONFIG_HOME=os.path.join(home, ".config"))
    script = os.path.join(tmp, "script.json")
    record = os.path.join(tmp, f"record{i}.jsonl")
    server = subprocess.Popen([TESTKIT, "serve", "--script", script, "--record", record],
                              stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[-1]
        cmd = [ATTO, "exec", "--base-url", url + "/v1", "--wire", "chat", "--model", "bench-model",
               "--output-format", "json", "hello"]
        t0 = time.time_ns()
        done = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)
    finally:
        server.terminate()
        server.wait()
    if done.returncode != 0:
        sys.exit(f"atto exec failed ({done.returncode}): {done.stderr}")
    with open(record) as f:
        first = json.loads(f.readline())
    return {
        "first_request_ms": (first["received_at_unix_ns"] - t0) / 1e6,
        "first_body_bytes": int(first["headers"].get("content-length", "0")),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    for path in [os.path.join(NPM, "server-filesystem"), os.path.join(NPM, "server-everything")]:
        if not os.path.exists(path):
            sys.exit(f"{path} is missing: run scripts/test.sh (or its MCP install lines) first")
    if not args.no_build:
        build()
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "script.json"), "w") as f:
            json.dump({"replies": [{"text": "hi"}]}, f)
        # Interleaved, so a busy machine weighs on both alike.
        all_runs = {"no_mcp": [], "three_servers": []}
        for i in range(args.runs):
            for label, with_mcp in [("no_mcp", False), ("three_servers", True)]:
                all_runs[label].append(one_run(tmp, f"{label}{i}", with_mcp))
        for label, runs in all_runs.items():
            report[label] = {
                "first_request_ms_median": round(statistics.median(r["first_request_ms"] for r in runs), 2),
                "first_request_body_bytes": int(statistics.median(r["first_body_bytes"] for r in runs)),
                "all_runs": runs,
            }
    targets = [
        ("start → first request, 3 servers (ms)", report["three_servers"]["first_request_ms_median"], 15),
        ("first request body, 3 servers (bytes)", report["three_servers"]["first_request_body_bytes"], 10 * 1024),
    ]
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"no MCP server: first request after {report['no_mcp']['first_request_ms_median']} ms, "
          f"{report['no_mcp']['first_request_body_bytes']} bytes")
    for name, value, limit in targets:
        print(f"{name:42} {value:>10}   target <= {limit}   {'ok' if value <= limit else 'OVER'}")
    os.makedirs(os.path.join(ROOT, "bench", "out"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "out", "mcp.json"), "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
