// nn.MultiheadAttention's initial parameters (see torch_mha_init.hpp for the order and sources).
#include "numeric/torch_mha_init.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace vl::torch_rng {

// init.kaiming_uniform_(w, a=math.sqrt(5)) with mode='fan_in', nonlinearity='leaky_relu':
// calculate_gain gives math.sqrt(2.0 / (1 + a ** 2)); Python's a ** 2 is pow(a, 2.0), which
// equals a * a (pow is exact-rounded there, checked: 5.000000000000001 both ways).
double kaiming_uniform_bound_a_sqrt5(std::size_t fan_in) {
  const double a = std::sqrt(5.0);
  const double gain = std::sqrt(2.0 / (1.0 + a * a));
  const double std_dev = gain / std::sqrt(static_cast<double>(fan_in));
  return std::sqrt(3.0) * std_dev;
}

// Linear.reset_parameters: bound = 1 / math.sqrt(fan_in).
double linear_bias_bound(std::size_t fan_in) {
  return 1.0 / std::sqrt(static_cast<double>(fan_in));
}

// init.xavier_uniform_(w, gain=1.0): std = gain * math.sqrt(2.0 / float(fan_in + fan_out)),
// a = math.sqrt(3.0) * std.
double xavier_uniform_bound(std::size_t fan_in, std::size_t fan_out) {
  const double std_dev = 1.0 * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  return std::sqrt(3.0) * std_dev;
}

template <class T>
MhaParameters<T> mha_init(Generator& gen, std::size_t embed_dim, std::size_t num_heads) {
  if (embed_dim == 0 || num_heads == 0 || embed_dim % num_heads != 0) {
    throw std::invalid_argument("mha_init: embed_dim " + std::to_string(embed_dim) +
                                " must be positive and divisible by num_heads " +
                                std::to_string(num_heads));
  }
  const std::size_t d = embed_dim;
  MhaParameters<T> p;
  p.in_proj_weight = xt::xtensor<T, 2>::from_shape({3 * d, d});
  p.in_proj_bias = xt::zeros<T>({3 * d});
  p.out_proj_weight = xt::xtensor<T, 2>::from_shape({d, d});
  p.out_proj_bias = xt::xtensor<T, 1>::from_shape({d});

  // NonDynamicallyQuantizableLinear(d, d).reset_parameters()
  const double w_bound = kaiming_uniform_bound_a_sqrt5(d);
  uniform_fill<T>(gen, p.out_proj_weight.data(), d * d, -w_bound, w_bound);
  const double b_bound = linear_bias_bound(d);
  uniform_fill<T>(gen, p.out_proj_bias.data(), d, -b_bound, b_bound);

  // MultiheadAttention._reset_parameters()
  const double x_bound = xavier_uniform_bound(d, 3 * d);
  uniform_fill<T>(gen, p.in_proj_weight.data(), 3 * d * d, -x_bound, x_bound);
  p.out_proj_bias.fill(T(0));
  return p;
}

template MhaParameters<double> mha_init<double>(Generator&, std::size_t, std::size_t);
template MhaParameters<float> mha_init<float>(Generator&, std::size_t, std::size_t);

}  // namespace vl::torch_rng
