// Layer normalisation: the one instantiation for float and double of the templates layer_norm.hpp
// declares extern (the equations and shapes are there).
#include "kernels/reference/layer_norm.hpp"

namespace vl {

template xt::xtensor<float, 3> layer_norm<float>(const xt::xtensor<float, 3>&, const LayerNormParameters<float>&, double);
template xt::xtensor<double, 3> layer_norm<double>(const xt::xtensor<double, 3>&, const LayerNormParameters<double>&, double);

}  // namespace vl
