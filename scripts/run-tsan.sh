#!/usr/bin/env bash
# The runtime tests under ThreadSanitizer (g++), on both emulated nodes: the sessions,
# devices and threads that share a node; then the matmul API's threads (three contexts on
# three cores at once, rknnrt/). The TSan runtime is preloaded ahead of the emulated device,
# whose open/mmap/ioctl it must see first.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset tsan >/dev/null
cmake --build --preset tsan --target regcmd_runtime_tests regcmd-emu rknn_client
tsan=$(g++ -print-file-name=libtsan.so)
emu=build/tsan/emulator/libregcmd-emu.so
env_only="fault injection*,job fault*,an IOVA past 32 bits*,an IOVA that wraps*,rknpu: submits of three threads*"
for node in "/dev/dri/card1|rocket:*" "/dev/accel/accel0|rknpu:*"; do
  path=${node%%|*} other=${node#*|}
  LD_PRELOAD="$tsan:$emu" REGCMD_DEVICE="$path" TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
    build/tsan/tests/regcmd_runtime_tests "--test-case-exclude=$env_only,$other"
  LD_PRELOAD="$tsan:$emu" REGCMD_DEVICE="$path" REGCMD_RKNN_LOG=0 TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
    build/tsan/tests/rknn_client threads
done
LD_PRELOAD="$tsan:$emu" REGCMD_DEVICE=/dev/dri/card1 REGCMD_EMU_SUBMIT_MS=150 TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
  build/tsan/tests/regcmd_runtime_tests "--test-case=rknpu: submits of three threads*"
