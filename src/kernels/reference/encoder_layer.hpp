#pragma once
// The Transformer's encoder layer (Vaswani et al. 2017, §3.1) as torch.nn.TransformerEncoderLayer
// computes it in eval mode (dropout off), batch_first:
//
//   post-norm (the paper's, norm_first = false):  x ← LN₁(x + SA(x));     x ← LN₂(x + FFN(x))
//   pre-norm  (norm_first = true):                x ← x + SA(LN₁(x));     x ← x + FFN(LN₂(x))
//
//   x: (B, S, d) → (B, S, d).  SA = multi-head self-attention (multi_head_attention.hpp) with the
//   layer's masks; FFN = feed_forward.hpp; LN = layer_norm.hpp.
//
// Every sub-layer is wrapped in a residual x + Sublayer(·), which is why each must return d: the
// residual refuses any other width. The steps (norm, residual, the attentions) are a policy, so
// that a negative control can instantiate the layer with one step broken (src/lessons/); the
// policy used here is the paper's.
#include <cstddef>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xtensor.hpp>

#include "kernels/reference/feed_forward.hpp"
#include "kernels/reference/layer_norm.hpp"
#include "kernels/reference/multi_head_attention.hpp"
#include "numeric/torch_transformer_init.hpp"
#include "ops/encoder_layer.hpp"

namespace vl {

/// The layer's steps as the paper and torch compute them.
template <class T>
struct LayerSteps {
  static xt::xtensor<T, 3> norm(const xt::xtensor<T, 3>& x, const LayerNormParameters<T>& p, double eps) {
    return layer_norm<T>(x, p, eps);
  }
  /// x + Sublayer(x). Throws std::invalid_argument when the sub-layer changed the width.
  static xt::xtensor<T, 3> residual(const xt::xtensor<T, 3>& x, const xt::xtensor<T, 3>& sub) {
    if (sub.shape() != x.shape())
      throw std::invalid_argument(fmt::format("residual x + Sublayer(x): the sub-layer returns ({}) for an input ({}); "
                                              "every sub-layer must keep the width d_model", fmt::join(sub.shape(), ", "),
                                              fmt::join(x.shape(), ", ")));
    return x + sub;
  }
  /// Multi-head attention of `queries` over `keys_values` (self-attention: the same tensor).
  static xt::xtensor<T, 3> attend(const xt::xtensor<T, 3>& queries, const xt::xtensor<T, 3>& keys_values, const MhaParameters<T>& p,
                                  std::size_t heads, MhaOptions<T> o) {
    o.need_weights = false;
    return multi_head_attention<T>(queries, keys_values, keys_values, p, heads, o).output;
  }
  /// Encoder–decoder attention: queries from the decoder, keys and values from the encoder's output.
  static xt::xtensor<T, 3> cross(const xt::xtensor<T, 3>& x, const xt::xtensor<T, 3>& memory, const MhaParameters<T>& p,
                                 std::size_t heads, const MhaOptions<T>& o) {
    return attend(x, memory, p, heads, o);
  }
};

/// One sub-layer in its residual and norm: post-norm LN(x + f(x)), pre-norm x + f(LN(x)).
template <class T, class Steps, class F>
xt::xtensor<T, 3> sublayer(const xt::xtensor<T, 3>& x, const LayerNormParameters<T>& norm, const LayerOptions& o, F f) {
  if (o.norm_first) return Steps::residual(x, f(Steps::norm(x, norm, o.eps)));
  return Steps::norm(Steps::residual(x, f(x)), norm, o.eps);
}

/// The encoder layer on x (B, S, d); `self` holds the self-attention's masks (torch's src_mask,
/// src_key_padding_mask). Throws std::invalid_argument on inconsistent shapes, naming them.
template <class T, class Steps = LayerSteps<T>>
xt::xtensor<T, 3> encoder_layer(const xt::xtensor<T, 3>& x, const EncoderLayerParameters<T>& p, std::size_t heads, const LayerOptions& o,
                                const MhaOptions<T>& self = {}) {
  xt::xtensor<T, 3> h = sublayer<T, Steps>(x, p.norm1, o, [&](const auto& in) { return Steps::attend(in, in, p.self_attn, heads, self); });
  return sublayer<T, Steps>(h, p.norm2, o, [&](const auto& in) { return feed_forward<T>(in, p.linear1, p.linear2, o.activation); });
}

/// nn.TransformerEncoder without a final norm: the layers in turn.
template <class T, class Steps = LayerSteps<T>>
xt::xtensor<T, 3> encoder_stack(xt::xtensor<T, 3> x, const std::vector<EncoderLayerParameters<T>>& layers, std::size_t heads,
                                const LayerOptions& o, const MhaOptions<T>& self = {}) {
  for (const auto& p : layers) x = encoder_layer<T, Steps>(x, p, heads, o, self);
  return x;
}

// Instantiated once, for float and double with the usual steps, in encoder_layer.cpp: a file that calls
// them compiles none of their bodies. Other steps (a negative control's broken one) instantiate
// from the definitions above where they are used.
extern template xt::xtensor<float, 3> encoder_layer<float, LayerSteps<float>>(const xt::xtensor<float, 3>&, const EncoderLayerParameters<float>&, std::size_t, const LayerOptions&, const MhaOptions<float>&);
extern template xt::xtensor<float, 3> encoder_stack<float, LayerSteps<float>>(xt::xtensor<float, 3>, const std::vector<EncoderLayerParameters<float>>&, std::size_t, const LayerOptions&, const MhaOptions<float>&);
extern template xt::xtensor<double, 3> encoder_layer<double, LayerSteps<double>>(const xt::xtensor<double, 3>&, const EncoderLayerParameters<double>&, std::size_t, const LayerOptions&, const MhaOptions<double>&);
extern template xt::xtensor<double, 3> encoder_stack<double, LayerSteps<double>>(xt::xtensor<double, 3>, const std::vector<EncoderLayerParameters<double>>&, std::size_t, const LayerOptions&, const MhaOptions<double>&);

}  // namespace vl
