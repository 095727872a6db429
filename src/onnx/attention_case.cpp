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

#include "backends/backend.hpp"
#include "core/errors.hpp"
#include "numeric/float16.hpp"
#include "onnx/attention_node.hpp"
#include "onnx/linear_attention_node.hpp"
#include "onnx/model.hpp"
#include "onnx/tensor_proto.hpp"

namespace vl::onnx {
namespace {

namespace fs = std::filesystem;

// The tolerance an output is compared with: ONNX's runner's for float and double; for float16,
// derived from its unit round-off u = 2^-11 (attention_case.hpp).
Tolerance output_tolerance(const Tensor& expected, const Tolerance& tol) {
  if (expected.data_type != DataType::float16) return tol;
  double scale = 0;
  for (double e : expected.values)
    if (std::isfinite(e)) scale = std::max(scale, std::abs(e));
  const double u = kHalfUnitRoundoff;
  return {.rtol = 2 * u, .atol = 2 * u * scale};
}

CaseResult run(const fs::path& dir, const backends::Backend& backend, const Tolerance& tol) {
  CaseResult result;
  result.name = dir.filename().string();
  const Model model = load_model(dir / "model.onnx");
  const Graph& g = model.graph;
  // One Attention node, or one LinearAttention node (linear_attention_node.hpp).
  const bool linear = g.nodes.size() == 1 && g.nodes[0].op_type == "LinearAttention";
  if (g.nodes.size() != 1 || (g.nodes[0].op_type != "Attention" && !linear) ||
      !(g.nodes[0].domain.empty() || g.nodes[0].domain == "ai.onnx")) {
    throw Unsupported(fmt::format("the graph is not a single ONNX Attention or LinearAttention node ({} nodes, first '{}')",
                                  g.nodes.size(), g.nodes.empty() ? "" : g.nodes[0].op_type));
  }
  if (!g.initializers.empty()) throw Unsupported("graph initializers are not supported");
  const Node& node = g.nodes[0];

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
    if (slot >= in.size()) throw Unsupported(fmt::format("node input {} ('{}') is not an {} input", slot, name, node.op_type));
    auto it = tensors.find(name);
    if (it == tensors.end()) throw InputError(fmt::format("{}: node input '{}' is not a graph input", dir.string(), name));
    in[slot] = &it->second;
  }
  if (!in[Q] || !in[K] || !in[V]) throw InputError(fmt::format("{}: Q, K and V are required", dir.string()));
  const auto output_name = [&](std::size_t slot) -> std::string {
    if (linear) return slot < 2 ? kLinearOutputNames[slot] : node.outputs[slot];
    return slot < 4 ? kOutputNames[slot] : node.outputs[slot];
  };

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

  const NodeResult node_result =
      linear ? run_linear_attention_node(in, node, backend) : run_attention_node(in, read_attributes(node), wanted, backend);
  result.precision = node_result.precision;
  const auto& outputs = node_result.outputs;

  bool failed = false;
  for (const auto& [slot, exp] : expected) {
    OutputResult o;
    o.slot = slot;
    o.name = output_name(slot);
    o.type = exp.type_name();
    o.shape = exp.dims;
    const Tolerance t = output_tolerance(exp, tol);
    o.rtol = t.rtol, o.atol = t.atol;
    const auto it = outputs.find(slot);
    if (it == outputs.end()) {
      const auto why = node_result.not_made.find(slot);
      o.note = why != node_result.not_made.end() ? why->second : "we do not compute this output";
    } else if (it->second.shape != exp.dims) {
      o.compared = true;
      o.closeness.passed = false;
      o.note = fmt::format("shape {} but expected {}", shape_string(it->second.shape), shape_string(exp.dims));
    } else {
      o.compared = true;
      o.closeness = closeness(it->second.values, exp.values, t.rtol, t.atol);
      result.max_abs_error = std::max(result.max_abs_error, o.closeness.max_abs_error);
      if (!o.closeness.passed) {
        const std::size_t w = o.closeness.max_abs_index;
        o.note = fmt::format("max abs err {:.2g} at index {} (got {:.9g}, expected {:.9g}); {} of {} elements out of "
                             "tolerance (rtol {:g}, atol {:g})",
                             o.closeness.max_abs_error, unravel_index(w, exp.dims), it->second.values[w], exp.values[w],
                             o.closeness.mismatches, exp.values.size(), t.rtol, t.atol);
      }
    }
    if (o.compared && !o.closeness.passed && !failed) {
      failed = true;
      result.reason = fmt::format("output {} ({}): {}", slot, o.name, o.note);
    }
    result.outputs.push_back(std::move(o));
  }
  // PASS only when every expected output was compared within tolerance; an output we cannot
  // compute makes the case SKIP (never PASS), with the reason.
  const auto unchecked = std::find_if(result.outputs.begin(), result.outputs.end(), [](auto& o) { return !o.compared; });
  if (failed) {
    result.status = CaseStatus::failed;
  } else if (result.outputs.empty()) {
    result.status = CaseStatus::skipped;
    result.reason = "the case has no expected output";
  } else if (unchecked != result.outputs.end()) {
    result.status = CaseStatus::skipped;
    result.reason = fmt::format("output {} ({}) not computed: {}", unchecked->slot, unchecked->name, unchecked->note);
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

CaseResult run_case(const fs::path& case_dir, const backends::Backend& backend, const Tolerance& tol) {
  const std::string name = case_dir.filename().string();
  try {
    return run(case_dir, backend, tol);
  } catch (const Unsupported& e) {
    return CaseResult{name, CaseStatus::skipped, e.what(), 0, {}, {}};
  } catch (const backends::Unsupported& e) {  // the backend lacks the operation or an option the case needs
    return CaseResult{name, CaseStatus::skipped, e.what(), 0, {}, {}};
  } catch (const InputError& e) {
    return CaseResult{name, CaseStatus::failed, fmt::format("error: {}", e.what()), 0, {}, {}};
  } catch (const std::exception& e) {  // the backend failed: a wrong shape, a candidate that crashed
    return CaseResult{name, CaseStatus::failed, fmt::format("error: backend '{}': {}", backend.name(), e.what()), 0, {}, {}};
  }
}

std::string report_line(const CaseResult& r) {
  switch (r.status) {
    case CaseStatus::passed: return fmt::format("PASS {} (max abs err {:.2g})", r.name, r.max_abs_error);
    case CaseStatus::failed: return fmt::format("FAIL {}: {}", r.name, r.reason);
    default: return fmt::format("SKIP {}: {}", r.name, r.reason);
  }
}

std::vector<std::string> report_details(const CaseResult& r) {
  std::vector<std::string> lines;
  if (!r.precision.empty()) lines.push_back(fmt::format("  computed in {}", r.precision));
  for (const OutputResult& o : r.outputs) {
    std::string line = fmt::format("  output {} ({}) {} {}: ", o.slot, o.name, o.type, shape_string(o.shape));
    if (o.compared) {
      line += fmt::format("max abs err {:.3g}, max rel err {:.3g}; tolerance rtol {:.3g}, atol {:.3g}", o.closeness.max_abs_error,
                          o.closeness.max_rel_error, o.rtol, o.atol);
      if (o.type == "float16") line += " (float16: rtol 2u, atol 2u·max|expected|, u = 2^-11)";
      line += o.closeness.passed ? "" : " — out of tolerance";
    } else {
      line += "not compared: " + o.note;
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace vl::onnx
