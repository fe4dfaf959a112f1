#!/usr/bin/env python3
"""Benchmark: bench/exec_task.py's 4-step task (read main.py, edit it, run it with python3,
answer) in generated git repositories of 5,000, 50,000 and 200,000 files.

Each repository is a committed git checkout of small source files in nested directories
(about 100 per directory), plus main.py at its root, its files older than git's racy window,
as a real checkout would be. Per size the task runs:
  cold  in a fresh data dir (ATTO_HOME): the first task in a new workspace, when the side
        repository does not exist yet;
  warm  again in the same data dir after `git checkout main.py` (median of --runs): later
        tasks.
Each run is measured as a whole process (user+sys of atto and every child — git, bash,
python3 — from wait4). Prints CPU, wall time, the peak RSS of the whole process tree (the
largest single process: at 200k files that is git, which loads the whole index) and atto's
own peak RSS, per size and run kind, and checks them against the targets: 50k files cold
<= 0.8 s CPU, warm <= 0.1 s; 200k files cold <= 3 s, warm <= 0.2 s; RSS <= 30 MB at 200k.

After the cold run, a watch daemon (`atto checkpoints-watch`) keeps watching the workspace so
that later sessions need not walk it; the bench waits for it to listen, reports its own CPU and
peak RSS on a separate line (the task's rows cannot include it: it is not a waited-for
child), and stops it at the end. The first warm run still walks (no session has recorded a
point of the daemon yet); each warm run's CPU is printed.

Generated repositories are kept under --cache (default /tmp/atto-monorepo-bench) so a second
run does not pay for generating and committing them again.

Usage: python3 bench/monorepo.py [--sizes 5000,50000,200000] [--runs N] [--no-build]
                                 [--atto PATH]
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
import exec_task  # noqa: E402  (its clean_env(), SCRIPT and binaries)

PER_DIR = 100
TARGETS = {  # size: (cold CPU s, warm CPU s)
    50_000: (0.8, 0.1),
    200_000: (3.0, 0.2),
}
RSS_TARGET_MB = 30


def git(repo, *args):
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", *args],
                   cwd=repo, check=True, stdout=subprocess.DEVNULL)


def generate(cache, size):
    """A committed repository of `size` files; made once and kept."""
    repo = os.path.join(cache, f"repo-{size}")
    done = os.path.join(cache, f"repo-{size}.done")
    if os.path.exists(done):
        return repo
    subprocess.run(["rm", "-rf", repo], check=True)
    os.makedirs(repo)
    for i in range(size - 2):
        d = os.path.join(repo, "src", f"p{i // (PER_DIR * PER_DIR)}", f"m{(i // PER_DIR) % PER_DIR}")
        if i % PER_DIR == 0:
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i}.py"), "w") as f:
            f.write(f"def f{i}(x):\n    return x + {i}\n")
    with open(os.path.join(repo, ".gitignore"), "w") as f:
        f.write("*.log\nbuild/\n")
    with open(os.path.join(repo, "main.py"), "w") as f:
        f.write(exec_task.MAIN_PY)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "generated")
    # Out of git's and atto's racy window (both compare stat data only for older files).
    time.sleep(2.1)
    open(done, "w").close()
    return repo


def measured_own(cmd, env, cwd):
    """Runs cmd; returns (exit code, stdout, cpu s, peak RSS KB of the whole process tree,
    peak RSS KB of the process itself).

    CPU and the tree's peak RSS come from wait4() on the process (user+sys of it and every
    child it waited for: git, bash, python3; ru_maxrss is the largest of them), as in
    exec_task.measured. The process's own peak is its VmHWM, sampled every 2 ms until it
    exits: git's processes load the whole index of a large repository and would hide atto's
    own figure.
    """
    out = tempfile.TemporaryFile()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL)
    own = 0
    while True:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        own = max(own, int(line.split()[1]))
        except OSError:
            pass
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.002)
    p.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    return p.returncode, out.read().decode(), ru.ru_utime + ru.ru_stime, ru.ru_maxrss, own


def run_task(repo, env, atto, script):
    server = subprocess.Popen([exec_task.TESTKIT, "serve", "--script", script],
                              stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[-1]
        cmd = [atto, "exec", "--permission", "auto-safe", "--base-url", url + "/v1", "--wire",
               "chat", "--model", "bench-model", "--output-format", "json", "fix main.py"]
        t0 = time.perf_counter()
        code, out, cpu, rss, own = measured_own(cmd, env, cwd=repo)
        wall = time.perf_counter() - t0
    finally:
        server.terminate()
        server.wait()
    if code != 0:
        sys.exit(f"atto exec failed (exit {code}) in {repo}:\n{out}")
    with open(os.path.join(repo, "main.py")) as f:
        if "a + b" not in f.read():
            sys.exit("the edit was not applied")
    return {"cpu_s": cpu, "wall_s": wall, "rss_mb": rss / 1024, "atto_rss_mb": own / 1024}


def daemons(home):
    """The watch daemons (`atto checkpoints-watch`) started under the data dir `home`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"checkpoints-watch" in argv and any(home.encode() in a for a in argv):
            found.append(int(pid))
    return found


