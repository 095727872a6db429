#pragma once
// The position-wise feed-forward network (Vaswani et al. 2017, §3.3), torch's linear1 → activation
// → linear2 (dropout off):
//
//   Linear(x) = x Wᵀ + b                         x: (B, S, in), W: (out, in), b: (out) → (B, S, out)
//   FFN(x)    = act(x W₁ᵀ + b₁) W₂ᵀ + b₂          W₁: (d_ff, d), W₂: (d', d_ff) → (B, S, d')
//   act = ReLU max(0, z) (NaN stays NaN, as torch.relu), or GELU z·Φ(z) = z/2 · (1 + erf(z/√2)) (torch's exact form)
//
// The same matrices act on every position separately. d' = d in a Transformer layer: the
// residual around the FFN needs it (encoder_layer.hpp refuses any other width).
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/matmul.hpp"
#include "numeric/torch_linear_init.hpp"
#include "ops/encoder_layer.hpp"  // Activation

namespace vl {

template <class T>
using LinearParameters = torch_rng::LinearParameters<T>;

/// x Wᵀ + b over every position. Throws std::invalid_argument when W is not (out, in) with in
/// the input's width, or b is not (out).
template <class T>
xt::xtensor<T, 3> linear(const xt::xtensor<T, 3>& x, const LinearParameters<T>& p, const char* name = "linear") {
  const std::size_t B = x.shape(0), S = x.shape(1), in = x.shape(2), out = p.weight.shape(0);
  if (p.weight.shape(1) != in || p.bias.size() != out)
    throw std::invalid_argument(fmt::format("{}: weight ({}, {}) and bias ({}) do not fit an input of width {} (weight must be (out, {}), bias (out))",
                                            name, p.weight.shape(0), p.weight.shape(1), p.bias.size(), in, in));
  const auto rows = xt::reshape_view(x, std::array<std::size_t, 2>{B * S, in});
  xt::xtensor<T, 2> y = matmul<T>(rows, xt::transpose(p.weight));
  y += xt::view(p.bias, xt::newaxis(), xt::all());
  return xt::xtensor<T, 3>(xt::reshape_view(y, std::array<std::size_t, 3>{B, S, out}));
}

template <class T>
T activate(T z, Activation a) {
  if (a == Activation::relu) return (z > T(0) || std::isnan(z)) ? z : T(0);
  return T(0.5) * z * (T(1) + std::erf(z * T(M_SQRT1_2)));
}

/// FFN(x): (B, S, d) → (B, S, d') with d' the rows of linear2's weight.
template <class T>
xt::xtensor<T, 3> feed_forward(const xt::xtensor<T, 3>& x, const LinearParameters<T>& linear1, const LinearParameters<T>& linear2,
                               Activation a) {
  xt::xtensor<T, 3> h = linear<T>(x, linear1, "linear1");
  for (auto& z : h) z = activate(z, a);
  return linear<T>(h, linear2, "linear2");
}

// Instantiated once, for float and double, in feed_forward.cpp: a file that calls them compiles none of
// their bodies.
extern template xt::xtensor<float, 3> linear<float>(const xt::xtensor<float, 3>&, const LinearParameters<float>&, const char*);
extern template xt::xtensor<float, 3> feed_forward<float>(const xt::xtensor<float, 3>&, const LinearParameters<float>&, const LinearParameters<float>&, Activation);
extern template xt::xtensor<double, 3> linear<double>(const xt::xtensor<double, 3>&, const LinearParameters<double>&, const char*);
extern template xt::xtensor<double, 3> feed_forward<double>(const xt::xtensor<double, 3>&, const LinearParameters<double>&, const LinearParameters<double>&, Activation);

}  // namespace vl
