// Lesson linear-family: the checks of its claims, each with the broken variants it must reject.
//
// The claims about the computation judge the backend they are given; their controls are broken
// backends (linear_family_broken_backends.hpp). The cost claims are about our own code (the work
// of our kernels, counted), and their controls break that code.
#include <array>
#include <memory>

#include <xtensor/xview.hpp>

#include "backends/registry.hpp"
#include "lessons/linear_family/linear_family.hpp"
#include "lessons/linear_family/linear_family_broken_backends.hpp"

namespace vl::lessons::linear_family {

namespace {

// A kernel that forgets it has a state: output t recomputed by running the form over tokens 0 … t
// (the outputs are right; the work is quadratic in n, the state updates too).
FamilyResult<double> prefix_recomputed(const FamilyInputs<double>& in, const FamilyOptions& o) {
  const std::size_t n = in.q.shape(2);
  FamilyResult<double> r{xt::zeros<double>(std::array<std::size_t, 4>{in.q.shape(0), in.q.shape(1), n, in.v.shape(3)}), {}};
  for (std::size_t t = 0; t < n; ++t) {
    const FamilyResult<double> upto = our_kernel(tokens(in, 0, t + 1), o);
    xt::view(r.o, xt::all(), xt::all(), t, xt::all()) = xt::view(upto.o, xt::all(), xt::all(), t, xt::all());
    r.state = upto.state;
  }
  return r;
}

template <class BrokenBackend>
NegativeControl broken(std::string what) {
  return broken_backend(what, std::make_shared<BrokenBackend>(backends::plain(), what));
}

}  // namespace

Lesson lesson() {
  Lesson l;
  l.id = "linear-family";
  l.spec_file = "specs/linear_family.md";
  l.listings.push_back({"linear-family.main", "vl::lessons::linear_family::listing_main", listing_main, {backends::Op::linear_family}});

  // The forms' controls, for the fixed sweep and the generated cases alike.
  const std::vector<NegativeControl> forms_controls = {broken<DecayAfterWrite>("decay applied after the write"),
                                                       broken<CorrectionFromUpdatedState>("delta correction read from the updated state"),
                                                       broken<ChunkStateNotCarried>("a chunk's state not carried"),
                                                       broken<UtWithDiagonal>("the UT transform's diagonal included"),
                                                       broken<GqaRoundRobin>("GQA heads mapped round-robin")};
  l.checks.push_back({"linear-family.forms-agree", "each rule's three forms against ONNX's recurrence, 6 shapes, every chunk size",
                      forms_agree, forms_controls});
  l.checks.push_back({"linear-family.forms-agree", "generated cases: rule, n ≤ 40, d ≤ 16, GQA, decay per key dim, past, any chunk",
                      forms_agree_generated, forms_controls});
  const std::vector<NegativeControl> float32_controls = {broken<DecayAfterWrite>("decay applied after the write"),
                                                         broken<ChunkStateNotCarried>("a chunk's state not carried"),
                                                         broken<UtWithDiagonal>("the UT transform's diagonal included")};
  l.checks.push_back({"linear-family.forms-agree-float32", "the float32 forms against the float64 recurrence", forms_agree_float32,
                      float32_controls});
  l.checks.push_back({"linear-family.forms-agree-float32", "generated cases: the forms-agree terms, inputs in float32",
                      forms_agree_float32_generated, float32_controls});
  l.checks.push_back({"linear-family.chunk-invariant", "the chunked form at every chunk size against chunk_size 64", chunk_invariant,
                      {broken<ChunkStateNotCarried>("a chunk's state not carried"),
                       broken<ShortLastChunkSkipped>("the short last chunk skipped")}});
  l.checks.push_back({"linear-family.chunk-invariant", "generated cases: the drawn chunk size against 64, rule, n ≤ 40, d ≤ 16, GQA, decay per key dim, past",
                      chunk_invariant_generated,
                      {broken<ChunkStateNotCarried>("a chunk's state not carried"),
                       broken<ShortLastChunkSkipped>("the short last chunk skipped")}});
  const std::vector<NegativeControl> continuation_controls = {broken<PastStateIgnored>("past_state ignored"),
                                                              broken<DecayAfterWrite>("decay applied after the write")};
  l.checks.push_back({"linear-family.state-continuation", "prefill then continue, present_state, one decode step",
                      state_continuation, continuation_controls});
  l.checks.push_back({"linear-family.state-continuation", "generated cases: the form, where to split, rule, n ≤ 40, d ≤ 16, GQA, decay per key dim, past, any chunk",
                      state_continuation_generated, continuation_controls});
  const std::vector<NegativeControl> reduction_controls = {broken<DecayReadAsFactor>("log-decay read as the factor"),
                                                           broken<BetaOnCorrectionOnly>("β on the correction only")};
  l.checks.push_back({"linear-family.reductions", "gated(g = 0) = linear, gated_delta(g = 0) = delta, delta(β = 0) keeps the state",
                      reductions, reduction_controls});
  l.checks.push_back({"linear-family.reductions", "generated cases: the form, n ≤ 40, d ≤ 16, GQA, decay per key dim, any chunk; a past state always",
                      reductions_generated, reduction_controls});
  const std::vector<NegativeControl> overwrite_controls = {broken<CorrectionFromUpdatedState>("delta correction read from the updated state"),
                                                           broken<UtWithDiagonal>("the UT transform's diagonal included")};
  l.checks.push_back({"linear-family.delta-overwrites", "orthonormal keys written twice, β = 1: reads against the values",
                      delta_overwrites, overwrite_controls});
  l.checks.push_back({"linear-family.delta-overwrites", "generated cases: batch, heads, GQA, m ≤ 6 keys in d_k ≤ 8, d_v, the order of the writes",
                      delta_overwrites_generated, overwrite_controls});
  const std::vector<NegativeControl> normalised_controls = {broken<ReadBeforeWrite>("a token reads the state before its own write")};
  l.checks.push_back({"linear-family.normalised-form", "seed 000's φ-normalised attention as the linear rule on [V | 1]",
                      normalised_form, normalised_controls});
  l.checks.push_back({"linear-family.normalised-form", "generated cases: n ≤ 40, d_k ≤ 4, d_v ≤ 8",
                      normalised_form_generated, normalised_controls});
  l.checks.push_back({"linear-family.chunked-linear-cost", "multiply-adds counted at n = 1024 … 65536, d = 64, chunk 64",
                      [](const CheckContext& ctx) { return chunked_linear_cost([](std::size_t) { return 64; }, ctx); },
                      {broken_code("chunks that grow with n (n / 16 tokens)", [](const CheckContext& ctx) {
                        return chunked_linear_cost([](std::size_t n) { return n / 16; }, ctx);
                      })}});
  l.checks.push_back({"linear-family.cost-counted", "each rule's three forms: multiply-adds and state updates against the formulas, 5 shapes",
                      [](const CheckContext&) { return cost_counted(our_kernel); },
                      {broken_code("the chunk size ignored (one chunk of n tokens)",
                                   [](const CheckContext&) {
                                     return cost_counted([](const FamilyInputs<double>& in, FamilyOptions o) {
                                       o.chunk = in.q.shape(2);
                                       return our_kernel(in, o);
                                     });
                                   }),
                       broken_code("each output recomputed from the whole prefix", [](const CheckContext&) {
                         return cost_counted(prefix_recomputed);
                       })}});
  return l;
}

}  // namespace vl::lessons::linear_family
