#!/usr/bin/env python3
"""Benchmark: `atto acp` from `initialize` to the first `session/update` of a prompt.

Each run starts a fresh `atto acp` process (release build) against the scripted model
server (atto-testkit, a separate process) whose one reply is a short answer sent at once.
A raw JSON-RPC client (this script, no SDK in the timing) sends `initialize` right after
starting the process, then `session/new`, then `session/prompt` as soon as each answer
arrives, and notes when the first `session/update` that follows the prompt arrives.

Two cases, N runs each, interleaved: a workspace atto has seen before (the usual case in
an editor: its checkpoint repository exists), and a git repository atto has never seen
(one per run, all created before the runs: the first session ever in a workspace, which
creates its checkpoint repository).

Reported (median of N runs, default 15), all in ms:
  total          process start (initialize sent with it) -> first session/update of
                 the prompt
  model          the model's own time: the scripted server's request arrival -> the
                 first update (its reply and atto's relay of it; an upper bound, since it
                 includes atto's parsing of the first chunk)
  over_model     total - model: atto's own time (target <= 15 ms)
and the steps: process start to initialize answered, session/new answered, prompt ->
model request.

Usage: python3 bench/acp.py [--runs N] [--no-build]
"""
import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exec_task import ATTO, ROOT, TESTKIT, build, clean_env  # noqa: E402

SCRIPT = {"replies": [{"text": "Hello from the scripted model."}]}
TARGET_MS = 15


class Peer:
    """atto acp on pipes; lines read with a bound."""

    def __init__(self, cmd, env, cwd):
        self.proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buf = b""

    def send(self, obj):
        self.proc.stdin.write((json.dumps(obj) + "\n").encode())
        self.proc.stdin.flush()

    def next(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                sys.exit("atto acp did not answer within 20 s")
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    sys.exit("atto acp closed stdout")
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line), time.time_ns()

    def until(self, wanted, deadline):
        while True:
            msg, at = self.next(deadline)
            if wanted(msg):
                return msg, at

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=20)


def one_run(tmp, i, env, repo):
    if not os.path.exists(repo):
        os.makedirs(repo)
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    record = os.path.join(tmp, f"record{i}.jsonl")
    server = subprocess.Popen([TESTKIT, "serve", "--script", os.path.join(tmp, "script.json"),
                               "--record", record], stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[-1]
        t_spawn = time.time_ns()
        peer = Peer([ATTO, "acp", "--permission", "auto-safe", "--base-url", url + "/v1",
                     "--wire", "chat", "--model", "bench-model"], env, repo)
        deadline = time.monotonic() + 20
        # The clock starts with the process: an editor starts the agent and initializes
        # it at once.
        t0 = t_spawn
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": 1, "clientCapabilities": {}}})
        _, t_init = peer.until(lambda m: m.get("id") == 1, deadline)
        peer.send({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                   "params": {"cwd": repo, "mcpServers": []}})
        new, t_new = peer.until(lambda m: m.get("id") == 2, deadline)
        sid = new["result"]["sessionId"]
        t_prompt = time.time_ns()
        peer.send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                   "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}})
        _, t_first = peer.until(
            lambda m: m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk", deadline)
        peer.until(lambda m: m.get("id") == 3, deadline)
        peer.close()
    finally:
        server.terminate()
        server.wait()
    with open(record) as f:
        reqs = [json.loads(l) for l in f if l.strip()]
    if len(reqs) != 1:
        sys.exit(f"expected 1 model request, saw {len(reqs)}")
    t_model = reqs[0]["received_at_unix_ns"]
    ms = lambda a, b: (b - a) / 1e6
    total = ms(t0, t_first)
    model = ms(t_model, t_first)
    return {
        "total_ms": total,
        "model_ms": model,
        "over_model_ms": total - model,
        "spawn_and_initialize_ms": ms(t0, t_init),
        "session_new_ms": ms(t_init, t_new),
        "prompt_to_model_request_ms": ms(t_prompt, t_model),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    if not args.no_build:
        build()
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "script.json"), "w") as f:
            json.dump(SCRIPT, f)
        env = clean_env(tmp)
        seen = os.path.join(tmp, "seen")
        one_run(tmp, "warm", env, seen)  # atto's first session there, not measured
        # The new workspaces are repositories atto has not seen, created up front (not
        # just before their run, when git's writes would still be flushing to disk).
        fresh = [os.path.join(tmp, f"new{i}") for i in range(args.runs)]
        for repo in fresh:
            os.makedirs(repo)
            subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        os.sync()
        # Interleaved, so that the load of a shared machine weighs on both cases alike.
        cases = {"seen_workspace": [], "new_workspace": []}
        for i in range(args.runs):
            cases["seen_workspace"].append(one_run(tmp, f"s{i}", env, seen))
            cases["new_workspace"].append(one_run(tmp, f"n{i}", env, fresh[i]))
    # The numbers move with the machine's load (other builds on a shared machine): said.
    load = [round(x, 2) for x in os.getloadavg()]
    print(f"load average during the runs: {load} on {os.cpu_count()} CPUs")
    report = {"runs": args.runs, "target_over_model_ms": TARGET_MS, "loadavg": load}
    for case, runs in cases.items():
        med = {k: round(statistics.median(r[k] for r in runs), 2) for k in runs[0]}
        report[case] = {"median": med, "all_runs": runs}
        print(f"== {case} (median of {args.runs})")
        for key, value in med.items():
            print(f"  {key:28} {value:>8}")
        over = med["over_model_ms"]
        print(f"  start+initialize -> first update, over the model's own time: {over} ms "
              f"(target <= {TARGET_MS} ms) {'ok' if over <= TARGET_MS else 'OVER'}")
    os.makedirs(os.path.join(ROOT, "bench", "out"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "out", "acp.json"), "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
