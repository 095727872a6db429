#pragma once
// IEEE 754 binary16 ("half", NumPy's float16, ONNX's FLOAT16) <-> double and float.
//
// Layout: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits. Unit round-off u = 2^-11
// (11 significant bits), largest finite 65504, smallest normal 2^-14, smallest subnormal 2^-24.
//
// Why by hand-ish: no Debian C++ package gives a float16 type (Eigen's Eigen::half would pull
// a whole library in for two functions, and C++23's std::float16_t is not in GCC 12's library).
// GCC 12 does support the `_Float16` extension type on x86-64 (with SSE2: conversions are done
// in software by libgcc, rounding to nearest, ties to even, and handle NaN, infinities and
// subnormals), so the narrowing conversion uses it; the widening one is exact and written out
// (it is also what we check _Float16 against). verify/test_numeric_float16.cpp checks all
// 65536 bit patterns and the rounding of the values between them.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#if !defined(__FLT16_MAX__)
#error "this compiler has no _Float16 (GCC >= 12 on x86-64 has it); vl::double_to_half needs it"
#endif

namespace vl {

/// The value of the half-precision number with bit pattern `h`. Exact (every half is a double).
inline double half_to_double(std::uint16_t h) {
  const double sign = (h >> 15) ? -1.0 : 1.0;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);  // zero or subnormal
  if (exponent == 31) {
    return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  }
  return sign * std::ldexp(1024 + mantissa, exponent - 25);  // (1 + m/1024) · 2^(e−15)
}

/// The bit pattern of `x` rounded to the nearest half, ties to even (IEEE 754's default);
/// overflow gives ±inf, NaN a quiet NaN. Rounds once, straight from double (no float step).
inline std::uint16_t double_to_half(double x) {
  const _Float16 h = static_cast<_Float16>(x);
  std::uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}

/// `x` rounded to the nearest half (ties to even), as a double: what storing a value in a
/// float16 tensor does to it.
inline double round_to_half(double x) { return half_to_double(double_to_half(x)); }

/// ONNX's and NumPy's float16 unit round-off: 2^-11 (half the distance from 1 to the next half).
inline constexpr double kHalfUnitRoundoff = 1.0 / 2048;

}  // namespace vl
