// The exact attention backward, instantiated once for float and double: attention_backward.hpp declares these
// extern, and holds the equations, the shapes and the definitions.
#include "kernels/reference/attention_backward.hpp"

namespace vl {

template xt::xtensor<float, 2> softmax_rows_backward<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&);
template AttentionGradients<float, 2> attention_backward_head<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, float);
template AttentionGradients<float, 4> attention_backward<float>(const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&, AttentionOptions<float>);
template xt::xtensor<double, 2> softmax_rows_backward<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&);
template AttentionGradients<double, 2> attention_backward_head<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, double);
template AttentionGradients<double, 4> attention_backward<double>(const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&, AttentionOptions<double>);

}  // namespace vl
