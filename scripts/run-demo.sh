#!/usr/bin/env bash
# The main job: set up, build the release preset, run the demo on the NPU. Where there is
# no NPU device node (no board: neither rknpu nor rocket), it runs on the emulated device,
# libregcmd-emu.so, which executes the program on the functional model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh pkg-config
cmake --workflow --preset release
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
status=0
./build/release/examples/regcmd-demo 2>"$errors" || status=$?
if [ "$status" -eq 3 ]; then
  echo "(no NPU device node here, $(head -c 60 "$errors")...: running on the emulated device)"
  LD_PRELOAD="$PWD/build/release/emulator/libregcmd-emu.so" ./build/release/examples/regcmd-demo
else
  cat "$errors" >&2
  exit "$status"
fi
