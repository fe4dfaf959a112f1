#!/usr/bin/env bash
# A real model server (llama.cpp's llama-server with SmolLM2-135M) for atto's end-to-end
# tests, wrapping the shared scripts in ../shared/realserver/ (override: REALSERVER_SCRIPTS).
#
#   scripts/realserver.sh setup    # install it (root; idempotent; about a minute the first time)
#   scripts/realserver.sh start    # start it on 127.0.0.1:$PORT (idempotent)
#   scripts/realserver.sh stop     # stop the one on $PORT (idempotent)
#   scripts/realserver.sh status   # "up on PORT (pid N)" and exit 0, else exit 1
#   scripts/realserver.sh pid      # the server's process id on $PORT
#   scripts/realserver.sh shared   # where the shared scripts (and proxy.py) are
#
# Environment: PORT (default 18080), CTX (context tokens, default 8192), TOOLS=1 (the
# Hermes-style template that turns a copied <tool_call> into real tool calls),
# REALSERVER_HOME (the shared scripts' cache, default ~/.cache/atto-realserver).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SHARED=${REALSERVER_SCRIPTS:-$HERE/../../shared/realserver}
if [ -z "${REALSERVER_SCRIPTS:-}" ] && [ ! -d "$SHARED" ]; then
  # A git worktree lives away from the main checkout; shared/ sits beside the main one.
  common=$(git -C "$HERE" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
  [ -n "$common" ] && [ -d "$(dirname "$common")/../shared/realserver" ] && SHARED=$(dirname "$common")/../shared/realserver
fi
RS=${REALSERVER_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/atto-realserver}
export PORT=${PORT:-18080} CTX=${CTX:-8192} TOOLS=${TOOLS:-0}
PIDFILE=$RS/server-$PORT.pid

need_shared() {
  local s
  for s in setup.sh start.sh stop.sh; do
    if [ ! -f "$SHARED/$s" ]; then
      echo "realserver: $SHARED/$s is missing; nothing was set up or started." >&2
      echo "realserver: clone the shared scripts beside the repository (../shared/realserver) or set REALSERVER_SCRIPTS." >&2
      exit 2
    fi
  done
}

up() { curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; }
alive() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

case "${1:-}" in
  setup)
    need_shared
    if [ "$(id -u)" != 0 ]; then
      echo "realserver: setup needs root (it builds a chroot and mounts /proc in it); nothing was done." >&2
      exit 2
    fi
    bash "$SHARED/setup.sh"
    ;;
  start)
    need_shared
    if [ ! -x "$RS/sid/usr/bin/llama-server" ]; then
      echo "realserver: not set up (no $RS/sid/usr/bin/llama-server); run scripts/realserver.sh setup" >&2
      exit 2
    fi
    if alive && up; then echo "up on $PORT (already)"; exit 0; fi
    if up; then
      echo "realserver: port $PORT already serves something that is not ours; choose another PORT" >&2
      exit 1
    fi
    bash "$SHARED/start.sh"
    cp "$RS/server.pid" "$PIDFILE"
    ;;
  stop)
    need_shared
    if [ -f "$PIDFILE" ]; then
      pid=$(cat "$PIDFILE")
      kill "$pid" 2>/dev/null || true
      # Bounded wait, then force: the next test may want the port at once.
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$PIDFILE"
    fi
    # The shared stop.sh kills the last started server and unmounts the chroot's /proc and /dev;
    # only when no other server of ours is still running.
    if ! ls "$RS"/server-*.pid >/dev/null 2>&1; then bash "$SHARED/stop.sh" >/dev/null 2>&1 || true; fi
    echo "stopped $PORT"
    ;;
  status)
    if alive && up; then echo "up on $PORT (pid $(cat "$PIDFILE"))"; exit 0; fi
    if [ -x "$RS/sid/usr/bin/llama-server" ]; then echo "set up, not running on $PORT"; else echo "not set up"; fi
    exit 1
    ;;
  shared)
    need_shared
    (cd "$SHARED" && pwd)
    ;;
  pid)
    alive || { echo "realserver: nothing of ours runs on $PORT" >&2; exit 1; }
    cat "$PIDFILE"
    ;;
  *)
    echo "usage: scripts/realserver.sh setup|start|stop|status|pid|shared (env: PORT, CTX, TOOLS)" >&2
    exit 2
    ;;
esac
