#pragma once
// What several sections of the attention lesson share: seed 002's fixture, array draws and
// comparisons, the goldens' folder, the seed module over a backend, and the one broken backend
// more than one section's claims must reject (the masks ignored).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <cstddef>
#include <filesystem>
#include <string>

#include <xtensor/xtensor.hpp>

#include "backends/backend.hpp"
#include "lessons/attention/attention_break.hpp"
#include "numeric/compare.hpp"
#include "kernels/reference/heads_attention.hpp"
#include "numeric/numpy_random.hpp"

namespace vl::lessons::attention {

using Matrix = xt::xtensor<double, 2>;
template <class T>
using Tensor4 = xt::xtensor<T, 4>;

inline constexpr double kInf = kInfinity;

/// How far row (b, h, i) of the weights W (B, H, Sq, Sk) is from a distribution: the larger of
/// |Σ_j w_ij − 1| and a weight's distance outside [0, 1] (∞ for a NaN).
inline double row_deviation(const Tensor4<double>& w, std::size_t b, std::size_t h, std::size_t i) {
  double sum = 0, outside = 0;
  for (std::size_t j = 0; j < w.shape(3); ++j) {
    sum += w(b, h, i, j);
    outside = worse(outside, std::max(-w(b, h, i, j), w(b, h, i, j) - 1.0));
  }
  return worse(std::fabs(sum - 1.0), outside);
}

/// How far an output entry o lies outside [lo, hi] (its visible values' min and max), relative to
/// `scale` (max |v|); ∞ for a NaN.
inline double excursion(double o, double lo, double hi, double scale) {
  return std::isnan(o) ? kInf : std::max({0.0, lo - o, o - hi}) / scale;
}

/// standard_normal of that shape (float64), drawn in C order.
Tensor4<double> draw4(numpy::Generator& rng, std::array<std::size_t, 4> shape);

/// standard_normal drawn as (s0·s1·s2, s3) rows and cast to T.
template <class T>
Tensor4<T> draw4_as(numpy::Generator& rng, std::array<std::size_t, 4> s) {
  xt::xtensor<double, 2> flat = rng.standard_normal(s[0] * s[1] * s[2], s[3]);
  return xt::cast<T>(xt::reshape_view(flat, s));
}

/// (S, D) seen as (1, 1, S, D).
template <class T>
Tensor4<T> as4(const xt::xtensor<T, 2>& x) {
  return xt::reshape_view(x, std::array<std::size_t, 4>{1, 1, x.shape(0), x.shape(1)});
}

/// `goldens/attention/<name>` as float64.
xt::xarray<double> load_golden(const std::filesystem::path& goldens, const std::string& name);

/// Seed 002's fixture: seq 3, d_model 4; q[x] = (x+1)/10, k[x] = (x/4+1)/4 − (x%2)/3 (integer
/// division, float math), v[x] = (x+1)/10, in float32, as (3, 4) row-major.
struct Fixture {
  xt::xtensor<float, 2> q, k, v;
};
Fixture seed_fixture();
/// The fixture's loss L = Σ_x g_x O_x with g_x = (x+1)/10, and that g as dO.
xt::xtensor<float, 2> fixture_loss_gradient();

/// Seed 002's module (kernels/reference/heads_attention.hpp) over a backend's attention / backward.
template <class T>
HeadsOutput<T> heads_forward_on(const backends::Backend& b, const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k,
                                const xt::xtensor<T, 2>& v, const HeadsConfig& c, bool weights = true) {
  return heads_forward<T>([&](const auto&... a) { return b.attention(a...); }, q, k, v, c, weights);
}
template <class T>
HeadsGradients<T> heads_backward_on(const backends::Backend& b, const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k,
                                    const xt::xtensor<T, 2>& v, const xt::xtensor<T, 2>& d_out, const HeadsConfig& c) {
  return heads_backward<T>([&](const auto&... a) { return b.attention_backward(a...); }, q, k, v, d_out, c);
}

/// Broken: attention with every mask dropped (no causal mask, no boolean or additive mask).
class MaskIgnored : public AttentionBreak<MaskIgnored> {
 public:
  MaskIgnored();
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const;
};

}  // namespace vl::lessons::attention
