#pragma once
// Operation `attention`: scaled dot-product attention with ONNX Attention's semantics (the
// equation, the score pipeline and the masks: kernels/reference/attention.hpp).
//
//   in   Q (B, Hq, Sq, D), K (B, Hkv, Sk, D), V (B, Hkv, Sk, Dv), AttentionOptions
//   out  O (B, Hq, Sq, Dv); W (B, Hq, Sq, Sk) with return_weights; a score stage, shaped as W
//   options  weights, score stages, storage rounding (a backend may have attention without them)
//   vl-candidate/1  request "attention": q k v [mask] → y [weights] (docs/candidates.md)
#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xoperation.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "ops/option.hpp"
#include "ops/result_shape.hpp"
#include "ops/tensors.hpp"

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

/// Throws std::invalid_argument ("the `<what>` mask of shape (...) does not broadcast to (B, Hq,
/// Sq, Sk) = (...)") unless `mask_shape` broadcasts NumPy-style to `target`: trailing
/// dimensions aligned, each equal or 1.
void check_mask_broadcasts(const std::vector<std::size_t>& mask_shape, const std::array<std::size_t, 4>& target,
                           const char* what);

/// Attention's input rules, the one copy every kernel checks (vl::attention, the fused kernel):
/// Q (B, Hq, Sq, D), K (B, Hkv, Sk, D), V (B, Hkv, Sk, Dv); Hkv ≥ 1 dividing Hq; with key
/// lengths, one per batch, each ≤ Sk. Throws std::invalid_argument naming the inputs.
void check_attention_inputs(const std::array<std::size_t, 4>& q, const std::array<std::size_t, 4>& k,
                            const std::array<std::size_t, 4>& v, const std::optional<std::vector<std::size_t>>& kv_lengths);

}  // namespace vl

namespace vl::ops {

/// The attention attrs and mask of vl-candidate/1, shared by `attention` and `attention_backward`:
/// what the protocol cannot carry is refused, an optional attr the candidate's hello did not list
/// is refused (docs/candidates.md: such a candidate is not applicable, never judged on what it
/// ignored).
template <class Request, class T>
void encode_attention_options(Request& r, const AttentionOptions<T>& o, bool first_query_as_past = false) {
  if (o.return_scores) {
    if (!r.knows("qk_matmul_output"))
      r.refuse(Option::score_stages, "its hello lists no attr 'qk_matmul_output' (vl-candidate/1's score stages, ONNX's qk_matmul_output_mode)");
    r.attrs["qk_matmul_output_mode"] = static_cast<int>(*o.return_scores);
  }
  if (o.round) r.refuse(Option::storage_rounding, "vl-candidate/1 has no storage rounding");
  if (o.kv_lengths) {
    if (!r.knows("kv_lengths")) r.refuse("its hello lists no attr 'kv_lengths' (vl-candidate/1's per-batch key lengths, nonpad_kv_seqlen)");
    r.attrs["kv_lengths"] = *o.kv_lengths;
  }
  if (o.left_window >= 0 || o.right_window >= 0) {
    if (!r.knows("window")) r.refuse("its hello lists no attr 'window' (vl-candidate/1's sliding window, left_window/right_window)");
    r.attrs["left_window"] = o.left_window;
    r.attrs["right_window"] = o.right_window;
  }
  if (o.first_query && !first_query_as_past) {
    if (!r.knows("first_query"))
      r.refuse(r.knows("past_kv") ? "its hello lists no attr 'first_query' (vl-candidate/1's query position; its 'past_kv' carries a cache "
                                    "for the forward attention only)"
                                  : "its hello lists neither attr 'first_query' nor 'past_kv' (vl-candidate/1's query position, a KV "
                                    "cache's past length)");
    r.attrs["first_query"] = *o.first_query;
  }
  r.attrs["causal"] = o.causal;
  r.attrs["alignment"] = o.alignment == CausalAlignment::top_left ? "top_left" : "bottom_right";
  if (o.scale) r.attrs["scale"] = double(*o.scale);
  else r.attrs["scale"] = nullptr;
  r.attrs["softcap"] = double(o.softcap);
  if (o.allowed && o.bias) {  // one mask: the additive one, −∞ where the bool one forbids
    const xt::xarray<T> m = xt::where(*o.allowed, *o.bias, -std::numeric_limits<T>::infinity());
    r.input("mask", m);
  } else if (o.allowed) {
    r.input("mask", *o.allowed);
  } else if (o.bias) {
    r.input("mask", *o.bias);
  }
}

struct Attention {
  static constexpr const char* name = "attention";
  static constexpr const char* request = "attention";
  static constexpr Option options[] = {Option::weights, Option::score_stages, Option::storage_rounding};

