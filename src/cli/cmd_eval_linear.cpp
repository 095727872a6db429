// lessons eval linear-attention --update-rule RULE ...: ONNX LinearAttention (opset 27) on .npy
// inputs, in its layout, through the same code `lessons onnx` runs (onnx/linear_attention_node.hpp),
// so that bad shapes and combinations get ONNX's rule as the message.
#include "cli/eval_linear_family.hpp"

#include <vector>

#include <fmt/core.h>

#include "backends/registry.hpp"
#include "cli/eval_inputs.hpp"
#include "cli/eval_outputs.hpp"
#include "numeric/npy.hpp"
#include "onnx/linear_attention_node.hpp"

namespace vl::cli {

void add_linear_family_options(CLI::App& lin, LinearFamilyArgs& a) {
  lin.add_option("--update-rule", a.update_rule,
                 "ONNX LinearAttention: linear | gated | delta | gated_delta; Q, K, V packed (B, T, H·D)")
      ->check(CLI::IsMember({"linear", "gated", "delta", "gated_delta"}));
  lin.add_option("--decay", a.decay, "log-decay (B, T, Hkv) per head or (B, T, Hkv·d_k) per key dimension (gated rules)");
  lin.add_option("--beta", a.beta, "β (B, T, Hkv) or (B, T, 1) (delta rules)");
  lin.add_option("--past-state", a.past_state, "state before the first token (B, Hkv, d_k, d_v)");
  lin.add_option("--present-state", a.present_state, "write the state after the last token (B, Hkv, d_k, d_v) .npy");
  lin.add_option("--q-heads", a.q_heads, "query heads Hq (ONNX q_num_heads)")->check(CLI::PositiveNumber);
  lin.add_option("--kv-heads", a.kv_heads, "key/value heads Hkv (ONNX kv_num_heads; Hq a multiple of it)")->check(CLI::PositiveNumber);
  lin.add_option("--scale", a.scale, "scale of the read (default, or 0: 1/sqrt(d_k))");
}

bool linear_family_requested(const LinearFamilyArgs& a) {
  if (!a.update_rule.empty()) return true;
  for (const auto& [given, option] : {std::pair{!a.decay.empty(), "--decay"}, {!a.beta.empty(), "--beta"},
                                      {!a.past_state.empty(), "--past-state"}, {!a.present_state.empty(), "--present-state"},
                                      {a.q_heads != 0, "--q-heads"}, {a.kv_heads != 0, "--kv-heads"}, {a.scale.has_value(), "--scale"}})
    if (given) throw InputError(fmt::format("{}: ONNX LinearAttention's options need --update-rule", option));
  return false;
}

namespace {

// A .npy input as an ONNX tensor of the query's type (float16, float32 or float64).
onnx::Tensor tensor_of(const std::string& path, const std::string& option, Precision p) {
  const xt::xarray<double> x = p == Precision::float32 ? xt::xarray<double>(xt::cast<double>(checked_input<float>(path, option, p, 1)))
                                                   : checked_input<double>(path, option, p, 1);  // float16: exact in double
  onnx::Tensor t;
  t.name = option;
  t.data_type = p == Precision::float16 ? onnx::DataType::float16 : p == Precision::float32 ? onnx::DataType::float32 : onnx::DataType::float64;
  t.dims.assign(x.shape().begin(), x.shape().end());
  t.values.assign(x.begin(), x.end());
  return t;
}

// ONNX's result as an array of the query's type; float16's stays double (save_results rounds it).
template <class T>
xt::xarray<T> as_array(const onnx::Produced& r) {
  return xt::xarray<T>(xt::cast<T>(xt::adapt(r.values, r.shape)));
}

}  // namespace

void eval_linear_family(const LinearFamilyArgs& a, const LinearCommonArgs& c) {
  if (a.q_heads == 0 || a.kv_heads == 0) throw InputError("--q-heads and --kv-heads are required with --update-rule");
  check_output_path(c.out, "--out");
  check_output_path(a.present_state, "--present-state");
  const Precision p = precision_of(read_npy_info(c.q, "--q"), "--q", c.q, true);
  std::vector<onnx::Tensor> held;
  held.reserve(6);
  std::vector<const onnx::Tensor*> in(7, nullptr);
  const std::pair<std::string, std::string> files[] = {{c.q, "--q"},         {c.k, "--k"},       {c.v, "--v"},
                                                       {a.past_state, "--past-state"}, {a.decay, "--decay"}, {a.beta, "--beta"}};
  for (std::size_t slot = 0; slot < 6; ++slot) {
    if (files[slot].first.empty()) continue;
    held.push_back(tensor_of(files[slot].first, files[slot].second, p));
    in[slot] = &held.back();
  }
  onnx::LinearAttentionCall call;
  call.update_rule = a.update_rule;
  call.q_num_heads = a.q_heads;
  call.kv_num_heads = a.kv_heads;
  call.scale = a.scale;
  call.form = c.form == "parallel" ? FamilyForm::parallel : c.form == "recurrent" ? FamilyForm::recurrent : FamilyForm::chunked;
  call.chunk_size = c.chunk ? std::int64_t(c.chunk) : 64;
  onnx::NodeResult r;
  try {
    r = onnx::run_linear_attention(in, call, *backends::plain());
  } catch (const InputError& e) {
    throw InputError(fmt::format("eval linear-attention: {} (ONNX LinearAttention)", e.what()));
  } catch (const onnx::Unsupported& e) {
    throw InputError(fmt::format("eval linear-attention: {}", e.what()));
  }
  const auto save = [&]<class T>(T) {
    const xt::xarray<T> out = as_array<T>(r.outputs.at(0));
    const xt::xarray<T> state = a.present_state.empty() ? xt::xarray<T>() : as_array<T>(r.outputs.at(1));
    save_results<T>({{c.out, "output", &out}, {a.present_state, "present state", &state}}, p == Precision::float16);
  };
  if (p == Precision::float32) save(float{});
  else save(double{});
}

}  // namespace vl::cli
