#!/usr/bin/env bash
# Runs the fuzz targets under fuzz/ (cargo-fuzz on the nightly toolchain), one at a time,
# each in one process (libFuzzer's default: one job, one worker).
#
#   scripts/fuzz.sh                    every target, 60 s each
#   scripts/fuzz.sh TARGET [SECONDS]   one target (default 60 s)
#   scripts/fuzz.sh TARGET SECONDS RUNS
#                                      one target until RUNS inputs or SECONDS, whichever
#                                      comes first (the long runs: 600 1000000)
#   scripts/fuzz.sh --ci               every target on the committed seeds and regression
#                                      inputs plus a fixed number of new ones from a fixed
#                                      seed (CI: reproducible)
#   scripts/fuzz.sh --list             the targets
#
# fuzz/seeds/TARGET holds the committed inputs: seeds from fixtures and recorded streams,
# and every input that once crashed (each also a unit test in the crate it broke). New
# inputs the fuzzer finds go to fuzz/corpus/TARGET (not committed), crashes to
# fuzz/artifacts/TARGET. Each run ends with its executions and peak RSS.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

# Inputs per target in CI (a few seconds each here; the slowest, bash_classify, ~10 s).
CI_RUNS=4000
need() { command -v "$1" >/dev/null 2>&1; }

if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  if [ "${1:-}" = --ci ]; then rustup toolchain install nightly --profile minimal;
  else echo "the fuzz targets need the nightly toolchain: rustup toolchain install nightly" >&2; exit 2; fi
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  if [ "${1:-}" = --ci ]; then cargo install --locked cargo-fuzz;
  else echo "the fuzz targets need cargo-fuzz: cargo install --locked cargo-fuzz" >&2; exit 2; fi
fi

targets() { sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^atto-fuzz$'; }

run() {
  local target=$1 seconds=$2 log limit
  shift 2
  mkdir -p "corpus/$target" "seeds/$target"
  log=$(mktemp)
  # CI passes a fixed seed and a number of runs instead of a time: the same inputs on
  # every machine, so a CI run is reproducible and fails only on a real finding.
  limit=("-max_total_time=$seconds")
  if [ $# -gt 0 ]; then limit=("$@"); echo "== fuzz $target ($*)"; else echo "== fuzz $target (${seconds} s)"; fi
  # -timeout: one input taking longer is a finding (the parsers promise bounded time).
  # -rss_limit_mb: so is one holding more memory than this.
  if ! cargo +nightly fuzz run "$target" "corpus/$target" "seeds/$target" -- \
      "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    rm -f "$log"
    echo "fuzz target $target failed: the input is in fuzz/artifacts/$target" >&2
    return 1
  fi
  awk '/^stat::number_of_executed_units/ { execs = $2 } /^stat::peak_rss_mb/ { rss = $2 }
       /^Done [0-9]+ runs in/ { secs = $5 }
       END { printf "   %s executions in %s s, peak RSS %s MB\n", execs, secs, rss }' "$log"
  rm -f "$log"
}

case "${1:-}" in
  --list) targets ;;
  --ci)
    # The same build `fuzz run` uses (release with debug assertions): built once, not twice.
    cargo +nightly fuzz build
    failed=0
    for t in $(targets); do run "$t" 0 -seed=1 "-runs=$CI_RUNS" || failed=1; done
    exit "$failed"
    ;;
  "")
    failed=0
    for t in $(targets); do run "$t" 60 || failed=1; done
    exit "$failed"
    ;;
  *)
    if [ -n "${3:-}" ]; then run "$1" "$2" "-max_total_time=$2" "-runs=$3"
    else run "$1" "${2:-60}"; fi
    ;;
esac
