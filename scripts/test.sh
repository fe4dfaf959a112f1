#!/usr/bin/env bash
# Runs every test of atto on a fresh machine: installs what is missing, then checks
# formatting, lints and the whole test suite. Used by CI (.ci/run) and by developers.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1; }
apt_install() {
  if need apt-get; then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq "$@";
    elif need sudo; then sudo apt-get update -qq && sudo apt-get install -y -qq "$@"; fi
  fi
}

# Real peers the tests use: git (repositories, checkpoints), python3 (tool runs), bash,
# tmux (the terminal UI's end-to-end tests drive the real binary in it).
missing=()
# curl and pip: the real model server's setup and health checks.
for tool in git python3 bash tmux curl; do need "$tool" || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  pkgs=()
  for t in "${missing[@]}"; do case "$t" in python3) pkgs+=(python3);; *) pkgs+=("$t");; esac; done
  apt_install "${pkgs[@]}"
fi
need pip || need pip3 || python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip

# The quality pipeline's tests run the real checkers: node (JavaScript syntax), tsc
# (TypeScript, JSX), and the verification gate's pytest, mypy, ruff and eslint. A failed
# install does not stop the suite: the tests that need the tool fail under CI and say
# SKIPPED elsewhere.
need node || apt_install nodejs
need npm || apt_install npm
# The swarm's HTML report is rendered by headless Chromium (a screenshot and the DOM).
need chromium || apt_install chromium
py_missing=()
for mod in pytest mypy ruff; do
  python3 -m "$mod" --version >/dev/null 2>&1 || py_missing+=("$mod")
