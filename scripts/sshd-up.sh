#!/usr/bin/env bash
# A real OpenSSH server on a loopback port for atto's scale-out tests, with a throwaway
# host key and user key, and a client config naming three "hosts" (build-a, build-b,
# build-c) that all reach it, so a launcher's round-robin really goes through three
# aliases. Debian's openssh-server; the config accepts only the key made here.
#
#   scripts/sshd-up.sh setup    # install openssh-server and -client (root; idempotent)
#   scripts/sshd-up.sh start    # make the keys and config, start sshd (idempotent)
#   scripts/sshd-up.sh stop     # stop the sshd this script started (idempotent)
#   scripts/sshd-up.sh status   # "up on PORT" and exit 0, else exit 1
#   scripts/sshd-up.sh env      # the ATTO_SSH_CONFIG line a test exports
#
# Environment: ATTO_SSHD_HOME (keys, config, log; default ~/.cache/atto-sshd),
# SSHD_PORT (default 16922).
set -euo pipefail
HOME_DIR=${ATTO_SSHD_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/atto-sshd}
PORT=${SSHD_PORT:-16922}
HOSTS=(build-a build-b build-c)
PIDFILE=$HOME_DIR/sshd.pid
CLIENT=$HOME_DIR/ssh_config

need() { command -v "$1" >/dev/null 2>&1; }
alive() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }
works() { ssh -F "$CLIENT" -o BatchMode=yes -o ConnectTimeout=5 -T "${HOSTS[0]}" true </dev/null 2>/dev/null; }

write_files() {
  mkdir -p "$HOME_DIR"
  chmod 0700 "$HOME_DIR"
  [ -f "$HOME_DIR/host_key" ] || ssh-keygen -q -t ed25519 -N '' -C atto-test-host -f "$HOME_DIR/host_key"
  [ -f "$HOME_DIR/user_key" ] || ssh-keygen -q -t ed25519 -N '' -C atto-test-user -f "$HOME_DIR/user_key"
  cp "$HOME_DIR/user_key.pub" "$HOME_DIR/authorized_keys"
  chmod 0600 "$HOME_DIR/authorized_keys"
  echo "[127.0.0.1]:$PORT $(cut -d' ' -f1,2 "$HOME_DIR/host_key.pub")" >"$HOME_DIR/known_hosts"
  # Keys travel only by environment: AcceptEnv names the variables a worker may receive.
  cat >"$HOME_DIR/sshd_config" <<EOF
Port $PORT
ListenAddress 127.0.0.1
HostKey $HOME_DIR/host_key
PidFile $PIDFILE
AuthorizedKeysFile $HOME_DIR/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
AcceptEnv ATTO_* ANTHROPIC_* OPENAI_* GEMINI_* OPENROUTER_*
PermitUserEnvironment no
X11Forwarding no
AllowTcpForwarding no
PrintMotd no
LogLevel ERROR
EOF
  : >"$CLIENT.new"
  for h in "${HOSTS[@]}"; do
    cat >>"$CLIENT.new" <<EOF
Host $h
  HostName 127.0.0.1
  Port $PORT
  User $(id -un)
  IdentityFile $HOME_DIR/user_key
  IdentitiesOnly yes
  UserKnownHostsFile $HOME_DIR/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
  LogLevel ERROR

EOF
  done
  mv "$CLIENT.new" "$CLIENT"
}

case "${1:-}" in
  setup)
    if need sshd || [ -x /usr/sbin/sshd ]; then need ssh && exit 0; fi
    if [ "$(id -u)" != 0 ]; then
      echo "sshd-up: setup needs root (apt-get install openssh-server openssh-client); nothing was done." >&2
      exit 2
    fi
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server openssh-client
    ;;
  start)
    [ -x /usr/sbin/sshd ] || { echo "sshd-up: sshd is not installed; run scripts/sshd-up.sh setup" >&2; exit 2; }
    need ssh || { echo "sshd-up: ssh is not installed; run scripts/sshd-up.sh setup" >&2; exit 2; }
    if alive && works; then echo "up on $PORT (already)"; exit 0; fi
    write_files
    # sshd's privilege separation directory.
    mkdir -p /run/sshd 2>/dev/null || true
    alive || /usr/sbin/sshd -f "$HOME_DIR/sshd_config" -E "$HOME_DIR/sshd.log"
    for _ in $(seq 1 50); do works && break; sleep 0.1; done
    if ! works; then
      echo "sshd-up: sshd did not accept the test key on $PORT; see $HOME_DIR/sshd.log" >&2
      exit 1
    fi
    echo "up on $PORT"
    ;;
  stop)
    if [ -f "$PIDFILE" ]; then
      pid=$(cat "$PIDFILE")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      rm -f "$PIDFILE"
    fi
    echo "stopped"
    ;;
  status)
    if alive && works; then echo "up on $PORT"; else echo "down"; exit 1; fi
    ;;
  env)
    echo "ATTO_SSH_CONFIG=$CLIENT"
    ;;
  *)
    echo "usage: scripts/sshd-up.sh setup|start|stop|status|env (env: ATTO_SSHD_HOME, SSHD_PORT)" >&2
    exit 2
    ;;
esac
