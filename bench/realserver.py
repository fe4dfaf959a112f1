#!/usr/bin/env python3
"""Benchmark: atto's own time around a real model server (llama.cpp's llama-server with
SmolLM2-135M, from scripts/realserver.sh), on a fixed one-call prompt.

Starts the server (temperature 0, so every run generates the same tokens up to the cap),
captures atto's first request through ../shared/realserver/proxy.py, then for N runs
measures the wall time of `atto exec --output-format json` straight at the server, and
replays the captured request straight at the server with a minimal HTTP client, reading
the server's own `timings` (prompt_ms + predicted_ms) from its response. Reports:

- overhead = median(atto wall) - median(server generation time)   (target <= 25 ms)
- overhead vs. a minimal client = median(atto wall) - median(replay wall)
- first request body size (target <= 10 KB)

Needs root and `scripts/realserver.sh setup`. Usage:
    python3 bench/realserver.py [--atto PATH] [--runs N] [--port P]
(default binary: target/release/atto, built with cargo if missing unless --no-build).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RSH = os.path.join(ROOT, "scripts", "realserver.sh")
PROMPT = "Write a long story about a dragon."
MAX_OUTPUT = 32


def sh(*args, env=None, check=True):
    return subprocess.run(args, env=env, check=check, capture_output=True, text=True)


def workspace(tmp, base_url):
    home = os.path.join(tmp, "home")
    os.makedirs(os.path.join(home, ".config", "atto"), exist_ok=True)
    repo = os.path.join(tmp, "repo")
    os.makedirs(repo, exist_ok=True)
    sh("git", "init", "-q", repo)
    with open(os.path.join(home, ".config", "atto", "config.toml"), "w") as f:
        f.write(f'provider = "local"\nmodel = "smollm2"\n\n[providers.local]\nbase_url = "{base_url}"\n'
                f'wire = "chat"\n\n[limits]\nmax_rounds = 1\nmax_output_tokens = {MAX_OUTPUT}\n\n'
                '[retry]\nmax_attempts = 1\n')
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("ATTO_")}
    env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"), ATTO_HOME=os.path.join(home, "atto"))
    return repo, env


def run_atto(atto, repo, env):
    t0 = time.perf_counter()
    p = subprocess.run([atto, "exec", "--output-format", "json", PROMPT], cwd=repo, env=env,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"atto failed ({p.returncode}): {p.stdout}{p.stderr}")
    result = json.loads(p.stdout)
    return wall, result["usage"]["output_tokens"]


def replay(port, body):
    """The captured request, straight at the server: (wall s, server ms, output tokens)."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", body,
                                 {"content-type": "application/json", "accept": "text/event-stream"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req) as r:
        raw = r.read().decode()
    wall = time.perf_counter() - t0
    timings = None
    for line in raw.splitlines():
        if line.startswith("data: {") and '"timings"' in line:
            timings = json.loads(line[6:])["timings"]
    if timings is None:
        sys.exit("the server's reply carried no timings")
    return wall, timings["prompt_ms"] + timings["predicted_ms"], timings["predicted_n"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--atto", default=os.path.join(ROOT, "target", "release", "atto"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--port", type=int, default=18470)
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()
    a.atto = os.path.abspath(a.atto)
    if not os.path.exists(a.atto):
        if a.no_build:
            sys.exit(f"no binary at {a.atto}")
        subprocess.run(["cargo", "build", "--release", "-p", "atto"], cwd=ROOT, check=True)
    shared = sh("bash", RSH, "shared").stdout.strip()
    env = dict(os.environ, PORT=str(a.port), TOOLS="1")  # TOOLS=1 starts it at temperature 0
    start = sh("bash", RSH, "start", env=env, check=False)
    if start.returncode != 0:
        sys.exit(f"the real server did not start: {start.stdout}{start.stderr}")
    tmp = tempfile.mkdtemp(prefix="atto-bench-rs-")
    proxy = None
    try:
        # The first request, through the logging proxy.
        logdir = os.path.join(tmp, "log")
        proxy = subprocess.Popen([sys.executable, os.path.join(shared, "proxy.py")],
                                 env=dict(os.environ, LISTEN=str(a.port + 1), UPSTREAM=str(a.port), LOGDIR=logdir))
        time.sleep(0.5)
        repo, aenv = workspace(os.path.join(tmp, "p"), f"http://127.0.0.1:{a.port + 1}/v1")
        run_atto(a.atto, repo, aenv)
        proxy.terminate()
        proxy.wait()
        with open(os.path.join(logdir, "001.req"), "rb") as f:
            body = f.read().split(b"\n", 2)[2]

        repo, aenv = workspace(os.path.join(tmp, "d"), f"http://127.0.0.1:{a.port}/v1")
        run_atto(a.atto, repo, aenv)  # warm the server's prompt cache and the page cache
        replay(a.port, body)
        walls, servers, replays, tokens = [], [], [], set()
        for _ in range(a.runs):
            w, n = run_atto(a.atto, repo, aenv)
            rw, sm, rn = replay(a.port, body)
            walls.append(w)
            servers.append(sm / 1000)
            replays.append(rw)
            tokens.update([n, rn])
        mw, ms, mr = (statistics.median(x) for x in (walls, servers, replays))
        print(f"binary:                         {a.atto}")
        print(f"runs:                           {a.runs} (output tokens per run: {sorted(tokens)})")
        print(f"atto wall (median):             {mw * 1000:.1f} ms")
        print(f"server generation (median):     {ms * 1000:.1f} ms (timings: prompt_ms + predicted_ms)")
        print(f"minimal client wall (median):   {mr * 1000:.1f} ms")
        print(f"atto overhead over generation:  {(mw - ms) * 1000:.1f} ms (target <= 25 ms)")
        print(f"atto overhead over the client:  {(mw - mr) * 1000:.1f} ms")
        print(f"first request body:             {len(body)} bytes (target <= 10240)")
    finally:
        if proxy and proxy.poll() is None:
            proxy.terminate()
        sh("bash", RSH, "stop", env=env, check=False)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
