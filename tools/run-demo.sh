#!/usr/bin/env bash
# The main job: set up, build the release preset, run the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake --workflow --preset release
./build/release/examples/regcmd-demo
