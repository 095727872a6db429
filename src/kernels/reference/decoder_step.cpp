// The cached decoder step, instantiated once for float and double: decoder_step.hpp declares these
// extern, and holds the equations, the shapes and the definitions.
#include "kernels/reference/decoder_step.hpp"

namespace vl {

template xt::xtensor<float, 3> decoder_layer_step<float, StepSteps<float>>(const xt::xtensor<float, 3>&, const xt::xtensor<float, 3>&, const DecoderLayerParameters<float>&, std::size_t, const LayerOptions&, LayerCache<float>&, const MhaOptions<float>&);
template xt::xtensor<double, 3> decoder_layer_step<double, StepSteps<double>>(const xt::xtensor<double, 3>&, const xt::xtensor<double, 3>&, const DecoderLayerParameters<double>&, std::size_t, const LayerOptions&, LayerCache<double>&, const MhaOptions<double>&);

}  // namespace vl
