#pragma once
// The parameters torch.nn.Linear(in, out, dtype=T) and torch.nn.LayerNorm(d, dtype=T) start with,
// drawn from a vl::torch_rng::Generator exactly as torch 1.13 draws them
// (torch/nn/modules/linear.py Linear.reset_parameters, normalization.py LayerNorm.reset_parameters):
//
//   Linear:    kaiming_uniform_(weight, a=sqrt(5)) on weight (out, in): bound = sqrt(3)·sqrt(2/(1+a²))/sqrt(in),
//              weight.uniform_(-bound, bound)                                   (out·in draws)
//              bias.uniform_(-1/sqrt(in), 1/sqrt(in))                           (out draws)
//   LayerNorm: weight = ones(d), bias = zeros(d)                                (no draws)
// The bounds are those of torch_mha_init.hpp (the same init functions).
#include <cstddef>

#include <xtensor/xtensor.hpp>

#include "numeric/torch_random.hpp"

namespace vl::torch_rng {

template <class T>
struct LinearParameters {
  xt::xtensor<T, 2> weight;  ///< (out, in)
  xt::xtensor<T, 1> bias;    ///< (out)
};

template <class T>
struct LayerNormParameters {
  xt::xtensor<T, 1> weight;  ///< γ (d): ones
  xt::xtensor<T, 1> bias;    ///< β (d): zeros
};

/// nn.Linear(in_features, out_features, dtype=T) initialised from `gen`.
template <class T>
LinearParameters<T> linear_init(Generator& gen, std::size_t in_features, std::size_t out_features);

/// nn.LayerNorm(d, dtype=T): no draws.
template <class T>
LayerNormParameters<T> layer_norm_init(std::size_t d);

extern template LinearParameters<double> linear_init<double>(Generator&, std::size_t, std::size_t);
extern template LinearParameters<float> linear_init<float>(Generator&, std::size_t, std::size_t);
extern template LayerNormParameters<double> layer_norm_init<double>(std::size_t);
extern template LayerNormParameters<float> layer_norm_init<float>(std::size_t);

}  // namespace vl::torch_rng
