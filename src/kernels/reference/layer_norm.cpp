// Layer normalisation, instantiated once for float and double: layer_norm.hpp declares these
// extern, and holds the equations, the shapes and the definitions.
#include "kernels/reference/layer_norm.hpp"

namespace vl {

template xt::xtensor<float, 3> layer_norm<float>(const xt::xtensor<float, 3>&, const LayerNormParameters<float>&, double);
template xt::xtensor<double, 3> layer_norm<double>(const xt::xtensor<double, 3>&, const LayerNormParameters<double>&, double);

}  // namespace vl
