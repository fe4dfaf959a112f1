#!/usr/bin/env python3
"""Benchmark: what the swarm coordinator costs next to its workers, and how close a
swarm gets to its critical path.

A 20-task swarm (4 independent chains of 5 tasks, each task writing its own JSON file,
checked by the quality pipeline's in-process JSON check) runs against the scripted model
server with 4 workers:

1. Coordinator share. No added model latency. The coordinator's own CPU (user+sys from
   /proc/<pid>/stat, sampled every 2 ms until it exits, children excluded) over the CPU of
   the whole run (wait4 on the coordinator: it and every worker). Target <= 5%.
   Worker RSS: the peak (VmHWM) of every worker process, sampled the same way. Target
   <= 15 MB each. Its PSS is shown too: most of a worker's RSS is the atto binary's
   read-only pages, which workers running together share.
2. Wall time. Every model reply waits 200 ms. The run phase (first task started to the
   swarm finishing, as the events arrive) over the critical path (the longest chain's
   summed attempt durations, from the swarm's report). Target <= 1.2.

Usage: python3 bench/swarm.py [--runs N] [--no-build]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exec_task import ATTO, ROOT, TESTKIT, build, clean_env  # noqa: E402

CHAINS, LENGTH = 4, 5
TICK = os.sysconf("SC_CLK_TCK")


def tasks():
    out = []
    for c in range(CHAINS):
        for s in range(LENGTH):
            out.append({
                "id": f"t{c}{s}", "type": "implement",
                "description": f"Create data/c{c}s{s}.json holding the object {{\"chain\": {c}, \"step\": {s}}} for the loader to read.",
                "target_files": [f"data/c{c}s{s}.json"],
                "dependencies": [f"t{c}{s - 1}"] if s else [],
            })
    return out


def script(delay_ms):
    replies = [{"when": "Split this task into swarm tasks",
                "text": json.dumps({"tasks": tasks()})}]
    for t in tasks():
        marker = f"## Task {t['id']} (implement)"
        path = t["target_files"][0]
        replies.append({"when": marker, "delay_ms": delay_ms, "tool_calls": [
            {"name": "write_file", "arguments": {"path": path, "content": "{\"ok\": true}\n"}}]})
        replies.append({"when": marker, "delay_ms": delay_ms, "text": "done"})
    return {"replies": replies}


def proc_cpu(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return None


def children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            out.append(int(entry))
    return out


def is_worker(pid):
    """A worker is an `atto exec` speaking stream-json (a process the coordinator forked
    for something else carries the coordinator's memory until it execs)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read().split(b"\0")
    except OSError:
        return False
    return b"exec" in args and b"--input-format" in args


def pss_kb(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def hwm_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def one_run(tmp, i, env, delay_ms):
    repo = os.path.join(tmp, f"repo{i}-{delay_ms}")
    os.makedirs(os.path.join(repo, ".atto"))
    with open(os.path.join(repo, ".atto", "swarm.yaml"), "w") as f:
        f.write("swarm:\n  quality_gates: false\n  enable_task_enrichment: false\n  max_workers: 4\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    path = os.path.join(tmp, f"script{i}-{delay_ms}.json")
    with open(path, "w") as f:
        json.dump(script(delay_ms), f)
    server = subprocess.Popen([TESTKIT, "serve", "--script", path], stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[-1]
        cmd = [ATTO, "swarm", "--yes", "--permission", "auto-safe", "--base-url", url + "/v1",
               "--wire", "chat", "--model", "bench-model", "--output-format", "stream-json",
               "make the data files"]
        proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
        coord_cpu, peaks, psss, stop = [0.0], {}, {}, threading.Event()

        def sample():
            while not stop.is_set():
                c = proc_cpu(proc.pid)
                if c is not None:
                    coord_cpu[0] = c
                for child in children(proc.pid):
                    if not is_worker(child):
                        continue
                    h = hwm_kb(child)
                    if h is not None:
                        peaks[child] = max(peaks.get(child, 0), h)
                    p = pss_kb(child)
                    if p is not None:
                        psss[child] = max(psss.get(child, 0), p)
                time.sleep(0.002)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        first_start = end = None
        events = []
        for line in proc.stdout:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            events.append(e)
            if e.get("type") == "swarm.task.started" and first_start is None:
                first_start = time.perf_counter()
            if e.get("type") == "swarm.finished":
                end = time.perf_counter()
        _, status, usage = os.wait4(proc.pid, 0)
        stop.set()
        sampler.join()
    finally:
        server.terminate()
        server.wait()
    finished = [e for e in events if e.get("type") == "swarm.finished"]
    if os.waitstatus_to_exitcode(status) != 0 or not finished or finished[0]["passed"] != CHAINS * LENGTH:
        sys.exit(f"the swarm did not pass every task: {finished or events[-5:]}")
    report_path = finished[0]["report"].replace("report.md", "report.json")
    with open(report_path) as f:
        report = json.load(f)
    durations = {t["id"]: sum(a["duration_ms"] for a in t["attempt_log"]) for t in report["tasks"]}
    critical = max(sum(durations[f"t{c}{s}"] for s in range(LENGTH)) for c in range(CHAINS)) / 1000
    total_cpu = usage.ru_utime + usage.ru_stime
    return {
        "coordinator_cpu_s": coord_cpu[0],
        "total_cpu_s": total_cpu,
        "coordinator_share": coord_cpu[0] / total_cpu if total_cpu else 0,
        "worker_peak_rss_mb": max(peaks.values()) / 1024 if peaks else 0,
        "worker_median_rss_mb": statistics.median(peaks.values()) / 1024 if peaks else 0,
        "worker_peak_pss_mb": max(psss.values()) / 1024 if psss else 0,
        "workers_seen": len(peaks),
        "run_wall_s": (end - first_start) if first_start and end else 0,
        "critical_path_s": critical,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    if not args.no_build:
        build()
    with tempfile.TemporaryDirectory() as tmp:
        env = clean_env(tmp)
        fast = [one_run(tmp, i, env, 0) for i in range(args.runs)]
        slow = [one_run(tmp, i, env, 200) for i in range(args.runs)]
    med = lambda runs, k: statistics.median(r[k] for r in runs)  # noqa: E731
    report = {
        "runs": args.runs,
        "tasks": CHAINS * LENGTH,
        "coordinator_cpu_s": round(med(fast, "coordinator_cpu_s"), 3),
        "total_cpu_s": round(med(fast, "total_cpu_s"), 3),
        "coordinator_share": round(med(fast, "coordinator_share"), 4),
        "worker_peak_rss_mb": round(max(r["worker_peak_rss_mb"] for r in fast + slow), 2),
        "worker_median_peak_rss_mb": round(med(fast + slow, "worker_median_rss_mb"), 2),
        "worker_peak_pss_mb": round(max(r["worker_peak_pss_mb"] for r in fast + slow), 2),
        "workers_seen": fast[0]["workers_seen"],
        "run_wall_s_200ms": round(med(slow, "run_wall_s"), 3),
        "critical_path_s_200ms": round(med(slow, "critical_path_s"), 3),
    }
    report["wall_over_critical_path"] = round(report["run_wall_s_200ms"] / report["critical_path_s_200ms"], 3)
    print(json.dumps(report, indent=2))
    for name, value, limit in [
        ("coordinator CPU share", report["coordinator_share"], 0.05),
        ("worker peak RSS (MB)", report["worker_peak_rss_mb"], 15),
        ("wall / critical path", report["wall_over_critical_path"], 1.2),
    ]:
        print(f"{name:24} {value:>10}   target <= {limit}   {'ok' if value <= limit else 'OVER'}")
    os.makedirs(os.path.join(ROOT, "bench", "out"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "out", "swarm.json"), "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
