#pragma once
// The exact gradient of scaled dot-product attention (the backward of attention.hpp), per head:
//
//   forward   S = scale · Q Kᵀ + M     P = softmax_rows(S)     O = P V
//   backward  dV = Pᵀ dO                                   (Sk, Dv)
//             dP = dO Vᵀ                                   (Sq, Sk)
//             dS = P ⊙ (dP − rowsum(P ⊙ dP))               the softmax Jacobian diag(p) − p pᵀ, row by row
//             dQ = scale · dS K                            (Sq, D)
//             dK = scale · dSᵀ Q                           (Sk, D)
//   Q: (Sq, D)  K: (Sk, D)  V: (Sk, Dv)  dO: (Sq, Dv)
//
// Masked keys have P = 0, hence dS = 0: no gradient flows through a hidden key, and the mask
// needs no term of its own. The same equations as FlashAttention's backward (Dao et al. 2022,
// §B.2, with D_i = rowsum(dO ∘ O) = rowsum(P ∘ dP)), written for the materialised P.
#include <cmath>
#include <cstddef>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/attention.hpp"
#include "ops/attention_backward.hpp"
#include "kernels/reference/gqa.hpp"
#include "kernels/reference/matmul.hpp"

namespace vl {

/// dS = P ⊙ (dP − rowsum(P ⊙ dP)): the gradient through each softmax row.   P, dP: (Sq, Sk).
template <class T>
xt::xtensor<T, 2> softmax_rows_backward(const xt::xtensor<T, 2>& p, const xt::xtensor<T, 2>& dp) {
  const std::size_t rows = p.shape(0), cols = p.shape(1);
  xt::xtensor<T, 2> ds = xt::xtensor<T, 2>::from_shape({rows, cols});
  for (std::size_t i = 0; i < rows; ++i) {
    T dot = 0;
    for (std::size_t j = 0; j < cols; ++j) dot += p(i, j) * dp(i, j);
    for (std::size_t j = 0; j < cols; ++j) ds(i, j) = p(i, j) * (dp(i, j) - dot);
  }
  return ds;
}

/// One head's backward from the forward's weights P (as attention(..., return_weights) gives them).
template <class T>
AttentionGradients<T, 2> attention_backward_head(const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k,
                                                 const xt::xtensor<T, 2>& v, const xt::xtensor<T, 2>& p,
                                                 const xt::xtensor<T, 2>& d_out, T scale) {
  if (p.shape(0) != q.shape(0) || p.shape(1) != k.shape(0) || d_out.shape(0) != q.shape(0) ||
      d_out.shape(1) != v.shape(1) || v.shape(0) != k.shape(0) || k.shape(1) != q.shape(1)) {
    throw std::invalid_argument(fmt::format(
        "attention_backward: inconsistent shapes Q ({}), K ({}), V ({}), P ({}), dO ({}); expected "
        "(Sq, D), (Sk, D), (Sk, Dv), (Sq, Sk), (Sq, Dv)",
        fmt::join(q.shape(), ", "), fmt::join(k.shape(), ", "), fmt::join(v.shape(), ", "),
        fmt::join(p.shape(), ", "), fmt::join(d_out.shape(), ", ")));
  }
  AttentionGradients<T, 2> g;
  g.dv = matmul<T>(xt::transpose(p), d_out);
  const xt::xtensor<T, 2> dp = matmul<T>(d_out, xt::transpose(v));
  const xt::xtensor<T, 2> ds = softmax_rows_backward<T>(p, dp);
  g.dq = scale * matmul<T>(ds, k);
  g.dk = scale * matmul<T>(xt::transpose(ds), q);
  return g;
}

/// dQ, dK, dV of O = attention(Q, K, V, options) for the upstream gradient dO: (B, Hq, Sq, Dv).
/// Recomputes P with the forward kernel (same scale and masks), then runs each head's backward;
/// with grouped-query heads, dK and dV of a key/value head sum over the query heads it serves.
/// Throws std::invalid_argument on a softcap (its tanh is not differentiated here) or bad shapes.
template <class T>
AttentionGradients<T, 4> attention_backward(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k,
                                            const xt::xtensor<T, 4>& v, const xt::xtensor<T, 4>& d_out,
                                            AttentionOptions<T> options = {}) {
  if (options.softcap > 0) throw std::invalid_argument("attention_backward: softcap is not supported");
  options.return_weights = true;
  const AttentionResult<T, 4> fwd = attention<T>(q, k, v, options);
  if (d_out.shape() != fwd.output.shape()) {
    throw std::invalid_argument(fmt::format("attention_backward: dO has shape ({}), the output ({})",
                                            fmt::join(d_out.shape(), ", "), fmt::join(fwd.output.shape(), ", ")));
  }
  const std::size_t B = q.shape(0), Hq = q.shape(1), Hkv = k.shape(1);
  const T scale = options.scale.value_or(T(1) / std::sqrt(static_cast<T>(q.shape(3))));
  AttentionGradients<T, 4> g{xt::zeros<T>(q.shape()), xt::zeros<T>(k.shape()), xt::zeros<T>(v.shape())};
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < Hq; ++h) {
      const std::size_t hkv = kv_head_of(h, Hq, Hkv);
      const auto head = attention_backward_head<T>(
          xt::view(q, b, h), xt::view(k, b, hkv), xt::view(v, b, hkv), xt::view(fwd.weights, b, h),
          xt::view(d_out, b, h), scale);
      xt::view(g.dq, b, h) = head.dq;
      xt::view(g.dk, b, hkv) += head.dk;
      xt::view(g.dv, b, hkv) += head.dv;
    }
  }
  return g;
}

// Instantiated once, for float and double, in attention_backward.cpp: a file that calls them compiles none of
// their bodies.
extern template xt::xtensor<float, 2> softmax_rows_backward<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&);
extern template AttentionGradients<float, 2> attention_backward_head<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, float);
extern template AttentionGradients<float, 4> attention_backward<float>(const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&, AttentionOptions<float>);
extern template xt::xtensor<double, 2> softmax_rows_backward<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&);
extern template AttentionGradients<double, 2> attention_backward_head<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, double);
extern template AttentionGradients<double, 4> attention_backward<double>(const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&, AttentionOptions<double>);

}  // namespace vl
