// nn.Linear's and nn.LayerNorm's initial parameters (see torch_linear_init.hpp).
#include "numeric/torch_linear_init.hpp"

#include <stdexcept>
#include <string>

#include "numeric/torch_mha_init.hpp"

namespace vl::torch_rng {

template <class T>
LinearParameters<T> linear_init(Generator& gen, std::size_t in_features, std::size_t out_features) {
  if (in_features == 0 || out_features == 0)
    throw std::invalid_argument("linear_init: in_features " + std::to_string(in_features) + " and out_features " +
                                std::to_string(out_features) + " must be positive");
  LinearParameters<T> p;
  p.weight = xt::xtensor<T, 2>::from_shape({out_features, in_features});
  p.bias = xt::xtensor<T, 1>::from_shape({out_features});
  const double w_bound = kaiming_uniform_bound_a_sqrt5(in_features);  // fan_in = in_features
  uniform_fill<T>(gen, p.weight.data(), p.weight.size(), -w_bound, w_bound);
  const double b_bound = linear_bias_bound(in_features);
  uniform_fill<T>(gen, p.bias.data(), p.bias.size(), -b_bound, b_bound);
  return p;
}

template <class T>
LayerNormParameters<T> layer_norm_init(std::size_t d) {
  return {xt::ones<T>({d}), xt::zeros<T>({d})};
}

template LinearParameters<double> linear_init<double>(Generator&, std::size_t, std::size_t);
template LinearParameters<float> linear_init<float>(Generator&, std::size_t, std::size_t);
template LayerNormParameters<double> layer_norm_init<double>(std::size_t);
template LayerNormParameters<float> layer_norm_init<float>(std::size_t);

}  // namespace vl::torch_rng
