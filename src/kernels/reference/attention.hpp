#pragma once
// Scaled dot-product attention (Vaswani et al. 2017, §3.2.1), general form: batches, heads,
// grouped-query heads, causal masks in both alignments, boolean or additive masks, softcap,
// sliding windows, per-batch valid key lengths (an external KV cache), and each intermediate of
// the score pipeline on request. The semantics are those of ONNX's Attention operator (opsets
// 23–26; the KV cache itself, present = concat(past, new), is the caller's) and of
// torch.nn.functional.scaled_dot_product_attention.
//
//   O = softmax(softcap(scale · Q Kᵀ) + M) V
//   Q: (B, Hq, Sq, D)   K: (B, Hkv, Sk, D)   V: (B, Hkv, Sk, Dv)   M, W: (B, Hq, Sq, Sk)   O: (B, Hq, Sq, Dv)
//
// The score pipeline, in ONNX's order (its qk_matmul_output_mode numbers the stages):
//   0 raw  S0 = scale · Q Kᵀ   1 softcapped  S1 = softcap(S0)   2 masked  S2 = S1 + M   3 softmax  W = softmax(S2)
#include <xtensor/xtensor.hpp>

#include "ops/attention.hpp"  // the options, the result and the input rules

namespace vl {

/// O = softmax(softcap(scale · Q Kᵀ) + M) V per (batch, query head), computed in T.
///
/// Grouped-query attention: Hq must be a multiple of Hkv; query head h reads key/value head
/// h / (Hq / Hkv) (ONNX's and torch's enable_gqa convention: each kv head serves Hq/Hkv
/// consecutive query heads). M combines the causal mask, the window, the key lengths, `allowed`
/// (false → −∞) and `bias`. A query row with no allowed key gets zero weights and a zero output,
/// never NaN (ONNX opset 24's rule; its masked scores, stage 2, stay −∞).
/// Throws std::invalid_argument on inconsistent shapes or a mask that does not broadcast.
template <class T>
AttentionResult<T, 4> attention(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k,
                                const xt::xtensor<T, 4>& v, const AttentionOptions<T>& options = {});

/// The single-head form used by the lessons: Q: (Sq, D), K: (Sk, D), V: (Sk, Dv) → O: (Sq, Dv).
/// Masks broadcast to (Sq, Sk).
template <class T>
AttentionResult<T, 2> attention(const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k,
                                const xt::xtensor<T, 2>& v, const AttentionOptions<T>& options = {});

extern template AttentionResult<float, 4> attention(const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&,
                                                    const xt::xtensor<float, 4>&, const AttentionOptions<float>&);
extern template AttentionResult<double, 4> attention(const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&,
                                                     const xt::xtensor<double, 4>&, const AttentionOptions<double>&);
extern template AttentionResult<float, 2> attention(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&,
                                                    const xt::xtensor<float, 2>&, const AttentionOptions<float>&);
extern template AttentionResult<double, 2> attention(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&,
                                                     const xt::xtensor<double, 2>&, const AttentionOptions<double>&);

}  // namespace vl
