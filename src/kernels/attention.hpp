#pragma once
// Scaled dot-product attention (Vaswani et al. 2017, §3.2.1), general form: batches, heads,
// grouped-query heads, causal masks in both alignments, boolean or additive masks, softcap.
// The semantics are those of ONNX's Attention operator (opsets 23/24, without KV cache) and of
// torch.nn.functional.scaled_dot_product_attention.
//
//   O = softmax(softcap(scale · Q Kᵀ) + M) V
//   Q: (B, Hq, Sq, D)   K: (B, Hkv, Sk, D)   V: (B, Hkv, Sk, Dv)   M, W: (B, Hq, Sq, Sk)   O: (B, Hq, Sq, Dv)
#include <array>
#include <cstddef>
#include <vector>
#include <optional>

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

namespace vl {

/// Where the diagonal of a causal mask sits when the query and key lengths differ.
enum class CausalAlignment {
  top_left,      ///< query i sees keys j ≤ i (torch's is_causal; ONNX without a KV cache)
  bottom_right,  ///< query i sees keys j ≤ i + Sk − Sq (the queries are the last Sq positions)
};

template <class T>
struct AttentionOptions {
  /// Multiplies Q Kᵀ; 1/sqrt(D) when absent.
  std::optional<T> scale = std::nullopt;
  /// Hide future keys (see CausalAlignment).
  bool causal = false;
  CausalAlignment alignment = CausalAlignment::top_left;
  /// Boolean mask, broadcast NumPy-style to (B, Hq, Sq, Sk): true = the query MAY attend the key
  /// (ONNX's convention, and torch's for a bool attn_mask in scaled_dot_product_attention).
  /// Note the opposite convention of torch.nn.MultiheadAttention's bool attn_mask / key_padding_mask,
  /// where true means "masked out": negate such masks before passing them here.
  std::optional<xt::xarray<bool>> allowed = std::nullopt;
  /// Additive mask, broadcast NumPy-style to (B, Hq, Sq, Sk), added to the (softcapped) scores;
  /// −∞ hides a key.
  std::optional<xt::xarray<T>> bias = std::nullopt;
  /// If > 0: scores ← softcap · tanh(scores / softcap), after scaling and before the masks
  /// (ONNX Attention, Gemma 2), so that −∞ masks stay −∞.
  T softcap = 0;
  /// Also return the attention weights W.
  bool return_weights = false;
};

template <class T, std::size_t N>
struct AttentionResult {
  xt::xtensor<T, N> output;   ///< O: (B, Hq, Sq, Dv), or (Sq, Dv) for the 2-D overload
  xt::xtensor<T, N> weights;  ///< W: (B, Hq, Sq, Sk) / (Sq, Sk) if return_weights, else empty
};

/// Throws std::invalid_argument ("the <what> mask of shape (...) does not broadcast to (B, Hq,
/// Sq, Sk) = (...)") unless `mask_shape` broadcasts NumPy-style to `target`: trailing
/// dimensions aligned, each equal or 1.
void check_mask_broadcasts(const std::vector<std::size_t>& mask_shape, const std::array<std::size_t, 4>& target,
                           const char* what);

/// O = softmax(softcap(scale · Q Kᵀ) + M) V per (batch, query head), computed in T.
///
/// Grouped-query attention: Hq must be a multiple of Hkv; query head h reads key/value head
/// h / (Hq / Hkv) (ONNX's and torch's enable_gqa convention: each kv head serves Hq/Hkv
/// consecutive query heads). M combines the causal mask, `allowed` (false → −∞) and `bias`.
/// A query row with no allowed key gets zero weights and a zero output, never NaN.
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
