#pragma once
// The softmax's row loops for the fused kernel and the materialised listing-6 attention: the
// largest score of a row, p_j = exp(s_j − m) in place with their sum, a row times a factor.
// float32 runs vectorised clones (AVX-512, AVX2, baseline: softmax_rows.cpp) that give the same
// bits on every machine; float64 uses std::exp.
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/platform/multiply_add.hpp"

namespace vl {

// Cephes' expf constants: ln 2 in two parts (ln2_hi has 9 significant bits, so n · ln2_hi is
// exact for |n| ≤ 2⁸ ... here |n| ≤ 126) and the degree-5 polynomial for (eʳ − 1 − r) / r².
struct CephesExpConstants {
  static constexpr float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
  static constexpr float p0 = 1.9875691500e-4f, p1 = 1.3981999507e-3f, p2 = 8.3334519073e-3f, p3 = 4.1665795894e-2f,
                         p4 = 1.6666665459e-1f, p5 = 5.0000001201e-1f;
};

// exp for float32 (Cephes' expf): x = n·ln 2 + r with n = round(x / ln 2), |r| ≤ ln 2 / 2,
//   eʳ ≈ 1 + r + r²·P(r)   (P of degree 5),   eˣ = 2ⁿ·eʳ.
// Within 2 floats of the correctly rounded value on [−87.3, 0] (claim attention.exp-float32,
// checked for every clone this CPU runs); exactly 1 at 0, exactly 0 below −87.3 (and for −∞),
// NaN for NaN (which NaN, its sign and payload, may differ between paths: the comparisons that
// judge a result only ask isnan). Scores minus their maximum are ≤ 0, so no overflow handling. Written once
// for F = float and for F = a vector of floats (GCC vector extensions: every operation is
// lane-wise, so a lane gives the scalar's bits). The reduction, Horner's steps and r²·P + r are
// fused multiply-adds, each rounded once, through M (kernels/platform/multiply_add.hpp: the caller's
// vector path); nothing else is fused (-ffp-contract=off).
// The result goes out through a reference: a 64-byte vector returned by value would have a
// different ABI in the baseline and AVX-512 clones (GCC's -Wpsabi). C: the constants (the exp
// claim's controls change one).
template <class F, class I, class C = CephesExpConstants, class M = simd::MultiplyAddBaseline>
__attribute__((always_inline)) inline void exp_f32(const F& x, F& out) {
  const F lo = F{} - 87.3f;
  const F xc = x < lo ? lo : x;  // NaN stays NaN
  F t;  // x / ln 2 + 1.5·2²³, rounded once: t holds round(x / ln 2) in its low bits
  M::fma(xc, F{} + 1.44269504088896341f, F{} + 12582912.0f, t);
  const F neg_n = 12582912.0f - t;  // −n, n = round(x / ln 2), exactly (one operation: no negation after)
  F r;
  M::fma(neg_n, F{} + C::ln2_hi, xc, r);  // exact
  M::fma(neg_n, F{} + C::ln2_lo, r, r);
  F p = F{} + C::p0;
  M::fma(p, r, F{} + C::p1, p);
  M::fma(p, r, F{} + C::p2, p);
  M::fma(p, r, F{} + C::p3, p);
  M::fma(p, r, F{} + C::p4, p);
  M::fma(p, r, F{} + C::p5, p);
  F y;
  M::fma(p * r, r, r, y);  // r²·P + r
  y = y + 1.0f;
  // 2ⁿ: t's bits are 1.5·2²³'s plus n (t lies in [2²³, 2²⁴), one bit pattern per integer); no
  // float-to-int conversion, which would be undefined for a NaN argument.
  const I e = __builtin_bit_cast(I, t) - std::int32_t(0x4B400000);
  const F pow2 = __builtin_bit_cast(F, (e + 127) << 23);
  const F result = y * pow2;
  out = x < lo ? F{} : result;  // a NaN x is NaN all the way through (xc, t, r, y, result)
}

float row_max_f32(const float* s, std::size_t n);
float row_exp_sum_f32(float* s, std::size_t n, float m);
void row_scale_f32(float* a, std::size_t n, float f);

/// max_j s_j over a row of n scores (−∞ for an empty or all −∞ row).
template <class T>
T row_max(const T* s, std::size_t n) {
  if constexpr (std::is_same_v<T, float>) {
    return row_max_f32(s, n);
  } else {
    T m = -std::numeric_limits<T>::infinity();
    for (std::size_t j = 0; j < n; ++j) m = s[j] > m ? s[j] : m;
    return m;
  }
}
/// s_j ← exp(s_j − m) in place; returns Σ_j s_j.
template <class T>
T row_exp_sum(T* s, std::size_t n, T m) {
  if constexpr (std::is_same_v<T, float>) {
    return row_exp_sum_f32(s, n, m);
  } else {
    T sum = 0;
    for (std::size_t j = 0; j < n; ++j) {
      s[j] = std::exp(s[j] - m);
      sum += s[j];
    }
    return sum;
  }
}
/// a_j ← a_j · f.
template <class T>
void row_scale(T* a, std::size_t n, T f) {
  if constexpr (std::is_same_v<T, float>) {
    row_scale_f32(a, n, f);
  } else {
    for (std::size_t j = 0; j < n; ++j) a[j] *= f;
  }
}
/// exp(x) as the row loops compute it.
inline float exp_of(float x) {
  float y;
  exp_f32<float, std::int32_t>(x, y);
  return y;
}
inline double exp_of(double x) { return std::exp(x); }


}  // namespace vl
