// ONNX's LinearAttention node on our kernels; see linear_attention_node.hpp.
#include "onnx/linear_attention_node.hpp"

#include <cmath>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <xtensor/xadapt.hpp>

#include "backends/backend.hpp"
#include "core/errors.hpp"
#include "kernels/reference/heads.hpp"
#include "numeric/compare.hpp"
#include "numeric/float16.hpp"

namespace vl::onnx {
namespace {

xt::xtensor<double, 3> rank3(const Tensor& t, const char* what) {
  if (t.dims.size() != 3) throw InputError(fmt::format("{} must be rank 3 (B, T, ·), got shape {}", what, dims_string(t.dims)));
  return xt::adapt(t.values, std::array<std::size_t, 3>{t.dims[0], t.dims[1], t.dims[2]});
}

double store_as(DataType type, double x) {
  if (type == DataType::float16) return round_to_half(x);
  if (type == DataType::float32) return static_cast<double>(static_cast<float>(x));
  return x;
}

template <class E>
Produced produced(const E& e, DataType type) {
  Produced p;
  p.shape.assign(e.shape().begin(), e.shape().end());
  for (auto x : e) p.values.push_back(store_as(type, static_cast<double>(x)));
  return p;
}

}  // namespace

LinearAttentionCall read_linear_attributes(const Node& node) {
  LinearAttentionCall c;
  for (const Attribute& a : node.attributes) {
    if (a.name == "update_rule") {
      c.update_rule = a.s;
    } else if (a.name == "q_num_heads") {
      c.q_num_heads = a.i;
    } else if (a.name == "kv_num_heads") {
      c.kv_num_heads = a.i;
    } else if (a.name == "scale") {
      c.scale = a.f;
    } else if (a.name == "chunk_size") {
      c.chunk_size = a.i;
    } else {
      throw Unsupported(fmt::format("LinearAttention attribute '{}' is not supported", a.name));
    }
  }
  return c;
}

NodeResult run_linear_attention(const std::vector<const Tensor*>& in, const LinearAttentionCall& call, const backends::Backend& backend) {
  auto input = [&](std::size_t slot) { return slot < in.size() ? in[slot] : nullptr; };
  const std::optional<UpdateRule> rule = parse_update_rule(call.update_rule);
  if (!rule) {
    throw InputError(fmt::format("update_rule '{}' is not one of 'linear', 'gated', 'delta', 'gated_delta'", call.update_rule));
  }
  if (!call.q_num_heads || !call.kv_num_heads) throw InputError("q_num_heads and kv_num_heads are required");
  const std::int64_t hq = *call.q_num_heads, hkv = *call.kv_num_heads;
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0) {
    throw InputError(fmt::format("q_num_heads ({}) must be a positive multiple of kv_num_heads ({})", hq, hkv));
  }
  if (call.chunk_size <= 0) throw InputError(fmt::format("chunk_size {} must be positive", call.chunk_size));
  const char* r = call.update_rule.c_str();
  if (gated(*rule) && !input(DECAY)) throw InputError(fmt::format("update_rule '{}' requires the decay input", r));
  if (!gated(*rule) && input(DECAY)) throw InputError(fmt::format("update_rule '{}' forbids the decay input", r));
  if (delta(*rule) && !input(BETA)) throw InputError(fmt::format("update_rule '{}' requires the beta input", r));
  if (!delta(*rule) && input(BETA)) throw InputError(fmt::format("update_rule '{}' forbids the beta input", r));
  if (input(ERASE_GATE)) throw Unsupported("the erase_gate input is not supported");
  if (!input(QUERY) || !input(KEY) || !input(VALUE)) throw InputError("query, key and value are required");

  const DataType type = in[QUERY]->data_type;
  for (std::size_t slot : {QUERY, KEY, VALUE, PAST_STATE, DECAY, BETA}) {
    const Tensor* t = input(slot);
    if (t && t->data_type != DataType::float16 && t->data_type != DataType::float32 && t->data_type != DataType::float64) {
      throw Unsupported(fmt::format("{} input {} (only float16, float and double are computed)", t->type_name(), slot));
    }
  }

