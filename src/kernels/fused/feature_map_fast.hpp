#pragma once
// Linear attention's feature map φ(x) = elu(x) + 1 (kernels/reference/feature_map.hpp), with the
// fused kernels' exp (softmax_rows.hpp): in float32 sixteen lanes at a time, within 2 floats of the
// correctly rounded exp on [−87.3, 0] (claim attention.exp-float32); std::exp in float64.
//
//   φ(x) = x + 1 (x > 0),  exp(x) (x ≤ 0)        X (any shape) → same shape
//
// Every element's exp is taken, of min(x, 0), so that the loops have no branch; below −87.3, where
// the vector exp flushes to 0 and std::exp still gives a subnormal, std::exp's value is kept. NaN
// stays NaN. `lessons eval linear-attention --form chunked` maps its inputs with it, in place,
// before the fast chunked kernel (linear_attention_fast.hpp): libm's expf, one element at a time,
// was a third of that process at n = 16384.
#include <algorithm>
#include <cmath>
#include <cstddef>

#include <xtensor/xtensor.hpp>

#include "kernels/fused/softmax_rows.hpp"

namespace vl {

/// φ over n values, `in` to `out` (the same array, or arrays that do not overlap), a block at a time.
template <class T>
void elu_plus_one_fast(const T* in, T* out, std::size_t n) {
  constexpr std::size_t kBlock = 1024;
  T e[kBlock];
  for (std::size_t b = 0; b < n; b += kBlock) {
    const std::size_t m = std::min(kBlock, n - b);
    const T* x = in + b;
    // φ(x) = exp(min(x, 0)) + max(x, 0): exp(0) is exactly 1 (softmax_rows.hpp), so x > 0 gives
    // 1 + x; x ≤ 0 gives exp(x) + 0. Minimum and maximum, not branches: x > 0 is a coin toss on
    // normal inputs, and a mispredicted branch per element cost more than the exps.
    for (std::size_t i = 0; i < m; ++i) e[i] = std::min(x[i], T(0));
    row_exp_sum(e, m, T(0));
    for (std::size_t i = 0; i < m; ++i) e[i] += std::max(x[i], T(0));
    for (std::size_t i = 0; i < m; ++i)
      if (x[i] < T(-87.3)) e[i] = std::exp(x[i]);
    std::copy(e, e + m, out + b);
  }
}

/// φ(X), a new array.
template <class T, std::size_t N>
xt::xtensor<T, N> elu_plus_one_fast(const xt::xtensor<T, N>& x) {
  xt::xtensor<T, N> out = xt::xtensor<T, N>::from_shape(x.shape());
  elu_plus_one_fast(x.data(), out.data(), x.size());
  return out;
}

/// X ← φ(X), in place (no second array to allocate and touch page by page).
template <class T, std::size_t N>
void elu_plus_one_fast_in_place(xt::xtensor<T, N>& x) {
  elu_plus_one_fast(x.data(), x.data(), x.size());
}

}  // namespace vl
