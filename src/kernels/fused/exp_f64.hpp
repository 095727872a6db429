#pragma once
// exp for float64, written once for F = double and for F = a vector of doubles (GCC vector
// extensions; I: 64-bit integers of the same lane count), so that a lane gives the scalar's bits
// on every vector path (the fused kernel's float64 softmax, online_softmax_block.hpp):
//   x = n·ln 2 + r,  n = round(x / ln 2),  |r| ≤ ln 2 / 2
//   eʳ ≈ 1 + r + r²·P(r),  P the Taylor polynomial of (eʳ − 1 − r) / r² to degree 11 (eʳ to r¹³),
//   eˣ = 2ⁿ·eʳ
// Truncation: r¹⁴/14! ≤ 0.347¹⁴/14! < 5·10⁻¹⁸, below 2⁻⁵⁷ of eʳ ≥ 0.707. Rounding: ln 2 in two
// parts (fdlibm's: ln2_hi has its last 21 bits zero, so n·ln2_hi is exact for |n| ≤ 1022 and
// x − n·ln2_hi exact too), P by Horner, each step one fused multiply-add rounded once (M:
// kernels/platform/multiply_add.hpp, the caller's vector path), then r·P rounded and (r·P)·r + r fused,
// and the last addition; test_kernels_exp_f64 bounds the whole at 2 ulp of a nearly correctly
// rounded reference (long double's expl, rounded to double) on a sample of [−708, 0]. Exactly 1
// at 0; 0 below −708 (where eˣ < 3.3·10⁻³⁰⁸: std::exp gives a value under that there, normal
// down to −708.40 and subnormal below, so the two differ by less than 3.3·10⁻³⁰⁸ absolute);
// 0 for −∞; NaN for NaN (its bits never reach an integer conversion; which NaN, its sign and
// payload, may differ between paths). Arguments
// above 0 are outside its domain (scores minus their maximum are ≤ 0). The result goes out
// through a reference, as exp_f32's.
#include <cstdint>

#include "kernels/platform/multiply_add.hpp"

namespace vl {

template <class F, class I, class M = simd::MultiplyAddBaseline>
__attribute__((always_inline)) inline void exp_f64(const F& x, F& out) {
  constexpr double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  constexpr double log2e = 1.44269504088896338700e+00;
  constexpr double shifter = 6755399441055744.0;  // 1.5·2⁵²: t = y + shifter holds round(y) in its low bits
  const F lo = F{} - 708.0;
  const F xc = x < lo ? lo : x;  // NaN stays NaN
  F t;
  M::fma(xc, F{} + log2e, F{} + shifter, t);
  const F neg_n = shifter - t;  // −n, n = round(x / ln 2), exactly (one operation: no negation after)
  F r;
  M::fma(neg_n, F{} + ln2_hi, xc, r);  // exact
  M::fma(neg_n, F{} + ln2_lo, r, r);
  F p = F{} + 1.0 / 6227020800.0;  // 1/13!: P's r¹¹ coefficient (P = Σₖ rᵏ / (k + 2)!)
  M::fma(p, r, F{} + 1.0 / 479001600.0, p);
  M::fma(p, r, F{} + 1.0 / 39916800.0, p);
  M::fma(p, r, F{} + 1.0 / 3628800.0, p);
  M::fma(p, r, F{} + 1.0 / 362880.0, p);
  M::fma(p, r, F{} + 1.0 / 40320.0, p);
  M::fma(p, r, F{} + 1.0 / 5040.0, p);
  M::fma(p, r, F{} + 1.0 / 720.0, p);
  M::fma(p, r, F{} + 1.0 / 120.0, p);
  M::fma(p, r, F{} + 1.0 / 24.0, p);
  M::fma(p, r, F{} + 1.0 / 6.0, p);
  M::fma(p, r, F{} + 0.5, p);
  F y;
  M::fma(p * r, r, r, y);  // r²·P + r
  y = y + 1.0;
  // 2ⁿ: t's bits are shifter's plus n (t lies in [2⁵², 2⁵³), one bit pattern per integer).
  const I e = __builtin_bit_cast(I, t) - std::int64_t(0x4338000000000000);
  const F pow2 = __builtin_bit_cast(F, (e + 1023) << 52);
  const F result = y * pow2;
  out = x < lo ? F{} : result;  // a NaN x is NaN all the way through (xc, t, r, y, result)
}

}  // namespace vl
