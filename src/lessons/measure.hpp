#pragma once
// How the checks measure a backend's numbers: a NaN, or an array of the wrong shape, is never
// within any tolerance. (std::max(acc, NaN) returns acc: a NaN would be dropped silently.)
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace vl::lessons {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// max(worst, x), with a NaN x making it ∞.
inline double worse(double worst, double x) { return std::isnan(x) ? kInfinity : std::max(worst, x); }

/// max |a − b| over two arrays of the same shape; ∞ when the shapes differ or a difference is NaN.
template <class A, class B>
double max_diff(const A& a, const B& b) {
  if (a.dimension() != b.dimension() || !std::equal(a.shape().begin(), a.shape().end(), b.shape().begin())) return kInfinity;
  double worst = 0;
  auto ib = b.begin();
  for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib) worst = worse(worst, std::fabs(double(*ia) - double(*ib)));
  return worst;
}

}  // namespace vl::lessons
