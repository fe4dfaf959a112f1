#!/usr/bin/env python3
"""Benchmark: eight 4-step tasks at once in one workspace and data dir, against the same
eight one after another.

Each task is bench/exec_task.py's (read main<i>.py, edit it, run it with python3, answer)
on its own file in one shared git repository, each with its own scripted model server.
Reports the total CPU (user+sys of every atto process and its children, from wait4) of
the concurrent and the sequential runs and their ratio (target: concurrent <= 1.2 x
sequential), and checks that nothing was lost to contention: every run exits 0, every
edit landed, no run printed a lost-lock or store message, every session is in
`atto sessions`, and every session has a checkpoint before each of its mutating calls.

Usage: python3 bench/contention.py [--processes N] [--rounds R] [--no-build]
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exec_task  # noqa: E402  (its measured(), clean_env() and binaries)

LOST = ["not done in time", "cannot lock ref", "index.lock", "are off for this run",
        "no checkpoint", "could not record"]


def script(i):
    name = f"main{i}.py"
    return {"replies": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": name}}]},
        {"text": "Fixing.", "tool_calls": [{"name": "edit_file", "arguments": {
            "path": name, "old_string": "return a - b", "new_string": "return a + b"}}]},
        {"text": "Running.", "tool_calls": [{"name": "bash", "arguments": {"command": f"python3 {name}"}}]},
        {"text": "Fixed."},
    ]}


def start_servers(tmp, n):
    servers = []
    for i in range(n):
        path = os.path.join(tmp, f"script{i}.json")
        with open(path, "w") as f:
            json.dump(script(i), f)
        p = subprocess.Popen([exec_task.TESTKIT, "serve", "--script", path],
                             stdout=subprocess.PIPE, text=True)
        url = p.stdout.readline().split()[-1]
        servers.append((p, url))
    return servers


def workspace(tmp, tag, n):
    repo = os.path.join(tmp, tag)
    os.makedirs(repo)
    for i in range(n):
        with open(os.path.join(repo, f"main{i}.py"), "w") as f:
            f.write(exec_task.MAIN_PY)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    return repo


def command(url):
    return [exec_task.ATTO, "exec", "--permission", "auto-safe", "--base-url", url + "/v1",
            "--wire", "chat", "--model", "bench-model", "--output-format", "json", "fix it"]


def run_all(tmp, tag, n, concurrent, env):
    repo = workspace(tmp, tag, n)
    servers = start_servers(tmp, n)
    results = []
    try:
        if concurrent:
            # Every process starts at once; wait4 collects each one's CPU with its children.
            procs = []
            for _, url in servers:
                procs.append(subprocess.Popen(command(url), cwd=repo, env=env,
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE))
            for p in procs:
                _, status, ru = os.wait4(p.pid, 0)
                out = p.stdout.read().decode()
                err = p.stderr.read().decode()
                results.append((os.waitstatus_to_exitcode(status), out, err,
                                ru.ru_utime + ru.ru_stime))
        else:
            for _, url in servers:
                p = subprocess.Popen(command(url), cwd=repo, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                _, status, ru = os.wait4(p.pid, 0)
                results.append((os.waitstatus_to_exitcode(status), p.stdout.read().decode(),
                                p.stderr.read().decode(), ru.ru_utime + ru.ru_stime))
    finally:
        for p, _ in servers:
            p.terminate()
            p.wait()
    problems = []
    sessions = []
    for i, (code, out, err, _) in enumerate(results):
        if code != 0:
            problems.append(f"{tag} run {i}: exit {code}: {err.strip()[:300]}")
        for word in LOST:
            if word in err:
                problems.append(f"{tag} run {i}: {word}: {err.strip()[:300]}")
        try:
            sessions.append(json.loads(out.strip().splitlines()[-1])["session_id"])
        except (ValueError, IndexError, KeyError):
            problems.append(f"{tag} run {i}: no result line")
    for i in range(n):
        with open(os.path.join(repo, f"main{i}.py")) as f:
            if "a + b" not in f.read():
                problems.append(f"{tag} run {i}: the edit did not land")
    return sum(r[3] for r in results), sessions, problems


def stored(env, sessions):
    db = sqlite3.connect(os.path.join(env["ATTO_HOME"], "atto.db"))
    missing = []
    for s in sessions:
        (count,) = db.execute("select count(*) from sessions where id = ?", (s,)).fetchone()
        (audited,) = db.execute("select count(*) from audit_log where session_id = ?", (s,)).fetchone()
        if count != 1 or audited < 3:
            missing.append(f"session {s}: stored {count}, audit rows {audited}")
    return missing


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    if not args.no_build:
        exec_task.build()
    rounds = []
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        env = exec_task.clean_env(tmp)
        for r in range(args.rounds):
            seq_cpu, seq_sessions, p1 = run_all(tmp, f"seq{r}", args.processes, False, env)
            con_cpu, con_sessions, p2 = run_all(tmp, f"con{r}", args.processes, True, env)
            problems += p1 + p2 + stored(env, seq_sessions + con_sessions)
            rounds.append({"sequential_cpu_s": round(seq_cpu, 4),
                           "concurrent_cpu_s": round(con_cpu, 4),
                           "ratio": round(con_cpu / seq_cpu, 3)})
    ratios = sorted(x["ratio"] for x in rounds)
    report = {"processes": args.processes, "rounds": rounds,
              "median_ratio": ratios[len(ratios) // 2], "problems": problems}
    for x in rounds:
        print(f"sequential {x['sequential_cpu_s']:.3f} s   concurrent {x['concurrent_cpu_s']:.3f} s"
              f"   ratio {x['ratio']:.2f}")
    print(f"median ratio {report['median_ratio']:.2f}   target <= 1.2   "
          f"{'ok' if report['median_ratio'] <= 1.2 else 'OVER'}")
    print(f"lost to contention: {len(problems)}")
    for p in problems:
        print("  " + p)
    os.makedirs(os.path.join(exec_task.ROOT, "bench", "out"), exist_ok=True)
    with open(os.path.join(exec_task.ROOT, "bench", "out", "contention.json"), "w") as f:
        json.dump(report, f, indent=2)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
