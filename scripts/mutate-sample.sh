#!/usr/bin/env bash
# CI's sampled mutation run (the full run is scripts/mutate.py, ~1 h; its table is
# docs/pages/mutation.md). Copies this checkout to a scratch dir, builds there only the test
# programs (verify_<group>) that hold the tests of the sampled mutants (the mutants marked "ci":
# their tests need no audit), and runs N of them (default 3, sampled by the date): each must be killed.
# A few minutes on the 2-core machine.
#   scripts/mutate-sample.sh            N=3 JOBS=$(nproc)   (the scratch copy: a fresh mktemp -d, removed after)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-3}
JOBS=${JOBS:-$(nproc)}
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/vl-mutate.XXXXXX")
start=$(date +%s)
trap 'rm -rf "$SCRATCH"' EXIT
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$SCRATCH"
source scripts/compiler-cache.sh "$SCRATCH"
cmake -S "$SCRATCH" -B "$SCRATCH/build" -DCMAKE_BUILD_TYPE=Release "${VL_CACHE_ARGS[@]}" >/dev/null
status=0
/usr/bin/python3 scripts/mutate.py --scratch "$SCRATCH" --ci --no-audit --sample "$N" --jobs "$JOBS" --budget-min 5 || status=$?
echo "mutate-sample.sh: total $(( $(date +%s) - start )) s, status $status"
exit $status