  const xt::xtensor<double, 3> q = rank3(*in[QUERY], "query"), k = rank3(*in[KEY], "key"), v = rank3(*in[VALUE], "value");
  const std::size_t B = q.shape(0), T = q.shape(1), Hq = std::size_t(hq), Hkv = std::size_t(hkv);
  if (q.shape(2) % Hq != 0) throw InputError(fmt::format("query's last dimension {} is not divisible by q_num_heads {}", q.shape(2), Hq));
  const std::size_t dk = q.shape(2) / Hq;
  if (k.shape(0) != B || k.shape(1) != T || k.shape(2) != Hkv * dk) {
    throw InputError(fmt::format("key has shape {}; expected (B, T, kv_num_heads·d_k) = ({}, {}, {})", dims_string(in[KEY]->dims),
                                 B, T, Hkv * dk));
  }
  if (v.shape(0) != B || v.shape(1) != T || v.shape(2) % Hkv != 0) {
    throw InputError(fmt::format("value has shape {}; expected (B, T, kv_num_heads·d_v) with B = {}, T = {}, kv_num_heads = {}",
                                 dims_string(in[VALUE]->dims), B, T, Hkv));
  }
  const std::size_t dv = v.shape(2) / Hkv;

  FamilyInputs<double> fi;
  fi.q = split_heads<double>(q, Hq);
  fi.k = split_heads<double>(k, Hkv);
  fi.v = split_heads<double>(v, Hkv);
  if (const Tensor* t = input(DECAY)) {
    const xt::xtensor<double, 3> g = rank3(*t, "decay");
    if (g.shape(0) != B || g.shape(1) != T || (g.shape(2) != Hkv && g.shape(2) != Hkv * dk)) {
      throw InputError(fmt::format("decay has shape {}; its last dimension must be kv_num_heads ({}) or kv_num_heads·d_k ({}), "
                                   "over (B, T) = ({}, {})",
                                   dims_string(t->dims), Hkv, Hkv * dk, B, T));
    }
    fi.g = split_heads<double>(g, Hkv);  // (B, Hkv, T, 1 or d_k)
  }
  if (const Tensor* t = input(BETA)) {
    const xt::xtensor<double, 3> b = rank3(*t, "beta");
    if (b.shape(0) != B || b.shape(1) != T || (b.shape(2) != Hkv && b.shape(2) != 1)) {
      throw InputError(fmt::format("beta has shape {}; its last dimension must be kv_num_heads ({}) or 1, over (B, T) = ({}, {})",
                                   dims_string(t->dims), Hkv, B, T));
    }
    fi.beta = xt::zeros<double>({B, Hkv, T});
    for (std::size_t i = 0; i < B; ++i)
      for (std::size_t h = 0; h < Hkv; ++h)
        for (std::size_t s = 0; s < T; ++s) fi.beta(i, h, s) = b(i, s, b.shape(2) == 1 ? 0 : h);
  }
  DataType state_type = type;
  if (const Tensor* t = input(PAST_STATE)) {
    if (t->dims != std::vector<std::size_t>{B, Hkv, dk, dv}) {
      throw InputError(fmt::format("past_state has shape {}; expected (B, kv_num_heads, d_k, d_v) = ({}, {}, {}, {})",
                                   dims_string(t->dims), B, Hkv, dk, dv));
    }
    fi.past = xt::xtensor<double, 4>(xt::adapt(t->values, std::array<std::size_t, 4>{B, Hkv, dk, dv}));
    state_type = t->data_type;
  }

  FamilyOptions opt;
  opt.rule = *rule;
  opt.form = call.form;
  opt.chunk = std::size_t(call.chunk_size);
  opt.scale = call.scale;
  FamilyResult<double> out;
  try {
    out = backend.linear_family(fi, opt);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  NodeResult result;
  result.precision = fmt::format("float64 ({} form{}), outputs rounded to their types", to_string(call.form),
                                 call.form == FamilyForm::chunked ? fmt::format(", chunk_size {}", opt.chunk) : "");
  result.outputs[0] = produced(merge_heads<double>(out.o), type);
  result.outputs[1] = produced(out.state, state_type);
  return result;
}

NodeResult run_linear_attention_node(const std::vector<const Tensor*>& in, const Node& node, const backends::Backend& backend) {
  return run_linear_attention(in, read_linear_attributes(node), backend);
}

}  // namespace vl::onnx
