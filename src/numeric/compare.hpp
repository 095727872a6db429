#pragma once
// How far apart two numbers, or two arrays, are: the one place the suite compares numbers for a
// verdict (the checks' measurements, the goldens, `lessons compare`, the ONNX cases).
//
// The one NaN rule. Two values that are the same (a NaN with a NaN, an infinity with the same
// infinity) are 0 apart; a NaN against anything else, or an infinity against anything else, is
// infinitely far. So a NaN never slips under a tolerance, and it survives a running maximum
// (std::max(acc, NaN) would return acc): every difference here is a number, never NaN. This is
// numpy.testing.assert_allclose's rule (equal_nan=True), which ONNX's test runner uses too.
// (numeric/numpy_compare.hpp is not a comparison of the suite's: it reproduces NumPy's own
// np.allclose and np.abs(a − b).max() as a lesson's listing prints them, NaN included.)
//
//   difference(a, e)        |a − e| under the rule above
//   max_abs_diff(A, E)      max over elements of difference; ∞ when the shapes differ
//   closeness(A, E, r, a)   every |a − e| ≤ atol + rtol·|e| (assert_allclose), with where it fails
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace vl {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// |a − e|, 0 for the same NaN-or-infinity, ∞ for a NaN or an infinity against anything else.
inline double difference(double a, double e) {
  if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e) ? 0.0 : kInfinity;
  if (std::isinf(a) || std::isinf(e)) return a == e ? 0.0 : kInfinity;
  return std::fabs(a - e);
}

/// max(worst, x), with a NaN x making it ∞ (for a running maximum of measured values).
inline double worse(double worst, double x) { return std::isnan(x) ? kInfinity : std::max(worst, x); }

/// max over elements of difference(a, b) for two arrays (xtensor expressions) of one shape; ∞
/// when the shapes differ; 0 for two empty arrays.
template <class A, class B>
double max_abs_diff(const A& a, const B& b) {
  if (a.dimension() != b.dimension() || !std::equal(a.shape().begin(), a.shape().end(), b.shape().begin())) return kInfinity;
  double worst = 0;
  auto ib = b.begin();
  for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib) worst = std::max(worst, difference(double(*ia), double(*ib)));
  return worst;
}

struct Closeness {
  bool passed = true;          ///< every element within tolerance
  std::size_t mismatches = 0;  ///< elements out of tolerance
  double max_abs_error = 0;    ///< max |a − e| over elements that are both finite (or mismatched: inf)
  double max_rel_error = 0;    ///< max |a − e| / |e| over finite elements with e ≠ 0
  std::size_t max_abs_index = 0;  ///< flat (C-order) index of max_abs_error
  std::size_t worst = 0;          ///< flat index of the element furthest out of tolerance: the
                                  ///< largest |a − e| − (atol + rtol·|e|)
};

/// Compares `actual` with `expected` (same length, C order) as numpy.testing.assert_allclose:
/// |actual − expected| ≤ atol + rtol · |expected| for every element, under the NaN rule above.
/// Empty arrays are close.
Closeness closeness(const std::vector<double>& actual, const std::vector<double>& expected, double rtol, double atol);

/// A flat C-order index as a multi-index: "(0, 1, 3)"; "()" for a 0-d shape.
std::string unravel_index(std::size_t flat, const std::vector<std::size_t>& shape);

/// A shape as Python prints it: "(2, 3)", "(5,)", "()".
std::string shape_string(const std::vector<std::size_t>& shape);

}  // namespace vl
