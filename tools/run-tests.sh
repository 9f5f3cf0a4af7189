#!/usr/bin/env bash
# The whole test suite: set up, then configure, build and test with g++ and with clang
# (warnings are errors in both), again under AddressSanitizer + UBSan (g++), the runtime
# tests under ThreadSanitizer, then run each fuzz target for 60 seconds (clang, libFuzzer).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh pkg-config clang libclang-rt-14-dev
cmake --workflow --preset gcc
cmake --workflow --preset clang
cmake --workflow --preset asan
bash tools/run-tsan.sh
bash tools/run-fuzz.sh 60
