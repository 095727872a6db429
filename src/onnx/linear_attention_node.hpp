#pragma once
// ONNX's LinearAttention node (opset 27) computed with our chunked kernel
// (kernels/reference/linear_family_heads.hpp) at the node's chunk_size (default 64; ONNX: a hint that
// must not change the output).
//
//   inputs   0 query (B, T, Hq·d_k)   1 key (B, T, Hkv·d_k)   2 value (B, T, Hkv·d_v)
//            3 past_state (B, Hkv, d_k, d_v), optional (zeros)
//            4 decay (B, T, Hkv) per head or (B, T, Hkv·d_k) per key dimension: log-decay,
//              required by gated and gated_delta, refused by linear and delta
//            5 beta (B, T, Hkv) or (B, T, 1): required by delta and gated_delta, refused otherwise
//   outputs  0 output (B, T, Hq·d_v)   1 present_state (B, Hkv, d_k, d_v)
//   attributes  q_num_heads, kv_num_heads (required; Hkv divides Hq), update_rule (default
//            gated_delta), scale (0 or absent: 1/√d_k), chunk_size
//
// Precision. ONNX's reference casts every input to float32, runs the recurrence in float32 and
// casts the output back to the query's type, present_state to past_state's type (the query's
// when there is none). We compute in float64 (float16 and float32 inputs are exact there) and
// round each output once to its type: the difference from the reference is then the
// reference's own float32 rounding, which the runner's rtol 1e-3, atol 1e-7 (float16: the
// derived tolerances of attention_case.hpp) must absorb. Computing our chunked form in float32
// instead adds its own, differently ordered, rounding: one present_state element of
// test_linear_attention_gated_per_head_decay, a cancellation near zero, then misses atol 1e-7.
#include <set>
#include <string>
#include <vector>

#include "kernels/reference/linear_family_heads.hpp"
#include "onnx/attention_node.hpp"

namespace vl::backends {
class Backend;
}

namespace vl::onnx {

enum LinearInputSlot : std::size_t { QUERY = 0, KEY = 1, VALUE = 2, PAST_STATE = 3, DECAY = 4, BETA = 5, ERASE_GATE = 6 };
inline constexpr const char* kLinearOutputNames[] = {"output", "present_state"};

/// The node's attributes, with ONNX's defaults (and the form to compute it in: `lessons eval`
/// may ask for another). Unknown attributes: Unsupported.
struct LinearAttentionCall {
  std::string update_rule = "gated_delta";
  std::optional<std::int64_t> q_num_heads, kv_num_heads;
  std::optional<double> scale;
  std::int64_t chunk_size = 64;
  FamilyForm form = FamilyForm::chunked;
};
LinearAttentionCall read_linear_attributes(const Node& node);

/// Runs the node with `call`'s attributes (as run_linear_attention_node).
NodeResult run_linear_attention(const std::vector<const Tensor*>& in, const LinearAttentionCall& call,
                                const backends::Backend& backend);

/// Runs the node on `backend`'s linear_family (ONNX's layout and rules applied here). `in` holds
/// the input slots (null = absent). Throws Unsupported (an input or attribute we do not compute:
/// erase_gate, a type other than float16/float/double), backends::Unsupported (the backend has
/// no linear_family) and InputError (what ONNX's definition refuses, with its rule: a decay
/// given to `delta`, a beta missing for `gated_delta`, shapes that do not fit).
NodeResult run_linear_attention_node(const std::vector<const Tensor*>& in, const Node& node, const backends::Backend& backend);

}  // namespace vl::onnx