  /// The input rules (check_attention_inputs), before a kernel reads its inputs.
  template <class T>
  static void validate(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) {
    check_attention_inputs(q.shape(), k.shape(), v.shape(), o.kv_lengths);
  }

  /// The option a call uses, the one a backend must have to answer it.
  template <class T>
  static Option option_used(const Tensor4<T>&, const Tensor4<T>&, const Tensor4<T>&, const AttentionOptions<T>& o) {
    if (o.return_weights) return Option::weights;
    if (o.return_scores) return Option::score_stages;
    if (o.round) return Option::storage_rounding;
    return Option::none;
  }

  template <class T>
  static std::vector<ResultShape> result_shapes(const AttentionResult<T, 4>& r, const Tensor4<T>& q, const Tensor4<T>& k,
                                                const Tensor4<T>& v, const AttentionOptions<T>& o) {
    const std::size_t B = q.shape(0), Hq = q.shape(1), Sq = q.shape(2), Sk = k.shape(2), Dv = v.shape(3);
    std::vector<ResultShape> s{{"y", "an attention output", shape_of(r.output), {B, Hq, Sq, Dv}}};
    if (o.return_weights) s.push_back({"weights", "attention weights", shape_of(r.weights), {B, Hq, Sq, Sk}});
    if (o.return_scores) s.push_back({"scores", "attention scores", shape_of(r.scores), {B, Hq, Sq, Sk}});
    return s;
  }

  /// A query position (first_query = P) goes to a candidate that lists "first_query" as that
  /// attr; to one that lists "past_kv" instead, as ONNX's KV cache: keys and values 0 … P − 1 as
  /// past_key / past_value, the rest as k / v, and present_key / present_value asked back, which
  /// must be the whole K and V again, bit for bit (decode). P = 0 is no cache: the keys as they
  /// are, query i at i (top-left). Returns P when the position goes so, else nothing.
  template <class Request, class T>
  static std::optional<std::size_t> past_length(const Request& r, const Tensor4<T>& k, const AttentionOptions<T>& o) {
    if (!o.first_query || r.knows("first_query") || !r.knows("past_kv")) return std::nullopt;
    if (*o.first_query < 0 || std::size_t(*o.first_query) >= k.shape(2))
      r.refuse("a query position with no new key after it cannot be sent as a past (its hello lists 'past_kv', not 'first_query')");
    if (o.kv_lengths) r.refuse("key lengths and a past cannot be sent together (ONNX: nonpad_kv_seqlen or past_key, not both)");
    return std::size_t(*o.first_query);
  }

  template <class Request, class T>
  static void encode(Request& r, const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) {
    const auto past = past_length(r, k, o);
    encode_attention_options(r, o, past.has_value());
    r.input("q", xt::xarray<T>(q));
    if (past && *past > 0) {
      const auto split = [&](const Tensor4<T>& x, const char* before, const char* after) {
        r.input(before, xt::xarray<T>(xt::view(x, xt::all(), xt::all(), xt::range(0, *past), xt::all())));
        r.input(after, xt::xarray<T>(xt::view(x, xt::all(), xt::all(), xt::range(*past, x.shape(2)), xt::all())));
      };
      split(k, "past_key", "k");
      split(v, "past_value", "v");
      r.output("present_key");
      r.output("present_value");
    } else {
      if (past) r.attrs["alignment"] = "top_left";  // P = 0: query i at i
      r.input("k", xt::xarray<T>(k));
      r.input("v", xt::xarray<T>(v));
    }
    r.output("y");
    if (o.return_weights) r.output("weights");
    if (o.return_scores) r.output("scores");
  }
  template <class Request, class T>
  static AttentionResult<T, 4> decode(Request& r, const Tensor4<T>&, const Tensor4<T>& k, const Tensor4<T>& v,
                                      const AttentionOptions<T>& o) {
    if (const auto past = past_length(r, k, o); past && *past > 0) {  // the cache the candidate kept: past then new, exactly
      r.require_exact(r.template result<T, 4>("present_key"), k, "present_key", "past_key followed by k");
      r.require_exact(r.template result<T, 4>("present_value"), v, "present_value", "past_value followed by v");
    }
    AttentionResult<T, 4> out;
    out.output = r.template result<T, 4>("y");
    if (o.return_weights) out.weights = r.template result<T, 4>("weights");
    if (o.return_scores) out.scores = r.template result<T, 4>("scores");
    return out;
  }
};

}  // namespace vl::ops
