
// closeness (src/numeric/compare.hpp) as numpy.testing.assert_allclose defines it: the test
// |actual − expected| ≤ atol + rtol·|expected| is not symmetric — the relative part scales with
// the expected value only — it holds at equality, NaN matches only NaN and an infinity only the
// same infinity. The ONNX cases' outputs are judged by it. Every number here is exact in binary,
// so each boundary is where the arithmetic puts it.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <xtensor/xarray.hpp>

#include "numeric/compare.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_numeric_compare).
BOOST_AUTO_TEST_SUITE(test_numeric_compare)

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

BOOST_AUTO_TEST_CASE(the_relative_part_scales_with_the_expected_value_only) {
  // |1.5 − 1| = 0.5: against expected 1 the tolerance is 0.375·1 = 0.375 (fails); against
  // expected 1.5 it is 0.375·1.5 = 0.5625 (passes). Swapping the roles swaps the verdicts.
  BOOST_TEST(!vl::closeness({1.5}, {1.0}, 0.375, 0.0).passed);
  BOOST_TEST(vl::closeness({1.0}, {1.5}, 0.375, 0.0).passed);
}

BOOST_AUTO_TEST_CASE(equality_with_the_tolerance_passes_and_one_step_beyond_fails) {
  // atol + rtol·|e| = 0.25 + 0.25·2 = 0.75 = |2.75 − 2|.
  BOOST_TEST(vl::closeness({2.75}, {2.0}, 0.25, 0.25).passed);
  BOOST_TEST(vl::closeness({1.25}, {2.0}, 0.25, 0.25).passed);
  BOOST_TEST(!vl::closeness({std::nextafter(2.75, kInf)}, {2.0}, 0.25, 0.25).passed);
  BOOST_TEST(!vl::closeness({std::nextafter(1.25, -kInf)}, {2.0}, 0.25, 0.25).passed);
  // atol alone, and rtol alone.
  BOOST_TEST(vl::closeness({0.5}, {0.0}, 0.0, 0.5).passed);
  BOOST_TEST(!vl::closeness({0.5}, {0.0}, 1.0, 0.25).passed);  // rtol·|0| adds nothing
}

BOOST_AUTO_TEST_CASE(nan_and_infinities_match_only_themselves) {
  BOOST_TEST(vl::closeness({kNaN}, {kNaN}, 0.0, 0.0).passed);
  BOOST_TEST(!vl::closeness({kNaN}, {1.0}, 1.0, 1.0).passed);
  BOOST_TEST(!vl::closeness({1.0}, {kNaN}, 1.0, 1.0).passed);
  BOOST_TEST(vl::closeness({kInf, -kInf}, {kInf, -kInf}, 0.0, 0.0).passed);
  BOOST_TEST(!vl::closeness({kInf}, {-kInf}, 1.0, 1.0).passed);
  BOOST_TEST(!vl::closeness({1e308}, {kInf}, 1.0, 1.0).passed);
}

