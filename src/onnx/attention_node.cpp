// ONNX's Attention node on our kernel; see attention_node.hpp (precision of each step there).
#include "onnx/attention_node.hpp"

#include <cmath>
#include <limits>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <xtensor/xadapt.hpp>
#include <xtensor/xview.hpp>

#include "backends/backend.hpp"
#include "core/errors.hpp"
#include "kernels/reference/attention.hpp"
#include "kernels/reference/heads.hpp"
#include "numeric/compare.hpp"
#include "numeric/float16.hpp"
#include "onnx/attention_rules.hpp"

namespace vl::onnx {
namespace {

using backends::Need;
using backends::Op;
using backends::Option;

template <class T>
xt::xtensor<T, 4> as_4d(const Tensor& t, const char* what, std::optional<std::size_t> heads) {
  xt::xarray<T> a = to_xarray<T>(t);
  if (a.dimension() == 4) return a;
  if (a.dimension() != 3) {
    throw InputError(fmt::format("{} has rank {}; Attention takes 3-D or 4-D inputs", what, a.dimension()));
  }
  // (B, S, H·D) → (B, S, H, D) → (B, H, S, D)
  if (!heads || *heads == 0 || a.shape(2) % *heads != 0) {
    throw InputError(fmt::format("3-D {} of hidden size {} needs a head count (q_num_heads/kv_num_heads) that divides it",
                                 what, a.shape(2)));
  }
  return split_heads<T>(xt::xtensor<T, 3>(a), *heads);
}

// The mask padded with "hidden" (false / −∞) along its last axis up to `total` keys, as the
// ONNX reference does when the mask is shorter than the key sequence.
template <class M>
xt::xarray<M> pad_last_axis(const xt::xarray<M>& mask, std::size_t total, M hidden) {
  if (mask.dimension() == 0) throw InputError("attn_mask is a scalar; Attention takes a mask of rank 1 to 4");
  const std::size_t have = mask.shape().back();
  if (have == total) return mask;
  if (have > total) {
    throw InputError(fmt::format("attn_mask has {} keys on its last axis, more than the {} keys", have, total));
  }
  auto shape = mask.shape();
  shape.back() = total;
  xt::xarray<M> out(shape, hidden);
  xt::strided_view(out, {xt::ellipsis(), xt::range(0, have)}) = mask;
  return out;
}

double identity(double x) { return x; }
double to_float(double x) { return static_cast<double>(static_cast<float>(x)); }

template <class E>
Produced produced(const E& e, double (*store)(double)) {
  Produced p;
  p.shape.assign(e.shape().begin(), e.shape().end());
  p.values.reserve(e.size());
  for (auto x : e) p.values.push_back(store(static_cast<double>(x)));
  return p;
}

// How the node is computed for the inputs' type (attention_node.hpp).
struct Plan {
  bool half = false;                        // float16 inputs: compute in double, round stored values
  ScoreStage round_through = ScoreStage::softmax;
  double (*store)(double) = identity;       // rounding of the outputs to their type
  std::string text;
};

template <class T>
NodeResult compute(const std::vector<const Tensor*>& in, const AttentionAttributes& attr, const std::set<std::size_t>& wanted,
                   const Plan& plan, const backends::Backend& backend) {
  NodeResult result;
  result.precision = plan.text;
  const std::size_t rank = in[Q]->dims.size();
  if (in[K]->dims.size() != rank || in[V]->dims.size() != rank) {
    throw InputError(fmt::format("Q, K and V have ranks {}, {} and {}; they must be equal", rank, in[K]->dims.size(),
                                 in[V]->dims.size()));
  }
  xt::xtensor<T, 4> q = as_4d<T>(*in[Q], "Q", attr.q_num_heads);
  xt::xtensor<T, 4> k = as_4d<T>(*in[K], "K", attr.kv_num_heads);
  xt::xtensor<T, 4> v = as_4d<T>(*in[V], "V", attr.kv_num_heads);
  const std::size_t B = q.shape(0);

  // KV cache: present = concat(past, new) along the sequence axis; the queries are the last
  // Sq positions (bottom-right), as with an external cache of nonpad_kv_seqlen[b] valid keys.
  AttentionOptions<T> opt;
  const bool cache = in[PAST_KEY] || in[PAST_VALUE];
  if (cache) {
    if (!in[PAST_KEY] || !in[PAST_VALUE]) throw InputError("past_key and past_value must be given together");
    if (in[NONPAD_KV_SEQLEN]) {
      throw InputError("past_key/past_value and nonpad_kv_seqlen cannot be given together (ONNX: an internal cache or an "
                       "external one, not both)");
    }
    for (const auto& [t, name] : {std::pair{in[PAST_KEY], "past_key"}, std::pair{in[PAST_VALUE], "past_value"}})
      if (t->dims.size() != 4) throw InputError(fmt::format("{} has shape {}; expected (B, Hkv, past, D)", name, dims_string(t->dims)));
    apply_kv_cache<T>(k, v, to_xarray<T>(*in[PAST_KEY]), to_xarray<T>(*in[PAST_VALUE]), "past_key", "past_value", opt);
  }
  // present_key / present_value: K and V as they enter the attention (before any scaling).
  result.outputs[1] = produced(k, plan.store);
  result.outputs[2] = produced(v, plan.store);
  const std::size_t Sk = k.shape(2);

  opt.scale = attr.scale ? std::optional<T>(static_cast<T>(*attr.scale)) : std::nullopt;
  opt.softcap = static_cast<T>(attr.softcap);
  opt.causal = attr.is_causal;
  opt.left_window = attr.left_window_size;
  opt.right_window = attr.right_window_size;
  // Query i sits at position i + offset: offset = the past length (KV cache, set above), L_b − Sq
  // (external cache: bottom-right from the valid keys), else 0. The causal frontier and the
  // window are counted from there.
  if (in[NONPAD_KV_SEQLEN]) {
    const Tensor& n = *in[NONPAD_KV_SEQLEN];
    if (n.dims.size() != 1 || n.values.size() != B) {
      throw InputError(fmt::format("nonpad_kv_seqlen has shape {}; it needs one length per batch ({})", dims_string(n.dims), B));
    }
    apply_kv_lengths<T>(n.values, B, Sk, "nonpad_kv_seqlen", opt);
  }

  if (in[ATTN_MASK]) {
    const Tensor& m = *in[ATTN_MASK];
    if (m.data_type == DataType::boolean) {
      opt.allowed = pad_last_axis<bool>(to_xarray<bool>(m), Sk, false);
    } else {
      opt.bias = pad_last_axis<T>(to_xarray<T>(m), Sk, -std::numeric_limits<T>::infinity());
    }
  }

  if (plan.half) {
    if constexpr (std::is_same_v<T, double>) apply_float16_plan(q, k, attr.scale, plan.round_through, opt);
  }

  // Mode 3 (after the softmax) is the attention weights: asked as such of a backend without the
  // score stages (a candidate: vl-candidate/1 carries the weights, not the stages).
  bool scores_are_weights = false;
  if (wanted.count(3)) {
    if (attr.qk_matmul_output_mode >= 0 && attr.qk_matmul_output_mode <= 3) {
      opt.return_scores = static_cast<ScoreStage>(attr.qk_matmul_output_mode);
      if (*opt.return_scores == ScoreStage::softmax && !backend.supports(Need(Op::attention, Option::score_stages)) &&
          backend.supports(Need(Op::attention, Option::weights))) {
        opt.return_scores = std::nullopt;
        opt.return_weights = scores_are_weights = true;
      }
    } else {
      result.not_made[3] = fmt::format("qk_matmul_output_mode {} is not one of ONNX's modes 0-3", attr.qk_matmul_output_mode);
    }
  }

  AttentionResult<T, 4> r;
  try {
    r = backend.attention(q, k, v, opt);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  if (scores_are_weights) {
    r.scores = r.weights;
    opt.return_scores = ScoreStage::softmax;
  }

  if (rank == 3) {  // (B, Hq, Sq, Dv) → (B, Sq, Hq·Dv)
    result.outputs[0] = produced(merge_heads<T>(r.output), plan.store);
  } else {
    result.outputs[0] = produced(r.output, plan.store);
  }
  if (opt.return_scores) result.outputs[3] = produced(r.scores, plan.store);
  return result;
}

}  // namespace

AttentionAttributes read_attributes(const Node& node) {
  AttentionAttributes a;
  for (const Attribute& attr : node.attributes) {
    const std::string& n = attr.name;
    if (n == "is_causal") {
      a.is_causal = attr.i != 0;
    } else if (n == "scale") {
      a.scale = attr.f;
    } else if (n == "softcap") {
      a.softcap = attr.f;
    } else if (n == "q_num_heads") {
      a.q_num_heads = static_cast<std::size_t>(attr.i);
    } else if (n == "kv_num_heads") {
      a.kv_num_heads = static_cast<std::size_t>(attr.i);
    } else if (n == "qk_matmul_output_mode") {
      a.qk_matmul_output_mode = attr.i;
    } else if (n == "softmax_precision") {
      a.softmax_precision = static_cast<int>(attr.i);
    } else if (n == "left_window_size") {
      a.left_window_size = attr.i;
    } else if (n == "right_window_size") {
      a.right_window_size = attr.i;
    } else {
      throw Unsupported(fmt::format("attribute '{}' is not supported", n));
    }
  }
  return a;
}

NodeResult run_attention_node(const std::vector<const Tensor*>& in, const AttentionAttributes& attr,
                              const std::set<std::size_t>& wanted, const backends::Backend& backend) {
  const DataType type = in[Q]->data_type;  // ONNX requires Q, K, V (and past, a float mask) of one type
  if (type != DataType::float16 && type != DataType::float32 && type != DataType::float64) {
    throw Unsupported(fmt::format("{} inputs (only float16, float and double are computed)", in[Q]->type_name()));
  }
  for (std::size_t slot : {K, V, PAST_KEY, PAST_VALUE}) {
    if (in[slot] && in[slot]->data_type != type) {
      throw InputError(fmt::format("input {} is {} but Q is {}; Attention takes one type", slot, in[slot]->type_name(),
                                   in[Q]->type_name()));
    }
  }
  const std::optional<int> sp = attr.softmax_precision;
  const auto sp_name = [&] { return sp ? data_type_name(*sp) : std::string(); };
  Plan plan;
  if (type == DataType::float32) {
    if (!sp || *sp == 1) {
      plan.text = "float32";
      return compute<float>(in, attr, wanted, plan, backend);
    }
    if (*sp == 11) {
      plan.store = to_float;
      plan.text = "float64 (softmax_precision double), outputs rounded to float32";
      return compute<double>(in, attr, wanted, plan, backend);
    }
  } else if (type == DataType::float64) {
    if (!sp || *sp == 11) {
      plan.text = "float64";
      return compute<double>(in, attr, wanted, plan, backend);
    }
  } else if (type == DataType::float16) {
    if (!sp || *sp == 10 || *sp == 1 || *sp == 11) {
      plan.half = true;
      plan.store = round_to_half;
      plan.round_through = float16_rounded_through(in[NONPAD_KV_SEQLEN] != nullptr, sp);
      plan.text = fmt::format("float16 emulated in float64: each stored value rounded to float16 through the {}; outputs "
                              "rounded to float16",
                              plan.round_through == ScoreStage::softcapped ? "softcapped scores (nonpad_kv_seqlen's float64 mask "
                                                                             "promotes the rest)"
                              : plan.round_through == ScoreStage::masked ? "masked scores (softmax_precision " + sp_name() + ")"
                                                                         : "softmax");
      return compute<double>(in, attr, wanted, plan, backend);
    }
  }
  throw Unsupported(fmt::format("softmax_precision {} with {} inputs", sp_name(), in[Q]->type_name()));
}

}  // namespace vl::onnx
