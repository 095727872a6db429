#pragma once
// Lesson linear-family: the family of linear recurrences, ONNX's LinearAttention (spec:
// specs/linear_family.md). The claims' predicates, each a check over a backend's
// linear_family operation (backends/backend.hpp), and the inputs they draw.
#include <cstdint>
#include <functional>

#include "engine/lesson.hpp"
#include "kernels/reference/linear_family_heads.hpp"

namespace vl::lessons::linear_family {

/// A shape of the sweeps: batches, query and key/value heads, tokens, key and value widths,
/// per-key-dimension decay (else per head), a past state.
struct Shape {
  std::size_t B, Hq, Hkv, n, dk, dv;
  bool per_dimension, past;
};

/// The four update rules, in ONNX's order.
inline constexpr UpdateRule kRules[] = {UpdateRule::linear, UpdateRule::gated, UpdateRule::delta, UpdateRule::gated_delta};

/// Inputs in ONNX's 4-D layout drawn from default_rng(seed): q, k, v normal, each key of unit
/// length (as DeltaNet normalises them), log-decay log σ(x + 2), β = σ(x), a normal past state.
/// The decay and β are drawn for every rule and used only by the rules that read them.
template <class T>
FamilyInputs<T> draw(const Shape& s, std::uint64_t seed);

/// Tokens [a, b) of every input (the past state kept).
template <class T>
FamilyInputs<T> tokens(const FamilyInputs<T>& in, std::size_t a, std::size_t b) {
  FamilyInputs<T> out;
  auto r = xt::range(a, b);
  out.q = xt::view(in.q, xt::all(), xt::all(), r, xt::all());
  out.k = xt::view(in.k, xt::all(), xt::all(), r, xt::all());
  out.v = xt::view(in.v, xt::all(), xt::all(), r, xt::all());
  out.g = xt::view(in.g, xt::all(), xt::all(), r, xt::all());
  out.beta = xt::view(in.beta, xt::all(), xt::all(), r);
  out.past = in.past;
  return out;
}

ListingOutput listing_main(const ListingContext& ctx);

Measurement forms_agree(const CheckContext& ctx);
Measurement forms_agree_float32(const CheckContext& ctx);
Measurement forms_agree_generated(const CheckContext& ctx);  // the same claim over generated cases
Measurement chunk_invariant_generated(const CheckContext& ctx);  // likewise
Measurement chunk_invariant(const CheckContext& ctx);
Measurement state_continuation(const CheckContext& ctx);
Measurement state_continuation_generated(const CheckContext& ctx);  // the same claim over generated cases
Measurement reductions(const CheckContext& ctx);
Measurement reductions_generated(const CheckContext& ctx);  // likewise
Measurement forms_agree_float32_generated(const CheckContext& ctx);
// The identities of the rules (linear_family_identities.cpp), each also over generated cases.
Measurement delta_overwrites(const CheckContext& ctx);
Measurement delta_overwrites_generated(const CheckContext& ctx);
Measurement normalised_form(const CheckContext& ctx);
Measurement normalised_form_generated(const CheckContext& ctx);

// The cost claims (linear_family_counts.cpp), about our own kernels: their work counted.

/// Our chunked kernel at a chunk size of its choosing for n tokens, its multiply-adds counted.
using ChunkFor = std::function<std::size_t(std::size_t n)>;
Measurement chunked_linear_cost(const ChunkFor& chunk_for, const CheckContext& ctx);

/// A kernel of the family in float64 (ours: vl::linear_family; the controls break it).
using FamilyKernel = std::function<FamilyResult<double>(const FamilyInputs<double>&, const FamilyOptions&)>;
/// Every rule's three forms, their multiply-adds and state updates against the exact formulas.
Measurement cost_counted(const FamilyKernel& kernel);
FamilyResult<double> our_kernel(const FamilyInputs<double>& in, const FamilyOptions& o);

Lesson lesson();

}  // namespace vl::lessons::linear_family
