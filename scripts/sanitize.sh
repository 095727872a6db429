#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer: configure build-asan (-O1 -g1,
# -DVL_SANITIZE=ON), build everything, run ctest without the long, fuzz and browser labels (the
# browser tests judge generated HTML in Chromium, which the instrumentation does not change).
# Any sanitizer report fails the test it happens in (UBSan: -fno-sanitize-recover).
#   scripts/sanitize.sh                 BUILD_DIR=build-asan JOBS=$(nproc)
# Extra ctest arguments pass through, e.g. scripts/sanitize.sh -R kernels
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-asan}
JOBS=${JOBS:-$(nproc)}
start=$(date +%s)
source scripts/compiler-cache.sh .
# -O1 -g1, as ASan's documentation advises (-O1 for speed, line tables for the reports' stack
# traces): compiling a lesson TU took 13.0 s of CPU against 24.4 s at RelWithDebInfo's -O2 -g
# (masking_cache.cpp, g++ 12), and compiling dominates this script's build (the ~110 files, in
# ~40 unity translation units: 408 s cold on 2 cores, 2026-12-06).
ASAN_FLAGS="-O1 -g1 -DNDEBUG"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVL_SANITIZE=ON "${VL_CACHE_ARGS[@]}" \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$ASAN_FLAGS" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$ASAN_FLAGS"
cmake --build "$BUILD_DIR" -j"$JOBS"
built=$(date +%s)
# detect_leaks: LeakSanitizer on exit; halt_on_error: the first report ends the program with a
# non-zero status. The CLI tests run the sanitized `lessons` binary too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS" -LE 'long|fuzz|browser' "$@" || status=$?
end=$(date +%s)
echo "sanitize.sh: build $((built - start)) s, tests $((end - built)) s, total $((end - start)) s, ctest status $status"
exit $status
