#pragma once
// Operation `encoder_layer`: torch.nn.TransformerEncoderLayer in eval mode, batch_first
// (kernels/reference/encoder_layer.hpp).
//
//   in   x (B, S, d), the layer's parameters, the head count, LayerOptions, the self-attention's MhaOptions
//   out  (B, S, d)
//   vl-candidate/1  no request
#include <cstddef>
#include <string>
#include <vector>

#include "numeric/torch_transformer_init.hpp"
#include "ops/layer_norm.hpp"
#include "ops/multi_head_attention.hpp"

namespace vl {

/// The feed-forward network's activation (torch's `activation`).
enum class Activation { relu, gelu };

inline std::string to_string(Activation a) { return a == Activation::relu ? "relu" : "gelu"; }

template <class T>
using EncoderLayerParameters = torch_rng::EncoderLayerParameters<T>;

struct LayerOptions {
  bool norm_first = false;                 ///< pre-norm (torch's norm_first); false: the paper's post-norm
  Activation activation = Activation::relu;
  double eps = kLayerNormEps;              ///< LayerNorm's ε
};

}  // namespace vl

namespace vl::ops {

struct EncoderLayer {
  static constexpr const char* name = "encoder-layer";
  static constexpr const char* request = nullptr;
  template <class T>
  static std::vector<ResultShape> result_shapes(const Tensor3Of<T>& y, const Tensor3Of<T>& x, const EncoderLayerParameters<T>&, std::size_t,
                                                const LayerOptions&, const MhaOptions<T>&) {
    return same_shape("an encoder-layer output", y, x);
  }
};

}  // namespace vl::ops
