#!/usr/bin/env python3
"""Benchmark: a 4-request task with `atto exec` against the scripted model server.

The task (read a file, edit it, run it with python3, final answer) runs in a fresh
temporary git repository, with the scripted model server (atto-testkit, a separate
process, no added latency). Each run is measured as a whole process through wait4() rusage (user+sys
include the bash and python3 children; like /usr/bin/time -v, at finer resolution). Reports the median
of N runs (default 7) of: CPU seconds, peak RSS, time from process start to the first
model request, and the size of the first request body; plus `atto --version` time and
RSS. Targets (issue 2): CPU <= 0.05 s, RSS <= 20 MB, first request <= 10 ms,
--version <= 5 ms and <= 8 MB, first request body <= 10 KB.

Usage: python3 bench/exec_task.py [--runs N] [--no-build] [--path-python]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ATTO = os.path.join(ROOT, "target", "release", "atto")
TESTKIT = os.path.join(ROOT, "target", "release", "atto-testkit")

MAIN_PY = "def add(a, b):\n    return a - b\n\n\nprint(add(2, 3))\n"

SCRIPT = {
    "replies": [
        {"text": "Reading main.py.", "tool_calls": [{"name": "read_file", "arguments": {"path": "main.py"}}]},
        {"text": "add subtracts; fixing.", "tool_calls": [{"name": "edit_file", "arguments": {
            "path": "main.py", "old_string": "return a - b", "new_string": "return a + b"}}]},
        {"text": "Running it.", "tool_calls": [{"name": "bash", "arguments": {"command": "python3 main.py"}}]},
        {"text": "Fixed add(); main.py now prints 5."},
    ]
}


def measured(cmd, env, cwd=None):
    """Runs cmd under /usr/bin/time -v; returns (exit code, stdout, cpu s, peak rss KB).

    Peak RSS is what /usr/bin/time -v reports for the command (time forks from its own
    small process, so nothing of this Python process leaks into the figure). CPU is
    user+sys from wait4() on the time process: it includes the command and every
    descendant (bash, python3) at microsecond resolution, where time -v itself rounds to
    10 ms ticks — too coarse for a 50 ms budget. time's own share is well under 1 ms.
    """
    r, w = os.pipe()
    devnull = os.open(os.devnull, os.O_WRONLY)
    report = tempfile.NamedTemporaryFile(prefix="atto-bench-time-", delete=False)
    report.close()
    actions = [(os.POSIX_SPAWN_DUP2, w, 1), (os.POSIX_SPAWN_DUP2, devnull, 2),
               (os.POSIX_SPAWN_CLOSE, r)]
    full = ["/usr/bin/time", "-v", "-o", report.name] + cmd
    old = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        pid = os.posix_spawn(full[0], full, env, file_actions=actions)
    finally:
        os.chdir(old)
        os.close(devnull)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status, ru = os.wait4(pid, 0)
    with open(report.name) as f:
        text = f.read()
    os.unlink(report.name)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
    m = re.search(r"Command exited with non-zero status (\d+)", text)
    code = int(m.group(1)) if m else os.waitstatus_to_exitcode(status)
    return code, b"".join(chunks).decode(), ru.ru_utime + ru.ru_stime, rss


USE_PATH_PYTHON = False


def use_profile(profile):
    """Measures the binaries of cargo profile `profile` (`release`, or `dist`: fat LTO)."""
    global ATTO, TESTKIT
    # cargo puts the `dev` profile's binaries in target/debug.
    folder = "debug" if profile == "dev" else profile
    ATTO = os.path.join(ROOT, "target", folder, "atto")
    TESTKIT = os.path.join(ROOT, "target", folder, "atto-testkit")


def build(profile="release"):
    """The binaries every bench measures: atto and the scripted model server."""
    subprocess.run(["cargo", "build", "--profile", profile, "--quiet", "-p", "atto",
                    "-p", "atto-testkit"], cwd=ROOT, check=True)


def clean_env(home):
    env = {k: v for k, v in os.environ.items()
           if not re.search(r"(KEY|TOKEN|SECRET)", k) and not k.startswith("ATTO_")}
    env["HOME"] = home
    env["ATTO_HOME"] = os.path.join(home, "atto-data")
    # The system's python3 (/usr/bin) when there is one, not a version manager's shim on
    # PATH: pyenv's shim is a bash script, and its interpreter loads a large site setup;
    # either costs more CPU than atto's whole share of the task. Reported in the output.
    if os.path.exists("/usr/bin/python3") and not USE_PATH_PYTHON:
        env["PATH"] = "/usr/bin" + os.pathsep + env.get("PATH", "")
    env["XDG_CONFIG_HOME"] = os.path.join(home, ".config")
    return env


def one_run(tmp, i, env):
    repo = os.path.join(tmp, f"repo{i}")
    os.makedirs(repo)
    with open(os.path.join(repo, "main.py"), "w") as f:
        f.write(MAIN_PY)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    script = os.path.join(tmp, "script.json")
    record = os.path.join(tmp, f"record{i}.jsonl")
    server = subprocess.Popen([TESTKIT, "serve", "--script", script, "--record", record],
                              stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        url = line.split()[-1]
        cmd = [ATTO, "exec", "--permission", "auto-safe", "--base-url", url + "/v1", "--wire", "chat",
               "--model", "bench-model", "--output-format", "json", "fix main.py"]
        t0 = time.time_ns()
        code, out, cpu, rss = measured(cmd, env, cwd=repo)
        err = ""
    finally:
        server.terminate()
        server.wait()
    if code != 0:
        sys.exit(f"atto exec failed (exit {code}):\n{out}\n{err}")
    with open(os.path.join(repo, "main.py")) as f:
        if "a + b" not in f.read():
            sys.exit("the edit was not applied")
    result = json.loads(out.strip().splitlines()[-1])
    with open(record) as f:
        reqs = [json.loads(l) for l in f if l.strip()]
    if len(reqs) != 4 or result["rounds"] != 4:
        sys.exit(f"expected 4 requests, saw {len(reqs)}")
    first = reqs[0]
    first_ms = (first["received_at_unix_ns"] - t0) / 1e6
    body_bytes = int(first["headers"].get("content-length", "0"))
    return {"cpu_s": cpu, "rss_kb": rss, "first_request_ms": first_ms, "first_body_bytes": body_bytes}


def version_runs(n, env):
    walls, rsss = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([ATTO, "--version"], env=env, capture_output=True, check=True)
        walls.append((time.perf_counter() - t0) * 1000)
        _, _, _, rss = measured([ATTO, "--version"], env)
        rsss.append(rss)
    return statistics.median(walls), statistics.median(rsss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--profile", default="release",
                    help="cargo profile to build and measure (release, or dist for fat LTO)")
    ap.add_argument("--path-python", action="store_true",
                    help="use the python3 found on PATH instead of /usr/bin/python3")
    args = ap.parse_args()
    global USE_PATH_PYTHON
    USE_PATH_PYTHON = args.path_python
    use_profile(args.profile)
    if not args.no_build:
        build(args.profile)
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "script.json"), "w") as f:
            json.dump(SCRIPT, f)
        env = clean_env(tmp)
        runs = [one_run(tmp, i, env) for i in range(args.runs)]
        ver_ms, ver_rss = version_runs(args.runs, env)
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    report = {
        "runs": args.runs,
        "task_cpu_s_median": round(med["cpu_s"], 4),
        "task_peak_rss_mb_median": round(med["rss_kb"] / 1024, 2),
        "first_request_ms_median": round(med["first_request_ms"], 2),
        "first_request_body_bytes": int(med["first_body_bytes"]),
        "version_ms_median": round(ver_ms, 2),
        "version_rss_mb_median": round(ver_rss / 1024, 2),
        "all_runs": runs,
    }
    targets = [
        ("task CPU (s)", report["task_cpu_s_median"], 0.05),
        ("task peak RSS (MB)", report["task_peak_rss_mb_median"], 20),
        ("start → first request (ms)", report["first_request_ms_median"], 10),
        ("first request body (bytes)", report["first_request_body_bytes"], 10 * 1024),
        ("atto --version (ms)", report["version_ms_median"], 5),
        ("atto --version RSS (MB)", report["version_rss_mb_median"], 8),
    ]
    python = shutil.which("python3", path=clean_env(tempfile.gettempdir())["PATH"])
    print(f"python3 used by the task: {python}")
    for name, value, limit in targets:
        print(f"{name:30} {value:>10}   target <= {limit}   {'ok' if value <= limit else 'OVER'}")
    os.makedirs(os.path.join(ROOT, "bench", "out"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "out", "exec_task.json"), "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
