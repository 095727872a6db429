// Running ONNX Attention backend cases; see attention_case.hpp.
#include "onnx/attention_case.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <xtensor/xadapt.hpp>
#include <xtensor/xbroadcast.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "core/errors.hpp"
#include "kernels/attention.hpp"
#include "kernels/heads.hpp"
#include "onnx/model.hpp"
#include "onnx/tensor_proto.hpp"

namespace vl::onnx {
namespace {

namespace fs = std::filesystem;

// Something the case asks for that we do not implement: the case is skipped with this reason.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The node's input slots (ONNX Attention, opset 23/24).
enum Slot : std::size_t { Q = 0, K = 1, V = 2, ATTN_MASK = 3, PAST_KEY = 4, PAST_VALUE = 5, NONPAD_KV_SEQLEN = 6 };
const char* const kOutputNames[] = {"Y", "present_key", "present_value", "qk_matmul_output"};

// The node's attributes, with ONNX's defaults.
struct Attributes {
  bool is_causal = false;
  std::optional<double> scale;
  double softcap = 0;
  std::optional<std::size_t> q_num_heads, kv_num_heads;
  std::int64_t qk_matmul_output_mode = 0;
  std::optional<int> softmax_precision;
};

Attributes read_attributes(const Node& node) {
  Attributes a;
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
    } else {
      throw Unsupported(fmt::format("attribute '{}' is not supported", n));
    }
  }
  return a;
}

// An output we computed: its shape and C-order values.
struct Produced {
  std::vector<std::size_t> shape;
  std::vector<double> values;
};

template <class E>
Produced produced(const E& e) {
  Produced p;
  p.shape.assign(e.shape().begin(), e.shape().end());
  for (auto x : e) p.values.push_back(static_cast<double>(x));
  return p;
}

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

// Runs the node in precision T; returns the outputs we can produce, by slot.
template <class T>
std::map<std::size_t, Produced> compute(const std::vector<const Tensor*>& in, const Attributes& attr,
                                        const std::set<std::size_t>& wanted, std::map<std::size_t, std::string>& notes) {
  const std::size_t rank = in[Q]->dims.size();
  if (in[K]->dims.size() != rank || in[V]->dims.size() != rank) {
    throw InputError(fmt::format("Q, K and V have ranks {}, {} and {}; they must be equal", rank, in[K]->dims.size(),
                                 in[V]->dims.size()));
  }
  xt::xtensor<T, 4> q = as_4d<T>(*in[Q], "Q", attr.q_num_heads);
  xt::xtensor<T, 4> k = as_4d<T>(*in[K], "K", attr.kv_num_heads);
  xt::xtensor<T, 4> v = as_4d<T>(*in[V], "V", attr.kv_num_heads);
  const std::size_t B = q.shape(0), Hq = q.shape(1), Sq = q.shape(2);

  // KV cache: present = concat(past, new) along the sequence axis.
  std::size_t past = 0;
  if (in[PAST_KEY] || in[PAST_VALUE]) {
    if (!in[PAST_KEY] || !in[PAST_VALUE]) throw InputError("past_key and past_value must be given together");
    const xt::xtensor<T, 4> pk = to_xarray<T>(*in[PAST_KEY]), pv = to_xarray<T>(*in[PAST_VALUE]);
    past = pk.shape(2);
    k = xt::concatenate(xt::xtuple(pk, k), 2);
    v = xt::concatenate(xt::xtuple(pv, v), 2);
  }
  const std::size_t Sk = k.shape(2);

  AttentionOptions<T> opt;
  if (attr.scale) opt.scale = static_cast<T>(*attr.scale);
  opt.softcap = static_cast<T>(attr.softcap);

  // The structural mask (causal frontier, padded keys), as allowed[b, i, j] when it is not the
  // kernel's plain top-left causal mask:
  //   causal: j ≤ i + offset_b, offset = past length (KV cache), nonpad_kv_seqlen[b] − Sq
  //   (external cache), else 0;   nonpad_kv_seqlen: j < nonpad_kv_seqlen[b].
  std::optional<xt::xtensor<bool, 4>> structural;
  if (in[NONPAD_KV_SEQLEN] || (attr.is_causal && past > 0)) {
    std::vector<double> nonpad(B, static_cast<double>(Sk));
    if (in[NONPAD_KV_SEQLEN]) {
      if (in[NONPAD_KV_SEQLEN]->values.size() != B) throw InputError("nonpad_kv_seqlen must have one length per batch");
      nonpad = in[NONPAD_KV_SEQLEN]->values;
    }
    xt::xtensor<bool, 4> allowed = xt::ones<bool>({B, std::size_t{1}, Sq, Sk});
    for (std::size_t b = 0; b < B; ++b) {
      const double offset = past > 0 ? static_cast<double>(past) : nonpad[b] - static_cast<double>(Sq);
      for (std::size_t i = 0; i < Sq; ++i) {
        for (std::size_t j = 0; j < Sk; ++j) {
          const bool causal_ok = !attr.is_causal || static_cast<double>(j) <= static_cast<double>(i) + offset;
          allowed(b, 0, i, j) = causal_ok && static_cast<double>(j) < nonpad[b];
        }
      }
    }
    structural = allowed;
  } else {
    opt.causal = attr.is_causal;  // top-left, the kernel's own
  }

  if (in[ATTN_MASK]) {
    const Tensor& m = *in[ATTN_MASK];
    if (m.data_type == DataType::boolean) {
      xt::xarray<bool> mask = pad_last_axis<bool>(to_xarray<bool>(m), Sk, false);
      if (structural) {
        const std::array<std::size_t, 4> full{B, Hq, Sq, Sk};
        opt.allowed = xt::xarray<bool>(xt::broadcast(mask, full) && xt::broadcast(*structural, full));
        structural.reset();
      } else {
        opt.allowed = std::move(mask);
      }
    } else {
      opt.bias = pad_last_axis<T>(to_xarray<T>(m), Sk, -std::numeric_limits<T>::infinity());
    }
  }
  if (structural) opt.allowed = xt::xarray<bool>(*structural);

  if (wanted.count(3)) {
    if (attr.qk_matmul_output_mode == 3) {
      opt.return_weights = true;
    } else {
      notes[3] = fmt::format("not compared: qk_matmul_output_mode {} is not supported (only 3, the softmax weights)",
                             attr.qk_matmul_output_mode);
    }
  }

  AttentionResult<T, 4> r;
  try {
    r = attention<T>(q, k, v, opt);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }

  std::map<std::size_t, Produced> out;
  if (rank == 3) {  // (B, Hq, Sq, Dv) → (B, Sq, Hq·Dv)
    out[0] = produced(merge_heads<T>(r.output));
  } else {
    out[0] = produced(r.output);
  }
  out[1] = produced(k);
  out[2] = produced(v);
  if (opt.return_weights) out[3] = produced(r.weights);
  return out;
}

