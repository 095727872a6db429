#pragma once
// How far a Transformer layer, or a stack of them, computed in a working precision of unit
// round-off u may be from the exact layer on the same (already rounded) inputs and parameters:
// the bound the encoder-decoder claims judge a float32 implementation by (specs/encoder_decoder.md,
// "In float32"). A running error analysis (Higham, Accuracy and Stability, §3.3), first order in u,
// worst case, γ_n = n·u / (1 − n·u): the layer is followed step by step on the exact values (our
// float64 kernels), and each step's bound takes the error its input carries in and adds its own
// rounding. Errors are measured per position as the 2-norm over the features (E: the largest over
// the positions), because the 2-norm is what the layer's steps do not magnify much: LayerNorm
// maps an input error δ to (I − 11ᵀ/d − x̂x̂ᵀ/d)δ/s, a projection (norm ≤ 1) over s = √(σ² + ε),
// and a linear map to W δ, ‖W‖₂ ≤ min(‖W‖_F, √(‖W‖₁‖W‖_∞)). An element's error is at most its
// position's E. κ = 2 ulps for a library function (erf).
//
//   Linear    y = x Wᵀ + b     E_y = ‖W‖₂·E_x + γ_{in+1}·max_pos ‖|x| |W|ᵀ + |b|‖₂
//   ReLU                       E_y = E_x                                 (1-Lipschitz, exact)
//   GELU      z·Φ(z)           E_y = 1.13·E_x + (κ + 4)·u·max_pos ‖z‖₂     (|GELU'| ≤ 1.129)
//   residual  x + s            E = E_x + E_s + u·max_pos ‖x + s‖₂
//   LayerNorm y = γ x̂ + β, x̂ = (x − μ)/s, per position:
//             E_x̂ = (E_x + √d·(d + 1)·u·max|x| + u·‖x − μ‖₂)/s + ((d + 2)/2 + 4)·u·‖x̂‖₂
//             (the input's error through the projection; the mean's rounding, a uniform shift;
//             the centring's; σ², ε, √ and 1/s relative on x̂), E_y = max|γ|·E_x̂ + 2u·‖|γ x̂| + |β|‖₂
//   attention per head of width dh over Sk keys, query/key/value projections within E_Q, E_K, E_V:
//             scores within δ_p = scale·(E_Q·max‖k‖₂ + max‖q‖₂·E_K + E_Q·E_K) (Cauchy–Schwarz),
//             F = attention_error_factor with δ_p added (Σ_j |Δw_ij| ≤ F), a head's output row within
//             F·max_j ‖v_j‖₂ + E_V, the H heads' concatenation within √H times that, then the output
//             projection as a Linear.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/decoder_layer.hpp"
#include "kernels/reference/encoder_layer.hpp"
#include "kernels/reference/feed_forward.hpp"
#include "kernels/reference/heads.hpp"
#include "kernels/reference/layer_norm.hpp"
#include "kernels/reference/matmul.hpp"
#include "kernels/reference/multi_head_attention.hpp"
#include "lessons/attention_error_bound.hpp"

