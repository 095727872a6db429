#!/usr/bin/env bash
# The libFuzzer targets' short run (fuzz/README.md): build them with clang-14 (ASan + UBSan +
# libFuzzer) in build-fuzz and run each on its seeds and regression inputs plus 2000 mutations.
# A crash, a sanitizer report, a timeout or an exception other than vl::InputError fails it.
#   scripts/fuzz-smoke.sh               BUILD_DIR=build-fuzz JOBS=$(nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-fuzz}
JOBS=${JOBS:-$(nproc)}
start=$(date +%s)
# clang and its runtime (libFuzzer) are needed only here, not by the README's two commands.
scripts/install-deps.sh clang-14 libclang-rt-14-dev
source scripts/compiler-cache.sh .
CC=clang-14 CXX=clang++-14 cmake -S . -B "$BUILD_DIR" -DVL_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "${VL_CACHE_ARGS[@]}" >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS" --target fuzz_spec_parser fuzz_npy fuzz_onnx_pb
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS" -L fuzz || status=$?
echo "fuzz-smoke.sh: total $(( $(date +%s) - start )) s, ctest status $status"
exit $status
