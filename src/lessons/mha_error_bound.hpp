#pragma once
// How far nn.MultiheadAttention computed in a working precision of unit round-off u may be from
// the exact module on the same (already rounded) inputs and parameters: the bound the multi-head
// claims judge a float32 implementation by (specs/attention.md, "In float32"). First order in u,
// worst case, with γ_n = n·u / (1 − n·u):
//
//   projections  Q = Xq W_qᵀ + b_q (and K, V): each element a (d + 1)-term sum, off by at most
//                ε_Q = γ_{d+1} · max(|Xq| |W_q|ᵀ + |b_q|)                          (ε_K, ε_V alike)
//   scores       s = scale · q·k over dh terms: the projections' errors move each score by at most
//                δ_p = scale · dh · (ε_Q max|K| + max|Q| ε_K + ε_Q ε_K)
//   heads        attention's own bound (attention_error_bound.hpp) with δ_p added to its score
//                error: E_head = F · max|V| + ε_V, F = (e^{2(δ + δ_p)} − 1) + (2κ + 2·Sk + 4)·u;
//                the weights within F (their max|v| is 1)
//   output       y = concat W_oᵀ + b_o: γ_{d+1} · max(|concat| |W_o|ᵀ + |b_o|) + E_head · max_x Σ_t |W_o(x, t)|
#include <algorithm>
#include <cmath>
#include <cstddef>

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/attention.hpp"
#include "kernels/reference/heads.hpp"
#include "kernels/reference/multi_head_attention.hpp"
#include "lessons/attention_error_bound.hpp"

namespace vl::lessons {

struct MhaErrorBound {
  double output;   ///< on every element of y
  double weights;  ///< on every per-head weight
};

/// The bound above for multi_head_attention(query, key, value, p, heads, o) in a precision of
/// unit round-off u (batched inputs (B, S, d); masks as MhaOptions has them).
inline MhaErrorBound mha_error_bound(const xt::xtensor<double, 3>& query, const xt::xtensor<double, 3>& key,
                                     const xt::xtensor<double, 3>& value, const MhaParameters<double>& p, std::size_t heads,
                                     const MhaOptions<double>& o, double u) {
  const std::size_t B = query.shape(0), d = p.in_proj_weight.shape(1), dh = d / heads;
  const MhaParameters<double> mag{xt::abs(p.in_proj_weight), xt::abs(p.in_proj_bias), xt::abs(p.out_proj_weight),
                                  xt::abs(p.out_proj_bias)};
  // Exact projections split into heads (B, H, S, dh), and each one's error ε.
  auto projected = [&](const xt::xtensor<double, 3>& x, std::size_t which, double& eps) {
    xt::xtensor<double, 3> y = xt::zeros<double>({B, x.shape(1), d});
    double largest = 0;
    for (std::size_t b = 0; b < B; ++b) {
      xt::view(y, b) = detail::mha_project<double>(xt::view(x, b), p, which, d);
      const xt::xtensor<double, 2> a = xt::abs(xt::view(x, b));
      largest = std::max(largest, double(xt::amax(detail::mha_project<double>(a, mag, which, d))()));
    }
    eps = gamma(double(d) + 1, u) * largest;
    return split_heads<double>(y, heads);
  };
  double eq = 0, ek = 0, ev = 0;
  const xt::xtensor<double, 4> q = projected(query, 0, eq), k = projected(key, 1, ek), v = projected(value, 2, ev);
  const double scale = 1 / std::sqrt(double(dh));
  const double qmax = xt::amax(xt::abs(q))(), kmax = xt::amax(xt::abs(k))();
  const double delta_p = scale * double(dh) * (eq * kmax + qmax * ek + eq * ek);

  // The module's masks as its kernel applies them (a bool mask hides keys: the score bound L
  // still counts them, which only widens it; the exact concatenation below needs them).
  MhaOptions<double> no_weights = o;
  no_weights.need_weights = false;
  AttentionOptions<double> ao = detail::kernel_options<double>(no_weights, B, heads, query.shape(1), key.shape(1), scale);
  const double factor = attention_error_factor(q, k, ao, u, delta_p);
  const double head_error = factor * xt::amax(xt::abs(v))() + ev;

  // The output projection of the exact heads (the plain kernel in float64: what it reads).
  const xt::xtensor<double, 3> concat = merge_heads<double>(vl::attention<double>(q, k, v, ao).output);
  double largest = 0;
  for (std::size_t b = 0; b < B; ++b) {
    const xt::xtensor<double, 2> c = xt::abs(xt::view(concat, b));
    xt::xtensor<double, 2> y = matmul<double>(c, xt::transpose(mag.out_proj_weight));
    y += xt::view(mag.out_proj_bias, xt::newaxis(), xt::all());
    largest = std::max(largest, double(xt::amax(y)()));
  }
  const double row_sum = xt::amax(xt::sum(mag.out_proj_weight, {1}))();
  return {gamma(double(d) + 1, u) * largest + head_error * row_sum, factor};
}

}  // namespace vl::lessons
