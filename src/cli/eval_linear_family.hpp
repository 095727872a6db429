#pragma once
// `lessons eval linear-attention` in ONNX LinearAttention's layout and options (cmd_eval_linear.cpp):
// --update-rule selects it; without it the command is the φ-mapped form of seed 000 (cmd_eval.cpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace vl::cli {

struct LinearFamilyArgs {
  std::string update_rule, decay, beta, past_state, present_state;
  std::int64_t q_heads = 0, kv_heads = 0;
  std::optional<double> scale;
};

/// The options the φ-mapped form shares with this one.
struct LinearCommonArgs {
  std::string q, k, v, form, out;
  std::size_t chunk = 0;
};

void add_linear_family_options(CLI::App& lin, LinearFamilyArgs& a);

/// True when --update-rule was given; an ONNX-only option without it is an InputError.
bool linear_family_requested(const LinearFamilyArgs& a);

/// Runs the node on the .npy inputs and writes the output (and --present-state).
void eval_linear_family(const LinearFamilyArgs& a, const LinearCommonArgs& c);

}  // namespace vl::cli
