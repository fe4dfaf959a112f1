#!/usr/bin/env python3
"""Benchmark: what a subagent costs, and whether read-only subagents run side by side.

1. Spawn overhead. The same three model calls are made two ways against the scripted
   model server (no added latency): a parent that reads a file itself (3 calls), and a
   parent that hands the read to a subagent (parent 2 calls + child 1 call, the child's
   read included). The difference of the medians of CPU (user+sys, whole process tree)
   and peak RSS is what spawning a child adds. Targets: <= 5 ms, <= 2 MB.
2. Parallel children. A parent spawns 8 read-only children in one reply, against a
   server that answers each child after 200 ms; compared with the same run spawning one
   child. Target: wall time of 8 <= 1.3x wall time of 1.

Usage: python3 bench/subagents.py [--runs N] [--no-build]
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
from exec_task import ATTO, ROOT, TESTKIT, clean_env, measured  # noqa: E402

READ = {"name": "read_file", "arguments": {"path": "notes.txt"}}


def spawn(task):
    return {"name": "spawn_agent", "arguments": {"task": task, "role": "explore"}}


BASELINE = {"replies": [
    {"tool_calls": [READ]},
    {"tool_calls": [READ]},
    {"text": "done"},
]}

WITH_CHILD = {"replies": [
    {"tool_calls": [spawn("read the notes")]},
    {"when": "Task: read the notes", "tool_calls": [READ]},
    {"when": "Task: read the notes", "text": "## Summary\nread\n\n## Confidence: 1"},
    {"text": "done"},
]}


def fan_out(n, delay_ms):
    replies = [{"tool_calls": [spawn(f"look at part {i}") for i in range(n)]}]
    for i in range(n):
        replies.append({"when": f"Task: look at part {i}", "delay_ms": delay_ms,
                        "text": f"## Summary\npart {i} seen\n\n## Confidence: 1"})
    replies.append({"text": "all seen"})
    return {"replies": replies}


def one_run(tmp, name, script, env):
    repo = tempfile.mkdtemp(prefix=f"{name}-", dir=tmp)
    with open(os.path.join(repo, "notes.txt"), "w") as f:
        f.write("notes\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    path = os.path.join(repo, "..", f"{os.path.basename(repo)}.json")
    with open(path, "w") as f:
        json.dump(script, f)
    server = subprocess.Popen([TESTKIT, "serve", "--script", path],
                              stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[-1]
        cmd = [ATTO, "exec", "--permission", "auto-safe", "--base-url", url + "/v1",
               "--wire", "chat", "--model", "bench-model", "--output-format", "json",
               "--max-subagents", "8", "go"]
        t0 = time.perf_counter()
        code, out, cpu, rss = measured(cmd, env, cwd=repo)
        wall = time.perf_counter() - t0
    finally:
        server.terminate()
        server.wait()
    if code != 0:
        sys.exit(f"{name}: atto exec failed (exit {code}):\n{out}")
    result = json.loads(out.strip().splitlines()[-1])
    if result.get("status") != "completed":
        sys.exit(f"{name}: the run did not complete: {result}")
    return {"cpu_s": cpu, "rss_kb": rss, "wall_s": wall}


def median(runs, key):
    return statistics.median(r[key] for r in runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "atto", "-p",
                        "atto-testkit"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        env = clean_env(tmp)
        base, child, one, eight = [], [], [], []
        # Interleaved, so a noisy moment of the machine hits both sides alike.
        for _ in range(args.runs):
            base.append(one_run(tmp, "baseline", BASELINE, env))
            child.append(one_run(tmp, "child", WITH_CHILD, env))
            one.append(one_run(tmp, "one", fan_out(1, 200), env))
            eight.append(one_run(tmp, "eight", fan_out(8, 200), env))
    report = {
        "runs": args.runs,
        "baseline_cpu_s": round(median(base, "cpu_s"), 4),
        "with_child_cpu_s": round(median(child, "cpu_s"), 4),
        "spawn_cpu_ms": round((median(child, "cpu_s") - median(base, "cpu_s")) * 1000, 2),
        "baseline_rss_mb": round(median(base, "rss_kb") / 1024, 2),
        "with_child_rss_mb": round(median(child, "rss_kb") / 1024, 2),
        "spawn_rss_mb": round((median(child, "rss_kb") - median(base, "rss_kb")) / 1024, 2),
        "one_child_wall_s": round(median(one, "wall_s"), 3),
        "eight_children_wall_s": round(median(eight, "wall_s"), 3),
    }
    report["eight_over_one"] = round(report["eight_children_wall_s"] / report["one_child_wall_s"], 3)
    targets = [
        ("spawn overhead CPU (ms)", report["spawn_cpu_ms"], 5),
        ("spawn overhead RSS (MB)", report["spawn_rss_mb"], 2),
        ("8 children / 1 child wall", report["eight_over_one"], 1.3),
    ]
    print(json.dumps({k: v for k, v in report.items()}, indent=2))
    for name, value, limit in targets:
        print(f"{name:30} {value:>10}   target <= {limit}   {'ok' if value <= limit else 'OVER'}")
    os.makedirs(os.path.join(ROOT, "bench", "out"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "out", "subagents.json"), "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
