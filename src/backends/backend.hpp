#pragma once
// A backend: one implementation of the operations the lessons' claims exercise. The claims'
// checks call these and nothing else, so the same check judges our plain kernels, our fused
// kernels, a deliberately broken variant (a negative control) or anyone else's implementation.
//
//   attention            O = softmax(softcap(scale · Q Kᵀ) + M) V, ONNX Attention semantics
//                        (kernels/reference/attention.hpp): batches, heads, GQA, bool/additive masks,
//                        causal in both alignments, scale, softcap; Q (B, Hq, Sq, D),
//                        K (B, Hkv, Sk, D), V (B, Hkv, Sk, Dv) → O (B, Hq, Sq, Dv)
//   attention_weights    the same call with options.return_weights: W (B, Hq, Sq, Sk) too
//   attention_scores     the same call with options.return_scores: the score intermediates
//                        (ONNX's qk_matmul_output modes)
//   attention_storage_rounding  the same call with options.round: each stage rounded to a storage
//                        format (float16 as ONNX's reference computes it)
//   attention_backward   dQ, dK, dV of O for an upstream dO (B, Hq, Sq, Dv)
//   multi_head_attention torch.nn.MultiheadAttention's forward (kernels/reference/multi_head_attention.hpp):
//                        query (B, Sq, d), key/value (B, Sk, d) → (B, Sq, d), weights (B, H, Sq, Sk)
//   positional_encoding  the sinusoidal table's rows at given positions: (positions, d)
//   linear_*             causal linear attention on φ(Q), φ(K) (n, d_k), V (n, d_v) → (n, d_v),
//                        in its parallel, recurrent and chunked forms (kernels/reference/linear_attention.hpp)
//   linear_family        ONNX LinearAttention's family of recurrences (linear, gated, delta,
//                        gated_delta) in one of its three forms, batches, GQA heads, past state
//                        (kernels/reference/linear_family_heads.hpp): o (B, Hq, n, d_v), state (B, Hkv, d_k, d_v)
//   layer_norm           torch.nn.LayerNorm over the last axis (kernels/reference/layer_norm.hpp): (B, S, d) → (B, S, d)
//   encoder_layer        torch.nn.TransformerEncoderLayer, eval mode (kernels/reference/encoder_layer.hpp): (B, S, d) → (B, S, d)
//   decoder_layer        torch.nn.TransformerDecoderLayer, eval mode (kernels/reference/decoder_layer.hpp):
//                        tgt (B, T, d), memory (B, S, d) → (B, T, d)
//   decoder_step         that layer at one new position over its KV cache (kernels/reference/decoder_step.hpp):
//                        x_t (B, 1, d) → (B, 1, d), the cache's keys and values appended
//   shift_right          the decoder's input: the target moved one position later, a start row first:
//                        (B, T, d), (d) → (B, T, d)
//
// A backend may lack an operation, or an option of one (the fused kernel never forms the
// weights): it then throws Unsupported, and a claim that needed it is reported not applicable,
// never passed.
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "backends/operation_list.hpp"
#include "kernels/reference/attention.hpp"

namespace vl::backends {

enum class Op {
  attention,
  attention_weights,
  attention_scores,
  attention_storage_rounding,
  attention_backward,
  multi_head_attention,
  positional_encoding,
  linear_parallel,
  linear_recurrent,
  linear_chunked,
  linear_family,
  layer_norm,
  encoder_layer,
  decoder_layer,
  decoder_step,
  shift_right,
};
inline constexpr Op kAllOps[] = {Op::attention,          Op::attention_weights,   Op::attention_scores,
                                 Op::attention_storage_rounding, Op::attention_backward, Op::multi_head_attention,
                                 Op::positional_encoding, Op::linear_parallel,     Op::linear_recurrent,
                                 Op::linear_chunked, Op::linear_family,
                                 Op::layer_norm, Op::encoder_layer, Op::decoder_layer, Op::decoder_step, Op::shift_right};
std::string to_string(Op op);

/// A backend lacks an operation (or an option of one, under that operation's name): what it
/// needed says why the claim does not apply.
class Unsupported : public std::runtime_error {
 public:
  Unsupported(Op lacking, const std::string& what) : std::runtime_error(what), op(lacking) {}
  Op op;
};

/// A backend has the operation but lacks an option of it that has no Op of its own (a softcap, a
/// sliding window; a candidate's "unsupported: ..."): the claim is not applicable, even though
/// supports(op) is true.
class UnsupportedOption : public Unsupported {
 public:
  using Unsupported::Unsupported;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  /// One line for `lessons backends`.
  virtual std::string summary() const = 0;
  /// One of ours: claims about our own code (spec: `subject: our-code`) run only for these.
  virtual bool ours() const { return false; }
  virtual bool supports(Op op) const = 0;

  // Every operation (operation_list.hpp), virtual; the defaults throw Unsupported.
#define VL_DECLARE_VIRTUAL(R, NAME, PARAMETERS, ARGUMENTS) virtual R NAME PARAMETERS const;
  VL_BACKEND_OPERATIONS(VL_DECLARE_VIRTUAL)
#undef VL_DECLARE_VIRTUAL

 protected:
  /// Throws Unsupported with lacking(op, why).
  [[noreturn]] void lacks(Op op, const std::string& why = "") const;
  /// What lacks() says: "backend '<name>' has no <op>[ (<why>)]"; a backend whose gaps have
  /// another cause (a protocol without the operation) says so instead.
  virtual std::string lacking(Op op, const std::string& why) const;
};

/// A backend that forwards every operation to another: a negative control overrides the one
/// operation it breaks.
class Decorator : public Backend {
 public:
  Decorator(std::shared_ptr<const Backend> base, std::string name);
  std::string name() const override { return name_; }
  std::string summary() const override { return name_ + " (over " + base_->name() + ")"; }
  bool ours() const override { return base_->ours(); }
  bool supports(Op op) const override { return base_->supports(op); }

  VL_BACKEND_OPERATIONS(VL_DECLARE_OVERRIDE)

 protected:
  const Backend& base() const { return *base_; }

 private:
  std::shared_ptr<const Backend> base_;
  std::string name_;
};

// Shorthands the checks use: one head as (Sq, D) matrices, one unbatched MHA call.

/// attention on (Sq, D), (Sk, D), (Sk, Dv), seen as (1, 1, S, ·); masks broadcast to (Sq, Sk).
template <class T>
AttentionResult<T, 2> attention_2d(const Backend& b, const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k,
                                   const xt::xtensor<T, 2>& v, const AttentionOptions<T>& o = {}) {
  auto as4 = [](const xt::xtensor<T, 2>& x) -> Tensor4<T> {
    return xt::reshape_view(x, std::array<std::size_t, 4>{1, 1, x.shape(0), x.shape(1)});
  };
  const AttentionResult<T, 4> r = b.attention(as4(q), as4(k), as4(v), o);
  AttentionResult<T, 2> out;
  out.output = xt::view(r.output, 0, 0);
  if (o.return_weights) out.weights = xt::view(r.weights, 0, 0);
  return out;
}

/// multi_head_attention on unbatched (Sq, d), (Sk, d) inputs → output (Sq, d), weights (H, Sq, Sk).
MhaResult<double, 2> multi_head_attention_2d(const Backend& b, const Matrix& query, const Matrix& key, const Matrix& value,
                                             const MhaParameters<double>& p, std::size_t heads, const MhaOptions<double>& o = {});

/// The positional-encoding table for positions 0 … n − 1.
Matrix positional_encoding_table(const Backend& b, std::size_t n, std::size_t d);

}  // namespace vl::backends
