#pragma once
// Operation `decoder_layer`: torch.nn.TransformerDecoderLayer in eval mode, batch_first
// (kernels/reference/decoder_layer.hpp).
//
//   in   tgt (B, T, d), memory (B, S, d), the layer's parameters, the head count, LayerOptions,
//        the self- and the cross-attention's MhaOptions
//   out  (B, T, d)
//   vl-candidate/1  request "decoder_layer": tgt, memory, the state_dict() entries, [tgt_mask] [memory_mask]
//                   [tgt_key_padding_mask] [memory_key_padding_mask], torch's constructor arguments
//                   as attrs (ops/layer_request.hpp) → y
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
  static constexpr const char* request = "decoder_layer";
  template <class T>
  static std::vector<ResultShape> result_shapes(const Tensor3Of<T>& y, const Tensor3Of<T>& tgt, const Tensor3Of<T>&, const DecoderLayerParameters<T>&,
                                                std::size_t, const LayerOptions&, const MhaOptions<T>&, const MhaOptions<T>&) {
    return same_shape("a decoder-layer output", y, tgt);
  }

  /// torch's forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
  /// memory_key_padding_mask) of a layer built from the attrs.
  template <class Request, class T>
  static void encode(Request& r, const Tensor3Of<T>& tgt, const Tensor3Of<T>& memory, const DecoderLayerParameters<T>& p, std::size_t heads,
                     const LayerOptions& o, const MhaOptions<T>& self, const MhaOptions<T>& cross) {
    r.input("tgt", xt::xarray<T>(tgt));
    r.input("memory", xt::xarray<T>(memory));
    layer_request::layer(r, p, tgt.shape(2), heads, o);
    layer_request::masks(r, "tgt_mask", "tgt_key_padding_mask", self, tgt.shape(1), tgt.shape(1));
    layer_request::masks(r, "memory_mask", "memory_key_padding_mask", cross, tgt.shape(1), memory.shape(1));
    r.output("y");
  }
  template <class Request, class T>
  static Tensor3Of<T> decode(Request& r, const Tensor3Of<T>&, const Tensor3Of<T>&, const DecoderLayerParameters<T>&, std::size_t,
                             const LayerOptions&, const MhaOptions<T>&, const MhaOptions<T>&) {
    return r.template result<T, 3>("y");
  }
};

}  // namespace vl::ops
