#pragma once
// Lesson masking: listings, claim predicates and negative controls (specs/masking.md).
#include <cstdint>
#include <functional>

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include "engine/lesson.hpp"
#include "kernels/attention.hpp"

namespace vl::lessons::masking {

using Tensor4 = xt::xtensor<double, 4>;
using BoolMatrix = xt::xtensor<bool, 2>;

/// An implementation of masked attention, as the checks see it. Every mask here is in torch's
/// attn_mask convention (true = may NOT attend). The reference one is our kernels
/// (kernels/causal_mask.hpp, kernels/attention.hpp); the negative controls swap in broken pieces.
struct Masking {
  /// The causal mask (Sq, Sk) for an alignment.
  std::function<BoolMatrix(std::size_t sq, std::size_t sk, CausalAlignment alignment)> causal_blocked;
  /// Combine a (Sq, Sk) mask with a key-padding mask (B, Sk) into one broadcastable to (B, H, Sq, Sk).
  std::function<xt::xarray<bool>(const BoolMatrix& mask, const BoolMatrix& padding)> with_padding;
  /// Attention of Q (B, H, Sq, D) over K, V (B, H, Sk, D) with a blocked mask broadcast to
  /// (B, H, Sq, Sk); returns the output and the weights.
  std::function<AttentionResult<double, 4>(const Tensor4& q, const Tensor4& k, const Tensor4& v, const xt::xarray<bool>& blocked)> attend;
};
Masking reference_masking();

/// Q, K, V (B, H, S, D) drawn from default_rng(seed), in that order.
struct Inputs {
  Tensor4 q, k, v;
};
Inputs draw_inputs(std::size_t b, std::size_t h, std::size_t sq, std::size_t sk, std::size_t d, std::uint64_t seed);

/// The seed article's listing 5: its two printed lines, and the module's arrays.
ListingOutput listing_main();

// The claims' predicates (tolerances come from the spec).
Measurement masked_weights_zero(const Masking& m, double tolerance);
Measurement first_position_self(const Masking& m, double tolerance);
Measurement prefix_unchanged(const Masking& m, double tolerance);
Measurement one_pass_equals_decoding(const Masking& m, double tolerance);
Measurement alignment(const Masking& m, double tolerance);
Measurement padding_ignored(const Masking& m, double tolerance);
Measurement fully_masked_row_zero(const Masking& m, double tolerance);

/// The lesson: listing and checks with their negative controls (masking_lesson.cpp).
Lesson lesson();

}  // namespace vl::lessons::masking
