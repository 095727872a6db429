// The formats a claim is judged in (see precision.hpp).
#include "numeric/precision.hpp"

#include <bit>
#include <cfenv>
#include <cmath>
#include <limits>

#include "numeric/float16.hpp"

namespace vl {

namespace {

// Round to `bits` significant bits with spacing never below 2^min_spacing_exponent (the format's
// subnormals) and magnitude at most `largest` (beyond: ±∞), ties to even: x = m·2^e with m in
// [0.5, 1), and m·2^bits rounded to an integer is the significand. Written here because no C++
// library type is bfloat16 (GCC 12 has no __bf16 arithmetic conversions on x86-64's baseline).
double round_significand(double x, int bits, int min_spacing_exponent, double largest) {
  if (!std::isfinite(x) || x == 0) return x;
  int e = 0;
  std::frexp(x, &e);  // |x| in [2^(e−1), 2^e)
  const int spacing = std::max(e - bits, min_spacing_exponent);
  const double r = std::ldexp(std::nearbyint(std::ldexp(x, -spacing)), spacing);  // nearbyint: ties to even (FE_TONEAREST)
  return std::fabs(r) > largest ? std::copysign(std::numeric_limits<double>::infinity(), x) : r;
}

}  // namespace

std::string to_string(Precision p) {
  switch (p) {
    case Precision::float64: return "float64";
    case Precision::float32: return "float32";
    case Precision::bfloat16: return "bfloat16";
    case Precision::float16: return "float16";
  }
  return "?";
}

std::optional<Precision> precision_named(const std::string& name) {
  for (Precision p : kAllPrecisions)
    if (to_string(p) == name) return p;
  return std::nullopt;
}

double unit_roundoff(Precision p) {
  switch (p) {
    case Precision::float64: return std::ldexp(1.0, -53);
    case Precision::float32: return std::ldexp(1.0, -24);
    case Precision::bfloat16: return std::ldexp(1.0, -8);
    case Precision::float16: return std::ldexp(1.0, -11);
  }
  return 1;
}

double working_roundoff(Precision p) {
  if (p == Precision::float64 || p == Precision::float32) return unit_roundoff(p);
  const double u = unit_roundoff(p), u32 = unit_roundoff(Precision::float32);
  return u + u32 + u * u32;
}

std::uint16_t bfloat16_bits(double x) {
  const double r = round_to(Precision::bfloat16, x);  // a bfloat16 number, so exactly a float
  if (std::isnan(r)) return std::signbit(r) ? 0xffc0 : 0x7fc0;  // a quiet NaN
  return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(r)) >> 16);
}

double bfloat16_value(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

double round_to(Precision p, double x) {
  switch (p) {
    case Precision::float64: return x;
    case Precision::float32: return static_cast<double>(static_cast<float>(x));  // one IEEE rounding, to nearest even
    case Precision::bfloat16:  // largest: (2 − 2⁻⁷)·2¹²⁷; a value past it by less than half a step rounds to it
      return round_significand(x, 8, -133, std::ldexp(2.0 - std::ldexp(1.0, -7), 127));
    case Precision::float16: return round_to_half(x);
  }
  return x;
}

}  // namespace vl
