#pragma once
// `lessons eval attention`'s ONNX options: a KV cache (--past-key/--past-value in,
// --present-key/--present-value out: present = concat(past, new) on the sequence axis), an
// external cache (--nonpad-kv-seqlen: per-batch valid keys), a sliding window
// (--left-window/--right-window) and one stage of the scores (--qk-output MODE FILE, ONNX's
// qk_matmul_output_mode: 0 scaled scores, 1 after softcap, 2 after the mask, 3 the softmax).
// ONNX's rules for them are onnx/attention_rules.hpp's, the node runner's: query i sits at the past
// length + i with a cache, at nonpad_kv_seqlen[b] − Sq + i with an external one.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xtensor.hpp>

#include "cli/eval_inputs.hpp"
#include "kernels/reference/attention.hpp"
#include "onnx/attention_rules.hpp"

namespace vl::cli {

struct AttentionCacheArgs {
  std::string past_key, past_value, present_key, present_value, nonpad;
  std::ptrdiff_t left = -1, right = -1;
  std::vector<std::string> qk_output;  ///< MODE FILE
};

/// The combinations ONNX's definition forbids, refused before anything is read or written.
inline void check_cache_args(const AttentionCacheArgs& a, bool bottom_right) {
  if (a.past_key.empty() != a.past_value.empty()) throw InputError("--past-key and --past-value go together");
  if (!a.past_key.empty() && !a.nonpad.empty())
    throw InputError("--past-key/--past-value and --nonpad-kv-seqlen cannot be given together (an internal cache or an "
                     "external one, not both)");
  if (bottom_right && (!a.past_key.empty() || !a.nonpad.empty()))
    throw InputError("--causal-bottom-right with --past-key or --nonpad-kv-seqlen: the cache says where the queries sit; "
                     "use --causal");
  if (a.left < -1) throw InputError(fmt::format("--left-window {}: a width >= 0, or -1 for unbounded", a.left));
  if (a.right < -1) throw InputError(fmt::format("--right-window {}: a width >= 0, or -1 for unbounded", a.right));
  if (!a.qk_output.empty()) {
    const std::string& m = a.qk_output[0];
    if (m != "0" && m != "1" && m != "2" && m != "3")
      throw InputError(fmt::format("--qk-output {}: MODE is 0 (scaled scores), 1 (softcapped), 2 (masked) or 3 (softmax)", m));
    check_output_path(a.qk_output[1], "--qk-output");
  }
  check_output_path(a.present_key, "--present-key");
  check_output_path(a.present_value, "--present-value");
}

/// Reads the cache inputs into (k, v) and the options. k, v: (B, Hkv, S, D) / (B, Hkv, S, Dv).
template <class T>
void apply_cache(const AttentionCacheArgs& a, Precision p, xt::xtensor<T, 4>& k, xt::xtensor<T, 4>& v, AttentionOptions<T>& o) {
  if (!a.past_key.empty()) {
    auto past = [&](const std::string& path, const char* option) {
      const xt::xarray<T> pa = checked_input<T>(path, option, p, 4);
      if (pa.dimension() != 4)
        throw InputError(fmt::format("{} {}: shape ({}), expected (B, Hkv, past, D)", option, path, fmt::join(pa.shape(), ", ")));
      return xt::xtensor<T, 4>(pa);
    };
    onnx::apply_kv_cache<T>(k, v, past(a.past_key, "--past-key"), past(a.past_value, "--past-value"), "--past-key " + a.past_key,
                            "--past-value " + a.past_value, o);
  }
  if (!a.nonpad.empty()) {
    const npy::Array n = load_npy(a.nonpad, "--nonpad-kv-seqlen");
    if (n.dtype.rfind("int", 0) != 0 || n.shape.size() != 1 || n.shape[0] != k.shape(0))
      throw InputError(fmt::format("--nonpad-kv-seqlen {}: dtype {} shape ({}), expected integers of shape ({},): one length per "
                                   "batch", a.nonpad, n.dtype, fmt::join(n.shape, ", "), k.shape(0)));
    onnx::apply_kv_lengths<T>(n.values, k.shape(0), k.shape(2), "--nonpad-kv-seqlen " + a.nonpad, o);
  }
  o.left_window = a.left;
  o.right_window = a.right;
  if (!a.qk_output.empty()) o.return_scores = static_cast<ScoreStage>(std::stoi(a.qk_output[0]));
}

}  // namespace vl::cli
