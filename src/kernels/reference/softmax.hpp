#pragma once
// Row-wise softmax, the numerically stable way.
#include <cmath>
#include <cstddef>
#include <limits>

#include <xtensor/xtensor.hpp>

namespace vl {

namespace detail {

// The row softmax below, with `store` applied to each value a program keeps: the shifted score
// S − m, the exponential, the row sum (accumulated in T, stored once) and the quotient.
template <class T, class Store>
xt::xtensor<T, 2> softmax_rows_stored(const xt::xtensor<T, 2>& scores, const Store& store) {
  const std::size_t rows = scores.shape(0), cols = scores.shape(1);
  xt::xtensor<T, 2> w = xt::zeros<T>({rows, cols});
  constexpr T neg_inf = -std::numeric_limits<T>::infinity();
  for (std::size_t i = 0; i < rows; ++i) {
    T m = neg_inf;
    bool has_nan = false;
    for (std::size_t j = 0; j < cols; ++j) {
      has_nan = has_nan || std::isnan(scores(i, j));
      if (scores(i, j) > m) m = scores(i, j);
    }
    if (m == neg_inf && !has_nan) continue;  // fully masked row: zero weights
    T sum = 0;
    for (std::size_t j = 0; j < cols; ++j) {
      w(i, j) = store(std::exp(store(scores(i, j) - m)));
      sum += w(i, j);
    }
    sum = store(sum);
    for (std::size_t j = 0; j < cols; ++j) w(i, j) = store(w(i, j) / sum);
  }
  return w;
}

}  // namespace detail

/// W[i, j] = exp(S[i, j] − m_i) / Σ_j' exp(S[i, j'] − m_i),  m_i = max_j S[i, j].   S, W: (n, m).
///
/// Subtracting the row maximum keeps every exponent ≤ 0, so nothing overflows. Entries equal
/// to −∞ (masked) get weight 0. A row with no finite entry at all (every key masked) gets all
/// zeros rather than the NaNs of 0/0 — the convention of ONNX's Attention and of FlashAttention.
/// NaN scores still propagate (they are a bug upstream, not a mask).
template <class T>
xt::xtensor<T, 2> softmax_rows(const xt::xtensor<T, 2>& scores) {
  return detail::softmax_rows_stored<T>(scores, [](T x) { return x; });
}

/// softmax_rows as a program storing every intermediate in a narrower format computes it:
/// `round` (e.g. to binary16) is applied to each stored value, the shifted scores S − m, the
/// exponentials, the row sum (accumulated in T, stored once, as NumPy's float16 reduction
/// does) and the quotients. Fully masked rows give zeros, as above.
template <class T>
xt::xtensor<T, 2> softmax_rows(const xt::xtensor<T, 2>& scores, T (*round)(T)) {
  return detail::softmax_rows_stored<T>(scores, round);
}

}  // namespace vl