def daemon_usage(pid):
    """(CPU s, peak RSS MB) of a running process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    hwm = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
    return cpu, hwm


def one_size(cache, size, runs, atto, script):
    repo = generate(cache, size)
    with tempfile.TemporaryDirectory(prefix="atto-monorepo-home-") as home:
        env = exec_task.clean_env(home)
        git(repo, "checkout", "-q", "main.py")
        cold = run_task(repo, env, atto, script)
        # The cold run walked the workspace and started a watch daemon; the next session
        # comes later, when it has armed its watches (a user takes more than this to type).
        deadline = time.time() + 120
        while not any(n.endswith(".sock") for n in sockets(home)) and time.time() < deadline:
            time.sleep(0.05)
        warm = []
        for _ in range(runs):
            git(repo, "checkout", "-q", "main.py")
            warm.append(run_task(repo, env, atto, script))
        git(repo, "checkout", "-q", "main.py")
        usage = [daemon_usage(pid) for pid in daemons(home)]
        for pid in daemons(home):
            os.kill(pid, 15)
    med = {k: statistics.median(r[k] for r in warm) for k in warm[0]}
    daemon = {"cpu_s": sum(u[0] for u in usage), "rss_mb": max((u[1] for u in usage), default=0),
              "running": len(usage)}
    return {"files": size, "cold": cold, "warm_median": med, "warm_runs": warm, "daemon": daemon}


def sockets(home):
    """Files in the side repositories under the data dir `home`."""
    root = os.path.join(home, "atto-data", "checkpoints")
    if not os.path.isdir(root):
        return []
    return [n for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))
            for n in os.listdir(os.path.join(root, d))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="5000,50000,200000")
    ap.add_argument("--runs", type=int, default=5, help="warm runs per size (median shown)")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--atto", default=exec_task.ATTO, help="the atto binary to measure")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "atto-monorepo-bench"))
    args = ap.parse_args()
    if not args.no_build:
        exec_task.build()
    os.makedirs(args.cache, exist_ok=True)
    script = os.path.join(args.cache, "script.json")
    with open(script, "w") as f:
        json.dump(exec_task.SCRIPT, f)
    results = []
    print(f"{'files':>8}  {'run':5}  {'CPU s':>7}  {'wall s':>7}  {'RSS MB':>7}  {'atto MB':>7}  target")
    for size in (int(s) for s in args.sizes.split(",")):
        r = one_size(args.cache, size, args.runs, args.atto, script)
        results.append(r)
        cold_t, warm_t = TARGETS.get(size, (None, None))
        for kind, m, t in (("cold", r["cold"], cold_t), ("warm", r["warm_median"], warm_t)):
            verdict = ""
            if t is not None:
                verdict = f"CPU <= {t}: {'ok' if m['cpu_s'] <= t else 'OVER'}"
            if size >= 200_000:
                for what, key in (("RSS", "rss_mb"), ("atto RSS", "atto_rss_mb")):
                    ok = "ok" if m[key] <= RSS_TARGET_MB else "OVER"
                    verdict += f"; {what} <= {RSS_TARGET_MB}: {ok}"
            print(f"{size:>8}  {kind:5}  {m['cpu_s']:7.3f}  {m['wall_s']:7.3f}  {m['rss_mb']:7.1f}  "
                  f"{m['atto_rss_mb']:7.1f}  {verdict}", flush=True)
        runs_cpu = ", ".join(f"{w['cpu_s']:.3f}" for w in r["warm_runs"])
        d = r["daemon"]
        print(f"{'':>8}  warm runs' CPU s: {runs_cpu}; watch daemon ({d['running']} running): "
              f"{d['cpu_s']:.3f} s CPU over the whole run, peak RSS {d['rss_mb']:.1f} MB "
              "(not in the rows above: it is not a child the task waits for)", flush=True)
    os.makedirs(os.path.join(exec_task.ROOT, "bench", "out"), exist_ok=True)
    with open(os.path.join(exec_task.ROOT, "bench", "out", "monorepo.json"), "w") as f:
        json.dump({"atto": args.atto, "runs": args.runs, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