namespace vl::lessons::encoder_decoder {

/// A tensor (B, S, d)'s exact value and a bound on the error of its computation in precision u,
/// per position, in the 2-norm over the features: the largest over the positions.
struct Bounded {
  xt::xtensor<double, 3> x;
  double e = 0;
};

namespace layer_bound {

/// The largest 2-norm over the last axis of a (B, S, d) tensor.
inline double row_norm(const xt::xtensor<double, 3>& x) {
  double worst = 0;
  const std::size_t d = x.shape(2);
  for (std::size_t r = 0; r < x.size() / d; ++r) {
    double s = 0;
    for (std::size_t c = 0; c < d; ++c) s += x.data()[r * d + c] * x.data()[r * d + c];
    worst = std::max(worst, std::sqrt(s));
  }
  return worst;
}

/// An upper bound on the spectral norm ‖W‖₂: with A = WᵀW and m = 2⁶, ‖A‖₂ ≤ ‖Aᵐ‖_F^{1/m} (the
/// Frobenius norm bounds the spectral one), at most rank^{1/(4m)} ≈ 1.011 times ‖W‖₂ here; Aᵐ by
/// six squarings, each scaled to Frobenius norm 1 so that nothing overflows. The relative 10⁻¹²
/// covers the rounding of these float64 products.
inline double spectral_bound(const xt::xtensor<double, 2>& w) {
  xt::xtensor<double, 2> a = matmul<double>(xt::xtensor<double, 2>(xt::transpose(w)), w);
  double log_norm = 0;  // log ‖A^(2^k)‖_F, carried as Σ 2^(k−i) log(scale_i)
  const int squarings = 6;
  for (int k = 0; k <= squarings; ++k) {
    const double f = std::sqrt(double(xt::sum(a * a)()));
    if (f == 0) return 0;
    log_norm += std::log(f) / std::pow(2.0, k);  // ‖A^(2^k)‖_F^(1/2^k) = Π scale_i^(1/2^i)
    a /= f;
    if (k < squarings) a = matmul<double>(a, a);
  }
  return std::sqrt(std::exp(log_norm)) * (1 + 1e-12);
}

inline Bounded linear(const Bounded& in, const LinearParameters<double>& p, double u) {
  const LinearParameters<double> mag{xt::abs(p.weight), xt::abs(p.bias)};
  const xt::xtensor<double, 3> a = xt::abs(in.x);
  const double width = double(p.weight.shape(1));
  return {vl::linear<double>(in.x, p), spectral_bound(p.weight) * in.e + gamma(width + 1, u) * row_norm(vl::linear<double>(a, mag))};
}

inline Bounded activation(const Bounded& in, Activation a, double u) {
  xt::xtensor<double, 3> y = in.x;
  for (auto& z : y) z = activate(z, a);
  if (a == Activation::relu) return {y, in.e};
  return {y, 1.13 * in.e + (2 + 4) * u * row_norm(in.x)};
}

inline Bounded feed_forward(const Bounded& in, const LinearParameters<double>& l1, const LinearParameters<double>& l2, Activation a,
                            double u) {
  return linear(activation(linear(in, l1, u), a, u), l2, u);
}

inline Bounded residual(const Bounded& x, const Bounded& s, double u) {
  const xt::xtensor<double, 3> y = x.x + s.x;
  return {y, x.e + s.e + u * row_norm(y)};
}

inline Bounded layer_norm(const Bounded& in, const LayerNormParameters<double>& p, double eps, double u) {
  const std::size_t d = in.x.shape(2), rows = in.x.shape(0) * in.x.shape(1);
  const double g = double(xt::amax(xt::abs(p.weight))()), dd = double(d);
  double e = 0;
  const double* x = in.x.data();
  for (std::size_t r = 0; r < rows; ++r, x += d) {
    double mean = 0, var = 0, xmax = 0;
    for (std::size_t c = 0; c < d; ++c) mean += x[c], xmax = std::max(xmax, std::fabs(x[c]));
    mean /= dd;
    for (std::size_t c = 0; c < d; ++c) var += (x[c] - mean) * (x[c] - mean);
    var /= dd;
    const double s = std::sqrt(var + eps), centred = std::sqrt(var * dd), hat = centred / s;
    double out = 0;
    for (std::size_t c = 0; c < d; ++c) out += std::pow(std::fabs(p.weight(c) * (x[c] - mean) / s) + std::fabs(p.bias(c)), 2);
    const double e_hat = (in.e + std::sqrt(dd) * (dd + 1) * u * xmax + u * centred) / s + ((dd + 2) / 2 + 4) * u * hat;
    e = std::max(e, g * e_hat + 2 * u * std::sqrt(out));
  }
  return {vl::layer_norm<double>(in.x, p, eps), e};
}

/// The largest 2-norm over the last axis of a (B, H, S, dh) tensor: a head's row.
inline double head_row_norm(const xt::xtensor<double, 4>& t) {
  const std::size_t w = t.shape(3);
  return row_norm(xt::xtensor<double, 3>(xt::reshape_view(t, std::array<std::size_t, 3>{1, t.size() / w, w})));
}

/// Multi-head attention of `queries` over `keys_values` (self-attention: the same), as the layer's.
inline Bounded attend(const Bounded& queries, const Bounded& keys_values, const MhaParameters<double>& p, std::size_t heads,
                      const MhaOptions<double>& o, double u) {
  const std::size_t B = queries.x.shape(0), d = p.in_proj_weight.shape(1), dh = d / heads;
  auto projection = [&](const Bounded& in, std::size_t which) {
    LinearParameters<double> w;
    w.weight = xt::view(p.in_proj_weight, xt::range(which * d, (which + 1) * d), xt::all());
    w.bias = xt::view(p.in_proj_bias, xt::range(which * d, (which + 1) * d));
    return linear(in, w, u);
  };
  const Bounded q = projection(queries, 0), k = projection(keys_values, 1), v = projection(keys_values, 2);
  const xt::xtensor<double, 4> qh = split_heads<double>(q.x, heads), kh = split_heads<double>(k.x, heads),
                               vh = split_heads<double>(v.x, heads);
  const double scale = 1 / std::sqrt(double(dh));
  const double delta_p = scale * (q.e * head_row_norm(kh) + head_row_norm(qh) * k.e + q.e * k.e);
  MhaOptions<double> no_weights = o;
  no_weights.need_weights = false;
  const AttentionOptions<double> ao = detail::kernel_options<double>(no_weights, B, heads, queries.x.shape(1), keys_values.x.shape(1), scale);
  const double factor = attention_error_factor(qh, kh, ao, u, delta_p);
  const double head = factor * head_row_norm(vh) + v.e;
  // The output projection of the exact heads' concatenation, each head's slice within `head`.
  const xt::xtensor<double, 3> concat = merge_heads<double>(vl::attention<double>(qh, kh, vh, ao).output);
  const Bounded out = linear({concat, std::sqrt(double(heads)) * head}, {p.out_proj_weight, p.out_proj_bias}, u);
  return out;
}

/// One sub-layer in its residual and norm, as the kernel's `sublayer`.
template <class F>
Bounded sublayer(const Bounded& x, const LayerNormParameters<double>& norm, const LayerOptions& o, double u, F f) {
  if (o.norm_first) return residual(x, f(layer_norm(x, norm, o.eps, u)), u);
  return layer_norm(residual(x, f(x), u), norm, o.eps, u);
}

}  // namespace layer_bound

/// The bound above for encoder_layer(x, p, heads, o, self), x carrying x.e in.
inline Bounded encoder_layer_bound(const Bounded& x, const EncoderLayerParameters<double>& p, std::size_t heads, const LayerOptions& o,
                                   const MhaOptions<double>& self, double u) {
  using namespace layer_bound;
  const Bounded h = sublayer(x, p.norm1, o, u, [&](const Bounded& in) { return attend(in, in, p.self_attn, heads, self, u); });
  return sublayer(h, p.norm2, o, u, [&](const Bounded& in) { return feed_forward(in, p.linear1, p.linear2, o.activation, u); });
}

/// The bound above for decoder_layer(tgt, memory, p, heads, o, self, cross).
inline Bounded decoder_layer_bound(const Bounded& tgt, const Bounded& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                                   const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross, double u) {
  using namespace layer_bound;
  Bounded x = sublayer(tgt, p.norm1, o, u, [&](const Bounded& in) { return attend(in, in, p.self_attn, heads, self, u); });
  x = sublayer(x, p.norm2, o, u, [&](const Bounded& in) { return attend(in, memory, p.multihead_attn, heads, cross, u); });
  return sublayer(x, p.norm3, o, u, [&](const Bounded& in) { return feed_forward(in, p.linear1, p.linear2, o.activation, u); });
}

}  // namespace vl::lessons::encoder_decoder
