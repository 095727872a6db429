#pragma once
// What the Transformer layer requests of vl-candidate/1 (`encoder_layer`, `decoder_layer`) share:
// torch's constructor arguments as attrs and torch's forward masks as inputs, so that an adapter
// builds nn.TransformerEncoderLayer / nn.TransformerDecoderLayer from the request and calls it as
// torch is called (docs/candidates.md, "Operations").
//
//   attrs   nhead, d_model, dim_feedforward, norm_first, activation ("relu" | "gelu"), layer_norm_eps
//   inputs  every state_dict() entry under torch's name ("self_attn.in_proj_weight", "norm1.bias", ...);
//           a sub-layer's bool mask (Sq, Sk), true = blocked (its attn_mask or'ed with its causal
//           mask), and its key_padding_mask (B, Sk), true = padding, under torch's forward names
#include <cstddef>
#include <optional>
#include <string>

#include <xtensor/xarray.hpp>
#include <xtensor/xoperation.hpp>

#include "numeric/torch_transformer_init.hpp"
#include "ops/causal_mask.hpp"
#include "ops/layer_options.hpp"
#include "ops/multi_head_attention.hpp"

namespace vl::ops::layer_request {

/// The causal mask torch takes, true = blocked (ops/causal_mask.hpp), or'ed with the options'
/// bool attn_mask; none if neither is set.
template <class T>
std::optional<xt::xarray<bool>> blocked(const MhaOptions<T>& o, std::size_t sq, std::size_t sk) {
  if (!o.causal) return o.attn_mask;
  const xt::xarray<bool> future = causal_blocked(sq, sk, o.alignment);
  if (!o.attn_mask) return future;
  return xt::xarray<bool>(*o.attn_mask || future);
}

/// One sub-layer's masks under torch's forward names (`mask`, `padding`); a float mask is refused:
/// the layer requests carry torch's bool masks.
template <class Request, class T>
void masks(Request& r, const char* mask, const char* padding, const MhaOptions<T>& o, std::size_t sq, std::size_t sk) {
  if (o.attn_bias) r.refuse("vl-candidate/1's layer requests carry bool masks only, not a float (additive) one");
  if (const auto m = blocked(o, sq, sk)) r.input(mask, *m);
  if (o.key_padding_mask) r.input(padding, *o.key_padding_mask);
}

/// torch's constructor arguments, and every parameter under its state_dict() name.
template <class Request, class P>
void layer(Request& r, const P& p, std::size_t d_model, std::size_t heads, const LayerOptions& o) {
  using T = typename decltype(p.linear1.weight)::value_type;
  torch_rng::state_entries(p, [&](const std::string& name, const auto& t) { r.input(name, xt::xarray<T>(t)); });
  r.attrs["nhead"] = heads;
  r.attrs["d_model"] = d_model;
  r.attrs["dim_feedforward"] = p.linear1.weight.shape(0);
  r.attrs["norm_first"] = o.norm_first;
  r.attrs["activation"] = to_string(o.activation);
  r.attrs["layer_norm_eps"] = o.eps;
}

}  // namespace vl::ops::layer_request
