// Lesson attention: the registration table (the sections are in attention_<section>.cpp).
#include "backends/backend.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/outputs_only.hpp"

namespace vl::lessons::attention {

Lesson lesson() {
  Lesson l;
  l.id = "attention";
  l.spec_file = "specs/attention.md";
  l.listings = {
      {"attention.lookup", "vl::lessons::attention::listing_lookup", listing_lookup,
       {backends::Op::attention}},  // the weights from the outputs where the backend forms none
      {"attention.scale", "vl::lessons::attention::listing_scale", listing_scale},
      {"attention.heads", "vl::lessons::attention::listing_heads", listing_heads},
      {"attention.cost", "vl::lessons::attention::listing_cost", listing_cost},
  };
  for (auto section : {lookup_checks, scale_checks, heads_checks, module_checks, gradient_checks, cost_checks, table1_checks, fused_checks, fused_backward_checks, try_it_checks, refuted_checks})
    for (auto& check : section()) l.checks.push_back(std::move(check));
  // The claims about the weights, judged also through the outputs alone (lessons/outputs_only.hpp).
  add_outputs_only(l, {"attention.weights-distribution", "attention.matches-torch", "attention.mha-matches-torch",
                       "attention.fixture-causal"});
  return l;
}

}  // namespace vl::lessons::attention
