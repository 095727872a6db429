#pragma once
// How far attention computed in a working precision of unit round-off u may be from the exact
// attention of the same (already rounded) inputs: the bound the claims judge a float32
// implementation by, where in float64 they compare with torch's goldens (specs/attention.md,
// "In float32").
//
//   L = max_{b,h,i,j} (|scale|·Σ_t |q_it k_jt| + |bias_ij|)      the largest score magnitude
//   δ = γ_{D+6}·L (+ 5u·c with a softcap c)                       every score's error: a dot product
//       of D terms, the scale (the default 1/√D rounded too), the mask, and the subtraction of
//       the row maximum (2u·L); tanh, its quotient and product with a softcap
//   |y − y_exact| ≤ ((e^{2δ} − 1) + (2κ + 2·Sk + 4)·u) · max|v|,  κ = 5
//       a weight's relative change under score errors of at most δ is at most e^{2δ} − 1; the
//       exponentials (within κ = 5 units of u: our float32 exp's 2.5 ulp, attention.exp-float32;
//       libm's are within 1 ulp), their sum of Sk terms, the division by it, and the Sk-term
//       product W V add the rest. First order in u (terms in u² dropped), worst case (no
//       probabilistic argument). It assumes the weights are divided by their computed row sum
//       (torch, ONNX Runtime, FlashAttention's forward, ours); a kernel that forms exp(s − lse)
//       carries a further u·|lse| (specs/attention.md, "In float32").
// with γ_n = n·u / (1 − n·u) (Higham, Accuracy and Stability of Numerical Algorithms, §3.1).
#include <algorithm>
#include <stdexcept>
#include <array>
#include <cmath>

#include <fmt/format.h>
#include <xtensor/xbroadcast.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include "ops/attention.hpp"

namespace vl::lessons {

/// γ_n = n·u / (1 − n·u); where n·u ≥ 1/2 (a dot product too long for bfloat16's u = 2⁻⁸, say)
/// it is no bound a check can use: throws std::invalid_argument (the check cannot run: ERROR).
inline double gamma(double n, double u) {
  if (n * u >= 0.5) throw std::invalid_argument(fmt::format("no error bound: γ_n with n = {} and u = {} (n·u ≥ 1/2)", n, u));
  return n * u / (1 - n * u);
}

/// The bound above, per unit of max|v|: (e^{2δ} − 1) + (2κ + 2·Sk + 4)·u, for attention(q, k, ·, o)
/// in a precision of unit round-off u; `score_error` is added to δ (an error the scores carry in
/// from before: multi-head attention's projections, mha_error_bound.hpp). Hq a multiple of Hkv
/// (query head h reads kv head h / (Hq / Hkv)); masks as AttentionOptions has them.
inline double attention_error_factor(const xt::xtensor<double, 4>& q, const xt::xtensor<double, 4>& k, const AttentionOptions<double>& o,
                                     double u, double score_error = 0) {
  const std::size_t B = q.shape(0), Hq = q.shape(1), Sq = q.shape(2), D = q.shape(3), Hkv = k.shape(1), Sk = k.shape(2);
  const double scale = std::fabs(o.scale.value_or(1 / std::sqrt(double(D))));
  xt::xtensor<double, 4> bias = xt::zeros<double>({B, Hq, Sq, Sk});
  if (o.bias) bias = xt::broadcast(*o.bias, std::array<std::size_t, 4>{B, Hq, Sq, Sk});  // NumPy's broadcast, as the kernels'
  double largest = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < Hq; ++h)
      for (std::size_t i = 0; i < Sq; ++i)
        for (std::size_t j = 0; j < Sk; ++j) {
          double s = 0;
          for (std::size_t t = 0; t < D; ++t) s += std::fabs(q(b, h, i, t) * k(b, h / (Hq / Hkv), j, t));
          s *= scale;
          if (std::isfinite(bias(b, h, i, j))) s += std::fabs(bias(b, h, i, j));  // −∞ hides the key: no score
          largest = std::max(largest, s);
        }
  if ((double(D) + 6) * u >= 0.5)
    throw std::invalid_argument(fmt::format("no error bound: D = {} is too long a dot product for u = {}", D, u));
  double delta = gamma(double(D) + 6, u) * largest + score_error;
  if (o.softcap > 0) delta += 5 * u * o.softcap;
  const double kappa = 5;
  const double factor = std::expm1(2 * delta) + (2 * kappa + 2 * double(Sk) + 4) * u;
  // A bound that is not finite, or that allows a weight's whole size, judges nothing: the check
  // cannot run (an ERROR), never a pass.
  if (!std::isfinite(factor) || !(factor < 1))
    throw std::invalid_argument(fmt::format("no useful error bound for these inputs in this precision: {} of max|v| "
                                            "(scores of magnitude {}): the check's inputs must be smaller", factor, largest));
  return factor;
}

/// The bound above for attention(q, k, v, o) in a precision of unit round-off u.
inline double attention_error_bound(const xt::xtensor<double, 4>& q, const xt::xtensor<double, 4>& k,
                                    const xt::xtensor<double, 4>& v, const AttentionOptions<double>& o, double u) {
  return attention_error_factor(q, k, o, u) * xt::amax(xt::abs(v))();
}

}  // namespace vl::lessons
