#!/usr/bin/env bash
# A real single-host Slurm cluster for atto's scale-out tests: munge, one slurmctld and
# three slurmd (nodes n1, n2, n3, each its own daemon on its own port), so a job really is
# scheduled onto one of several nodes and `scancel` really ends it there. Debian's own
# packages (slurmctld, slurmd, slurm-client, munge); nothing of ours schedules anything.
#
#   scripts/slurm-up.sh setup    # install the packages (root; idempotent)
#   scripts/slurm-up.sh start    # write the config, start munge and the daemons (idempotent)
#   scripts/slurm-up.sh stop     # stop the daemons this script started (idempotent)
#   scripts/slurm-up.sh status   # "up: n1 n2 n3 idle" and exit 0, else exit 1
#   scripts/slurm-up.sh env      # the SLURM_CONF line a test exports
#
# Environment: ATTO_SLURM_HOME (state, logs and config; default ~/.cache/atto-slurm),
# SLURM_PORT (slurmctld's port, default 16817; the nodes use the next three),
# SLURM_NODE_CPUS (CPUs each node claims, default 1).
set -euo pipefail
HOME_DIR=${ATTO_SLURM_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/atto-slurm}
PORT=${SLURM_PORT:-16817}
NODES=(n1 n2 n3)
CONF=$HOME_DIR/slurm.conf
export SLURM_CONF=$CONF

need() { command -v "$1" >/dev/null 2>&1; }
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

write_conf() {
  mkdir -p "$HOME_DIR/state"
  for n in "${NODES[@]}"; do mkdir -p "$HOME_DIR/spool-$n"; done
  # Every node is this host; each claims one CPU (config_overrides lets three slurmd share
  # them), so three one-CPU jobs run at once only by running on three nodes.
  local cpus=${SLURM_NODE_CPUS:-1}
  cat >"$CONF.new" <<EOF
ClusterName=atto
SlurmctldHost=localhost
SlurmctldPort=$PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
StateSaveLocation=$HOME_DIR/state
SlurmdSpoolDir=$HOME_DIR/spool-%n
SlurmctldPidFile=$HOME_DIR/slurmctld.pid
SlurmdPidFile=$HOME_DIR/slurmd-%n.pid
SlurmctldLogFile=$HOME_DIR/slurmctld.log
SlurmdLogFile=$HOME_DIR/slurmd-%n.log
KillWait=2
MinJobAge=30
InactiveLimit=0
EOF
  local i=1
  for n in "${NODES[@]}"; do
    echo "NodeName=$n NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((PORT + i)) CPUs=$cpus RealMemory=4096 State=UNKNOWN" >>"$CONF.new"
    i=$((i + 1))
  done
  echo "PartitionName=debug Nodes=$(IFS=,; echo "${NODES[*]}") Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES" >>"$CONF.new"
  mv "$CONF.new" "$CONF"
}

status() {
  alive "$HOME_DIR/slurmctld.pid" || return 1
  local n
  for n in "${NODES[@]}"; do alive "$HOME_DIR/slurmd-$n.pid" || return 1; done
  local states
  states=$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u) || return 1
  for n in "${NODES[@]}"; do
    echo "$states" | grep -Eq "^$n (idle|mix|alloc)" || return 1
  done
}

case "${1:-}" in
  setup)
    if need slurmctld && need slurmd && need srun && need munged; then exit 0; fi
    if [ "$(id -u)" != 0 ]; then
      echo "slurm-up: setup needs root (apt-get install slurmctld slurmd slurm-client munge); nothing was done." >&2
      exit 2
    fi
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge
    ;;
  start)
    for p in slurmctld slurmd srun munged; do
      need "$p" || { echo "slurm-up: $p is not installed; run scripts/slurm-up.sh setup" >&2; exit 2; }
    done
    if [ "$(id -u)" != 0 ]; then
      echo "slurm-up: the daemons run as root here (slurmd starts jobs as their user); nothing was started." >&2
      exit 2
    fi
    if status; then echo "up: ${NODES[*]} (already)"; exit 0; fi
    write_conf
    [ -s /etc/munge/munge.key ] || mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key 2>/dev/null || true
    chmod 0400 /etc/munge/munge.key
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
    if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
      # munged refuses to run as root when it can run as its own user.
      if id munge >/dev/null 2>&1; then
        su -s /bin/sh munge -c munged
      else
        munged --force
      fi
      for _ in $(seq 1 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
    fi
    alive "$HOME_DIR/slurmctld.pid" || slurmctld -f "$CONF"
    for n in "${NODES[@]}"; do
      alive "$HOME_DIR/slurmd-$n.pid" || slurmd -f "$CONF" -N "$n"
    done
    # Bounded wait for every node to register; a node left DOWN by an earlier run is resumed.
    for _ in $(seq 1 100); do
      status && break
      scontrol update nodename="$(IFS=,; echo "${NODES[*]}")" state=resume >/dev/null 2>&1 || true
      sleep 0.3
    done
    if ! status; then
      echo "slurm-up: the cluster did not come up; see $HOME_DIR/*.log" >&2
      sinfo -N >&2 || true
      exit 1
    fi
    echo "up: ${NODES[*]}"
    ;;
  stop)
    for f in "$HOME_DIR"/slurmd-*.pid "$HOME_DIR/slurmctld.pid"; do
      [ -f "$f" ] || continue
      pid=$(cat "$f")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$f"
    done
    echo "stopped"
    ;;
  status)
    if status; then echo "up: ${NODES[*]}"; else echo "down"; exit 1; fi
    ;;
  env)
    echo "SLURM_CONF=$CONF"
    ;;
  *)
    echo "usage: scripts/slurm-up.sh setup|start|stop|status|env (env: ATTO_SLURM_HOME, SLURM_PORT)" >&2
    exit 2
    ;;
esac
