#pragma once
// The parameters torch.nn.TransformerEncoderLayer(d, h, d_ff, dtype=T) and
// TransformerDecoderLayer(d, h, d_ff, dtype=T) start with, drawn as torch 1.13 draws them
// (torch/nn/modules/transformer.py): the sub-modules are built in this order, each drawing at
// construction (nothing is re-initialised afterwards):
//
//   encoder layer: self_attn (MultiheadAttention, torch_mha_init.hpp), linear1 = Linear(d, d_ff),
//                  linear2 = Linear(d_ff, d), norm1, norm2 (LayerNorm: no draws)
//   decoder layer: self_attn, multihead_attn, linear1, linear2, norm1, norm2, norm3
//
// nn.TransformerEncoder(layer, N) / TransformerDecoder(layer, N) deep-copy the layer N times
// (_get_clones): the N layers start identical and nothing more is drawn (stack_of below).
//
// state_entries(p, f) calls f(name, tensor) for every entry of the layer's state_dict(), in
// torch's order and under torch's names ("self_attn.in_proj_weight", "linear1.bias", ...): the
// one list that `lessons rng torch ...-layer-init` writes and `lessons eval ...-layer` reads.
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "numeric/torch_linear_init.hpp"
#include "numeric/torch_mha_init.hpp"
#include "numeric/torch_random.hpp"

namespace vl::torch_rng {

template <class T>
struct EncoderLayerParameters {
  MhaParameters<T> self_attn;
  LinearParameters<T> linear1, linear2;  ///< (d_ff, d), (d, d_ff)
  LayerNormParameters<T> norm1, norm2;
};

template <class T>
struct DecoderLayerParameters {
  MhaParameters<T> self_attn, multihead_attn;  ///< masked self-attention; encoder–decoder attention
  LinearParameters<T> linear1, linear2;
  LayerNormParameters<T> norm1, norm2, norm3;
};

/// Throws std::invalid_argument when d, heads or d_ff is 0 or heads does not divide d.
template <class T>
EncoderLayerParameters<T> encoder_layer_init(Generator& gen, std::size_t d_model, std::size_t heads, std::size_t d_ff);
template <class T>
DecoderLayerParameters<T> decoder_layer_init(Generator& gen, std::size_t d_model, std::size_t heads, std::size_t d_ff);

/// nn.TransformerEncoder(layer, N) / TransformerDecoder(layer, N): N copies of the same values.
template <class P>
std::vector<P> stack_of(const P& layer, std::size_t n) {
  return std::vector<P>(n, layer);
}

namespace detail {
template <class M, class F>
void mha_entries(const std::string& prefix, M& m, F& f) {
  f(prefix + "in_proj_weight", m.in_proj_weight);
  f(prefix + "in_proj_bias", m.in_proj_bias);
  f(prefix + "out_proj.weight", m.out_proj_weight);
  f(prefix + "out_proj.bias", m.out_proj_bias);
}
template <class L, class F>
void pair_entries(const std::string& prefix, L& l, F& f) {
  f(prefix + "weight", l.weight);
  f(prefix + "bias", l.bias);
}
}  // namespace detail

/// f(name, tensor) for every state_dict() entry of an encoder or decoder layer (const or not).
template <class P, class F>
void state_entries(P& p, F&& f) {
  detail::mha_entries("self_attn.", p.self_attn, f);
  constexpr bool decoder = requires(P& q) { q.multihead_attn; };
  if constexpr (decoder) detail::mha_entries("multihead_attn.", p.multihead_attn, f);
  detail::pair_entries("linear1.", p.linear1, f);
  detail::pair_entries("linear2.", p.linear2, f);
  detail::pair_entries("norm1.", p.norm1, f);
  detail::pair_entries("norm2.", p.norm2, f);
  if constexpr (decoder) detail::pair_entries("norm3.", p.norm3, f);
}

/// The number of parameters: the sum of every entry's size.
template <class P>
std::size_t parameter_count(const P& p) {
  std::size_t n = 0;
  state_entries(p, [&](const std::string&, const auto& t) { n += t.size(); });
  return n;
}

extern template EncoderLayerParameters<double> encoder_layer_init<double>(Generator&, std::size_t, std::size_t, std::size_t);
extern template EncoderLayerParameters<float> encoder_layer_init<float>(Generator&, std::size_t, std::size_t, std::size_t);
extern template DecoderLayerParameters<double> decoder_layer_init<double>(Generator&, std::size_t, std::size_t, std::size_t);
extern template DecoderLayerParameters<float> decoder_layer_init<float>(Generator&, std::size_t, std::size_t, std::size_t);

}  // namespace vl::torch_rng
