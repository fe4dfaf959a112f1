#!/usr/bin/env python3
"""Benchmark: what the git transport adds to one remote swarm attempt.

Runs crates/swarm/benches/transport.rs on a generated 5,000-file repository: the base
published (a new tree for every attempt, since the one before it merged), the node's side
(unbundle, checkout, commit, bundle back) around a worker changing three files, in the
node's pool of clones (the first attempt makes its clone: timed apart as cold), and the
coordinator's fetch, checkout, change listing and three-way merge. Medians of 5 attempts.
The bench is built with the dev profile: what it times is git's work, which the build's
optimisation does not change, and the warm debug target serves it.

Targets: transport <= 500 ms per attempt, and <= 10% of a task whose model replies take
200 ms each (a worker turn of --replies replies: 3 by default, a tool-call round and the
answer, with one retry of a tool call), counting only the replies' time as the task's.

Not measured here: the coordinator's CPU share with 12 remote workers (bench/swarm.py
measures it for local workers).

Usage: python3 bench/scaleout.py [--replies N]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--replies", type=int, default=3)
    args = ap.parse_args()
    cmd = ["cargo", "bench", "--quiet", "--profile", "dev", "-p", "atto-swarm", "--bench", "transport"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit(1)
    line = [l for l in out.stdout.splitlines() if l.startswith("{")][-1]
    r = json.loads(line)
    task_ms = args.replies * 200.0
    share = r["transport_ms"] / (task_ms + r["transport_ms"])
    print(f"repository: {r['files']} files, base bundle {r['base_bundle_bytes'] / 1e6:.2f} MB")
    print(f"local worktree (made for every isolated attempt anyway): {r['worktree_ms']:.0f} ms")
    print(f"publish base: first {r['publish_cold_ms']:.0f} ms, later (a new tree each) {r['publish_warm_ms']:.0f} ms")
    print(f"node side, first attempt (unbundle, checkout of every file, commit, bundle): {r['node_side_cold_ms']:.0f} ms")
    print(f"node side, later attempts (base checked out over a pooled clone): {r['node_side_ms']:.0f} ms")
    print(f"fetch + checkout in worktree: {r['fetch_checkout_ms']:.0f} ms")
    print(f"changes + three-way merge: {r['changes_merge_ms']:.0f} ms")
    ok_abs = r["transport_ms"] <= 500
    ok_rel = share <= 0.10
    print(f"transport per attempt: {r['transport_ms']:.0f} ms (target <= 500 ms: {'ok' if ok_abs else 'MISSED'})")
    with open("/proc/loadavg") as f:
        print(f"load average during the run: {f.read().split()[0]} on {os.cpu_count()} CPUs")
    print(f"share of a {args.replies}-reply task at 200 ms/reply: {share:.1%} (target <= 10%: {'ok' if ok_rel else 'MISSED'})")
    sys.exit(0 if ok_abs and ok_rel else 1)


if __name__ == "__main__":
    main()
