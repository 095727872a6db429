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
  template <class T>
  static std::vector<ResultShape> result_shapes(const Tensor3Of<T>& y, const Tensor3Of<T>& tgt, const Tensor3Of<T>&, const DecoderLayerParameters<T>&,
                                                std::size_t, const LayerOptions&, const MhaOptions<T>&, const MhaOptions<T>&) {
    return same_shape("a decoder-layer output", y, tgt);
  }
};

}  // namespace vl::ops
