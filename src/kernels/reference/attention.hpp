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

/// A stage of the score pipeline (above), numbered as ONNX's qk_matmul_output_mode.
enum class ScoreStage { raw = 0, softcapped = 1, masked = 2, softmax = 3 };

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
  /// Per batch, the number of valid keys L_b ≤ Sk (ONNX's nonpad_kv_seqlen: an external cache
  /// padded to Sk): keys j ≥ L_b are hidden, and a bottom-right alignment counts from L_b
  /// (query i sits at position i + L_b − Sq).
  std::optional<std::vector<std::size_t>> kv_lengths = std::nullopt;
  /// Sliding window (ONNX's left_window_size / right_window_size; < 0 = unbounded): query i,
  /// at position p = i + offset (offset 0 top-left, L_b − Sq bottom-right, as for `causal`),
  /// sees key j only if p − left_window ≤ j ≤ p + right_window. Applies with or without `causal`.
  std::ptrdiff_t left_window = -1;
  std::ptrdiff_t right_window = -1;
  /// The position of query 0, if set, in place of the alignment's (query i at first_query + i):
  /// ONNX's KV cache puts it at the past length, which is Sk − Sq only when the new keys are as
  /// many as the queries.
  std::optional<std::ptrdiff_t> first_query = std::nullopt;
  /// Also return the scores at this stage of the pipeline (AttentionResult::scores).
  std::optional<ScoreStage> return_scores = std::nullopt;
  /// Emulating a narrower storage format (ONNX's float16 reference, computed here in T): when
  /// set, every value the emulated program stores is passed through it, up to `round_through`:
  /// the raw scores; the softcap's quotient, tanh and product; the masked sum; the softmax's
  /// shifted scores, exponentials, row sum and quotients. Later stages are kept in T.
  T (*round)(T) = nullptr;
  ScoreStage round_through = ScoreStage::softmax;
};

template <class T, std::size_t N>
struct AttentionResult {
  xt::xtensor<T, N> output;   ///< O: (B, Hq, Sq, Dv), or (Sq, Dv) for the 2-D overload
  xt::xtensor<T, N> weights;  ///< W: (B, Hq, Sq, Sk) / (Sq, Sk) if return_weights, else empty
  xt::xtensor<T, N> scores;   ///< the stage `return_scores` names, shaped as W; else empty
};

/// Throws std::invalid_argument ("the <what> mask of shape (...) does not broadcast to (B, Hq,
/// Sq, Sk) = (...)") unless `mask_shape` broadcasts NumPy-style to `target`: trailing
/// dimensions aligned, each equal or 1.
void check_mask_broadcasts(const std::vector<std::size_t>& mask_shape, const std::array<std::size_t, 4>& target,
                           const char* what);

/// Attention's input rules, the one copy every kernel checks (vl::attention, the fused kernel):
/// Q (B, Hq, Sq, D), K (B, Hkv, Sk, D), V (B, Hkv, Sk, Dv); Hkv ≥ 1 dividing Hq; with key
/// lengths, one per batch, each ≤ Sk. Throws std::invalid_argument naming the inputs.
void check_attention_inputs(const std::array<std::size_t, 4>& q, const std::array<std::size_t, 4>& k,
                            const std::array<std::size_t, 4>& v, const std::optional<std::vector<std::size_t>>& kv_lengths);

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
