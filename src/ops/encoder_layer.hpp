#pragma once
// Operation `encoder_layer`: torch.nn.TransformerEncoderLayer in eval mode, batch_first
// (kernels/reference/encoder_layer.hpp).
//
//   in   x (B, S, d), the layer's parameters, the head count, LayerOptions, the self-attention's MhaOptions
//   out  (B, S, d)
//   vl-candidate/1  request "encoder_layer": src, the state_dict() entries, [src_mask] [src_key_padding_mask],
//                   torch's constructor arguments as attrs (ops/layer_request.hpp) → y
#include <cstddef>
#include <string>
#include <vector>

#include "numeric/torch_transformer_init.hpp"
#include "ops/layer_norm.hpp"
#include "ops/layer_options.hpp"
#include "ops/layer_request.hpp"
#include "ops/multi_head_attention.hpp"

namespace vl {

template <class T>
using EncoderLayerParameters = torch_rng::EncoderLayerParameters<T>;

}  // namespace vl

namespace vl::ops {

struct EncoderLayer {
  static constexpr const char* name = "encoder-layer";
  static constexpr const char* request = "encoder_layer";
  template <class T>
  static std::vector<ResultShape> result_shapes(const Tensor3Of<T>& y, const Tensor3Of<T>& x, const EncoderLayerParameters<T>&, std::size_t,
                                                const LayerOptions&, const MhaOptions<T>&) {
    return same_shape("an encoder-layer output", y, x);
  }

  /// torch's forward(src, src_mask, src_key_padding_mask) of a layer built from the attrs.
  template <class Request, class T>
  static void encode(Request& r, const Tensor3Of<T>& x, const EncoderLayerParameters<T>& p, std::size_t heads, const LayerOptions& o,
                     const MhaOptions<T>& self) {
    r.input("src", xt::xarray<T>(x));
    layer_request::layer(r, p, x.shape(2), heads, o);
    layer_request::masks(r, "src_mask", "src_key_padding_mask", self, x.shape(1), x.shape(1));
    r.output("y");
  }
  template <class Request, class T>
  static Tensor3Of<T> decode(Request& r, const Tensor3Of<T>&, const EncoderLayerParameters<T>&, std::size_t, const LayerOptions&,
                             const MhaOptions<T>&) {
    return r.template result<T, 3>("y");
  }
};

}  // namespace vl::ops
