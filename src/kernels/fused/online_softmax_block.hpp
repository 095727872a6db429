#pragma once
// One key block's step of the online softmax (fused_attention_core.hpp), for a block of queries
// whose scores are stored key-major: st (keys × queries, leading dimension ld), st[j][r] = the
// score of query r against key j of the block (float32 or float64). For each query r, over
// j = 0 … keys−1 in order (x_j = st[j][r], the scaled score):
//   m'_r = max(m_r, max_j x_j)
//   st[j][r] ← p_j = exp(x_j − m'_r),   sum_r = Σ_j p_j   (added in order of j)
//   alpha_r = exp(m_r − m'_r),          m_r ← m'_r
// A query that has seen no visible key yet (m'_r = −∞, every score −∞) gets p_j = 0, sum_r = 0,
// alpha_r = 1; a NaN score never enters the maximum but gives NaN p, sum and output (never a
// silent zero, even among −∞ scores). Shapes: st keys × queries
// (ld ≥ queries), m, sum, alpha `queries` floats each.
//
// The vectors run over the queries, never over j, so each lane does the scalar's operations in
// the scalar's order, and exp is exp_f32 (softmax_rows.hpp) lane by lane, its fused
// multiply-adds the path's (kernels/platform/multiply_add.hpp): AVX-512F (16 queries to a register), AVX2
// (8) and the baseline (SSE2, 4, std::fma), then one query at a time, give the same bits. Each path uses its own register width (GCC splits a wider vector into pieces and spills
// them). float64: the same, with exp_f64 (kernels/fused/exp_f64.hpp;
// 8, 4, 2 queries to a register). C: exp_f32's constants (the exp claim's controls change one); the exp claim calls this very
// function with one key and m = 0, so that st holds exp(x) itself.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/fused/exp_f64.hpp"
#include "kernels/platform/multiply_add.hpp"
#include "kernels/fused/softmax_rows.hpp"
#include "kernels/platform/vector_path.hpp"
#include "kernels/platform/vector_types.hpp"

namespace vl {

namespace online_softmax_detail {

using namespace simd;  // the vector types (kernels/platform/vector_types.hpp)

// exp lane by lane: exp_f32 (constants C) for floats, exp_f64 for doubles; M: the path's fused
// multiply-add.
template <class E, class V, class I, class C, class M>
[[gnu::always_inline]] inline void exp_lanes(const V& x, V& out) {
  if constexpr (std::is_same_v<E, float>) exp_f32<V, I, C, M>(x, out);
  else exp_f64<V, I, M>(x, out);
}

// m = −∞ ? if_none : if_seen, lane by lane, for a running maximum m. Vectors compare m's bits with
// −∞'s (the one pattern of −∞; a NaN m, as the backward's saved lse may be, is not −∞ either way)
// and select with bit masks: GCC 12 stops with an internal error on a float comparison's select
// here for 8 doubles on AVX-512.
// The result goes out through a reference, as exp_f32's (-Wpsabi).
template <class E, class V, class I>
[[gnu::always_inline]] inline void unless_none(const V& m, const V& if_seen, const V& if_none, V& out) {
  if constexpr (std::is_floating_point_v<V>) {
    out = m == -std::numeric_limits<E>::infinity() ? if_none : if_seen;
  } else {
    const I none = __builtin_bit_cast(I, V{} - std::numeric_limits<E>::infinity());
    const I is_none = __builtin_bit_cast(I, m) == none;  // all ones where m = −∞
    out = __builtin_bit_cast(V, (__builtin_bit_cast(I, if_seen) & ~is_none) | (__builtin_bit_cast(I, if_none) & is_none));
  }
}

// The step for the queries of G vectors V of E side by side (or of one E): st points at their
// first column. The G vectors are independent; they run side by side only so that the CPU has G
// chains at once (the maximum's loop over j is a chain of dependent maxima, one per vector, and
// exp a chain of ~15 steps). Each lane still does the scalar's operations in the scalar's order,
// so G changes no bit. G = 4 against 1: the fused forward 1–3 % faster (issue 40's note).
template <class E, class V, class I, class C, class M, int G>
[[gnu::always_inline]] inline void step(E* st, std::size_t keys, std::size_t ld, E* m, E* sum, E* alpha) {
  constexpr std::size_t width = sizeof(V) / sizeof(E);
  V m_old[G], mx[G];
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) {
    std::memcpy(&m_old[g], m + g * width, sizeof(V));
    mx[g] = m_old[g];
  }
  for (std::size_t j = 0; j < keys; ++j) {
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      V x;
      std::memcpy(&x, st + j * ld + g * width, sizeof x);
      mx[g] = x > mx[g] ? x : mx[g];
    }
  }
  V shift[G], s[G];
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) {
    unless_none<E, V, I>(mx[g], mx[g], V{}, shift[g]);  // no visible key: exp(−∞ − 0) = 0, not NaN
    s[g] = V{};
  }
  for (std::size_t j = 0; j < keys; ++j) {
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      V x;
      std::memcpy(&x, st + j * ld + g * width, sizeof x);
      V p;
      exp_lanes<E, V, I, C, M>(x - shift[g], p);
      std::memcpy(st + j * ld + g * width, &p, sizeof p);
      s[g] += p;
    }
  }
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) {
    V a;
    exp_lanes<E, V, I, C, M>(m_old[g] - shift[g], a);
    unless_none<E, V, I>(mx[g], a, V{} + E(1), a);
    std::memcpy(m + g * width, &mx[g], sizeof(V));
    std::memcpy(sum + g * width, &s[g], sizeof(V));
    std::memcpy(alpha + g * width, &a, sizeof(V));
  }
}