CaseResult run(const fs::path& dir, const Tolerance& tol) {
  CaseResult result;
  result.name = dir.filename().string();
  const Model model = load_model(dir / "model.onnx");
  const Graph& g = model.graph;
  if (g.nodes.size() != 1 || g.nodes[0].op_type != "Attention" ||
      !(g.nodes[0].domain.empty() || g.nodes[0].domain == "ai.onnx")) {
    throw Unsupported(fmt::format("the graph is not a single ONNX Attention node ({} nodes, first '{}')", g.nodes.size(),
                                  g.nodes.empty() ? "" : g.nodes[0].op_type));
  }
  if (!g.initializers.empty()) throw Unsupported("graph initializers are not supported");
  const Node& node = g.nodes[0];
  const Attributes attr = read_attributes(node);

  // input_N.pb is the N-th graph input; the node names which slot each one fills.
  const fs::path data = dir / "test_data_set_0";
  std::map<std::string, Tensor> tensors;
  for (std::size_t n = 0; n < g.inputs.size(); ++n) {
    tensors[g.inputs[n]] = load_tensor(data / fmt::format("input_{}.pb", n));
  }
  std::vector<const Tensor*> in(7, nullptr);
  for (std::size_t slot = 0; slot < node.inputs.size(); ++slot) {
    const std::string& name = node.inputs[slot];
    if (name.empty()) continue;
    if (slot >= in.size()) throw Unsupported(fmt::format("node input {} ('{}') is not an Attention input", slot, name));
    auto it = tensors.find(name);
    if (it == tensors.end()) throw InputError(fmt::format("{}: node input '{}' is not a graph input", dir.string(), name));
    in[slot] = &it->second;
  }
  if (!in[Q] || !in[K] || !in[V]) throw InputError(fmt::format("{}: Q, K and V are required", dir.string()));

  // Expected outputs: output_N.pb is the N-th graph output.
  std::set<std::size_t> wanted;
  std::map<std::size_t, Tensor> expected;
  for (std::size_t slot = 0; slot < node.outputs.size(); ++slot) {
    const std::string& name = node.outputs[slot];
    if (name.empty()) continue;
    const auto pos = std::find(g.outputs.begin(), g.outputs.end(), name);
    if (pos == g.outputs.end()) continue;  // an intermediate, not checked by the case
    expected[slot] = load_tensor(data / fmt::format("output_{}.pb", pos - g.outputs.begin()));
    wanted.insert(slot);
  }

  // Precision: Q's type (ONNX requires Q, K, V of one type).
  const DataType type = in[Q]->data_type;
  if (type != DataType::float32 && type != DataType::float64) {
    throw Unsupported(fmt::format("{} inputs (only float and double are computed)", in[Q]->type_name()));
  }
  if (attr.softmax_precision && *attr.softmax_precision != static_cast<int>(type)) {
    throw Unsupported(fmt::format("softmax_precision {} differs from the inputs' type {}",
                                  data_type_name(*attr.softmax_precision), in[Q]->type_name()));
  }
  std::map<std::size_t, std::string> notes;
  const auto outputs = type == DataType::float32 ? compute<float>(in, attr, wanted, notes)
                                                 : compute<double>(in, attr, wanted, notes);

  bool failed = false;
  for (const auto& [slot, exp] : expected) {
    OutputResult o;
    o.slot = slot;
    o.name = slot < 4 ? kOutputNames[slot] : node.outputs[slot];
    const auto it = outputs.find(slot);
    if (it == outputs.end()) {
      o.note = notes.count(slot) ? notes[slot] : "not compared: this output is not produced";
    } else if (it->second.shape != exp.dims) {
      o.compared = true;
      o.closeness.passed = false;
      o.note = fmt::format("shape {} but expected {}", shape_string(it->second.shape), shape_string(exp.dims));
    } else {
      o.compared = true;
      o.shape = exp.dims;
      o.closeness = allclose(it->second.values, exp.values, tol.rtol, tol.atol);
      result.max_abs_error = std::max(result.max_abs_error, o.closeness.max_abs_error);
      if (!o.closeness.passed) {
        const std::size_t w = o.closeness.max_abs_index;
        o.note = fmt::format("max abs err {:.2g} at index {} (got {:.9g}, expected {:.9g}); {} of {} elements out of "
                             "tolerance (rtol {:g}, atol {:g})",
                             o.closeness.max_abs_error, unravel_index(w, exp.dims), it->second.values[w], exp.values[w],
                             o.closeness.mismatches, exp.values.size(), tol.rtol, tol.atol);
      }
    }
    if (o.compared && !o.closeness.passed && !failed) {
      failed = true;
      result.reason = fmt::format("output {} ({}): {}", slot, o.name, o.note);
    }
    result.outputs.push_back(std::move(o));
  }
  const bool any_compared = std::any_of(result.outputs.begin(), result.outputs.end(), [](auto& o) { return o.compared; });
  if (failed) {
    result.status = CaseStatus::failed;
  } else if (!any_compared) {
    result.status = CaseStatus::skipped;
    result.reason = result.outputs.empty() ? "the case has no expected output" : result.outputs.front().note;
  } else {
    result.status = CaseStatus::passed;
  }
  return result;
}

}  // namespace

