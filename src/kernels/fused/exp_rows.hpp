#pragma once
// The float32 row loop s_j ← exp(s_j − m), returning Σ_j s_j, compiled for each vector path
// (kernels/platform/vector_path.hpp): AVX-512F, AVX2 and the baseline, one body for all three. The fused
// kernel calls the selected path (softmax_rows.cpp); the exp claim (attention.exp-float32) calls
// every path this CPU runs, with m = 0 so that the row holds exp(s_j) itself. C: exp_f32's
// constants (softmax_rows.hpp); M: the path's fused multiply-add (kernels/platform/multiply_add.hpp).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/platform/multiply_add.hpp"
#include "kernels/fused/softmax_rows.hpp"
#include "kernels/platform/vector_path.hpp"
#include "kernels/platform/vector_types.hpp"

namespace vl {

namespace exp_rows_detail {

// 16 floats a step (kernels/platform/vector_types.hpp).
using simd::f32x16;
using simd::i32x16;
constexpr std::size_t kLanes = 16;

// Lane t sums elements j ≡ t (mod 16) in order; the lanes are then added in lane order after
// the scalar tail: the same order on every path, so every path gives the same bits.
template <class C, class M>
__attribute__((always_inline)) inline float body(float* s, std::size_t n, float m) {
  f32x16 part{};
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    f32x16 x;
    std::memcpy(&x, s + j, sizeof x);
    f32x16 p;
    exp_f32<f32x16, i32x16, C, M>(x - m, p);
    std::memcpy(s + j, &p, sizeof p);
    part += p;
  }
  float tail = part[0];
  for (; j < n; ++j) {
    float p;
    exp_f32<float, std::int32_t, C, M>(s[j] - m, p);
    s[j] = p;
    tail += p;
  }
  float sum = tail;
  for (std::size_t t = 1; t < kLanes; ++t) sum += part[t];
  return sum;
}

#if defined(__GNUC__) && defined(__x86_64__)
template <class C>
__attribute__((target("avx512f,fma"))) float on_avx512(float* s, std::size_t n, float m) { return body<C, simd::MultiplyAddAvx512>(s, n, m); }
template <class C>
__attribute__((target("avx2,fma"))) float on_avx2(float* s, std::size_t n, float m) { return body<C, simd::MultiplyAddAvx2>(s, n, m); }
#endif
template <class C>
float on_baseline(float* s, std::size_t n, float m) { return body<C, simd::MultiplyAddBaseline>(s, n, m); }

}  // namespace exp_rows_detail

/// s_j ← exp(s_j − m) on the given path (which the CPU must run: cpu_runs(path)); returns Σ_j s_j.
template <class C = CephesExpConstants>
float row_exp_sum_on(VectorPath path, float* s, std::size_t n, float m) {
#if defined(__GNUC__) && defined(__x86_64__)
  if (path == VectorPath::avx512) return exp_rows_detail::on_avx512<C>(s, n, m);
  if (path == VectorPath::avx2) return exp_rows_detail::on_avx2<C>(s, n, m);
#endif
  (void)path;
  return exp_rows_detail::on_baseline<C>(s, n, m);
}

}  // namespace vl