// All queries: groups of kGroup vectors, then single vectors, then one query at a time.
constexpr int kGroup = 4;
template <class E, class V, class I, class C, class M>
[[gnu::always_inline]] inline void block(E* st, std::size_t keys, std::size_t queries, std::size_t ld, E* m, E* sum, E* alpha) {
  constexpr std::size_t width = sizeof(V) / sizeof(E);
  using Int = std::conditional_t<std::is_same_v<E, float>, std::int32_t, std::int64_t>;
  std::size_t r = 0;
  for (; r + kGroup * width <= queries; r += kGroup * width) step<E, V, I, C, M, kGroup>(st + r, keys, ld, m + r, sum + r, alpha + r);
  for (; r + width <= queries; r += width) step<E, V, I, C, M, 1>(st + r, keys, ld, m + r, sum + r, alpha + r);
  for (; r < queries; ++r) step<E, E, Int, C, M, 1>(st + r, keys, ld, m + r, sum + r, alpha + r);
}

#if defined(__GNUC__) && defined(__x86_64__)
template <class C>
__attribute__((target("avx512f,fma"))) void on_avx512(float* st, std::size_t keys, std::size_t queries, std::size_t ld, float* m,
                                                      float* sum, float* alpha) {
  block<float, f32x16, i32x16, C, MultiplyAddAvx512>(st, keys, queries, ld, m, sum, alpha);
}
template <class C>
__attribute__((target("avx2,fma"))) void on_avx2(float* st, std::size_t keys, std::size_t queries, std::size_t ld, float* m, float* sum,
                                                 float* alpha) {
  block<float, f32x8, i32x8, C, MultiplyAddAvx2>(st, keys, queries, ld, m, sum, alpha);
}
__attribute__((target("avx512f,fma"))) inline void on_avx512(double* st, std::size_t keys, std::size_t queries, std::size_t ld, double* m,
                                                             double* sum, double* alpha) {
  block<double, f64x8, i64x8, CephesExpConstants, MultiplyAddAvx512>(st, keys, queries, ld, m, sum, alpha);
}
__attribute__((target("avx2,fma"))) inline void on_avx2(double* st, std::size_t keys, std::size_t queries, std::size_t ld, double* m,
                                                        double* sum, double* alpha) {
  block<double, f64x4, i64x4, CephesExpConstants, MultiplyAddAvx2>(st, keys, queries, ld, m, sum, alpha);
}
#endif
template <class C>
void on_baseline(float* st, std::size_t keys, std::size_t queries, std::size_t ld, float* m, float* sum, float* alpha) {
  block<float, f32x4, i32x4, C, MultiplyAddBaseline>(st, keys, queries, ld, m, sum, alpha);
}
inline void on_baseline(double* st, std::size_t keys, std::size_t queries, std::size_t ld, double* m, double* sum, double* alpha) {
  block<double, f64x2, i64x2, CephesExpConstants, MultiplyAddBaseline>(st, keys, queries, ld, m, sum, alpha);
}

}  // namespace online_softmax_detail

/// The step above on the given path (which the CPU must run: cpu_runs(path)), for scores
/// already scaled. C: exp_f32's constants (float32 only).
template <class C = CephesExpConstants, class T>
void online_softmax_block(VectorPath path, T* st, std::size_t keys, std::size_t queries, std::size_t ld, T* m, T* sum, T* alpha) {
  using namespace online_softmax_detail;
#if defined(__GNUC__) && defined(__x86_64__)
  if constexpr (std::is_same_v<T, float>) {
    if (path == VectorPath::avx512) return on_avx512<C>(st, keys, queries, ld, m, sum, alpha);
    if (path == VectorPath::avx2) return on_avx2<C>(st, keys, queries, ld, m, sum, alpha);
    return on_baseline<C>(st, keys, queries, ld, m, sum, alpha);
  } else {
    if (path == VectorPath::avx512) return on_avx512(st, keys, queries, ld, m, sum, alpha);
    if (path == VectorPath::avx2) return on_avx2(st, keys, queries, ld, m, sum, alpha);
    return on_baseline(st, keys, queries, ld, m, sum, alpha);
  }
#else
  (void)path;
  if constexpr (std::is_same_v<T, float>) on_baseline<C>(st, keys, queries, ld, m, sum, alpha);
  else on_baseline(st, keys, queries, ld, m, sum, alpha);
#endif
}

}  // namespace vl
