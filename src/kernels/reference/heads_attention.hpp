#pragma once
// Seed 002's attention module: multi-head scaled dot-product attention over (seq, d_model)
// rows, no projections. Head h reads columns h·hd … (h+1)·hd (hd = d_model / num_heads):
//
//   O[:, h·hd : (h+1)·hd] = softmax(Q_h K_hᵀ / √hd + M) V_h          Q, K, V, O: (seq, d_model)
//   W: (num_heads, seq, seq);  dQ, dK, dV: (seq, d_model) for an upstream dO: (seq, d_model)
//
// M is the causal mask when configured. Dropout is carried in the configuration and not
// applied: the module computes inference, where dropout is the identity. The scaled dot-product
// attention and its backward are parameters (any implementation of kernels/reference/attention.hpp's
// semantics), so that the same module runs over any backend.
#include <array>
#include <cmath>
#include <cstddef>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/attention.hpp"
#include "kernels/reference/attention_backward.hpp"
#include "kernels/reference/heads.hpp"

namespace vl {

struct HeadsConfig {
  std::size_t d_model = 4;
  std::size_t num_heads = 2;
  float dropout = 0;
  bool causal = false;
};

template <class T>
struct HeadsOutput {
  xt::xtensor<T, 2> output;   ///< (seq, d_model)
  xt::xtensor<T, 3> weights;  ///< (heads, seq, seq)
};

template <class T>
struct HeadsGradients {
  xt::xtensor<T, 2> dq, dk, dv;  ///< (seq, d_model) each
};

using HeadsShapes = std::array<std::array<std::size_t, 2>, 3>;

/// Seed 002's invariants: d_model % num_heads == 0, 0 ≤ dropout < 1, and q, k, v of one shape
/// (seq, d_model). Throws std::invalid_argument naming the offending numbers.
inline void check_heads_config(const HeadsConfig& c, const HeadsShapes& shapes) {
  if (c.num_heads == 0 || c.d_model % c.num_heads != 0)
    throw std::invalid_argument(fmt::format("attention: d_model = {} is not divisible by num_heads = {} "
                                            "(each head reads d_model / num_heads columns)", c.d_model, c.num_heads));
  if (!(c.dropout >= 0.0f && c.dropout < 1.0f))
    throw std::invalid_argument(fmt::format("attention: dropout = {} is outside [0, 1)", c.dropout));
  for (std::size_t i = 0; i < 3; ++i)
    if (shapes[i] != shapes[0] || shapes[i][1] != c.d_model)
      throw std::invalid_argument(fmt::format("attention: query ({}), key ({}) and value ({}) must all be (seq, d_model = {})",
                                              fmt::join(shapes[0], ", "), fmt::join(shapes[1], ", "), fmt::join(shapes[2], ", "),
                                              c.d_model));
}

/// The options every head runs with: the seed's scale 1/√hd (in T), its causal mask, its weights
/// (unless `weights` is false: a loss that reads the output alone).
template <class T>
AttentionOptions<T> heads_options(const HeadsConfig& c, bool weights = true) {
  AttentionOptions<T> o;
  o.causal = c.causal;
  o.return_weights = weights;
  o.scale = T(1) / std::sqrt(static_cast<T>(c.d_model / c.num_heads));
  return o;
}

template <class T>
HeadsShapes shapes_of(const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k, const xt::xtensor<T, 2>& v) {
  return {{{q.shape(0), q.shape(1)}, {k.shape(0), k.shape(1)}, {v.shape(0), v.shape(1)}}};
}

/// attend(q4, k4, v4, options) → AttentionResult<T, 4>: the scaled dot-product attention to use.
/// weights false: the output alone (HeadsOutput::weights left empty), for an attention that forms none.
template <class T, class Attend>
HeadsOutput<T> heads_forward(const Attend& attend, const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k, const xt::xtensor<T, 2>& v,
                             const HeadsConfig& c, bool weights = true) {
  check_heads_config(c, shapes_of(q, k, v));
  const std::size_t H = c.num_heads;
  const AttentionResult<T, 4> r = attend(split_heads<T>(q, H), split_heads<T>(k, H), split_heads<T>(v, H), heads_options<T>(c, weights));
  if (!weights) return {merge_heads_2d<T>(r.output), {}};
  return {merge_heads_2d<T>(r.output), xt::view(r.weights, 0)};
}

/// backward(q4, k4, v4, dO4, options) → AttentionGradients<T, 4>: the attention backward to use.
template <class T, class Backward>
HeadsGradients<T> heads_backward(const Backward& backward, const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k,
                                 const xt::xtensor<T, 2>& v, const xt::xtensor<T, 2>& d_out, const HeadsConfig& c) {
  check_heads_config(c, shapes_of(q, k, v));
  const std::size_t H = c.num_heads;
  const AttentionGradients<T, 4> g =
      backward(split_heads<T>(q, H), split_heads<T>(k, H), split_heads<T>(v, H), split_heads<T>(d_out, H), heads_options<T>(c));
  return {merge_heads_2d<T>(g.dq), merge_heads_2d<T>(g.dk), merge_heads_2d<T>(g.dv)};
}

}  // namespace vl