BOOST_AUTO_TEST_CASE(counts_and_indices_name_the_right_elements) {
  // Element 1 has the largest |a − e| (3); element 2 is furthest out of tolerance
  // (|a − e| − (atol + rtol·|e|): 3 − (0 + 0.5·8) < 0 for element 1, 2 − 0.5·1 = 1.5 for element 2).
  const vl::Closeness c = vl::closeness({1.0, 11.0, 3.0, 4.0}, {1.0, 8.0, 1.0, 4.5}, 0.5, 0.0);
  BOOST_TEST(!c.passed);
  BOOST_TEST(c.mismatches == 1u);
  BOOST_TEST(c.max_abs_error == 3.0);
  BOOST_TEST(c.max_abs_index == 1u);
  BOOST_TEST(c.worst == 2u);
  BOOST_TEST(c.max_rel_error == 2.0);  // |3 − 1| / 1
  BOOST_TEST(vl::closeness({}, {}, 0.0, 0.0).passed);
  BOOST_CHECK_THROW(vl::closeness({1.0}, {1.0, 2.0}, 0.0, 0.0), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(indices_and_shapes_print_as_python_does) {
  BOOST_TEST(vl::unravel_index(13, {2, 3, 4}) == "(1, 0, 1)");
  BOOST_TEST(vl::unravel_index(0, {}) == "()");
  BOOST_TEST(vl::shape_string({5}) == "(5,)");
  BOOST_TEST(vl::shape_string({2, 3}) == "(2, 3)");
  BOOST_TEST(vl::shape_string({}) == "()");
}

BOOST_AUTO_TEST_CASE(input_dims_print_without_the_one_tuple_comma) {
  BOOST_TEST(vl::dims_string({5}) == "(5)");
  BOOST_TEST(vl::dims_string({2, 3}) == "(2, 3)");
  BOOST_TEST(vl::dims_string({}) == "()");
}

// The measured form of the NaN rule (compare.hpp): a value that is not finite is infinitely far
// from every value, itself included, so a candidate that returns NaN (or ∞) in the same place in
// two runs does not measure 0 between them; a difference is never NaN, and a NaN survives a
// running maximum instead of being dropped by it.
BOOST_AUTO_TEST_CASE(difference_has_one_nan_rule) {
  BOOST_TEST(vl::difference(1.0, 1.25) == 0.25);
  BOOST_TEST(vl::difference(kNaN, kNaN) == kInf);
  BOOST_TEST(vl::difference(kNaN, 1.0) == kInf);
  BOOST_TEST(vl::difference(1.0, kNaN) == kInf);
  BOOST_TEST(vl::difference(kInf, kInf) == kInf);
  BOOST_TEST(vl::difference(kInf, -kInf) == kInf);
  BOOST_TEST(vl::difference(kInf, 1e308) == kInf);
  BOOST_TEST(vl::worse(0.5, kNaN) == kInf);
  BOOST_TEST(vl::worse(0.5, 0.25) == 0.5);
}

BOOST_AUTO_TEST_CASE(max_abs_diff_follows_the_rule_and_refuses_other_shapes) {
  const xt::xarray<double> a = {1.0, kNaN, kInf, 4.0};
  const xt::xarray<double> b = {1.5, kNaN, kInf, 4.0};
  BOOST_TEST(vl::max_abs_diff(a, b) == kInf);  // the same NaN and ∞ in both: not a match, as measured
  BOOST_TEST(vl::max_abs_diff(xt::xarray<double>{1.0, 4.0}, xt::xarray<double>{1.5, 4.0}) == 0.5);
  const xt::xarray<double> c = {1.0, kNaN, 3.0};
  BOOST_TEST(vl::max_abs_diff(c, xt::xarray<double>{1.0, 2.0, 3.0}) == kInf);  // the NaN at index 1 is not dropped
  BOOST_TEST(vl::max_abs_diff(a, xt::xarray<double>{1.0, 2.0}) == kInf);
  BOOST_TEST(vl::max_abs_diff(xt::xarray<double>::from_shape({0}), xt::xarray<double>::from_shape({0})) == 0.0);
  BOOST_TEST(vl::all_finite(xt::xarray<double>{1.0, -2.0, 1e308}));
  BOOST_TEST(!vl::all_finite(xt::xarray<double>{1.0, kNaN}));
  BOOST_TEST(!vl::all_finite(xt::xarray<double>{-kInf, 1.0}));
  BOOST_TEST(!vl::all_finite(xt::xarray<float>{1.0f, std::numeric_limits<float>::infinity()}));
  // assert_allclose's form: an expected NaN or ∞ is matched by the same value.
  BOOST_TEST(vl::closeness({1.0, kNaN, kInf, 4.0}, {1.5, kNaN, kInf, 4.0}, 0.0, 0.5).passed);
  BOOST_TEST(!vl::closeness({1.0, kNaN, kInf, 4.0}, {1.0, 2.0, kInf, 4.0}, 0.0, 1e300).passed);
}

BOOST_AUTO_TEST_SUITE_END()  // test_numeric_compare
