// Scalar transcription of avx_mathfun.h's log256_ps and sincos256_ps (see the header). The
// comments name the intrinsic or the source line each step stands for; std::fma marks a
// multiply-add that torch's GCC build fused. Masks are kept as 32-bit patterns so that the
// bit-level selects (and/andnot/xor) behave exactly as in the vector code, signed zeros
// included.
#include "numeric/torch_avx_mathfun.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace vl::torch_rng::avx_mathfun {
namespace {

using u32 = std::uint32_t;

float from_bits(u32 b) { return std::bit_cast<float>(b); }
u32 to_bits(float f) { return std::bit_cast<u32>(f); }
u32 mask_of(bool b) { return b ? 0xFFFFFFFFu : 0u; }

// _mm256_cvttps_epi32: truncation toward zero; out of range (and NaN) gives INT32_MIN.
std::int32_t cvtt(float f) {
  if (!(f > -2147483904.0f && f < 2147483648.0f)) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(f);
}

// The constants are the header's double literals rounded to float, as _PS256_CONST does.
constexpr float kSqrtHalf = static_cast<float>(0.707106781186547524);
constexpr float kLogP[9] = {
    static_cast<float>(7.0376836292E-2),  static_cast<float>(-1.1514610310E-1),
    static_cast<float>(1.1676998740E-1),  static_cast<float>(-1.2420140846E-1),
    static_cast<float>(1.4249322787E-1),  static_cast<float>(-1.6668057665E-1),
    static_cast<float>(2.0000714765E-1),  static_cast<float>(-2.4999993993E-1),
    static_cast<float>(3.3333331174E-1)};
constexpr float kLogQ1 = static_cast<float>(-2.12194440e-4);
constexpr float kLogQ2 = static_cast<float>(0.693359375);

constexpr float kMinusDP1 = static_cast<float>(-0.78515625);
constexpr float kMinusDP2 = static_cast<float>(-2.4187564849853515625e-4);
constexpr float kMinusDP3 = static_cast<float>(-3.77489497744594108e-8);
constexpr float kSinP0 = static_cast<float>(-1.9515295891E-4);
constexpr float kSinP1 = static_cast<float>(8.3321608736E-3);
constexpr float kSinP2 = static_cast<float>(-1.6666654611E-1);
constexpr float kCosP0 = static_cast<float>(2.443315711809948E-005);
constexpr float kCosP1 = static_cast<float>(-1.388731625493765E-003);
constexpr float kCosP2 = static_cast<float>(4.166664568298827E-002);
constexpr float kFourOverPi = static_cast<float>(1.27323954473516);

}  // namespace

// Cephes logf: split x = m * 2^e with m in [0.5, 1), move m to [sqrt(1/2), sqrt(2)) - 1,
// evaluate a degree-8 polynomial, and add e*log(2) in two parts (q2 + q1).
float log(float x) {
  const u32 invalid = mask_of(x <= 0.0f);                        // _mm256_cmp_ps(.., _CMP_LE_OS)
  const float min_norm = from_bits(0x00800000u);
  x = (x > min_norm) ? x : min_norm;                              // _mm256_max_ps(x, min_norm)
  std::int32_t exponent = static_cast<std::int32_t>(to_bits(x) >> 23);  // _mm256_srli_epi32
  x = from_bits((to_bits(x) & ~0x7f800000u) | to_bits(0.5f));     // keep the mantissa, exp of 0.5
  exponent -= 0x7f;
  float e = static_cast<float>(exponent);                         // _mm256_cvtepi32_ps
  e = e + 1.0f;
  const u32 mask = mask_of(x < kSqrtHalf);                        // _CMP_LT_OS
  const float tmp_x = from_bits(to_bits(x) & mask);
  x = x - 1.0f;
  e = e - from_bits(to_bits(1.0f) & mask);
  x = x + tmp_x;
  const float z = x * x;
  float y = kLogP[0];
  for (int k = 1; k < 9; ++k) y = std::fma(y, x, kLogP[k]);     // y = y*x; y = y + p_k
  y = y * x;
  y = std::fma(y, z, e * kLogQ1);                                // y = y*z; y = y + e*q1
  y = std::fma(-z, 0.5f, y);                                     // y = y - z*0.5
  x = x + y;
  x = std::fma(e, kLogQ2, x);                                    // x = x + e*q2
  return from_bits(to_bits(x) | invalid);                         // x <= 0 -> NaN
}

// Cephes sinf/cosf together: reduce |x| by j*pi/4 (j even, pi/4 split in three parts), evaluate
// the cosine and sine polynomials on the remainder, pick per octant and fix the signs.
SinCos sincos(float x) {
  u32 sign_sin = to_bits(x) & 0x80000000u;
  x = from_bits(to_bits(x) & 0x7FFFFFFFu);
  float y = x * kFourOverPi;
  std::int32_t j = cvtt(y);
  j = static_cast<std::int32_t>((static_cast<u32>(j) + 1u) & ~1u);  // j = (j + 1) & ~1
  y = static_cast<float>(j);
  const u32 ju = static_cast<u32>(j);
  const u32 swap_sign_sin = (ju & 4u) << 29;
  const u32 poly_mask = mask_of((ju & 2u) == 0u);
  x = std::fma(y, kMinusDP1, x);                                 // x = ((x - y DP1) - y DP2) - y DP3
  x = std::fma(y, kMinusDP2, x);
  x = std::fma(y, kMinusDP3, x);
  const u32 sign_cos = (~(ju - 2u) & 4u) << 29;                  // andnot(j - 2, 4) << 29
  sign_sin ^= swap_sign_sin;

  const float z = x * x;
  float yc = std::fma(kCosP0, z, kCosP1);                        // cosine polynomial
  yc = std::fma(yc, z, kCosP2);
  yc = yc * z;
  yc = std::fma(yc, z, -(z * 0.5f));                             // y = y*z; y = y - z*0.5
  yc = yc + 1.0f;

  float ys = std::fma(kSinP0, z, kSinP1);                        // sine polynomial
  ys = std::fma(ys, z, kSinP2);
  ys = ys * z;
  ys = std::fma(ys, x, x);                                       // y = y*x; y = y + x

  const float ysin2 = from_bits(poly_mask & to_bits(ys));         // _mm256_and_ps
  const float ysin1 = from_bits(~poly_mask & to_bits(yc));        // _mm256_andnot_ps
  ys = ys - ysin2;
  yc = yc - ysin1;
  const float s = ysin1 + ysin2;
  const float c = yc + ys;
  return {from_bits(to_bits(s) ^ sign_sin), from_bits(to_bits(c) ^ sign_cos)};
}

}  // namespace vl::torch_rng::avx_mathfun
