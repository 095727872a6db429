#pragma once
// Element-wise closeness of two arrays, as numpy.testing.assert_allclose judges it:
//   |actual − expected| ≤ atol + rtol · |expected|   for every element,
// NaN matching NaN and an infinity matching the same infinity.
#include <cstddef>
#include <string>
#include <vector>

namespace vl {

struct Closeness {
  bool passed = true;          ///< every element within tolerance
  std::size_t mismatches = 0;  ///< elements out of tolerance
  double max_abs_error = 0;    ///< max |a − e| over elements that are both finite (or mismatched: inf)
  double max_rel_error = 0;    ///< max |a − e| / |e| over finite elements with e ≠ 0
  std::size_t max_abs_index = 0;  ///< flat (C-order) index of max_abs_error
  std::size_t worst = 0;          ///< flat index of the element furthest out of tolerance: the
                                  ///< largest |a − e| − (atol + rtol·|e|)
};

/// Compares `actual` with `expected` (same length, C order). Empty arrays are close.
Closeness allclose(const std::vector<double>& actual, const std::vector<double>& expected, double rtol, double atol);

/// A flat C-order index as a multi-index: "(0, 1, 3)"; "()" for a 0-d shape.
std::string unravel_index(std::size_t flat, const std::vector<std::size_t>& shape);

/// A shape as Python prints it: "(2, 3)", "(5,)", "()".
std::string shape_string(const std::vector<std::size_t>& shape);

}  // namespace vl
