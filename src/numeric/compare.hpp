#pragma once
// How far apart two numbers, or two arrays, are: the one place the suite compares numbers for a
// verdict (the checks' measurements, the goldens, `lessons compare`, the ONNX cases).
//
// The NaN rule, in its two forms, both written here and nowhere else:
//
//   A measured difference (difference, max_abs_diff: what a check compares with its tolerance).
//   A value that is not finite, NaN or ±∞, is infinitely far from every value, itself
//   included: an implementation that returns NaN (or ∞) in the same place twice has not computed
//   the same number twice, and a check that compares two of its outputs must not read 0. So a
//   difference is never NaN, never slips under a tolerance, and survives a running maximum
//   (std::max(acc, NaN) would return acc).
//
//   An expected array's own NaN or ∞ (closeness: numpy.testing.assert_allclose, which ONNX's
//   test runner and `lessons compare` use). Expected data may hold NaN or ±∞ on purpose; there a
//   NaN matches a NaN and an infinity the same infinity, as assert_allclose's equal_nan=True,
//   and anything else against them is infinitely far.
//
// (numeric/numpy_compare.hpp is not a comparison of the suite's: it reproduces NumPy's own
// np.allclose and np.abs(a − b).max() as a lesson's listing prints them, NaN included.)
//
//   difference(a, e)        |a − e|; ∞ when either is not finite
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

/// |a − e| of two finite values; ∞ when either is NaN or infinite (the measured form of the rule).
inline double difference(double a, double e) {
  if (!std::isfinite(a) || !std::isfinite(e)) return kInfinity;
  return std::fabs(a - e);
}

/// Whether every element of an array (an xtensor expression) is finite: neither NaN nor ±∞.
template <class A>
bool all_finite(const A& a) {
  return std::all_of(a.begin(), a.end(), [](auto x) { return std::isfinite(double(x)); });
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

/// A shape as the messages about a user's input files print it (`lessons eval`, the ONNX nodes):
/// "(2, 3)", "(5)", "()".
std::string dims_string(const std::vector<std::size_t>& dims);

}  // namespace vl
