#pragma once
// One key block's step of the online softmax (fused_attention_core.hpp), for a block of queries
// whose scores are stored key-major: st (keys × queries, leading dimension ld), st[j][r] = the
// score of query r against key j of the block. For each query r, over j = 0 … keys−1 in order:
//   x_j = scale · st[j][r]
//   m'_r = max(m_r, max_j x_j)
//   st[j][r] ← p_j = exp(x_j − m'_r),   sum_r = Σ_j p_j   (added in order of j)
//   alpha_r = exp(m_r − m'_r),          m_r ← m'_r
// A query that has seen no visible key yet (m'_r = −∞) gets p_j = 0, sum_r = 0, alpha_r = 1;
// a NaN score gives NaN p, sum and output (never a silent zero). Shapes: st keys × queries
// (ld ≥ queries), m, sum, alpha `queries` floats each.
//
// The vectors run over the queries, never over j, so each lane does the scalar's operations in
// the scalar's order, and exp is exp_f32 (softmax_rows.hpp) lane by lane: AVX-512F (16 queries
// to a register), AVX2 (8) and the baseline (SSE2, 4), then one query at a time, give the same
// bits. Each path uses its own register width (a vector wider than the target's registers is
// split by GCC into pieces it spills). float64: the same steps, one query at a time, std::exp.
// C: exp_f32's constants (the exp claim's controls change one); the exp claim calls this very
// function with one key and m = 0, so that st holds exp(x) itself.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/softmax_rows.hpp"
#include "kernels/vector_path.hpp"

namespace vl {

namespace online_softmax_detail {

using f32x16 = float __attribute__((vector_size(64)));
using i32x16 = std::int32_t __attribute__((vector_size(64)));
using f32x8 = float __attribute__((vector_size(32)));
using i32x8 = std::int32_t __attribute__((vector_size(32)));
using f32x4 = float __attribute__((vector_size(16)));
using i32x4 = std::int32_t __attribute__((vector_size(16)));

// The step for the queries of one vector V (or one float): st points at their first column.
template <class V, class I, class C>
__attribute__((always_inline)) inline void step(float* st, std::size_t keys, std::size_t ld, float scale, float* m, float* sum,
                                                float* alpha) {
  V m_old, mx;
  std::memcpy(&m_old, m, sizeof m_old);
  mx = m_old;
  for (std::size_t j = 0; j < keys; ++j) {
    V x;
    std::memcpy(&x, st + j * ld, sizeof x);
    x = x * scale;
    mx = x > mx ? x : mx;
  }
  const V none = V{} - std::numeric_limits<float>::infinity();
  const V shift = mx == none ? V{} : mx;  // no visible key: exp(−∞ − 0) = 0, not NaN
  V s{};
  for (std::size_t j = 0; j < keys; ++j) {
    V x;
    std::memcpy(&x, st + j * ld, sizeof x);
    V p;
    exp_f32<V, I, C>(x * scale - shift, p);
    std::memcpy(st + j * ld, &p, sizeof p);
    s += p;
  }
  V a;
  exp_f32<V, I, C>(m_old - shift, a);
  a = mx == none ? V{} + 1.0f : a;
  std::memcpy(m, &mx, sizeof mx);
  std::memcpy(sum, &s, sizeof s);
  std::memcpy(alpha, &a, sizeof a);
}

// All queries: vectors of V, then one query at a time.
template <class V, class I, class C>
__attribute__((always_inline)) inline void block(float* st, std::size_t keys, std::size_t queries, std::size_t ld, float scale, float* m,
                                                 float* sum, float* alpha) {
  constexpr std::size_t width = sizeof(V) / sizeof(float);
  std::size_t r = 0;
  for (; r + width <= queries; r += width) step<V, I, C>(st + r, keys, ld, scale, m + r, sum + r, alpha + r);
  for (; r < queries; ++r) step<float, std::int32_t, C>(st + r, keys, ld, scale, m + r, sum + r, alpha + r);
}

#if defined(__GNUC__) && defined(__x86_64__)
template <class C>
__attribute__((target("avx512f"))) void on_avx512(float* st, std::size_t keys, std::size_t queries, std::size_t ld, float scale,
                                                  float* m, float* sum, float* alpha) {
  block<f32x16, i32x16, C>(st, keys, queries, ld, scale, m, sum, alpha);
}
template <class C>
__attribute__((target("avx2"))) void on_avx2(float* st, std::size_t keys, std::size_t queries, std::size_t ld, float scale, float* m,
                                             float* sum, float* alpha) {
  block<f32x8, i32x8, C>(st, keys, queries, ld, scale, m, sum, alpha);
}
#endif
template <class C>
void on_baseline(float* st, std::size_t keys, std::size_t queries, std::size_t ld, float scale, float* m, float* sum, float* alpha) {
  block<f32x4, i32x4, C>(st, keys, queries, ld, scale, m, sum, alpha);
}

}  // namespace online_softmax_detail

/// The step above for float32 on the given path (which the CPU must run: cpu_runs(path)).
template <class C = CephesExpConstants>
void online_softmax_block(VectorPath path, float* st, std::size_t keys, std::size_t queries, std::size_t ld, float scale, float* m,
                          float* sum, float* alpha) {
#if defined(__GNUC__) && defined(__x86_64__)
  if (path == VectorPath::avx512) return online_softmax_detail::on_avx512<C>(st, keys, queries, ld, scale, m, sum, alpha);
  if (path == VectorPath::avx2) return online_softmax_detail::on_avx2<C>(st, keys, queries, ld, scale, m, sum, alpha);
#endif
  (void)path;
  online_softmax_detail::on_baseline<C>(st, keys, queries, ld, scale, m, sum, alpha);
}

/// The step above for float64 (every path: std::exp, one score at a time, j outer so that st is
/// read along its rows; alpha holds m_old until the end).
inline void online_softmax_block(VectorPath /*path*/, double* st, std::size_t keys, std::size_t queries, std::size_t ld, double scale,
                                 double* m, double* sum, double* alpha) {
  constexpr double none = -std::numeric_limits<double>::infinity();
  auto shift = [&](std::size_t r) { return m[r] == none ? 0.0 : m[r]; };
  for (std::size_t r = 0; r < queries; ++r) alpha[r] = m[r], sum[r] = 0;
  for (std::size_t j = 0; j < keys; ++j)
    for (std::size_t r = 0; r < queries; ++r) {
      const double x = st[j * ld + r] * scale;
      m[r] = x > m[r] ? x : m[r];
    }
  for (std::size_t j = 0; j < keys; ++j)
    for (std::size_t r = 0; r < queries; ++r) {
      const double p = std::exp(st[j * ld + r] * scale - shift(r));
      st[j * ld + r] = p;
      sum[r] += p;
    }
  for (std::size_t r = 0; r < queries; ++r) alpha[r] = m[r] == none ? 1.0 : std::exp(alpha[r] - shift(r));
}

}  // namespace vl
