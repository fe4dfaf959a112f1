#!/usr/bin/env python3
"""Recall of the repository map on real repositories, beside Aider's.

Three repositories nobody here wrote, each in the form its registry ships its source:
tokio (Rust, cargo registry), httpx (Python, PyPI sdist), zod (TypeScript, npm). Each has a
list of 20-30 main API items in bench/repomap/<name>.txt, taken from its own README or docs
(the source is written at the top of the file), with the file that defines each item.

recall@8KB = the share of items whose defining file is in the map of the default size
(8,000 bytes), without and with a task message that names one area (the `task:` line of the
list, given as `focus`). Aider's map (`aider --show-repo-map`, PyPI `aider-chat`; it prints
the map without calling a model) is run at --map-tokens 2048 (8,000 B at ~4 bytes per
token) and also cut to its first 8,000 bytes, since its output is larger than its nominal
token budget. Aider has no way to take a task message without a model, so it has one column.

    python3 bench/repomap.py            # the table
    python3 bench/repomap.py -v         # and the items each map missed

Environment: REPOMAP_WORK (default /tmp/atto-repomap) holds the downloaded sources;
AIDER (default: `aider` on PATH, else /work/venvs/*/bin/aider) is Aider's command; without
it the Aider columns say "n/a".
"""

import argparse
import glob
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = pathlib.Path(os.environ.get("REPOMAP_WORK", "/tmp/atto-repomap"))
BUDGET = 8000
AIDER_TOKENS = 2048

TOKIO = "1.54.1"
HTTPX = "0.28.1"
ZOD = "4.6.7"


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def fetch_tokio():
    dest = WORK / f"tokio-{TOKIO}"
    if dest.is_dir():
        return dest
    home = pathlib.Path(os.environ.get("CARGO_HOME", pathlib.Path.home() / ".cargo"))
    found = glob.glob(str(home / "registry/src/*" / f"tokio-{TOKIO}"))
    if not found:
        scratch = WORK / "fetch-tokio"
        (scratch / "src").mkdir(parents=True, exist_ok=True)
        (scratch / "Cargo.toml").write_text(
            '[package]\nname = "fetch-tokio"\nversion = "0.0.0"\nedition = "2021"\n\n'
            f'[dependencies]\ntokio = {{ version = "={TOKIO}", features = ["full"] }}\n'
        )
        (scratch / "src/lib.rs").write_text("")
        run(["cargo", "fetch"], cwd=scratch)
        found = glob.glob(str(home / "registry/src/*" / f"tokio-{TOKIO}"))
    shutil.copytree(found[0], dest)
    return dest


def fetch_httpx():
    dest = WORK / f"httpx-{HTTPX}"
    if dest.is_dir():
        return dest
    run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
         f"httpx=={HTTPX}", "-d", str(WORK)])
    with tarfile.open(WORK / f"httpx-{HTTPX}.tar.gz") as t:
        t.extractall(WORK, filter="data")
    return dest


def fetch_zod():
    dest = WORK / f"zod-{ZOD}"
    if dest.is_dir():
        return dest
    run(["npm", "pack", f"zod@{ZOD}"], cwd=WORK)
    dest.mkdir()
    with tarfile.open(WORK / f"zod-{ZOD}.tgz") as t:
        t.extractall(dest, filter="data")
    # npm packs into package/.
    for p in (dest / "package").iterdir():
        p.rename(dest / p.name)
    (dest / "package").rmdir()
    return dest


REPOS = [("tokio", fetch_tokio), ("httpx", fetch_httpx), ("zod", fetch_zod)]


def api_list(name):
    task, items = "", []
    for line in (HERE / "repomap" / f"{name}.txt").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("task:"):
            task = line.split(":", 1)[1].strip()
            continue
        item, files = line.split("\t")
        items.append((item, files.split("|")))
    return task, items


def atto_exe():
    out = run(["cargo", "test", "-p", "atto-tools", "--bench", "overview", "--no-run",
               "--message-format=json"], cwd=ROOT).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") \
                and msg["target"]["name"] == "overview":
            return msg["executable"]
    sys.exit("no overview bench executable was built")


def atto_map(exe, repo, focus=""):
    args = [exe, "--map", str(repo), str(BUDGET)] + ([focus] if focus else [])
    return run(args).stdout


def atto_files(text):
    return {l.split(" ")[0] for l in text.splitlines()
            if l and not l.startswith((" ", "(", "Repository map"))}


def aider_cmd():
    if os.environ.get("AIDER"):
        return os.environ["AIDER"]
    found = shutil.which("aider") or sorted(glob.glob("/work/venvs/*/bin/aider"))
    return found if isinstance(found, str) else (found[0] if found else None)


def aider_map(aider, name, repo):
    """Aider's map of a git copy of `repo` (it maps the files git tracks)."""
    copy = WORK / f"aider-{name}"
    if not copy.is_dir():
        shutil.copytree(repo, copy)
        env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b",
                   GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
        for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                    ["git", "commit", "-qm", "source"]):
            subprocess.run(cmd, cwd=copy, check=True, env=env)
    # A model name only picks the tokenizer; no request is made.
    out = subprocess.run(
        [aider, "--model", "gpt-4", "--openai-api-key", "unused", "--show-repo-map",
         "--map-tokens", str(AIDER_TOKENS), "--no-check-update", "--no-analytics",
         "--no-gitignore", "--yes-always", "--no-show-model-warnings"],
        cwd=copy, text=True, capture_output=True, stdin=subprocess.DEVNULL, timeout=900,
    ).stdout
    lines = out.splitlines()
    start = next((i for i, l in enumerate(lines) if re.match(r"^\S.*:$", l)
                  and not l.startswith(("Here are", "Do not", "If you"))), len(lines))
    return "\n".join(lines[start:]) + "\n"


def aider_files(text):
    return {l[:-1] for l in text.splitlines() if re.match(r"^\S.*:$", l)}


def recall(files, items):
    hit = [item for item, defs in items if any(d in files for d in defs)]
    return len(hit), [item for item, _ in items if item not in hit]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    exe = atto_exe()
    aider = aider_cmd()
    rows = []
    for name, fetch in REPOS:
        repo = fetch()
        task, items = api_list(name)
        plain = atto_map(exe, repo)
        focused = atto_map(exe, repo, task)
        a, a_missed = recall(atto_files(plain), items)
        f, f_missed = recall(atto_files(focused), items)
        row = [name, len(items), a, f, None, None, len(plain), None]
        if aider:
            amap = aider_map(aider, name, repo)
            g, g_missed = recall(aider_files(amap), items)
            cut = amap[:BUDGET]
            c, _ = recall(aider_files(cut.rsplit("\n", 1)[0]), items)
            row[4:6], row[7] = [g, c], len(amap.encode())
        rows.append(row)
        if args.verbose:
            print(f"{name}: atto missed {a_missed}; with the task missed {f_missed}")
            if aider:
                print(f"{name}: aider missed {g_missed}")

    def pct(n, total):
        return "n/a" if n is None else f"{n}/{total} {100 * n / total:3.0f}%"

    head = ["repository", "items", "atto 8KB", "atto 8KB+task",
            f"aider {AIDER_TOKENS} tok", "aider cut to 8KB", "atto B", "aider B"]
    table = [head] + [[r[0], str(r[1]), pct(r[2], r[1]), pct(r[3], r[1]), pct(r[4], r[1]),
                       pct(r[5], r[1]), str(r[6]), "n/a" if r[7] is None else str(r[7])]
                      for r in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


if __name__ == "__main__":
    main()
