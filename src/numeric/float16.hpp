#pragma once
// IEEE 754 binary16 ("half", NumPy's float16, ONNX's FLOAT16) to double.
#include <cmath>
#include <cstdint>
#include <limits>

namespace vl {

/// The value of the half-precision number with bit pattern `h`: 1 sign bit, 5 exponent bits
/// (bias 15), 10 mantissa bits. Exact (every half is a double).
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

}  // namespace vl
