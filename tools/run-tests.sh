#!/usr/bin/env bash
# The whole test suite: set up, then configure, build and test with clang, for aarch64 (the
# board: Debian's g++ cross compiler, the tests under qemu-user), with g++ under
# AddressSanitizer + UBSan (and the compile-fail tests), warnings as errors in each; the
# runtime tests under ThreadSanitizer, then each fuzz target for 60 seconds (clang,
# libFuzzer). A plain g++ build (the gcc preset) would repeat the asan one without its
# checks, so the suite leaves it to local work.
set -euo pipefail
cd "$(dirname "$0")/.."
# On a PC the aarch64 suite is a cross build; on the board the native builds are that suite.
cross=()
if [ "$(dpkg --print-architecture)" != arm64 ]; then
  cross=(g++-aarch64-linux-gnu qemu-user libdrm-dev:arm64 libboost-dev:arm64)
fi
bash tools/setup.sh pkg-config clang libclang-rt-14-dev "${cross[@]}"
cmake --workflow --preset clang
if [ ${#cross[@]} -gt 0 ]; then
  cmake --workflow --preset aarch64
fi
cmake --workflow --preset asan
bash tools/run-tsan.sh
bash tools/run-fuzz.sh 60
