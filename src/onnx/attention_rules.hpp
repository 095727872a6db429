#pragma once
// ONNX Attention's rules that are not the attention itself, written once for both front ends
// that take ONNX's inputs: the node runner (attention_node.cpp, `lessons onnx`) and `lessons eval
// attention` (cli/cmd_eval.cpp). Each fills the AttentionOptions a backend then computes with.
//
//   KV cache        K, V (B, Hkv, S, D|Dv) ← concat(past (B, Hkv, P, D|Dv), new) on the sequence
//                   axis; query i sits at position P + i.
//   nonpad_kv_seqlen  L_b ≤ Sk valid keys per batch: keys j ≥ L_b hidden; bottom-right alignment
//                   counted from L_b (query i at L_b − Sq + i).
//   float16         as ONNX's reference (NumPy, float16 storage): Q and K each times h(√scale),
//                   stored in float16, the scale then 1, every stored value rounded to float16
//                   through `float16_rounded_through(...)` (attention_node.hpp says why).
//
// `what` names the input in messages as the caller's user knows it ("past_key", or "--past-key
// FILE"); a violation is an InputError.
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xtensor.hpp>

#include "core/errors.hpp"
#include "numeric/float16.hpp"
#include "ops/attention.hpp"

namespace vl::onnx {

/// One side of the cache: `x` (new keys or values) becomes concat(past, x) on axis 2. `past`
/// must be (B, Hkv, P, last) with x's B, Hkv and last axis; returns P.
template <class T>
std::size_t append_past(xt::xtensor<T, 4>& x, const xt::xtensor<T, 4>& past, const std::string& what, const char* last) {
  if (past.shape(0) != x.shape(0) || past.shape(1) != x.shape(1) || past.shape(3) != x.shape(3))
    throw InputError(fmt::format("{} has shape ({}); expected (B, Hkv, past, {}) = ({}, {}, past, {}) to match the new "
                                 "keys/values",
                                 what, fmt::join(past.shape(), ", "), last, x.shape(0), x.shape(1), x.shape(3)));
  x = xt::concatenate(xt::xtuple(past, x), 2);
  return past.shape(2);
}

/// The KV cache: K and V extended by their pasts (of equal length P), the queries placed at P.
template <class T>
void apply_kv_cache(xt::xtensor<T, 4>& k, xt::xtensor<T, 4>& v, const xt::xtensor<T, 4>& past_k, const xt::xtensor<T, 4>& past_v,
                    const std::string& key_what, const std::string& value_what, AttentionOptions<T>& o) {
  if (past_v.shape(2) != past_k.shape(2))
    throw InputError(fmt::format("{} has {} past positions but {} has {}", value_what, past_v.shape(2), key_what, past_k.shape(2)));
  const std::size_t past = append_past<T>(k, past_k, key_what, "D");
  append_past<T>(v, past_v, value_what, "Dv");
  o.first_query = static_cast<std::ptrdiff_t>(past);
}

/// nonpad_kv_seqlen: one integer length in [0, Sk] per batch; sets the key lengths and the
/// bottom-right alignment they are counted from.
template <class T>
void apply_kv_lengths(const std::vector<double>& values, std::size_t batch, std::size_t keys, const std::string& what,
                      AttentionOptions<T>& o) {
  if (values.size() != batch)
    throw InputError(fmt::format("{} holds {} lengths; it needs one per batch ({})", what, values.size(), batch));
  std::vector<std::size_t> lengths;
  for (double x : values) {
    if (!(x >= 0 && x <= static_cast<double>(keys)) || x != std::floor(x))
      throw InputError(fmt::format("{} holds {}; each length must be an integer in [0, {}]", what, x, keys));
    lengths.push_back(static_cast<std::size_t>(x));
  }
  o.kv_lengths = std::move(lengths);
  o.alignment = CausalAlignment::bottom_right;
}

/// The last stage ONNX's float16 reference stores in float16: the softmax; the masked scores
/// when softmax_precision asks for float or double (10 = float16 itself); the softcapped scores
/// with nonpad_kv_seqlen, whose float64 padding mask promotes the sum and all after it.
inline ScoreStage float16_rounded_through(bool kv_lengths, std::optional<int> softmax_precision) {
  if (kv_lengths) return ScoreStage::softcapped;
  return softmax_precision && *softmax_precision != 10 ? ScoreStage::masked : ScoreStage::softmax;
}

/// float16, emulated in double: Q and K each scaled by h(√scale) and stored (rounded) in float16,
/// the scale then 1, every stored value through `through` rounded to float16. `scale` is the
/// node's (nullopt: 1/√D).
inline void apply_float16_plan(xt::xtensor<double, 4>& q, xt::xtensor<double, 4>& k, std::optional<double> scale,
                               ScoreStage through, AttentionOptions<double>& o) {
  const double s = scale ? *scale : 1 / std::sqrt(static_cast<double>(q.shape(3)));
  const double root = round_to_half(std::sqrt(s));
  for (auto& x : q) x = round_to_half(x * root);
  for (auto& x : k) x = round_to_half(x * root);
  o.scale = 1.0;
  o.round = round_to_half;
  o.round_through = through;
}

}  // namespace vl::onnx
