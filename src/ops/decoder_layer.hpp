#pragma once
// Operation `decoder_layer`: torch.nn.TransformerDecoderLayer in eval mode, batch_first
// (kernels/reference/decoder_layer.hpp).
//
//   in   tgt (B, T, d), memory (B, S, d), the layer's parameters, the head count, LayerOptions,
//        the self- and the cross-attention's MhaOptions
//   out  (B, T, d)
//   vl-candidate/1  no request
#include <cstddef>
#include <vector>

#include "ops/encoder_layer.hpp"

namespace vl {

template <class T>
using DecoderLayerParameters = torch_rng::DecoderLayerParameters<T>;

}  // namespace vl

namespace vl::ops {

struct DecoderLayer {
  static constexpr const char* name = "decoder-layer";
  static constexpr const char* request = nullptr;
  static std::vector<ResultShape> result_shapes(const Tensor3& y, const Tensor3& tgt, const Tensor3&, const DecoderLayerParameters<double>&,
                                                std::size_t, const LayerOptions&, const MhaOptions<double>&, const MhaOptions<double>&) {
    return same_shape("a decoder-layer output", y, tgt);
  }
};

}  // namespace vl::ops