done
if [ ${#py_missing[@]} -gt 0 ]; then
  echo "installing (pip): ${py_missing[*]}"
  python3 -m pip install --quiet "${py_missing[@]}" \
    || python3 -m pip install --quiet --break-system-packages "${py_missing[@]}" \
    || echo "could not install ${py_missing[*]} with pip"
fi
if need npm && { ! need tsc || ! need eslint; }; then
  echo "installing (npm -g): typescript eslint"
  npm install -g --silent typescript eslint \
    || { need sudo && sudo npm install -g --silent typescript eslint; } \
    || echo "could not install typescript and eslint with npm"
fi

# atto acp's end-to-end tests drive it with the official ACP TypeScript client, kept in
# target/peers/acp-npm (not global: the tests load it from there).
if need npm && [ ! -f target/peers/acp-npm/node_modules/@agentclientprotocol/sdk/package.json ]; then
  echo "installing (npm): @agentclientprotocol/sdk into target/peers/acp-npm"
  mkdir -p target/peers/acp-npm
  npm install --silent --no-save --prefix target/peers/acp-npm "@agentclientprotocol/sdk@2" \
    || echo "could not install @agentclientprotocol/sdk with npm"
fi

# Third-party source for codebase_overview's tests: a Python sdist (six) and an npm
# package's TypeScript declarations (mitt), unpacked under target/peers/. A failed fetch
# does not stop the suite: the tests fail under CI and say SKIPPED elsewhere.
mkdir -p target/peers
if [ ! -f target/peers/six-1.16.0/six.py ]; then
  (cd target/peers && python3 -m pip download --quiet --no-binary :all: --no-deps six==1.16.0 \
    && tar xzf six-1.16.0.tar.gz) || echo "could not fetch the six sdist with pip"
fi
if need npm && [ ! -f target/peers/mitt/package/index.d.ts ]; then
  (mkdir -p target/peers/mitt && cd target/peers/mitt && npm pack --silent mitt@3.0.1 >/dev/null \
    && tar xzf mitt-3.0.1.tgz) || echo "could not fetch mitt with npm"
fi

# MCP servers the MCP end-to-end tests drive, under target/peers/: npm's filesystem and
# everything servers, and a venv with the Python SDK (its client drives `atto mcp serve`)
# and PyPI's mcp-server-git and mcp-server-time. A failed install does not stop the
# suite: those tests fail under CI and say SKIPPED elsewhere.
mcp_npm=target/peers/mcp-npm
if need npm && [ ! -e "$mcp_npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ]; then
  echo "installing (npm): MCP filesystem and everything servers"
  mkdir -p "$mcp_npm"
  npm install --prefix "$mcp_npm" --silent --no-audit --no-fund \
    @modelcontextprotocol/server-filesystem @modelcontextprotocol/server-everything \
    || echo "could not install the npm MCP servers"
fi
mcp_venv=target/peers/mcp-venv
if [ ! -x "$mcp_venv/bin/mcp-server-time" ]; then
  echo "installing (pip, venv): mcp mcp-server-git mcp-server-time"
  { python3 -m venv "$mcp_venv" || { apt_install python3-venv && python3 -m venv "$mcp_venv"; }; } \
    && "$mcp_venv/bin/python" -m pip install --quiet mcp mcp-server-git mcp-server-time \
    || echo "could not make the MCP Python venv"
fi

# The real model server (llama.cpp + SmolLM2-135M in a chroot) for the realserver e2e tests.
# Setting it up needs root; elsewhere those tests say SKIPPED, except under CI, where they fail.
if [ "$(id -u)" = 0 ]; then
  echo "== real model server setup"
  if scripts/realserver.sh setup; then
    export ATTO_REALSERVER=1
  elif [ "${CI:-}" = true ]; then
    echo "real-server setup failed" >&2
    exit 1
  else
    echo "SKIPPED real-server setup: scripts/realserver.sh setup failed (see above)"
  fi
elif [ "${CI:-}" = true ]; then
  echo "the real-server setup needs root under CI" >&2
  exit 1
else
  echo "SKIPPED real-server setup: it needs root (run: sudo scripts/realserver.sh setup, then ATTO_REALSERVER=1)"
fi

# Real Slurm (munge, slurmctld, three slurmd on this host) and a loopback sshd for the
# scale-out e2e tests. Root only; elsewhere those tests say SKIPPED, except under CI.
if [ "$(id -u)" = 0 ]; then
  echo "== slurm and sshd for the scale-out tests"
  if scripts/slurm-up.sh setup && scripts/slurm-up.sh start; then
    export "$(scripts/slurm-up.sh env)" ATTO_SLURM=1
  elif [ "${CI:-}" = true ]; then
    echo "slurm setup failed" >&2
    exit 1
  else
    echo "SKIPPED slurm setup: scripts/slurm-up.sh failed (see above)"
  fi
  if scripts/sshd-up.sh setup && scripts/sshd-up.sh start; then
    export "$(scripts/sshd-up.sh env)" ATTO_SSHD=1
  elif [ "${CI:-}" = true ]; then
    echo "sshd setup failed" >&2
    exit 1
  else
    echo "SKIPPED sshd setup: scripts/sshd-up.sh failed (see above)"
  fi
elif [ "${CI:-}" = true ]; then
  echo "the slurm and sshd setup needs root under CI" >&2
  exit 1
else
  echo "SKIPPED slurm and sshd setup: it needs root (run as root: scripts/slurm-up.sh setup && scripts/slurm-up.sh start, and the same with scripts/sshd-up.sh)"
fi

if ! need cargo; then
  echo "cargo is required (install Rust with rustup)" >&2
  exit 2
fi
# Tests make commits in throwaway repositories; give git an identity if it has none.
git config --global user.email >/dev/null 2>&1 || git config --global user.email "atto-tests@localhost"
git config --global user.name >/dev/null 2>&1 || git config --global user.name "atto tests"

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== cargo test"
# Tests that cannot run on this machine (no Landlock, no mount rights …) say so here.
export ATTO_SKIP_LOG="$PWD/target/skipped-tests.txt"
mkdir -p target && : > "$ATTO_SKIP_LOG"
cargo test --workspace --quiet 2>&1 | tee target/test-output.txt
if [ -s "$ATTO_SKIP_LOG" ]; then
  echo "== skipped on this machine ($(wc -l < "$ATTO_SKIP_LOG")):"
  cat "$ATTO_SKIP_LOG"
fi
# Every parser of bytes atto does not control, fuzzed for a few seconds per target on its
# committed seeds and regression inputs (nightly and cargo-fuzz are installed when missing).
echo "== fuzz (scripts/fuzz.sh --ci)"
scripts/fuzz.sh --ci
# The README's install command works (debug build into a scratch root, reusing this
# build's artifacts) and the installed binary runs.
echo "== cargo install --locked --path crates/cli"
cargo install --quiet --locked --debug --path crates/cli --root target/install-check \
  --target-dir target --force
target/install-check/bin/atto --version
# Exactly one summary line for CI readers: the totals over every test binary.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /passed;/) p += $(i-1); if ($(i) ~ /failed;/) f += $(i-1) } }
     END { printf "%d passed, %d failed\n", p, f; exit (f > 0) }' target/test-output.txt
