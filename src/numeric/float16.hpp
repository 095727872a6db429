#pragma once
// IEEE 754 binary16 ("half", NumPy's float16, ONNX's FLOAT16) <-> double and float.
//
// Layout: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits. Unit round-off u = 2^-11
// (11 significant bits), largest finite 65504, smallest normal 2^-14, smallest subnormal 2^-24.
//
// Why written here: no Debian C++ package gives a float16 type (Eigen's Eigen::half would pull
// a whole library in for two functions, and C++23's std::float16_t is not in GCC 12's library).
// GCC 12 supports the `_Float16` extension type on x86-64 (with SSE2: conversions done in
// software by libgcc, rounding to nearest, ties to even, handling NaN, infinities and
// subnormals), so double_to_half uses it there. clang 14 (the fuzz build) has no _Float16 on
// x86-64, so double_to_half_by_hand, the same rounding written out on the bits, stands in for
// it where the type is missing. verify/test_numeric_float16.cpp checks all 65536 bit
// patterns, the rounding between every pair of halves, and the two conversions against each
// other.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

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

/// double_to_half on the bits: the 53-bit significand cut to 11 (fewer for a subnormal half),
/// rounded to nearest, ties to even; a carry may move it to the next binade or to infinity.
inline std::uint16_t double_to_half_by_hand(double x) {
  const std::uint64_t b = std::bit_cast<std::uint64_t>(x);
  const auto sign = static_cast<std::uint16_t>((b >> 48) & 0x8000);
  const int biased = static_cast<int>((b >> 52) & 0x7ff);
  const std::uint64_t mantissa = b & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0x7ff) return static_cast<std::uint16_t>(sign | (mantissa ? 0x7e00 : 0x7c00));  // NaN (quiet), ±inf
  if (biased == 0) return sign;  // zero or a double subnormal: far below half's smallest subnormal
  const int e = biased - 1023;   // x = 1.m · 2^e
  if (e > 15) return static_cast<std::uint16_t>(sign | 0x7c00);
  const std::uint64_t significand = mantissa | (std::uint64_t{1} << 52);
  const int shift = e >= -14 ? 42 : 42 + (-14 - e);  // bits dropped: 52 − 10, one more per binade below 2^-14
  if (shift >= 54) return sign;  // below 2^-25: rounds to ±0
  std::uint64_t kept = significand >> shift;
  const std::uint64_t rest = significand & ((std::uint64_t{1} << shift) - 1), half = std::uint64_t{1} << (shift - 1);
  if (rest > half || (rest == half && (kept & 1))) ++kept;
  if (e < -14) return static_cast<std::uint16_t>(sign | kept);  // subnormal (kept = 0x400: the smallest normal)
  const std::uint64_t bits = (static_cast<std::uint64_t>(e + 15) << 10) + (kept - 0x400);  // a carry bumps the exponent
  return static_cast<std::uint16_t>(sign | (bits >= 0x7c00 ? 0x7c00 : bits));
}

/// The bit pattern of `x` rounded to the nearest half, ties to even (IEEE 754's default);
/// overflow gives ±inf, NaN a quiet NaN. Rounds once, straight from double (no float step).
inline std::uint16_t double_to_half(double x) {
#if defined(__FLT16_MAX__)  // GCC ≥ 12 on x86-64
  const _Float16 h = static_cast<_Float16>(x);
  std::uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
#else
  return double_to_half_by_hand(x);
#endif
}

/// `x` rounded to the nearest half (ties to even), as a double: what storing a value in a
/// float16 tensor does to it.
inline double round_to_half(double x) { return half_to_double(double_to_half(x)); }

/// ONNX's and NumPy's float16 unit round-off: 2^-11 (half the distance from 1 to the next half).
inline constexpr double kHalfUnitRoundoff = 1.0 / 2048;

}  // namespace vl
