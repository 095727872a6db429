#pragma once
// The feature map of linear attention (Katharopoulos et al. 2020, §3.2.1, eq. 7).
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>

namespace vl {

/// φ(x) = elu(x) + 1 = x + 1 for x > 0, eˣ for x ≤ 0; element-wise, any shape.
/// φ > 0 wherever eˣ does not underflow (x > −745 in float64, x > −103 in float32).
template <class T, std::size_t N>
xt::xtensor<T, N> elu_plus_one(const xt::xtensor<T, N>& x) {
  return xt::where(x > T(0), x + T(1), xt::exp(x));
}

}  // namespace vl
