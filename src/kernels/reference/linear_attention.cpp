// Linear attention's three forms, instantiated once for float and double: linear_attention.hpp declares these
// extern, and holds the equations, the shapes and the definitions.
#include "kernels/reference/linear_attention.hpp"

namespace vl {

template xt::xtensor<float, 2> linear_attention_parallel<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&);
template xt::xtensor<float, 2> linear_attention_recurrent<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&);
template xt::xtensor<float, 2> linear_attention_chunked<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, std::size_t);
template xt::xtensor<double, 2> linear_attention_parallel<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&);
template xt::xtensor<double, 2> linear_attention_recurrent<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&);
template xt::xtensor<double, 2> linear_attention_chunked<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, std::size_t);

}  // namespace vl
