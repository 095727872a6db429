#pragma once
// Multi-head attention forward in torch.nn.MultiheadAttention's layout (Vaswani et al. 2017,
// §3.2.2), batch_first, over the scaled dot-product kernel of attention.hpp.
//
//   Q = Xq W_qᵀ + b_q    K = Xk W_kᵀ + b_k    V = Xv W_vᵀ + b_v          (S, d) each
//   head_h = softmax(Q_h K_hᵀ / √dh + M) V_h,  Q_h = Q[:, h·dh : (h+1)·dh],  dh = d / H
//   out    = concat(head_0 … head_{H−1}) W_oᵀ + b_o                          (Sq, d)
//
//   in_proj_weight (3d, d) = [W_q; W_k; W_v], in_proj_bias (3d), out_proj (d, d) and (d).
//   Xq: (B, Sq, d) or (Sq, d);  Xk, Xv: (B, Sk, d) or (Sk, d)  (Xk = Xv = Xq: self-attention;
//   otherwise cross-attention, e.g. decoder queries over encoder keys/values).
//   Returns the output (B, Sq, d) / (Sq, d) and the per-head weights (B, H, Sq, Sk) / (H, Sq, Sk)
//   (torch's need_weights=True, average_attn_weights=False).
//
// Masks, in torch's conventions for this module (the OPPOSITE of the kernel's `allowed`):
//   attn_mask          bool, true = the query may NOT attend the key; (Sq, Sk) or (B·H, Sq, Sk)
//   attn_bias          float, added to the scaled scores (−∞ hides a key); same shapes
//   key_padding_mask   bool, true = that key is padding; (B, Sk), or (Sk) for 2-D inputs
//   causal             the kernel's causal mask, top-left or bottom-right when Sq ≠ Sk
// All are combined (a key is hidden if any of them hides it). Where torch returns NaN for a
// query with every key hidden, this returns zero weights and a zero head output (the kernel's
// convention), so that row's output is b_o.
// Not supported: kdim/vdim ≠ d (separate q/k/v weights), bias_k/bias_v, add_zero_attn, dropout.
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xoperation.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/attention.hpp"
#include "kernels/reference/heads.hpp"
#include "kernels/reference/matmul.hpp"
#include "ops/multi_head_attention.hpp"

