#!/bin/sh
# ctest example_own_backend_installed: install BUILD into a scratch prefix, build this example
# against the installed package only, and run its audit (exit 0 = every applicable claim passed).
#   sh examples/own_backend/test_installed.sh BUILD_DIR CMAKE [FLAGS]
# FLAGS: the sanitizer flags of an ASan build (its static libraries need the ASan runtime).
set -eu
build=$1
cmake=$2
flags=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
scratch=$build/example-own-backend
rm -rf "$scratch"
"$cmake" --install "$build" --prefix "$scratch/prefix" > "$scratch.install.log" 2>&1 || { cat "$scratch.install.log"; exit 1; }
"$cmake" -S "$here" -B "$scratch/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" > /dev/null
"$cmake" --build "$scratch/build" -j2 > /dev/null
"$scratch/build/own_backend_audit"
