#!/usr/bin/env bash
# The whole test suite: set up, then configure, build and test with g++ and with clang
# (warnings are errors in both).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh pkg-config clang
cmake --workflow --preset gcc
cmake --workflow --preset clang
