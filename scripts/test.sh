#!/usr/bin/env bash
# The tests: install what is missing, build, run every verification program with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(( $(nproc) + 1 ))"
