// The decoder layer and stack with the paper's steps, instantiated once for float and double: decoder_layer.hpp declares these
// extern, and holds the equations, the shapes and the definitions.
#include "kernels/reference/decoder_layer.hpp"

namespace vl {

template xt::xtensor<float, 3> decoder_layer<float, LayerSteps<float>>(const xt::xtensor<float, 3>&, const xt::xtensor<float, 3>&, const DecoderLayerParameters<float>&, std::size_t, const LayerOptions&, const MhaOptions<float>&, const MhaOptions<float>&);
template xt::xtensor<float, 3> decoder_stack<float, LayerSteps<float>>(xt::xtensor<float, 3>, const xt::xtensor<float, 3>&, const std::vector<DecoderLayerParameters<float>>&, std::size_t, const LayerOptions&, const MhaOptions<float>&, const MhaOptions<float>&);
template xt::xtensor<float, 3> shift_right<float>(const xt::xtensor<float, 3>&, const xt::xtensor<float, 1>&);
template xt::xtensor<double, 3> decoder_layer<double, LayerSteps<double>>(const xt::xtensor<double, 3>&, const xt::xtensor<double, 3>&, const DecoderLayerParameters<double>&, std::size_t, const LayerOptions&, const MhaOptions<double>&, const MhaOptions<double>&);
template xt::xtensor<double, 3> decoder_stack<double, LayerSteps<double>>(xt::xtensor<double, 3>, const xt::xtensor<double, 3>&, const std::vector<DecoderLayerParameters<double>>&, std::size_t, const LayerOptions&, const MhaOptions<double>&, const MhaOptions<double>&);
template xt::xtensor<double, 3> shift_right<double>(const xt::xtensor<double, 3>&, const xt::xtensor<double, 1>&);

}  // namespace vl
