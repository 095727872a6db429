#pragma once
// Decoding one position at a time with a KV cache (Vaswani et al. 2017, §3.2.3: position i may
// depend only on what is known before it). The decoder layer of decoder_layer.hpp at the one new
// position t, its masked self-attention reading the keys and values of positions 0 … t from the
// layer's cache:
//
//   s = x_t (post-norm) or LN₁(x_t) (pre-norm)           x_t: (B, 1, d)
//   q, k, v = s W_qᵀ + b_q, s W_kᵀ + b_k, s W_vᵀ + b_v     (B, 1, d) each
//   K ← [K; k],  V ← [V; v]                                the cache: (B, t + 1, d) each
//   SA(x_t) = concat_h softmax(q_h K_hᵀ / √dh) V_h · W_oᵀ + b_o
//
// then the encoder–decoder attention and the FFN on that position as in the full layer. Run for
// t = 0, 1, … it computes, position by position, what decoder_layer computes for all positions
// at once under the causal mask (no key after t exists yet, so none needs hiding).
#include <cstddef>
#include <stdexcept>

#include <fmt/format.h>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/attention.hpp"
#include "kernels/reference/decoder_layer.hpp"
#include "kernels/reference/heads.hpp"
#include "kernels/reference/matmul.hpp"
#include "ops/decoder_step.hpp"

namespace vl {

/// [cache; row] along the positions: (B, t, d) and (B, 1, d) → (B, t + 1, d).
template <class T>
xt::xtensor<T, 3> append_rows(const xt::xtensor<T, 3>& cache, const xt::xtensor<T, 3>& row) {
  if (cache.size() == 0) return row;
  return xt::concatenate(xt::xtuple(cache, row), 1);
}

/// The steps of the step kernel: the layer's, and appending a key and value to the cache.
template <class T>
struct StepSteps : LayerSteps<T> {
  static void append(LayerCache<T>& c, const xt::xtensor<T, 3>& k, const xt::xtensor<T, 3>& v) {
    c.keys = append_rows<T>(c.keys, k);
    c.values = append_rows<T>(c.values, v);
  }
};

/// The self-attention of the new position over the cache (see the file comment); appends its key
/// and value first. s: (B, 1, d).
template <class T, class Steps>
xt::xtensor<T, 3> cached_self_attention(const xt::xtensor<T, 3>& s, const MhaParameters<T>& p, std::size_t heads, LayerCache<T>& cache) {
  const std::size_t B = s.shape(0), d = s.shape(2);
  auto project = [&](std::size_t which) {
    xt::xtensor<T, 3> y = xt::xtensor<T, 3>::from_shape({B, 1, d});
    for (std::size_t b = 0; b < B; ++b) xt::view(y, b) = detail::mha_project<T>(xt::view(s, b), p, which, d);
    return y;
  };
  const xt::xtensor<T, 3> q = project(0);
  Steps::append(cache, project(1), project(2));
  AttentionOptions<T> ao;
  ao.scale = T(1) / std::sqrt(static_cast<T>(d / heads));
  const AttentionResult<T, 4> r = attention<T>(split_heads<T>(q, heads), split_heads<T>(cache.keys, heads), split_heads<T>(cache.values, heads), ao);
  const xt::xtensor<T, 3> concat = merge_heads<T>(r.output);
  xt::xtensor<T, 3> out = xt::xtensor<T, 3>::from_shape({B, 1, d});
  for (std::size_t b = 0; b < B; ++b) {
    xt::xtensor<T, 2> o = matmul<T>(xt::view(concat, b), xt::transpose(p.out_proj_weight));
    o += xt::view(p.out_proj_bias, xt::newaxis(), xt::all());
    xt::view(out, b) = o;
  }
  return out;
}

/// The decoder layer at one new position x_t (B, 1, d) over `memory` (B, S, d), updating the
/// layer's cache. Throws std::invalid_argument when x_t is not one position, or on the shapes the
/// full layer refuses.
template <class T, class Steps = StepSteps<T>>
xt::xtensor<T, 3> decoder_layer_step(const xt::xtensor<T, 3>& x_t, const xt::xtensor<T, 3>& memory, const DecoderLayerParameters<T>& p,
                                     std::size_t heads, const LayerOptions& o, LayerCache<T>& cache, const MhaOptions<T>& cross = {}) {
  const std::size_t d = p.self_attn.in_proj_weight.shape(1);
  if (x_t.shape(1) != 1 || x_t.shape(2) != d || heads == 0 || d % heads != 0)
    throw std::invalid_argument(fmt::format("decoder_layer_step: x_t ({}, {}, {}) must be one position (B, 1, d = {}) and heads = {} must divide d",
                                            x_t.shape(0), x_t.shape(1), x_t.shape(2), d, heads));
  if (cache.keys.size() != 0 && (cache.keys.shape(0) != x_t.shape(0) || cache.keys.shape(2) != d || cache.values.shape() != cache.keys.shape()))
    throw std::invalid_argument("decoder_layer_step: the cache's keys and values do not match the batch and width of x_t");
  xt::xtensor<T, 3> x =
      sublayer<T, Steps>(x_t, p.norm1, o, [&](const auto& in) { return cached_self_attention<T, Steps>(in, p.self_attn, heads, cache); });
  x = sublayer<T, Steps>(x, p.norm2, o, [&](const auto& in) { return Steps::cross(in, memory, p.multihead_attn, heads, cross); });
  return sublayer<T, Steps>(x, p.norm3, o, [&](const auto& in) { return feed_forward<T>(in, p.linear1, p.linear2, o.activation); });
}

// Instantiated once, for float and double with the usual steps, in decoder_step.cpp: a file that calls
// them compiles none of their bodies. Other steps (a negative control's broken one) instantiate
// from the definitions above where they are used.
extern template xt::xtensor<float, 3> decoder_layer_step<float, StepSteps<float>>(const xt::xtensor<float, 3>&, const xt::xtensor<float, 3>&, const DecoderLayerParameters<float>&, std::size_t, const LayerOptions&, LayerCache<float>&, const MhaOptions<float>&);
extern template xt::xtensor<double, 3> decoder_layer_step<double, StepSteps<double>>(const xt::xtensor<double, 3>&, const xt::xtensor<double, 3>&, const DecoderLayerParameters<double>&, std::size_t, const LayerOptions&, LayerCache<double>&, const MhaOptions<double>&);

}  // namespace vl
