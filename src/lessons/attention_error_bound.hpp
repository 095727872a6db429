#pragma once
// How far attention computed in a working precision of unit round-off u may be from the exact
// attention of the same (already rounded) inputs: the bound the claims judge a float32
// implementation by, where in float64 they compare with torch's goldens (specs/attention.md,
// "In float32").
//
//   δ = γ_{D+2} · max_{b,h,i,j} (|scale|·Σ_t |q_it k_jt| + |bias_ij|)   (+ 3u·c with a softcap c)
//       every score's error: a dot product of D terms, the scale and the additive mask
//   |y − y_exact| ≤ ((e^{2δ} − 1) + (2·Sk + 6)·u) · max|v|              per output
//       a weight's relative change under score errors of at most δ is at most e^{2δ} − 1; the
//       exponentials, their sum of Sk terms, the division and the Sk-term product W V add the rest
//
// with γ_n = n·u / (1 − n·u) (Higham, Accuracy and Stability of Numerical Algorithms, §3.1).
#include <algorithm>
#include <array>
#include <cmath>

#include <xtensor/xbroadcast.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include "ops/attention.hpp"

namespace vl::lessons {

inline double gamma(double n, double u) { return n * u / (1 - n * u); }

/// The bound above for attention(q, k, v, o) in a precision of unit round-off u; Hq a multiple of
/// Hkv (query head h reads kv head h / (Hq / Hkv)); masks as AttentionOptions has them.
inline double attention_error_bound(const xt::xtensor<double, 4>& q, const xt::xtensor<double, 4>& k,
                                    const xt::xtensor<double, 4>& v, const AttentionOptions<double>& o, double u) {
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
  double delta = gamma(double(D) + 2, u) * largest;
  if (o.softcap > 0) delta += 3 * u * o.softcap;
  const double vmax = xt::amax(xt::abs(v))();
  return (std::expm1(2 * delta) + (2 * double(Sk) + 6) * u) * vmax;
}

}  // namespace vl::lessons
