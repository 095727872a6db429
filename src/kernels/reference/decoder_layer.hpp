#pragma once
// The Transformer's decoder layer (Vaswani et al. 2017, §3.1, §3.2.3) as
// torch.nn.TransformerDecoderLayer computes it in eval mode (dropout off), batch_first: the
// encoder layer's two sub-layers with the encoder–decoder attention between them.
//
//   post-norm:  x ← LN₁(x + SA(x));   x ← LN₂(x + CA(x, m));   x ← LN₃(x + FFN(x))
//   pre-norm:   x ← x + SA(LN₁(x));   x ← x + CA(LN₂(x), m);   x ← x + FFN(LN₃(x))
//
//   tgt x: (B, T, d), memory m (the encoder's output): (B, S, d) → (B, T, d).
//   SA: masked self-attention (`self.causal`: position i sees 0 … i; torch's tgt_mask);
//   CA: queries from x, keys and values from m (`cross`: torch's memory masks).
// The three attentions are the same multi_head_attention; only where Q, K, V come from and which
// connections are allowed differ.
#include <cstddef>
#include <stdexcept>
#include <vector>

#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/encoder_layer.hpp"
#include "ops/decoder_layer.hpp"
#include "ops/shift_right.hpp"

namespace vl {

template <class T, class Steps = LayerSteps<T>>
xt::xtensor<T, 3> decoder_layer(const xt::xtensor<T, 3>& tgt, const xt::xtensor<T, 3>& memory, const DecoderLayerParameters<T>& p,
                                std::size_t heads, const LayerOptions& o, const MhaOptions<T>& self = {}, const MhaOptions<T>& cross = {}) {
  xt::xtensor<T, 3> x =
      sublayer<T, Steps>(tgt, p.norm1, o, [&](const auto& in) { return Steps::attend(in, in, p.self_attn, heads, self); });
  x = sublayer<T, Steps>(x, p.norm2, o, [&](const auto& in) { return Steps::cross(in, memory, p.multihead_attn, heads, cross); });
  return sublayer<T, Steps>(x, p.norm3, o, [&](const auto& in) { return feed_forward<T>(in, p.linear1, p.linear2, o.activation); });
}

/// nn.TransformerDecoder without a final norm: the layers in turn, each reading the same memory.
template <class T, class Steps = LayerSteps<T>>
xt::xtensor<T, 3> decoder_stack(xt::xtensor<T, 3> x, const xt::xtensor<T, 3>& memory, const std::vector<DecoderLayerParameters<T>>& layers,
                                std::size_t heads, const LayerOptions& o, const MhaOptions<T>& self = {}, const MhaOptions<T>& cross = {}) {
  for (const auto& p : layers) x = decoder_layer<T, Steps>(x, memory, p, heads, o, self, cross);
  return x;
}

/// The decoder's input in training (teacher forcing, §3.1: "the output embeddings are offset by
/// one position"): row 0 is the start row, row i the target's row i − 1; the target's last row
/// is dropped.  target (B, T, d), start (d) → (B, T, d).
template <class T>
xt::xtensor<T, 3> shift_right(const xt::xtensor<T, 3>& target, const xt::xtensor<T, 1>& start) {
  const std::size_t B = target.shape(0), n = target.shape(1), d = target.shape(2);
  if (start.size() != d) throw std::invalid_argument("shift_right: the start row's width differs from the target's");
  xt::xtensor<T, 3> x = xt::xtensor<T, 3>::from_shape(target.shape());
  for (std::size_t b = 0; b < B; ++b) {
    if (n == 0) continue;
    xt::view(x, b, 0) = start;
    for (std::size_t i = 1; i < n; ++i) xt::view(x, b, i) = xt::view(target, b, i - 1);
  }
  return x;
}

// Instantiated once, for float and double with the usual steps, in decoder_layer.cpp: a file that calls
// them compiles none of their bodies. Other steps (a negative control's broken one) instantiate
// from the definitions above where they are used.
extern template xt::xtensor<float, 3> decoder_layer<float, LayerSteps<float>>(const xt::xtensor<float, 3>&, const xt::xtensor<float, 3>&, const DecoderLayerParameters<float>&, std::size_t, const LayerOptions&, const MhaOptions<float>&, const MhaOptions<float>&);
extern template xt::xtensor<float, 3> decoder_stack<float, LayerSteps<float>>(xt::xtensor<float, 3>, const xt::xtensor<float, 3>&, const std::vector<DecoderLayerParameters<float>>&, std::size_t, const LayerOptions&, const MhaOptions<float>&, const MhaOptions<float>&);
extern template xt::xtensor<float, 3> shift_right<float>(const xt::xtensor<float, 3>&, const xt::xtensor<float, 1>&);
extern template xt::xtensor<double, 3> decoder_layer<double, LayerSteps<double>>(const xt::xtensor<double, 3>&, const xt::xtensor<double, 3>&, const DecoderLayerParameters<double>&, std::size_t, const LayerOptions&, const MhaOptions<double>&, const MhaOptions<double>&);
extern template xt::xtensor<double, 3> decoder_stack<double, LayerSteps<double>>(xt::xtensor<double, 3>, const xt::xtensor<double, 3>&, const std::vector<DecoderLayerParameters<double>>&, std::size_t, const LayerOptions&, const MhaOptions<double>&, const MhaOptions<double>&);
extern template xt::xtensor<double, 3> shift_right<double>(const xt::xtensor<double, 3>&, const xt::xtensor<double, 1>&);

}  // namespace vl
