#!/usr/bin/env bash
# Configure (Release) and build into ${BUILD_DIR:-build}. Extra arguments go to CMake's configure.
# BUILD_TARGETS names what to build (default: everything, the test programs included); the main
# command asks for the CLI alone (`lessons`), whose docs target it builds after the audit.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
source scripts/compiler-cache.sh .
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${VL_CACHE_ARGS[@]}" "$@" >/dev/null
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j"$(nproc)" "${targets[@]}"
