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

BOOST_AUTO_TEST_CASE(bfloat16_bits_are_the_top_half_of_the_float) {
  std::mt19937 gen(5);
  for (int i = 0; i < 200000; ++i) {
    const float f = std::bit_cast<float>(std::uint32_t(gen()));
    if (!std::isfinite(f) || std::fabs(f) > 3.3e38f) continue;
    const std::uint16_t b = vl::bfloat16_bits(double(f));
    BOOST_TEST(vl::bfloat16_value(b) == bfloat16_of_float(f));
    BOOST_TEST(vl::bfloat16_bits(vl::bfloat16_value(b)) == b);  // a bfloat16 number goes through unchanged
  }
  BOOST_TEST(vl::bfloat16_bits(1.0) == 0x3f80);
  BOOST_TEST(vl::bfloat16_bits(-2.0) == 0xc000);
  BOOST_TEST(vl::bfloat16_bits(std::numeric_limits<double>::infinity()) == 0x7f80);
  BOOST_TEST(std::isnan(vl::bfloat16_value(vl::bfloat16_bits(std::nan("")))));
}

BOOST_AUTO_TEST_CASE(working_roundoff_covers_rounding_twice) {
  // float64 and float32 compute in themselves; a storage format's value may be a float32 result
  // rounded again: u_p + u32 + u_p·u32, at least the error of any double rounding through float32.
  BOOST_TEST(vl::working_roundoff(vl::Precision::float64) == vl::unit_roundoff(vl::Precision::float64));
  BOOST_TEST(vl::working_roundoff(vl::Precision::float32) == vl::unit_roundoff(vl::Precision::float32));
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> x(0.5, 1);
  for (vl::Precision p : {vl::Precision::bfloat16, vl::Precision::float16}) {
    const double u = vl::working_roundoff(p);
    BOOST_TEST(u > vl::unit_roundoff(p));
    double worst = 0;
    for (int i = 0; i < 100000; ++i) {
      const double e = x(gen), twice = vl::round_to(p, double(float(e)));
      worst = std::max(worst, std::fabs(twice - e) / std::fabs(e));
    }
    BOOST_TEST(worst <= u);
    BOOST_TEST(worst > vl::unit_roundoff(p) * 0.9);  // the draw reaches the rounding's worst case
  }
}

BOOST_AUTO_TEST_SUITE_END()
