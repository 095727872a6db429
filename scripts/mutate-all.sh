#!/usr/bin/env bash
# The full mutation run: every mutant of scripts/mutants.json against the committed tree, its table
# written to docs/pages/mutation.md (and the run's JSON beside it) when every mutant ran. A scratch
# copy of one commit (HEAD, resolved once) is built with ccache as the compiler launcher, so that
# putting a mutated header back costs cache hits; mutate.py builds with every core and reads the
# mutant list from the copy, so list and sources are the same commit's. The copy's path is fixed
# (the build bakes it into -DVL_SOURCE_DIR, which ccache's keys include: a fixed path lets a run hit
# the previous run's objects), guarded by a lock. About 2 hours for 168 mutants on the 2-core
# machine (the 2026-12-01 run, one job and no cache: 244 min of wall time for 99).
#   scripts/mutate-all.sh                     the full run: docs/pages/mutation.{md,json}
#   scripts/mutate-all.sh --only ID ...       some mutants (any mutate.py option): build/mutation-partial.{md,json}
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH="$(cd .. && pwd)/.vl-mutate-all"  # beside the checkout: the ONNX tests read ../shared/external
exec 9>"$SCRATCH.lock"
flock -n 9 || { echo "mutate-all.sh: another run holds $SCRATCH.lock" >&2; exit 2; }
trap 'rm -rf "$SCRATCH"' EXIT
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
COMMIT=$(git rev-parse --short HEAD)
git archive "$COMMIT" | tar -x -C "$SCRATCH"
echo "$COMMIT" > "$SCRATCH/.vl-commit"
if [ -n "$(git status --porcelain -- src verify specs reference_outputs scripts CMakeLists.txt)" ]; then
  echo "mutate-all.sh: the checkout has uncommitted changes; the run judges $COMMIT, not them" >&2
fi
# ONNX Runtime's npm packages (ignored by git, installed by install-deps.sh): the ORT adapter's tests need them.
if [ -d adapters/onnxruntime/node_modules ]; then ln -s "$(pwd)/adapters/onnxruntime/node_modules" "$SCRATCH/adapters/onnxruntime/node_modules"; fi
source scripts/compiler-cache.sh "$SCRATCH"
cmake -S "$SCRATCH" -B "$SCRATCH/build" -DCMAKE_BUILD_TYPE=Release "${VL_CACHE_ARGS[@]}" >/dev/null
mkdir -p build
OUT=build/mutation-partial
rm -f "$OUT.json" "$OUT.md"
status=0
/usr/bin/python3 scripts/mutate.py --scratch "$SCRATCH" --list "$SCRATCH/scripts/mutants.json" --budget-min 600 \
  --json "$OUT.json" --markdown "$OUT.md" "$@" || status=$?
# The docs' table is a full run's: no option given and every mutant run.
if [ $# -eq 0 ] && [ -f "$OUT.json" ] && /usr/bin/python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["meta"]["not_run"] != 0)' "$OUT.json"; then
  mv "$OUT.json" docs/pages/mutation.json && mv "$OUT.md" docs/pages/mutation.md
  echo "mutate-all.sh: docs/pages/mutation.md written"
else
  echo "mutate-all.sh: $OUT.md written (not a complete full run: the docs' table is left as it was)"
fi
exit $status
