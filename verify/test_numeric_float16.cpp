#include <boost/test/unit_test.hpp>
// vl::half_to_double / double_to_half (numeric/float16.hpp): every one of the 65536 bit
// patterns, round-to-nearest-even at and between the halves, NaN, infinities, subnormals.
#include <cmath>
#include <cstdint>
#include <limits>

#include "numeric/float16.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_numeric_float16).
BOOST_AUTO_TEST_SUITE(test_numeric_float16)

namespace {
const double inf = std::numeric_limits<double>::infinity();
bool is_nan_bits(std::uint16_t h) { return ((h >> 10) & 0x1f) == 31 && (h & 0x3ff) != 0; }
}  // namespace

BOOST_AUTO_TEST_CASE(all_65536_bit_patterns_round_trip) {
  std::size_t nans = 0, mismatches = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const double x = vl::half_to_double(h);
    if (is_nan_bits(h)) {
      ++nans;
      if (!std::isnan(x) || !is_nan_bits(vl::double_to_half(x))) ++mismatches;
      continue;
    }
    if (vl::double_to_half(x) != h) ++mismatches;  // ±0 keep their sign
  }
  BOOST_TEST(nans == 2u * 1023u);  // exponent 31, mantissa ≠ 0, either sign
  BOOST_TEST(mismatches == 0u);
}

BOOST_AUTO_TEST_CASE(known_values) {
  BOOST_TEST(vl::half_to_double(0x3c00) == 1.0);
  BOOST_TEST(vl::half_to_double(0xc000) == -2.0);
  BOOST_TEST(vl::half_to_double(0x7bff) == 65504.0);
  BOOST_TEST(vl::half_to_double(0x0400) == std::ldexp(1.0, -14));  // smallest normal
  BOOST_TEST(vl::half_to_double(0x0001) == std::ldexp(1.0, -24));  // smallest subnormal
  BOOST_TEST(vl::half_to_double(0x03ff) == std::ldexp(1023.0, -24));  // largest subnormal
  BOOST_TEST(vl::half_to_double(0x7c00) == inf);
  BOOST_TEST(vl::half_to_double(0xfc00) == -inf);
  BOOST_TEST(std::signbit(vl::half_to_double(0x8000)));
  BOOST_TEST(vl::double_to_half(0.1) == 0x2e66);  // NumPy: np.float16(0.1).view(np.uint16) = 0x2e66
  BOOST_TEST(vl::double_to_half(1.0 / 3) == 0x3555);
  BOOST_TEST(vl::double_to_half(-0.0) == 0x8000);
  BOOST_TEST(vl::double_to_half(inf) == 0x7c00);
  BOOST_TEST(vl::double_to_half(-inf) == 0xfc00);
  BOOST_TEST(is_nan_bits(vl::double_to_half(std::numeric_limits<double>::quiet_NaN())));
  BOOST_TEST(vl::kHalfUnitRoundoff == std::ldexp(1.0, -11));
}

BOOST_AUTO_TEST_CASE(ties_go_to_even_and_overflow_to_inf) {
  // Between consecutive halves a and b: below the midpoint → a, above → b, at it → the even one.
  std::size_t wrong = 0;
  for (std::uint32_t b = 0; b < 0x7bff; ++b) {  // positive finite halves and their successors
    const auto h = static_cast<std::uint16_t>(b);
    const double a = vl::half_to_double(h), next = vl::half_to_double(static_cast<std::uint16_t>(h + 1));
    const double mid = (a + next) / 2;  // exact in double
    const std::uint16_t even = (h & 1) ? static_cast<std::uint16_t>(h + 1) : h;
    if (vl::double_to_half(mid) != even) ++wrong;
    if (vl::double_to_half(std::nextafter(mid, 0.0)) != h) ++wrong;
    if (vl::double_to_half(std::nextafter(mid, inf)) != h + 1) ++wrong;
    if (vl::double_to_half(-mid) != (even | 0x8000)) ++wrong;
  }
  BOOST_TEST(wrong == 0u);
  // 65504 + half an ulp (16) is the tie between 65504 and the next (65536 = inf): even → inf.
  BOOST_TEST(vl::double_to_half(65519.0) == 0x7bff);
  BOOST_TEST(vl::double_to_half(65520.0) == 0x7c00);
  BOOST_TEST(vl::double_to_half(1e300) == 0x7c00);
  // Half of the smallest subnormal rounds to +0 (tie, even), a bit more to 2^-24.
  BOOST_TEST(vl::double_to_half(std::ldexp(1.0, -25)) == 0x0000);
  BOOST_TEST(vl::double_to_half(std::ldexp(1.5, -25)) == 0x0001);
  BOOST_TEST(vl::round_to_half(1.0 + std::ldexp(1.0, -11)) == 1.0);  // tie → even (1.0)
  BOOST_TEST(vl::round_to_half(1.0 + std::ldexp(3.0, -11)) == 1.0 + std::ldexp(1.0, -9));
}

BOOST_AUTO_TEST_CASE(the_conversion_by_hand_agrees_with_Float16) {
  // double_to_half_by_hand (the stand-in where _Float16 is missing) against double_to_half on
  // every half, every midpoint between neighbours and the doubles either side of it, both
  // signs, plus overflow, underflow and NaN.
  std::size_t differ = 0, tried = 0;
  auto same = [&](double x) {
    ++tried;
    const std::uint16_t a = vl::double_to_half_by_hand(x), b = vl::double_to_half(x);
    if (a != b && !(is_nan_bits(a) && is_nan_bits(b))) ++differ;
  };
  for (std::uint32_t b = 0; b < 0x7c00; ++b) {
    const double a = vl::half_to_double(static_cast<std::uint16_t>(b));
    const double next = vl::half_to_double(static_cast<std::uint16_t>(b + 1));
    const double mid = (a + next) / 2;
    for (double x : {a, mid, std::nextafter(mid, 0.0), std::nextafter(mid, inf)}) {
      same(x);
      same(-x);
    }
  }
  for (double x : {65519.0, 65520.0, 65536.0, 1e300, inf, -inf, std::ldexp(1.0, -25), std::ldexp(1.0, -26), 1e-300,
                   std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::quiet_NaN()})
    same(x);
  BOOST_TEST(tried > 250000u);
  BOOST_TEST(differ == 0u);
  BOOST_TEST(vl::double_to_half_by_hand(0.1) == 0x2e66);
}

BOOST_AUTO_TEST_CASE(relative_rounding_error_is_at_most_u) {
  // |round(x) − x| ≤ u·|x| for x in the normal range: the bound the ONNX float16 tolerances use.
  double worst = 0;
  for (double x = std::ldexp(1.0, -14); x < 60000; x *= 1.0009765) {
    worst = std::max(worst, std::abs(vl::round_to_half(x) - x) / x);
  }
  BOOST_TEST(worst <= vl::kHalfUnitRoundoff);
  BOOST_TEST(worst > 0.9 * vl::kHalfUnitRoundoff);
}

BOOST_AUTO_TEST_SUITE_END()  // test_numeric_float16
