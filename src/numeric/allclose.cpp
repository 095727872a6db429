// allclose: see allclose.hpp.
#include "numeric/allclose.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace vl {

Closeness allclose(const std::vector<double>& actual, const std::vector<double>& expected, double rtol, double atol) {
  if (actual.size() != expected.size()) throw std::invalid_argument("allclose: arrays of different sizes");
  Closeness c;
  double worst_excess = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    double diff, excess;
    bool ok;
    if (std::isnan(a) || std::isnan(e)) {
      ok = std::isnan(a) && std::isnan(e);  // NaN only matches NaN
      diff = ok ? 0.0 : std::numeric_limits<double>::infinity();
      excess = diff;
    } else if (std::isinf(a) || std::isinf(e)) {
      ok = a == e;  // an infinity only matches the same infinity
      diff = ok ? 0.0 : std::numeric_limits<double>::infinity();
      excess = diff;
    } else {
      diff = std::fabs(a - e);
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

std::string shape_string(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
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
