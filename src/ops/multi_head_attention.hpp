#pragma once
// Operation `multi_head_attention`: torch.nn.MultiheadAttention's forward, batch_first
// (kernels/reference/multi_head_attention.hpp computes it).
//
//   in   query (B, Sq, d), key and value (B, Sk, d), the module's parameters, the head count H, MhaOptions
//   out  (B, Sq, d); with need_weights the per-head weights (B, H, Sq, Sk)
//   options  weights (a backend may have multi-head attention without them)
//   vl-candidate/1  request "mha": query key value in/out_proj_* [attn_mask key_padding_mask] → y [weights]
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xoperation.hpp>
#include <xtensor/xtensor.hpp>

#include "numeric/torch_mha_init.hpp"
#include "ops/attention.hpp"
#include "ops/option.hpp"
#include "ops/tensors.hpp"

namespace vl {

/// The module's parameters (see numeric/torch_mha_init.hpp for torch's initialisation).
template <class T>
using MhaParameters = torch_rng::MhaParameters<T>;

template <class T>
struct MhaOptions {
  std::optional<xt::xarray<bool>> attn_mask = std::nullopt;         ///< torch bool: true = blocked
  std::optional<xt::xarray<T>> attn_bias = std::nullopt;            ///< torch float attn_mask: added
  std::optional<xt::xarray<bool>> key_padding_mask = std::nullopt;  ///< true = padding key
  bool causal = false;
  CausalAlignment alignment = CausalAlignment::top_left;
  bool need_weights = true;                                         ///< also return (B, H, Sq, Sk)
};

template <class T, std::size_t N>
struct MhaResult {
  xt::xtensor<T, N> output;       ///< (B, Sq, d), or (Sq, d) for 2-D inputs
  xt::xtensor<T, N + 1> weights;  ///< (B, H, Sq, Sk) / (H, Sq, Sk) if need_weights, else empty
};

}  // namespace vl

namespace vl::ops {

struct MultiHeadAttention {
  static constexpr const char* name = "multi-head-attention";
  static constexpr const char* request = "mha";
  static constexpr Option options[] = {Option::weights};

  /// The option a call uses: the per-head weights when asked for (need_weights).
  template <class T>
  static Option option_used(const Tensor3Of<T>&, const Tensor3Of<T>&, const Tensor3Of<T>&, const MhaParameters<T>&, std::size_t,
                            const MhaOptions<T>& o) {
    return o.need_weights ? Option::weights : Option::none;
  }

  template <class T>
  static std::vector<ResultShape> result_shapes(const MhaResult<T, 3>& r, const Tensor3Of<T>& query, const Tensor3Of<T>& key,
                                                const Tensor3Of<T>&, const MhaParameters<T>&, std::size_t heads,
                                                const MhaOptions<T>& o) {
    std::vector<ResultShape> s{{"y", "a multi-head attention output", shape_of(r.output), shape_of(query)}};
    if (o.need_weights)
      s.push_back({"weights", "multi-head attention weights", shape_of(r.weights), {query.shape(0), heads, query.shape(1), key.shape(1)}});
    return s;
  }

  template <class Request, class T>
  static void encode(Request& r, const Tensor3Of<T>& query, const Tensor3Of<T>& key, const Tensor3Of<T>& value,
                     const MhaParameters<T>& p, std::size_t heads, const MhaOptions<T>& o) {
    if (o.causal && o.alignment == CausalAlignment::bottom_right && query.shape(1) != key.shape(1))
      r.refuse("vl-candidate/1's mha has a top-left causal mask only (torch's is_causal)");
    r.input("query", xt::xarray<T>(query));
    r.input("key", xt::xarray<T>(key));
    r.input("value", xt::xarray<T>(value));
    r.input("in_proj_weight", xt::xarray<T>(p.in_proj_weight));
    r.input("in_proj_bias", xt::xarray<T>(p.in_proj_bias));
    r.input("out_proj_weight", xt::xarray<T>(p.out_proj_weight));
    r.input("out_proj_bias", xt::xarray<T>(p.out_proj_bias));
    // A float attn_mask came after the first version (a bool one, true = blocked): it goes only to
    // a candidate whose hello lists "float_attn_mask"; to another the request is refused (N/A).
    if (o.attn_bias && !r.knows("float_attn_mask"))
      r.refuse("its hello lists no attr 'float_attn_mask' (vl-candidate/1's additive attn_mask for mha; the first version's is bool)");
    if (o.attn_mask && o.attn_bias) {  // torch's float attn_mask, −∞ where the bool one blocks
      const xt::xarray<T> m = xt::where(*o.attn_mask, -std::numeric_limits<T>::infinity(), *o.attn_bias);
      r.input("attn_mask", m);
    } else if (o.attn_mask) {
      r.input("attn_mask", *o.attn_mask);
    } else if (o.attn_bias) {
      r.input("attn_mask", *o.attn_bias);
    }
    if (o.key_padding_mask) r.input("key_padding_mask", *o.key_padding_mask);
    r.attrs["num_heads"] = heads;
    r.attrs["causal"] = o.causal;
    r.output("y");
    if (o.need_weights) r.output("weights");
  }
  template <class Request, class T>
  static MhaResult<T, 3> decode(Request& r, const Tensor3Of<T>&, const Tensor3Of<T>&, const Tensor3Of<T>&, const MhaParameters<T>&,
                                std::size_t, const MhaOptions<T>& o) {
    MhaResult<T, 3> out;
    out.output = r.template result<T, 3>("y");
    if (o.need_weights) out.weights = r.template result<T, 4>("weights");
    return out;
  }
};

}  // namespace vl::ops
