// closeness: see compare.hpp.
#include "numeric/compare.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace vl {

Closeness closeness(const std::vector<double>& actual, const std::vector<double>& expected, double rtol, double atol) {
  if (actual.size() != expected.size()) throw std::invalid_argument("closeness: arrays of different sizes");
  Closeness c;
  double worst_excess = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    double diff, excess;
    bool ok;
    if (!std::isfinite(a) || !std::isfinite(e)) {
      // The expected array's own NaN or ∞ (compare.hpp): NaN only matches NaN, an infinity only
      // the same infinity.
      ok = std::isnan(a) ? std::isnan(e) : a == e;
      diff = ok ? 0.0 : kInfinity;
      excess = diff;
    } else {
      diff = difference(a, e);
      excess = diff - (atol + rtol * std::fabs(e));
      ok = excess <= 0;
      if (e != 0) c.max_rel_error = std::max(c.max_rel_error, diff / std::fabs(e));
    }
    if (!ok) ++c.mismatches;
    if (diff > c.max_abs_error) {
      c.max_abs_error = diff;
      c.max_abs_index = i;
    }
    if (excess > worst_excess) {
      worst_excess = excess;
      c.worst = i;
    }
  }
  c.passed = c.mismatches == 0;
  return c;
}

std::string dims_string(const std::vector<std::size_t>& dims) {
  std::string s = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + ")";
}

std::string shape_string(const std::vector<std::size_t>& shape) {
  return shape.size() == 1 ? "(" + std::to_string(shape[0]) + ",)" : dims_string(shape);
}

std::string unravel_index(std::size_t flat, const std::vector<std::size_t>& shape) {
  std::vector<std::size_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return shape_string(index);
}

}  // namespace vl
