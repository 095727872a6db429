#pragma once
// NumPy's closeness tests as the lessons print them (np.allclose, np.abs(a − b).max()).
#include <cmath>
#include <cstddef>

namespace vl::numpy {

/// np.allclose(a, b, rtol, atol): every |a − b| ≤ atol + rtol·|b| (NaN never close).
template <class EA, class EB>
bool allclose(const EA& a, const EB& b, double rtol = 1e-5, double atol = 1e-8) {
  if (a.shape() != b.shape()) return false;
  auto ia = a.begin();
  for (auto ib = b.begin(); ib != b.end(); ++ia, ++ib)
    if (!(std::fabs(double(*ia) - double(*ib)) <= atol + rtol * std::fabs(double(*ib)))) return false;
  return true;
}

/// np.abs(a − b).max(): the largest absolute difference (NaN if any difference is NaN).
template <class EA, class EB>
double max_abs_diff(const EA& a, const EB& b) {
  double worst = 0;
  auto ia = a.begin();
  for (auto ib = b.begin(); ib != b.end(); ++ia, ++ib) {
    const double d = std::fabs(double(*ia) - double(*ib));
    if (std::isnan(d)) return d;
    if (d > worst) worst = d;
  }
  return worst;
}

}  // namespace vl::numpy
