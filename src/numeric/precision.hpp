#pragma once
// The floating-point formats a claim can be judged in, their unit round-off u and the rounding
// of a double to each (IEEE 754's round to nearest, ties to even, once, straight from double).
//
//   precision   significand bits   u        largest finite   smallest subnormal
//   float64     53                 2⁻⁵³     1.8e308          2⁻¹⁰⁷⁴
//   float32     24                 2⁻²⁴     3.4e38           2⁻¹⁴⁹
//   bfloat16     8                 2⁻⁸      3.4e38           2⁻¹³³
//   float16     11                 2⁻¹¹     65504            2⁻²⁴
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vl {

enum class Precision { float64, float32, bfloat16, float16 };

inline constexpr Precision kAllPrecisions[] = {Precision::float64, Precision::float32, Precision::bfloat16, Precision::float16};

/// "float64", "float32", "bfloat16", "float16": the names of the specs, the CLI and vl-candidate/1.
std::string to_string(Precision p);
/// The precision of that name, or nothing.
std::optional<Precision> precision_named(const std::string& name);

/// The unit round-off u: half the distance from 1 to the next number of the format.
double unit_roundoff(Precision p);

/// The u an error bound uses for an implementation judged in p. float64 and float32 compute in
/// p: u of p. bfloat16 and float16 are storage formats: an implementation computes in float32
/// (or in p itself) and rounds what it stores to p, so a result may be rounded twice, float32
/// then p: within u_p + u₃₂ + u_p·u₃₂ of exact. (One computing wholly in p is within u_p.)
double working_roundoff(Precision p);

/// The bits of `x` rounded to bfloat16 (ties to even): the upper half of the float32 that holds
/// the same number. vl-candidate/1 carries bfloat16 so, as a uint16 array (NumPy has no bfloat16).
std::uint16_t bfloat16_bits(double x);
/// The value of the bfloat16 with bits `b` (exact as a float and a double).
double bfloat16_value(std::uint16_t b);

/// `x` rounded to the nearest number of the format (ties to even), as a double: what storing it
/// in a tensor of that dtype does. Overflow gives ±∞; NaN stays NaN.
double round_to(Precision p, double x);

/// Every element of a container of doubles (an xtensor, a vector) rounded so: an input as a
/// backend computing in p holds it.
template <class Doubles>
Doubles rounded_to(Precision p, Doubles x) {
  for (double& e : x) e = round_to(p, e);
  return x;
}

}  // namespace vl
