#pragma once
// Lesson attention (specs/attention.md): scaled dot-product attention as a soft dictionary
// lookup, the √d_k scale, multiple heads, the exact gradient, the n² cost and the kernels that
// avoid it. One file per section of the spec, each with its listing, the predicates of its
// claims and the broken backends they must reject:
//
//   attention_lookup.cpp    listing 1; weights-distribution, convex-combination, matches-torch
//   attention_generated.cpp weights-distribution and convex-combination over generated cases
//   attention_scale.cpp     listing 2; score-std, unscaled-saturates, scaled-flat
//   attention_heads.cpp     listing 3; mha-matches-torch, parameter-count, config-checked
//   attention_gradient.cpp  backward-fd, backward-matches-torch, fixture-gradient, dropout-inference, fixture-causal
//   attention_cost.cpp      listing 6; score-cells
//   attention_fused.cpp     fused-matches-plain, fused-float32, fused-workspace, linear-fast-matches
//   attention_table1.cpp    Table 1's costs counted: table1-costs
//   attention_try_it.cpp    seed 002's try it: fixture-try-it (its arrays feed the docs' panel)
//   attention_refuted.cpp   what the seeds get wrong: module-stores-weights, seed-invariants-constant, timings-vary
//   attention_lesson.cpp    the registration table
#include <memory>
#include <vector>

#include "engine/lesson.hpp"

namespace vl::lessons::attention {

// The listings.
ListingOutput listing_lookup(const ListingContext& ctx);  // listing 1: soft dictionary lookup, vs torch
ListingOutput listing_scale(const ListingContext& ctx);   // listing 2: the √d_k table
ListingOutput listing_heads(const ListingContext& ctx);   // listing 3: nn.MultiheadAttention by hand, parameter count
ListingOutput listing_cost(const ListingContext& ctx);    // listing 6: the n² score matrix, timed

// Each section's checks, with their negative controls.
std::vector<ClaimCheck> lookup_checks();
std::vector<ClaimCheck> scale_checks();
std::vector<ClaimCheck> heads_checks();
std::vector<ClaimCheck> module_checks();   // seed 002's module: its values against torch
std::vector<ClaimCheck> gradient_checks();
std::vector<ClaimCheck> cost_checks();
std::vector<ClaimCheck> fused_checks();
std::vector<ClaimCheck> fused_backward_checks();
std::vector<ClaimCheck> table1_checks();
std::vector<ClaimCheck> try_it_checks();
std::vector<ClaimCheck> refuted_checks();  // the seeds' sentences shown wrong (spec: refutes:)

// Listing 1's invariants over generated cases, and the control only their options reach
// (attention_generated.cpp; registered with listing 1's checks).
Measurement weights_distribution_generated(const CheckContext& ctx);
Measurement convex_combination_generated(const CheckContext& ctx);
Measurement shift_invariant_generated(const CheckContext& ctx);
std::shared_ptr<const backends::Backend> lengths_after_softmax();

/// The lesson: listings and checks (attention_lesson.cpp).
Lesson lesson();

}  // namespace vl::lessons::attention
