#!/usr/bin/env bash
# Valgrind memcheck on the `lessons` CLI of a normal (non-sanitized) build, a few cases:
# the audit of one claim, eval attention (plain and fused), one ONNX case, and a bad input
# (refused cleanly).
# Each must exit with its expected status and with no memcheck error or definite leak.
#   scripts/valgrind.sh                 BUILD_DIR=build (built first if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
LESSONS="$BUILD_DIR/bin/lessons"
[ -x "$LESSONS" ] || { cmake -S . -B "$BUILD_DIR" && cmake --build "$BUILD_DIR" -j"$(nproc)" --target lessons; }
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed (apt-get install -y valgrind)"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CASES=../shared/external/onnx-attention
BAD=verify/bad_inputs/npy
# Exit status 99 marks a memcheck error (distinct from the CLI's own 0/1/2).
VG=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
    --show-leak-kinds=definite --track-origins=yes --quiet)
failed=0
# check NAME EXPECTED_STATUS ARGS...
check() {
  local name=$1 want=$2; shift 2
  local t0=$(date +%s) rc=0
  OPENBLAS_NUM_THREADS=${BLAS_THREADS:-1} "${VG[@]}" --log-file="$tmp/$name.vg" "$LESSONS" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
  local verdict=ok
  if [ "$rc" = 99 ] || [ -s "$tmp/$name.vg" ]; then verdict="MEMCHECK ERRORS"; failed=1; cat "$tmp/$name.vg"
  elif [ "$rc" != "$want" ]; then verdict="exit $rc, expected $want"; failed=1; tail -5 "$tmp/$name.err"; fi
  echo "valgrind.sh: $name: $verdict ($(( $(date +%s) - t0 )) s)"
}
start=$(date +%s)
check audit_one_claim 0 audit linear-rnn.causal
check eval_attention 0 eval attention --q $BAD/good_q.npy --k $BAD/good_k.npy --v $BAD/good_v.npy --causal \
      --out "$tmp/o.npy" --weights "$tmp/w.npy"
# The fused kernel (no --weights), with OpenBLAS's thread pool up: the kernel shuts it down
# while its own threads run and OpenBLAS starts it again later.
BLAS_THREADS=2 check eval_attention_fused 0 eval attention --q $BAD/good_q.npy --k $BAD/good_k.npy --v $BAD/good_v.npy \
      --causal --out "$tmp/f.npy"
check eval_linear_chunked 0 eval linear-attention --q $BAD/good_q2d.npy --k $BAD/good_k2d.npy --v $BAD/good_v2d.npy \
      --form chunked --chunk 3 --out "$tmp/l.npy"
if [ -d "$CASES/test_attention_4d" ]; then check onnx_one_case 0 onnx "$CASES/test_attention_4d"; fi
check bad_input_truncated 2 eval attention --q $BAD/truncated_data.npy --k $BAD/good_k.npy --v $BAD/good_v.npy --out "$tmp/x.npy"
check bad_input_nan 2 eval attention --q $BAD/q_nan.npy --k $BAD/good_k.npy --v $BAD/good_v.npy --out "$tmp/x.npy"
echo "valgrind.sh: total $(( $(date +%s) - start )) s, $([ $failed = 0 ] && echo 'no errors' || echo FAILED)"
exit $failed
