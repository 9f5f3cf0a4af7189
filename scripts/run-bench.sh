#!/usr/bin/env bash
# All the benchmarks, then one summary table (markdown, as in bench/README.md):
#   program size, program cost, bind / submit preparation, the functional model's speed, compile time.
# The bind bench runs on the NPU where a node is there (rknpu or rocket), else on both
# nodes of the emulated device. Not part of the test suite: nothing here fails on a missed
# target.
# Usage: scripts/run-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh pkg-config clang time pybind11-dev python3-dev python3-numpy python3-onnx python3-torch \
  python3-torchvision
cmake --workflow --preset release >/dev/null
bin=build/release/bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rows="$work/rows"
touch "$rows"

# Runs a bench, shows its own lines, keeps its table rows; returns its exit status.
run() {
  local status=0
  "$@" >"$work/out" 2>"$work/err" || status=$?
  grep -v '^ROW' "$work/out" || true
  grep '^ROW' "$work/out" >>"$rows" || true
  [ "$status" -eq 0 ] || [ "$status" -eq 3 ] || cat "$work/err" >&2
  return "$status"
}

# Runs a bench that needs an NPU node; where there is none (exit 3), on the emulated
# device's nodes given after it, saying so with `why`.
run_on_npu() {
  local bench=$1 why=$2 status=0
  shift 2
  run "$bin/$bench" || status=$?
  if [ "$status" -eq 3 ]; then
    echo "(no NPU device node here: $why)"
    for node in "$@"; do
      REGCMD_DEVICE=$node LD_PRELOAD="$PWD/build/release/emulator/libregcmd-emu.so" run "$bin/$bench"
    done
  elif [ "$status" -ne 0 ]; then
    exit "$status"
  fi
}

echo "== program size"
run "$bin/bench_size"
echo "== what programs cost: traffic, tasks and the bound, by cost against fewest tasks"
run "$bin/bench_cost"
echo "== a LLaMA decoder layer in one submit: tasks, traffic against the minimum, the bound"
run "$bin/bench_llm"
echo "== conv task splitting"
run "$bin/bench_conv"
echo "== lookup-table activations: accuracy on the model, program size"
run "$bin/bench_activation"
echo "== bind and submit preparation"
run_on_npu bench_bind "on the emulated device, its rknpu node, then its rocket node" /dev/dri/card1 /dev/accel/accel0
echo "== whole blocks in one submit"
run_on_npu bench_graph "the host times on the emulated device's rknpu node" /dev/dri/card1
echo "== the matmul API: host time of rknn_matmul_run against a session run"
run_on_npu bench_rknn "on the emulated device's rknpu node, its submit time left out" /dev/dri/card1
echo "== whole networks: submits, traffic against the minimum, the bound (regcmd.onnx, torchvision)"
run env PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_networks.py
echo "== the functional model"
run "$bin/bench_model"
echo "== compile time"
run bash scripts/compile-time.sh g++ clang++

echo
echo "Summary ($(uname -m), $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1))"
awk -F'\t' '$1 == "ROW" {
  if ($2 != group) { printf "| **%s** | | | |\n", $2; group = $2 }
  printf "| %s | %s | %s | %s |\n", $3, $4, $5, $6
}
BEGIN { print "| measure | value | target | |"; print "|---|---|---|---|" }' "$rows"
