#!/usr/bin/env bash
# The full mutation run: every mutant of scripts/mutants.json against the committed tree, its table
# written to docs/pages/mutation.md (and the run's JSON beside it). A scratch copy of HEAD (a
# fresh mktemp -d, removed after) is built with ccache as the compiler launcher, so that putting a
# mutated header back costs cache hits; mutate.py builds with every core. About 2 to 3 hours for
# 161 mutants on the 2-core machine (the 2026-12-01 run, one job and no cache: 244 min for 99).
#   scripts/mutate-all.sh                     the full run: docs/pages/mutation.{md,json}
#   scripts/mutate-all.sh --only ID ...       some mutants (any mutate.py option): build/mutation-partial.{md,json}
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH=$(mktemp -d "$(pwd)/../.vl-mutate-all.XXXXXX")  # beside the checkout: the ONNX tests read ../shared/external
trap 'rm -rf "$SCRATCH"' EXIT
git archive HEAD | tar -x -C "$SCRATCH"
git rev-parse --short HEAD > "$SCRATCH/.vl-commit"
# ONNX Runtime's npm packages (ignored by git, installed by install-deps.sh): the ORT adapter's tests need them.
if [ -d adapters/onnxruntime/node_modules ]; then ln -s "$(pwd)/adapters/onnxruntime/node_modules" "$SCRATCH/adapters/onnxruntime/node_modules"; fi
if [ -n "$(git status --porcelain -- src verify specs reference_outputs CMakeLists.txt)" ]; then
  echo "mutate-all.sh: the checkout has uncommitted changes; the run judges HEAD ($(cat "$SCRATCH/.vl-commit")), not them" >&2
fi
source scripts/compiler-cache.sh "$SCRATCH"
cmake -S "$SCRATCH" -B "$SCRATCH/build" -DCMAKE_BUILD_TYPE=Release "${VL_CACHE_ARGS[@]}" >/dev/null
# The docs' table is the full run's; a run of some mutants (any option given) writes beside the build.
OUT=docs/pages/mutation
if [ $# -gt 0 ]; then mkdir -p build && OUT=build/mutation-partial; fi
/usr/bin/python3 scripts/mutate.py --scratch "$SCRATCH" --budget-min 600 --json "$OUT.json" --markdown "$OUT.md" "$@"
