// The formats a claim is judged in (numeric/precision.hpp): names, unit round-off, and rounding
// once to nearest, ties to even. bfloat16 is checked against its definition on float32's bits
// (the top 16 bits of a float32, rounded to nearest even on the 16 dropped), for values that are
// floats (where rounding twice cannot differ from once), and at its edges by hand.
#include <boost/test/unit_test.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "numeric/float16.hpp"
#include "numeric/precision.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_numeric_precision).
BOOST_AUTO_TEST_SUITE(test_numeric_precision)

namespace {

// bfloat16 from a float's bits: keep the top 16, round to nearest even on the low 16.
double bfloat16_of_float(float f) {
  std::uint32_t b = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t low = b & 0xffff, top = b >> 16;
  std::uint32_t kept = top;
  if (low > 0x8000 || (low == 0x8000 && (top & 1))) ++kept;
  return double(std::bit_cast<float>(kept << 16));
}

}  // namespace

BOOST_AUTO_TEST_CASE(names_and_unit_roundoff) {
  for (vl::Precision p : vl::kAllPrecisions) BOOST_TEST((vl::precision_named(vl::to_string(p)) == p));
  BOOST_TEST(!vl::precision_named("float8"));
  BOOST_TEST(vl::unit_roundoff(vl::Precision::float64) == std::ldexp(1.0, -53));
  BOOST_TEST(vl::unit_roundoff(vl::Precision::float32) == std::ldexp(1.0, -24));
  BOOST_TEST(vl::unit_roundoff(vl::Precision::bfloat16) == std::ldexp(1.0, -8));
  BOOST_TEST(vl::unit_roundoff(vl::Precision::float16) == std::ldexp(1.0, -11));
}

BOOST_AUTO_TEST_CASE(float32_and_float16_round_once) {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> mantissa(-1, 1);
  for (int i = 0; i < 100000; ++i) {
    const double x = std::ldexp(mantissa(gen), int(gen() % 60) - 30);
    BOOST_TEST(vl::round_to(vl::Precision::float32, x) == double(float(x)));
    BOOST_TEST(vl::round_to(vl::Precision::float16, x) == vl::round_to_half(x));
    BOOST_TEST(vl::round_to(vl::Precision::float64, x) == x);
  }
  // A double just above the midpoint of two halves whose float is the midpoint itself: rounding
  // twice (double → float → half) goes to the even neighbour; once, up.
  const double mid = 1 + std::ldexp(1.0, -11), above = mid + std::ldexp(1.0, -40);
  BOOST_TEST(vl::round_to(vl::Precision::float16, above) == 1 + std::ldexp(1.0, -10));
  BOOST_TEST(vl::round_to_half(double(float(above))) == 1.0);
}

BOOST_AUTO_TEST_CASE(bfloat16_matches_its_definition_on_floats) {
  std::mt19937 gen(11);
  for (int i = 0; i < 1000000; ++i) {
    const float f = std::bit_cast<float>(std::uint32_t(gen()));
    if (!std::isfinite(f) || std::fabs(f) > 3.3e38f) continue;  // past bfloat16's largest: checked below
    const double got = vl::round_to(vl::Precision::bfloat16, double(f)), want = bfloat16_of_float(f);
    BOOST_TEST(got == want, "float bits " << std::bit_cast<std::uint32_t>(f) << ": " << got << " vs " << want);
  }
}

BOOST_AUTO_TEST_CASE(bfloat16_edges) {
  const double largest = std::ldexp(255.0, 120), step = std::ldexp(1.0, 120);  // (2 − 2⁻⁷)·2¹²⁷, its spacing
  BOOST_TEST(vl::round_to(vl::Precision::bfloat16, largest) == largest);
  BOOST_TEST(vl::round_to(vl::Precision::bfloat16, largest + 0.49 * step) == largest);
  BOOST_TEST(std::isinf(vl::round_to(vl::Precision::bfloat16, largest + 0.5 * step)));  // tie: to even, 2¹²⁸
  BOOST_TEST(vl::round_to(vl::Precision::bfloat16, std::ldexp(1.0, -133)) == std::ldexp(1.0, -133));  // smallest subnormal
  BOOST_TEST(vl::round_to(vl::Precision::bfloat16, std::ldexp(1.0, -135)) == 0.0);
  BOOST_TEST(vl::round_to(vl::Precision::bfloat16, 1 + std::ldexp(1.0, -8)) == 1.0);               // tie: to even
  BOOST_TEST(vl::round_to(vl::Precision::bfloat16, 1 + 3 * std::ldexp(1.0, -8)) == 1 + std::ldexp(1.0, -6));
  BOOST_TEST(std::isnan(vl::round_to(vl::Precision::bfloat16, std::nan(""))));
  BOOST_TEST(vl::round_to(vl::Precision::bfloat16, -0.0) == 0.0);
  BOOST_TEST(std::signbit(vl::round_to(vl::Precision::bfloat16, -0.0)));
}

BOOST_AUTO_TEST_SUITE_END()
