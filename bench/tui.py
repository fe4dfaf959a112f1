#!/usr/bin/env python3
"""Benchmark: the terminal UI (release build) in a real pseudo-terminal.

Measures, against the scripted model server (atto-testkit, a separate process):
- launch: time from fork to the composer's placeholder text being drawn (the screen a
  user can type into), read from the pty output with escape sequences stripped; median
  and worst of N runs. Target (issue 7): <= 30 ms.
- idle CPU: user+sys ticks of the atto process over 5 s with nothing happening, from
  /proc/<pid>/stat. Target: ~0 (reported as a percentage of one core).
- keys while streaming: a 10,000-token answer (about 40,000 characters of Markdown) is
  streamed; as soon as its first words are drawn, keys are typed and the time until each
  is drawn in the composer is measured (worst of 5), plus the time until the whole answer
  is drawn. Target: a key shows within one 16 ms frame budget plus pty latency.
- RSS of a resumed session with 500 messages: a session of 250 tool rounds is recorded
  with `atto exec`, then opened with `atto -r <id>` in the UI; VmRSS from
  /proc/<pid>/status once the composer is drawn. Target: <= 40 MB.

Usage: python3 bench/tui.py [--runs N] [--no-build]
"""
import argparse
import fcntl
import json
import os
import pty
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exec_task import ATTO, ROOT, TESTKIT, build  # noqa: E402

# The first word of atto_tui::PLACEHOLDER; the rest may be drawn with cursor moves in
# place of spaces, so only one word is matched.
READY = b"Ask"
ESCAPES = re.compile(rb"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78DEHMc])")
ROUNDS = 250  # each round is an assistant message and a tool result: 500 messages


def clean_env(home):
    env = {k: v for k, v in os.environ.items()
           if not re.search(r"(KEY|TOKEN|SECRET)", k) and not k.startswith("ATTO_")}
    env["HOME"] = home
    env["ATTO_HOME"] = os.path.join(home, "atto-data")
    env["XDG_CONFIG_HOME"] = os.path.join(home, ".config")
    env["TERM"] = "xterm-256color"
    return env


