// The encoder layer and stack with the paper's steps, instantiated once for float and double: encoder_layer.hpp declares these
// extern, and holds the equations, the shapes and the definitions.
#include "kernels/reference/encoder_layer.hpp"

namespace vl {

template xt::xtensor<float, 3> encoder_layer<float, LayerSteps<float>>(const xt::xtensor<float, 3>&, const EncoderLayerParameters<float>&, std::size_t, const LayerOptions&, const MhaOptions<float>&);
template xt::xtensor<float, 3> encoder_stack<float, LayerSteps<float>>(xt::xtensor<float, 3>, const std::vector<EncoderLayerParameters<float>>&, std::size_t, const LayerOptions&, const MhaOptions<float>&);
template xt::xtensor<double, 3> encoder_layer<double, LayerSteps<double>>(const xt::xtensor<double, 3>&, const EncoderLayerParameters<double>&, std::size_t, const LayerOptions&, const MhaOptions<double>&);
template xt::xtensor<double, 3> encoder_stack<double, LayerSteps<double>>(xt::xtensor<double, 3>, const std::vector<EncoderLayerParameters<double>>&, std::size_t, const LayerOptions&, const MhaOptions<double>&);

}  // namespace vl
