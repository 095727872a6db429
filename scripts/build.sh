#!/usr/bin/env bash
# Configure (Release) and build into ${BUILD_DIR:-build}. Extra arguments go to CMake's configure.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
source scripts/compiler-cache.sh .
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${VL_CACHE_ARGS[@]}" "$@" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