std::vector<fs::path> find_cases(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(fmt::format("{}: {}", dir.string(), fs::exists(dir, ec) ? "not a directory" : "no such directory"));
  }
  if (fs::is_regular_file(dir / "model.onnx", ec)) return {dir};
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_directory() && fs::is_regular_file(entry.path() / "model.onnx", ec)) cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  if (cases.empty()) {
    throw InputError(fmt::format("{}: no ONNX test case here (a case is a folder holding model.onnx and test_data_set_0/)",
                                 dir.string()));
  }
  return cases;
}

CaseResult run_case(const fs::path& case_dir, const Tolerance& tol) {
  try {
    return run(case_dir, tol);
  } catch (const Unsupported& e) {
    return CaseResult{case_dir.filename().string(), CaseStatus::skipped, e.what(), 0, {}};
  } catch (const InputError& e) {
    return CaseResult{case_dir.filename().string(), CaseStatus::failed, fmt::format("error: {}", e.what()), 0, {}};
  }
}

std::string report_line(const CaseResult& r) {
  switch (r.status) {
    case CaseStatus::passed: {
      std::string line = fmt::format("PASS {} (max abs err {:.2g})", r.name, r.max_abs_error);
      for (const OutputResult& o : r.outputs) {
        if (!o.compared) line += fmt::format("; output {} ({}) {}", o.slot, o.name, o.note);
      }
      return line;
    }
    case CaseStatus::failed: return fmt::format("FAIL {}: {}", r.name, r.reason);
    default: return fmt::format("SKIP {}: {}", r.name, r.reason);
  }
}

}  // namespace vl::onnx
