#pragma once
// The parameters torch.nn.MultiheadAttention(embed_dim, num_heads, dtype=T) starts with, drawn
// from a vl::torch_rng::Generator exactly as torch 1.13/2.x draws them from its CPU generator.
//
// Order (torch/nn/modules/activation.py, linear.py, init.py):
//   1. in_proj_weight (3d, d) and in_proj_bias (3d) are allocated (torch.empty, no draws);
//   2. out_proj = NonDynamicallyQuantizableLinear(d, d) runs Linear.reset_parameters:
//        kaiming_uniform_(weight, a=sqrt(5)): gain = sqrt(2 / (1 + a**2)), std = gain/sqrt(d),
//        bound = sqrt(3) * std; weight.uniform_(-bound, bound)            (d*d draws)
//        bias.uniform_(-1/sqrt(d), 1/sqrt(d))                             (d draws)
//   3. _reset_parameters: xavier_uniform_(in_proj_weight): fan_in = d, fan_out = 3d,
//        a = sqrt(3) * (1 * sqrt(2 / (d + 3d))); in_proj_weight.uniform_(-a, a)   (3d*d draws)
//      then in_proj_bias = 0 and out_proj.bias = 0 (its draws are spent but overwritten).
// The bounds are Python floats (double) whatever T is; uniform_ rounds them to T.
#include <cstddef>

#include <xtensor/xtensor.hpp>

#include "numeric/torch_random.hpp"

namespace vl::torch_rng {

template <class T>
struct MhaParameters {
  xt::xtensor<T, 2> in_proj_weight;   ///< (3d, d): W_Q, W_K, W_V stacked
  xt::xtensor<T, 1> in_proj_bias;     ///< (3d): zeros
  xt::xtensor<T, 2> out_proj_weight;  ///< (d, d)
  xt::xtensor<T, 1> out_proj_bias;    ///< (d): zeros
};

/// nn.MultiheadAttention(embed_dim, num_heads, dtype=T) initialised from `gen` (T = double or
/// float). Throws std::invalid_argument when embed_dim is 0 or not divisible by num_heads (as
/// torch's assertion). The heads do not change the parameters, only this check.
template <class T>
MhaParameters<T> mha_init(Generator& gen, std::size_t embed_dim, std::size_t num_heads);

/// The three uniform bounds above, in double as Python computes them.
double kaiming_uniform_bound_a_sqrt5(std::size_t fan_in);
double linear_bias_bound(std::size_t fan_in);
double xavier_uniform_bound(std::size_t fan_in, std::size_t fan_out);

extern template MhaParameters<double> mha_init<double>(Generator&, std::size_t, std::size_t);
extern template MhaParameters<float> mha_init<float>(Generator&, std::size_t, std::size_t);

}  // namespace vl::torch_rng
