#define BOOST_TEST_MODULE numeric_allclose

// allclose (src/numeric/allclose.hpp) as numpy.testing.assert_allclose defines it: the test
// |actual − expected| ≤ atol + rtol·|expected| is not symmetric — the relative part scales with
// the expected value only — it holds at equality, NaN matches only NaN and an infinity only the
// same infinity. The ONNX cases' outputs are judged by it. Every number here is exact in binary,
// so each boundary is where the arithmetic puts it.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "numeric/allclose.hpp"

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

BOOST_AUTO_TEST_CASE(the_relative_part_scales_with_the_expected_value_only) {
  // |1.5 − 1| = 0.5: against expected 1 the tolerance is 0.375·1 = 0.375 (fails); against
  // expected 1.5 it is 0.375·1.5 = 0.5625 (passes). Swapping the roles swaps the verdicts.
  BOOST_TEST(!vl::allclose({1.5}, {1.0}, 0.375, 0.0).passed);
  BOOST_TEST(vl::allclose({1.0}, {1.5}, 0.375, 0.0).passed);
}

BOOST_AUTO_TEST_CASE(equality_with_the_tolerance_passes_and_one_step_beyond_fails) {
  // atol + rtol·|e| = 0.25 + 0.25·2 = 0.75 = |2.75 − 2|.
  BOOST_TEST(vl::allclose({2.75}, {2.0}, 0.25, 0.25).passed);
  BOOST_TEST(vl::allclose({1.25}, {2.0}, 0.25, 0.25).passed);
  BOOST_TEST(!vl::allclose({std::nextafter(2.75, kInf)}, {2.0}, 0.25, 0.25).passed);
  BOOST_TEST(!vl::allclose({std::nextafter(1.25, -kInf)}, {2.0}, 0.25, 0.25).passed);
  // atol alone, and rtol alone.
  BOOST_TEST(vl::allclose({0.5}, {0.0}, 0.0, 0.5).passed);
  BOOST_TEST(!vl::allclose({0.5}, {0.0}, 1.0, 0.25).passed);  // rtol·|0| adds nothing
}

BOOST_AUTO_TEST_CASE(nan_and_infinities_match_only_themselves) {
  BOOST_TEST(vl::allclose({kNaN}, {kNaN}, 0.0, 0.0).passed);
  BOOST_TEST(!vl::allclose({kNaN}, {1.0}, 1.0, 1.0).passed);
  BOOST_TEST(!vl::allclose({1.0}, {kNaN}, 1.0, 1.0).passed);
  BOOST_TEST(vl::allclose({kInf, -kInf}, {kInf, -kInf}, 0.0, 0.0).passed);
  BOOST_TEST(!vl::allclose({kInf}, {-kInf}, 1.0, 1.0).passed);
  BOOST_TEST(!vl::allclose({1e308}, {kInf}, 1.0, 1.0).passed);
}

BOOST_AUTO_TEST_CASE(counts_and_indices_name_the_right_elements) {
  // Element 1 has the largest |a − e| (3); element 2 is furthest out of tolerance
  // (|a − e| − (atol + rtol·|e|): 3 − (0 + 0.5·8) < 0 for element 1, 2 − 0.5·1 = 1.5 for element 2).
  const vl::Closeness c = vl::allclose({1.0, 11.0, 3.0, 4.0}, {1.0, 8.0, 1.0, 4.5}, 0.5, 0.0);
  BOOST_TEST(!c.passed);
  BOOST_TEST(c.mismatches == 1u);
  BOOST_TEST(c.max_abs_error == 3.0);
  BOOST_TEST(c.max_abs_index == 1u);
  BOOST_TEST(c.worst == 2u);
  BOOST_TEST(c.max_rel_error == 2.0);  // |3 − 1| / 1
  BOOST_TEST(vl::allclose({}, {}, 0.0, 0.0).passed);
  BOOST_CHECK_THROW(vl::allclose({1.0}, {1.0, 2.0}, 0.0, 0.0), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(indices_and_shapes_print_as_python_does) {
  BOOST_TEST(vl::unravel_index(13, {2, 3, 4}) == "(1, 0, 1)");
  BOOST_TEST(vl::unravel_index(0, {}) == "()");
  BOOST_TEST(vl::shape_string({5}) == "(5,)");
  BOOST_TEST(vl::shape_string({2, 3}) == "(2, 3)");
  BOOST_TEST(vl::shape_string({}) == "()");
}
