#pragma once
// Layer normalisation (Ba, Kiros, Hinton 2016; Vaswani et al. 2017, §3.1), as torch.nn.LayerNorm(d)
// computes it: per position, over the last axis only,
//
//   x̂ = (x − μ) / sqrt(σ² + ε),   μ = mean(x),  σ² = mean((x − μ)²)  (biased),   y = γ ⊙ x̂ + β
//
//   x: (B, S, d),  γ, β: (d)  →  y: (B, S, d).   ε = 1e-5, torch's unless told otherwise.
#include <cmath>
#include <cstddef>
#include <stdexcept>

#include <fmt/format.h>
#include <xtensor/xtensor.hpp>

#include "numeric/torch_linear_init.hpp"
#include "ops/layer_norm.hpp"

namespace vl {

/// Throws std::invalid_argument when γ or β is not (d).
template <class T>
xt::xtensor<T, 3> layer_norm(const xt::xtensor<T, 3>& x, const LayerNormParameters<T>& p, double eps = kLayerNormEps) {
  const std::size_t d = x.shape(2), rows = x.shape(0) * x.shape(1);
  if (p.weight.size() != d || p.bias.size() != d)
    throw std::invalid_argument(fmt::format("layer_norm: weight ({}) and bias ({}) must both have the width d = {} of the input",
                                            p.weight.size(), p.bias.size(), d));
  xt::xtensor<T, 3> y = xt::xtensor<T, 3>::from_shape(x.shape());
  const T* in = x.data();
  T* out = y.data();
  for (std::size_t r = 0; r < rows; ++r, in += d, out += d) {
    T mean = 0, var = 0;
    for (std::size_t c = 0; c < d; ++c) mean += in[c];
    mean /= T(d);
    for (std::size_t c = 0; c < d; ++c) var += (in[c] - mean) * (in[c] - mean);
    var /= T(d);
    const T inv = T(1) / std::sqrt(var + T(eps));
    for (std::size_t c = 0; c < d; ++c) out[c] = (in[c] - mean) * inv * p.weight(c) + p.bias(c);
  }
  return y;
}

// Instantiated once, for float and double, in layer_norm.cpp: a file that calls them compiles none of
// their bodies.
extern template xt::xtensor<float, 3> layer_norm<float>(const xt::xtensor<float, 3>&, const LayerNormParameters<float>&, double);
extern template xt::xtensor<double, 3> layer_norm<double>(const xt::xtensor<double, 3>&, const LayerNormParameters<double>&, double);

}  // namespace vl
