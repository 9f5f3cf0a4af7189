#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for SECONDS (default 60)
# on a copy of its seed corpus; prints the executions reached. Fails on any crash.
# Usage: scripts/run-fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
cmake --workflow --preset fuzz >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Two gaps of the program rules stay open (tests/fuzz/findings/README.md): registers an op
# reads that no task wrote, and DPU_SURFACE_ADD; their findings are reported, not fatal.
export REGCMD_FUZZ_VALIDATE_IGNORE="${REGCMD_FUZZ_VALIDATE_IGNORE-no task of its register group wrote,DPU_SURFACE_ADD disagrees}"
# fuzz_rknn runs librknnrt on the emulated device, half the time on each node, its jobs
# stopped after 1 ms rather than rocket's 500 (the int8 entry times out by design).
runs_of() {
  case "$1" in
    rknn:rknpu) echo "env LD_PRELOAD=$PWD/build/fuzz/tests/fuzz/libregcmd-emu-fuzz.so REGCMD_DEVICE=/dev/dri/card1 REGCMD_EMU_STOP_MS=1" ;;
    rknn:rocket) echo "env LD_PRELOAD=$PWD/build/fuzz/tests/fuzz/libregcmd-emu-fuzz.so REGCMD_DEVICE=/dev/accel/accel0 REGCMD_EMU_STOP_MS=1" ;;
    *) echo "" ;;
  esac
}
for run in dump diff matmul validate graph_file rknn:rknpu rknn:rocket; do
  target=${run%%:*}
  time=$seconds
  [ "$target" = rknn ] && time=$(( (seconds + 1) / 2 ))
  mkdir -p "$work/$run"
  cp tests/fuzz/corpus/"$target"/* "$work/$run"/
  log="$work/$run.log"
  if ! $(runs_of "$run") ./build/fuzz/tests/fuzz/fuzz_"$target" -max_total_time="$time" -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 "$work/$run" >"$log" 2>&1; then
    grep -m1 -A12 "FINDING" "$log" || true  # the finding's own lines (the stack trace follows them)
    tail -40 "$log"
    echo "fuzz_$run: FAILED (log above)"
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "fuzz_$run: $runs executions in ${time}s, no crash ($(ls "$work/$run" | wc -l) corpus inputs)"
done
