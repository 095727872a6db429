#pragma once
// Causal and key-padding masks for attention (Vaswani et al. 2017, §3.2.3: "mask out (setting
// to −∞) all values in the input of the softmax which correspond to illegal connections").
//
// Query i may see key j iff j ≤ i + offset, for Sq queries and Sk keys:
//   top-left      offset = 0        the diagonal starts at the top-left corner: query i is
//                                   position i (torch's is_causal and triu(ones, 1), ONNX
//                                   Attention without a KV cache).
//   bottom-right  offset = Sk − Sq  the queries are the LAST Sq positions of the keys' sequence
//                                   (decoding with a KV cache: one new query sees all Sk keys).
// With Sq = Sk both are the lower triangle. With Sq > Sk and bottom-right, the first Sq − Sk
// queries see no key at all: the kernel gives them zero weights and a zero output, not NaN.
//
// Three equivalent forms of the same mask, two boolean conventions — do not mix them up:
//   blocked   bool, true = may NOT attend   torch.nn.MultiheadAttention's attn_mask and
//                                           key_padding_mask (torch.triu(ones, diagonal=1))
//   allowed   bool, true = MAY attend       ONNX Attention, F.scaled_dot_product_attention,
//                                           and the `allowed` option of kernels/reference/attention.hpp
//   additive  0 where allowed, −∞ where blocked, added to the scores before the softmax;
//             exp(−∞) = 0 exactly, so masked weights are exactly 0 at any score scale
//             (a finite −1e9 is not: it loses to scores ≥ 1e9, and a row with every key
//             at −1e9 averages all values instead of attending none).
// Masks of shape (Sq, Sk) broadcast over batch and heads in the kernel; key-padding masks are
// (B, Sk) and are broadcast as (B, 1, 1, Sk).
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xtensor.hpp>

#include "kernels/reference/attention.hpp"
#include "ops/causal_mask.hpp"  // causal_visible_keys, causal_allowed, causal_blocked

namespace vl {

/// Causal mask, additive form: (Sq, Sk), 0 where allowed and −∞ where blocked.
template <class T>
xt::xtensor<T, 2> causal_additive(std::size_t sq, std::size_t sk, CausalAlignment alignment = CausalAlignment::top_left) {
  return xt::where(causal_allowed(sq, sk, alignment), T(0), -std::numeric_limits<T>::infinity());
}

/// Switch boolean conventions: blocked ↔ allowed (the same negation both ways).
template <class E>
auto negate_mask(const E& mask) {
  return xt::eval(!mask);
}

/// Boolean (true = MAY attend) to additive (0 / −∞) form, any shape.
template <class T, class E>
xt::xarray<T> additive_from_allowed(const E& allowed) {
  return xt::where(allowed, T(0), -std::numeric_limits<T>::infinity());
}

/// Key-padding mask, torch convention: (B, Sk), true = key j of sequence b is padding, for
/// sequences of the given lengths padded to Sk. Throws if a length exceeds Sk.
inline xt::xtensor<bool, 2> key_padding_blocked(const std::vector<std::size_t>& lengths, std::size_t sk) {
  xt::xtensor<bool, 2> m = xt::zeros<bool>({lengths.size(), sk});
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    if (lengths[b] > sk)
      throw std::invalid_argument(fmt::format("key_padding_blocked: sequence {} has length {} > Sk = {}", b, lengths[b], sk));
    for (std::size_t j = lengths[b]; j < sk; ++j) m(b, j) = true;
  }
  return m;
}

/// A key-padding mask (B, Sk) in the kernel's convention, shaped to broadcast over heads and
/// queries: (B, 1, 1, Sk), true = MAY attend.
inline xt::xarray<bool> key_padding_allowed_4d(const xt::xtensor<bool, 2>& padding_blocked) {
  xt::xarray<bool> allowed = !padding_blocked;
  allowed.reshape({padding_blocked.shape(0), std::size_t(1), std::size_t(1), padding_blocked.shape(1)});
  return allowed;
}

}  // namespace vl
