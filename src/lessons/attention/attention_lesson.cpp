// Lesson attention: the registration table (the sections are in attention_<section>.cpp).
#include "backends/backend.hpp"
#include "lessons/attention/attention.hpp"

namespace vl::lessons::attention {

Lesson lesson() {
  Lesson l;
  l.id = "attention";
  l.spec_file = "specs/attention.md";
  l.listings = {
      {"attention.lookup", "vl::lessons::attention::listing_lookup", listing_lookup,
       {backends::Op::attention, {backends::Op::attention, backends::Option::weights}}},
      {"attention.scale", "vl::lessons::attention::listing_scale", listing_scale},
      {"attention.heads", "vl::lessons::attention::listing_heads", listing_heads},
      {"attention.cost", "vl::lessons::attention::listing_cost", listing_cost},
  };
  for (auto section : {lookup_checks, scale_checks, heads_checks, gradient_checks, cost_checks, fused_checks})
    for (auto& check : section()) l.checks.push_back(std::move(check));
  return l;
}

}  // namespace vl::lessons::attention
