#pragma once
// ONNX's Attention node (opsets 23–26) computed with our kernel (kernels/reference/attention.hpp), on the
// node's input tensors: the KV cache (present = concat(past, new) on the sequence axis), the
// external cache (nonpad_kv_seqlen), sliding windows, masks of any rank, softcap, every
// qk_matmul_output_mode, and float, double and float16 inputs.
//
// Precision, as ONNX's reference (onnx/reference/ops/op_attention.py, NumPy) computes it:
// - float / double: in the inputs' type; softmax_precision double on float inputs runs the
//   whole node in double (the reference's softmax and W·V are double, its scores float: doing
//   those in double too moves them by float round-off, far inside the runner's rtol 1e-3).
// - float16: NumPy stores every intermediate array in float16 and evaluates each operation
//   in float32 (matmul and sums accumulate in float32), rounding each result once to float16.
//   We compute in double and round every stored value to float16 (numeric/float16.hpp), up
//   to the stage where the reference leaves float16:
//     the scores Q'K'ᵀ, with Q' = h(Q·h(√scale)) and K' = h(K·h(√scale)) (the reference scales
//     both by √scale), the softcap's three steps: always float16;
//     S + M: float16, except with nonpad_kv_seqlen, whose padding mask the reference builds in
//     float64, which promotes the sum and everything after it to float64;
//     the softmax: float16, or softmax_precision (float/double) if given: then unrounded;
//     Y = W·V, and qk_matmul_output: rounded to float16 once, as the reference's final astype.
//   The double-versus-float32 evaluation inside a step can move a float16 rounding by one
//   unit in the last place, rarely; attention_case.hpp derives the float16 tolerances from it.
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "onnx/model.hpp"
#include "onnx/tensor_proto.hpp"

namespace vl::backends {
class Backend;
}

namespace vl::onnx {

/// Something the case asks for that we do not implement: the case is skipped with this reason.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The node's input slots and output slots.
enum InputSlot : std::size_t { Q = 0, K = 1, V = 2, ATTN_MASK = 3, PAST_KEY = 4, PAST_VALUE = 5, NONPAD_KV_SEQLEN = 6 };
inline constexpr const char* kOutputNames[] = {"Y", "present_key", "present_value", "qk_matmul_output"};

/// The node's attributes, with ONNX's defaults. Unknown attributes: Unsupported.
struct AttentionAttributes {
  bool is_causal = false;
  std::optional<double> scale;
  double softcap = 0;
  std::optional<std::size_t> q_num_heads, kv_num_heads;
  std::int64_t qk_matmul_output_mode = 0;
  std::optional<int> softmax_precision;
  std::int64_t left_window_size = -1, right_window_size = -1;
};
AttentionAttributes read_attributes(const Node& node);

/// An output we computed: its shape and C-order values (already rounded to its type).
struct Produced {
  std::vector<std::size_t> shape;
  std::vector<double> values;
};

struct NodeResult {
  std::map<std::size_t, Produced> outputs;      ///< by output slot
  std::map<std::size_t, std::string> not_made;  ///< wanted slots we cannot compute, and why
  std::string precision;                        ///< how it was computed (for `lessons onnx -v`)
};

/// Runs the node on `backend`'s attention (ONNX's rules — the KV cache, nonpad_kv_seqlen, the
/// masks, the float16 plan, softmax_precision — are applied here, once, for every backend).
/// `in` holds the 7 input slots (null = absent); `wanted` the output slots the case checks.
/// Throws Unsupported (an input type or attribute value we do not compute),
/// backends::Unsupported (the backend lacks the operation or an option the case needs: the
/// scores, storage rounding) and InputError (inputs that ONNX's definition refuses: ranks,
/// shapes, a cache together with nonpad_kv_seqlen, lengths out of range).
NodeResult run_attention_node(const std::vector<const Tensor*>& in, const AttentionAttributes& attr,
                              const std::set<std::size_t>& wanted, const backends::Backend& backend);

}  // namespace vl::onnx