def serve(tmp, name, script):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(script, f)
    server = subprocess.Popen([TESTKIT, "serve", "--script", path], stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().split()[-1]
    return server, url + "/v1"


def spawn_in_pty(argv, env, cwd):
    """Forks argv on a new 100x30 pty; returns (pid, master fd, fork time in ns)."""
    t0 = time.perf_counter_ns()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execve(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    return pid, fd, t0


def read_until(fd, needle, timeout=10.0):
    """Reads pty output until `needle` shows (escapes stripped); returns the time in ns."""
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        if needle in ESCAPES.sub(b"", seen):
            return time.perf_counter_ns()
    sys.exit(f"atto never drew {needle!r}; output:\n{ESCAPES.sub(b'', seen)[-2000:]!r}")


def drain(fd, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                os.read(fd, 65536)
            except OSError:
                return


def stop(pid, fd):
    os.kill(pid, signal.SIGTERM)
    drain(fd, 0.3)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    os.close(fd)


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime (fields 14 and 15)


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def new_repo(tmp, name):
    repo = os.path.join(tmp, name)
    os.makedirs(repo)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    with open(os.path.join(repo, "notes.txt"), "w") as f:
        f.write("a note\n")
    return repo


def launch_runs(tmp, env, runs):
    server, url = serve(tmp, "hello.json", {"replies": [{"text": "hi"}]})
    repo = new_repo(tmp, "launch")
    times, idle = [], None
    try:
        for i in range(runs):
            pid, fd, t0 = spawn_in_pty([ATTO, "--base-url", url, "--model", "bench"], env, repo)
            t1 = read_until(fd, READY)
            times.append((t1 - t0) / 1e6)
            if i == runs - 1:
                drain(fd, 1.0)  # let start-up work (file index, session start) settle
                before = cpu_ticks(pid)
                drain(fd, 5.0)
                used = cpu_ticks(pid) - before
                idle = 100.0 * used / (5.0 * os.sysconf("SC_CLK_TCK"))
            stop(pid, fd)
    finally:
        server.terminate()
        server.wait()
    return times, idle


def story(tokens):
    """About `tokens` tokens (~4 characters each) of Markdown: paragraphs, a list, code."""
    parts, n = [], 0
    while n < tokens:
        parts.append(f"## Part {len(parts) + 1}\n\nThe river bends past the old mill, and the "
                     "miller counts sacks of grain while the wheel turns slowly in the "
                     "current. Children run along the bank.\n\n- one item\n- another item\n\n"
                     "```rust\nfn main() { println!(\"hello\"); }\n```\n")
        n += 60
    return "".join(parts) + "\nTHE-END-OF-IT"


def streaming_keys(tmp, env):
    server, url = serve(tmp, "story.json", {"replies": [{"text": story(10_000)}]})
    repo = new_repo(tmp, "story")
    latencies = []
    try:
        pid, fd, _ = spawn_in_pty([ATTO, "--base-url", url, "--model", "bench"], env, repo)
        read_until(fd, READY)
        t_prompt = time.perf_counter_ns()
        os.write(fd, b"tell me a story\r")
        read_until(fd, b"The river bends")
        # Letters the answer never contains: each is drawn in its own frame.
        for k in "QXZKW":
            mark = k.encode()
            t0 = time.perf_counter_ns()
            os.write(fd, mark)
            latencies.append((read_until(fd, mark) - t0) / 1e6)
        done_ms = (read_until(fd, b"THE-END-OF-IT", timeout=60) - t_prompt) / 1e6
        stop(pid, fd)
    finally:
        server.terminate()
        server.wait()
    return latencies, done_ms


def resumed_rss(tmp, env):
    replies = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}
               for _ in range(ROUNDS)]
    replies.append({"text": "Read it many times."})
    server, url = serve(tmp, "long.json", {"replies": replies + [{"text": "resumed"}]})
    repo = new_repo(tmp, "long")
    try:
        out = subprocess.run([ATTO, "exec", "--permission", "auto-safe", "--max-rounds", str(ROUNDS + 5),
                              "--base-url", url, "--model", "bench", "--output-format", "json",
                              "read notes.txt again and again"],
                             cwd=repo, env=env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"recording the long session failed:\n{out.stderr}")
        listed = subprocess.run([ATTO, "sessions"], cwd=repo, env=env, capture_output=True, text=True)
        line = listed.stdout.strip().splitlines()[0]
        session = line.split()[0]
        messages = int(re.search(r"(\d+) messages", line).group(1))
        pid, fd, _ = spawn_in_pty([ATTO, "--base-url", url, "--model", "bench", "-r", session], env, repo)
        read_until(fd, READY)
        drain(fd, 1.0)
        rss = rss_mb(pid)
        stop(pid, fd)
    finally:
        server.terminate()
        server.wait()
    return messages, rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    if not args.no_build:
        build()
    with tempfile.TemporaryDirectory() as tmp:
        env = clean_env(tmp)
        os.makedirs(os.path.join(tmp, ".config", "atto"), exist_ok=True)
        times, idle = launch_runs(tmp, env, args.runs)
        messages, rss = resumed_rss(tmp, env)
        keys, answer_ms = streaming_keys(tmp, env)
    report = {
        "runs": args.runs,
        "launch_ms_median": round(statistics.median(times), 2),
        "launch_ms_max": round(max(times), 2),
        "idle_cpu_percent_5s": round(idle, 2),
        "resumed_session_messages": messages,
        "resumed_session_rss_mb": round(rss, 2),
        "launch_ms_all": [round(t, 2) for t in times],
        "key_while_streaming_ms_max": round(max(keys), 2),
        "key_while_streaming_ms_all": [round(t, 2) for t in keys],
        "answer_10k_tokens_drawn_ms": round(answer_ms, 1),
    }
    targets = [
        ("launch → composer (ms, median)", report["launch_ms_median"], 30),
        ("idle CPU over 5 s (% of a core)", report["idle_cpu_percent_5s"], 1),
        (f"RSS, resumed {messages} messages (MB)", report["resumed_session_rss_mb"], 40),
        ("key drawn while streaming (ms, worst)", report["key_while_streaming_ms_max"], 16),
    ]
    for name, value, limit in targets:
        print(f"{name:40} {value:>10}   target <= {limit}   {'ok' if value <= limit else 'OVER'}")
    print(f"{'10k-token answer, prompt → drawn (ms)':40} {report['answer_10k_tokens_drawn_ms']:>10}")
    os.makedirs(os.path.join(ROOT, "bench", "out"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "out", "tui.json"), "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
