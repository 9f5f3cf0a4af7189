#!/usr/bin/env bash
# The test suite. Usage: scripts/run-tests.sh [--full]
#
#   (no flag)  set up, build once (g++, Debug, the gcc preset) and run every unit, rule,
#              compile-fail, tool, runtime, emulated-device, package, Python and ONNX conformance
#              test: about 8 minutes on 2 cores with the packages installed.
#   --full     the matrix CI runs (.ci/run), about 38 minutes on 2 cores: clang; aarch64, the
#              board's architecture (Debian's g++ cross compiler, the tests under qemu-user);
#              g++ under AddressSanitizer + UBSan with the compile-fail tests; the runtime
#              tests under ThreadSanitizer; each fuzz target for 60 seconds (clang, libFuzzer),
#              and mutated ONNX models into the importer for 60 seconds. Warnings are errors in each. The plain g++ build is left out: the ASan one
#              builds and runs the same tests with more checks.
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
case "${1-}" in
  "") ;;
  --full) full=1 ;;
  *) echo "usage: scripts/run-tests.sh [--full]" >&2; exit 2 ;;
esac
# The Python package's build and its tests, the ONNX conformance data among them, PyTorch and
# torchvision as the whole networks' reference (Debian's interpreter: python/CMakeLists.txt).
python=(pybind11-dev python3-dev python3-numpy python3-pytest python3-onnx libonnx-testdata python3-torch
        python3-torchvision)
if [ "$full" -eq 0 ]; then
  bash scripts/setup.sh pkg-config "${python[@]}"
  cmake --workflow --preset gcc
  exit 0
fi
# On a PC the aarch64 suite is a cross build; on the board the native builds are that suite.
cross=()
if [ "$(dpkg --print-architecture)" != arm64 ]; then
  cross=(g++-aarch64-linux-gnu qemu-user libdrm-dev:arm64 libboost-dev:arm64)
fi
bash scripts/setup.sh pkg-config clang libclang-rt-14-dev "${python[@]}" "${cross[@]}"
cmake --workflow --preset clang
# mutated ONNX models into the importer for 60 seconds (the quick command runs 3 of them)
PYTHONPATH=build/clang/python /usr/bin/python3 tests/onnx/fuzz_models.py 60
if [ ${#cross[@]} -gt 0 ]; then
  cmake --workflow --preset aarch64
fi
cmake --workflow --preset asan
bash scripts/run-tsan.sh
bash scripts/run-fuzz.sh 60