namespace vl {

namespace detail {

/// The reference's affine map, on matmul (BLAS):  Y = X Wᵀ + b,  X (S, d_in), W (d_out, d_in),
/// b (d_out) → Y (S, d_out).
struct MatmulAffine {
  template <class T>
  xt::xtensor<T, 2> operator()(const xt::xtensor<T, 2>& x, const xt::xtensor<T, 2>& w, const xt::xtensor<T, 1>& b) const {
    xt::xtensor<T, 2> y = matmul<T>(x, xt::transpose(w));
    y += xt::view(b, xt::newaxis(), xt::all());
    return y;
  }
};

/// X W[rows]ᵀ + b[rows] for one of the three stacked projections: X (S, d) → (S, d), by `affine`.
template <class T, class E, class Affine = MatmulAffine>
xt::xtensor<T, 2> mha_project(const E& x, const MhaParameters<T>& p, std::size_t which, std::size_t d, const Affine& affine = {}) {
  const xt::xtensor<T, 2> w = xt::view(p.in_proj_weight, xt::range(which * d, (which + 1) * d), xt::all());
  const xt::xtensor<T, 1> b = xt::view(p.in_proj_bias, xt::range(which * d, (which + 1) * d));
  return affine.template operator()<T>(x, w, b);
}

/// A torch attn_mask (Sq, Sk) or (B·H, Sq, Sk) as a kernel mask broadcastable to (B, H, Sq, Sk).
template <class M>
xt::xarray<M> attn_mask_4d(const xt::xarray<M>& m, std::size_t B, std::size_t H, std::size_t sq, std::size_t sk, const char* what) {
  if (m.dimension() == 2 && m.shape(0) == sq && m.shape(1) == sk) return m;
  if (m.dimension() == 3 && m.shape(0) == B * H && m.shape(1) == sq && m.shape(2) == sk) {
    xt::xarray<M> r = m;
    r.reshape({B, H, sq, sk});
    return r;
  }
  throw std::invalid_argument(fmt::format("multi_head_attention: {} of shape ({}) is neither (Sq, Sk) = ({}, {}) nor (B·H, Sq, Sk) = ({}, {}, {})",
                                          what, fmt::join(m.shape(), ", "), sq, sk, B * H, sq, sk));
}

/// The kernel's options for the module's masks: `allowed` (true = may attend) from attn_mask and
/// key_padding_mask, `bias` (additive) from attn_bias, the causal mask, the scale. Throws
/// std::invalid_argument on a mask of the wrong shape.
template <class T>
AttentionOptions<T> kernel_options(const MhaOptions<T>& o, std::size_t B, std::size_t H, std::size_t sq, std::size_t sk, T scale) {
  AttentionOptions<T> ao;
  ao.scale = scale;
  ao.causal = o.causal;
  ao.alignment = o.alignment;
  ao.return_weights = o.need_weights;
  if (o.attn_mask || o.key_padding_mask) {
    xt::xarray<bool> allowed = xt::ones<bool>({std::size_t(1), std::size_t(1), std::size_t(1), std::size_t(1)});
    if (o.attn_mask) allowed = !attn_mask_4d(*o.attn_mask, B, H, sq, sk, "attn_mask");
    if (o.key_padding_mask) {
      const auto& kp = *o.key_padding_mask;
      if (!(kp.dimension() == 2 && kp.shape(0) == B && kp.shape(1) == sk) && !(kp.dimension() == 1 && B == 1 && kp.shape(0) == sk)) {
        throw std::invalid_argument(fmt::format("multi_head_attention: key_padding_mask of shape ({}) is not (B, Sk) = ({}, {})",
                                                fmt::join(kp.shape(), ", "), B, sk));
      }
      xt::xarray<bool> keep = !kp;
      keep.reshape({B, std::size_t(1), std::size_t(1), sk});
      allowed = allowed && keep;  // broadcasts to (B or 1, H or 1, Sq or 1, Sk)
    }
    ao.allowed = allowed;
  }
  if (o.attn_bias) ao.bias = attn_mask_4d(*o.attn_bias, B, H, sq, sk, "attn_bias");
  return ao;
}

}  // namespace detail

/// Batched form over any scaled dot-product kernel: `attend(Q, K, V, AttentionOptions)` →
/// AttentionResult<T, 4> on (B, H, S, dh) heads (attention.hpp's, or a fused kernel's, which
/// returns no weights: then ask for none), and any affine map `affine(X, W, b)` = X Wᵀ + b for the
/// four projections (MatmulAffine's BLAS, or the fused kernels' block products). See the file comment.
template <class T, class Attend, class Affine = detail::MatmulAffine>
MhaResult<T, 3> multi_head_attention_over(const Attend& attend, const xt::xtensor<T, 3>& query, const xt::xtensor<T, 3>& key,
                                          const xt::xtensor<T, 3>& value, const MhaParameters<T>& p, std::size_t num_heads,
                                          const MhaOptions<T>& o, const Affine& affine = {}) {
  const std::size_t d = p.in_proj_weight.shape(1);
  if (num_heads == 0 || d % num_heads != 0) {
    throw std::invalid_argument(fmt::format("multi_head_attention: embed_dim d = {} is not divisible by num_heads = {} "
                                            "(each head takes d / num_heads columns)", d, num_heads));
  }
  if (p.in_proj_weight.shape(0) != 3 * d || p.in_proj_bias.size() != 3 * d || p.out_proj_weight.shape(0) != d ||
      p.out_proj_weight.shape(1) != d || p.out_proj_bias.size() != d) {
    throw std::invalid_argument(fmt::format("multi_head_attention: parameters in_proj_weight ({}), in_proj_bias ({}), out_proj_weight ({}), "
                                            "out_proj_bias ({}); expected (3d, d), (3d), (d, d), (d) with d = {}",
                                            fmt::join(p.in_proj_weight.shape(), ", "), fmt::join(p.in_proj_bias.shape(), ", "),
                                            fmt::join(p.out_proj_weight.shape(), ", "), fmt::join(p.out_proj_bias.shape(), ", "), d));
  }
  const std::size_t B = query.shape(0), sq = query.shape(1), sk = key.shape(1), H = num_heads, dh = d / H;
  if (query.shape(2) != d || key.shape(2) != d || value.shape(2) != d || key.shape(0) != B || value.shape(0) != B || value.shape(1) != sk) {
    throw std::invalid_argument(fmt::format("multi_head_attention: query ({}), key ({}), value ({}); expected (B, Sq, d), (B, Sk, d), (B, Sk, d) with d = {}",
                                            fmt::join(query.shape(), ", "), fmt::join(key.shape(), ", "), fmt::join(value.shape(), ", "), d));
  }

  const AttentionOptions<T> ao = detail::kernel_options<T>(o, B, H, sq, sk, T(1) / std::sqrt(static_cast<T>(dh)));

  // Project, split into heads: (B, H, S, dh).
  auto project = [&](const xt::xtensor<T, 3>& x, std::size_t which, std::size_t s) {
    xt::xtensor<T, 3> y = xt::xtensor<T, 3>::from_shape({B, s, d});
    for (std::size_t b = 0; b < B; ++b) xt::view(y, b) = detail::mha_project<T>(xt::view(x, b), p, which, d, affine);
    return split_heads<T>(y, H);
  };
  AttentionResult<T, 4> heads = attend(project(query, 0, sq), project(key, 1, sk), project(value, 2, sk), ao);

  // Concatenate the heads and project: (Sq, d) W_oᵀ + b_o.
  const xt::xtensor<T, 3> concat = merge_heads<T>(heads.output);
  MhaResult<T, 3> r;
  r.output = xt::xtensor<T, 3>::from_shape({B, sq, d});
  for (std::size_t b = 0; b < B; ++b) {
    xt::view(r.output, b) = affine.template operator()<T>(xt::view(concat, b), p.out_proj_weight, p.out_proj_bias);
  }
  if (o.need_weights) r.weights = std::move(heads.weights);
  return r;
}

/// Batched form: query (B, Sq, d), key and value (B, Sk, d), over attention.hpp's kernel.
/// Throws std::invalid_argument when d is not divisible by num_heads, on inconsistent shapes, or
/// on a mask of the wrong shape, with a message naming what is wrong.
template <class T>
MhaResult<T, 3> multi_head_attention(const xt::xtensor<T, 3>& query, const xt::xtensor<T, 3>& key,
                                     const xt::xtensor<T, 3>& value, const MhaParameters<T>& p,
                                     std::size_t num_heads, const MhaOptions<T>& o = {}) {
  const auto reference = [](const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                            const AttentionOptions<T>& ao) {
    return attention<T>(q, k, v, ao);
  };
  return multi_head_attention_over<T>(reference, query, key, value, p, num_heads, o);
}

/// Unbatched form: query (Sq, d), key and value (Sk, d) → output (Sq, d), weights (H, Sq, Sk).
template <class T>
MhaResult<T, 2> multi_head_attention(const xt::xtensor<T, 2>& query, const xt::xtensor<T, 2>& key,
                                     const xt::xtensor<T, 2>& value, const MhaParameters<T>& p,
                                     std::size_t num_heads, const MhaOptions<T>& o = {}) {
  auto as3 = [](const xt::xtensor<T, 2>& x) -> xt::xtensor<T, 3> {
    return xt::reshape_view(x, std::array<std::size_t, 3>{1, x.shape(0), x.shape(1)});
  };
  MhaResult<T, 3> r3 = multi_head_attention<T>(as3(query), as3(key), as3(value), p, num_heads, o);
  MhaResult<T, 2> r;
  r.output = xt::view(r3.output, 0);
  if (o.need_weights) r.weights = xt::view(r3.weights, 0);
  return r;
}

/// Self-attention: query = key = value = x.
template <class T, std::size_t N>
MhaResult<T, N> multi_head_self_attention(const xt::xtensor<T, N>& x, const MhaParameters<T>& p, std::size_t num_heads,
                                          const MhaOptions<T>& o = {}) {
  return multi_head_attention<T>(x, x, x, p, num_heads, o);
}

// Instantiated once, for float and double, in multi_head_attention.cpp: a file that calls them compiles none of
// their bodies.
extern template MhaResult<float, 3> multi_head_attention<float>(const xt::xtensor<float, 3>&, const xt::xtensor<float, 3>&, const xt::xtensor<float, 3>&, const MhaParameters<float>&, std::size_t, const MhaOptions<float>&);
extern template MhaResult<float, 2> multi_head_attention<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const MhaParameters<float>&, std::size_t, const MhaOptions<float>&);
extern template MhaResult<double, 3> multi_head_attention<double>(const xt::xtensor<double, 3>&, const xt::xtensor<double, 3>&, const xt::xtensor<double, 3>&, const MhaParameters<double>&, std::size_t, const MhaOptions<double>&);
extern template MhaResult<double, 2> multi_head_attention<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const MhaParameters<double>&, std::size_t, const MhaOptions<double>&);

}  // namespace vl
