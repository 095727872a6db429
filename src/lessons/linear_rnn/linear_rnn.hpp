#pragma once
// Lesson linear-rnn: listings, claim predicates and negative controls (specs/linear_rnn.md).
//
// The three forms (parallel, recurrent, chunked) are backend operations: the claims about the
// computation judge whatever backend they are given. φ, the recurrent state's size and the
// counted work are our own code (subject: our-code): their predicates take the piece of our
// code that their negative controls break.
#include <cstdint>
#include <functional>

#include <xtensor/xtensor.hpp>

#include "engine/lesson.hpp"
#include "kernels/reference/linear_attention.hpp"

namespace vl::lessons::linear_rnn {

using Matrix = xt::xtensor<double, 2>;

/// A feature map, element-wise on a matrix. Ours is φ(x) = elu(x) + 1 (kernels/reference/feature_map.hpp).
using FeatureMap = std::function<Matrix(const Matrix& x)>;
Matrix feature_map(const Matrix& x);

/// Q, K (n, d_k) and V (n, d_v) from default_rng(seed), drawn in that order, and φ(Q), φ(K).
struct Inputs {
  Matrix q, k, v, pq, pk;
};
Inputs draw_inputs(std::size_t n, std::size_t d_k, std::size_t d_v, std::uint64_t seed, const FeatureMap& phi = feature_map);

/// The seed notebook's listing: its nine printed lines, and O_par/O_rec/O_blk.
ListingOutput listing_main(const ListingContext& ctx);

/// Number of state elements a recurrent implementation of ours holds after n tokens.
using StateSizeAfter = std::function<std::size_t(std::size_t n, std::size_t d_k, std::size_t d_v)>;

/// Our chunked form, whose multiply-adds kernels/reference/matmul.hpp counts:
/// φ(Q), φ(K) (n, d_k), V (n, d_v), chunk B → (n, d_v).
using CountedChunkedForm = std::function<Matrix(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk)>;

/// Our three forms as counted code (linear_rnn_counts.cpp): φ(Q), φ(K) (n, d_k), V (n, d_v) → (n, d_v).
struct Forms {
  std::function<Matrix(const Matrix& pq, const Matrix& pk, const Matrix& v)> parallel, recurrent;
  CountedChunkedForm chunked;
};
Forms our_forms();

/// One generation step: produce output t of `in` given the state after tokens 0 … t − 1 (which
/// the step updates). Ours: recurrent_step; a cache in place of the state: cache_step.
using NextOutput = std::function<void(const Inputs& in, std::size_t t, LinearAttentionState<double>& state)>;
void recurrent_step(const Inputs& in, std::size_t t, LinearAttentionState<double>& state);
void cache_step(const Inputs& in, std::size_t t, LinearAttentionState<double>& state);

// The claims' predicates: each measures, the engine judges the value against the spec. Those taking a CheckContext judge
// its backend through its linear_* operations; the others judge our own code.
Measurement forms_agree(const CheckContext& ctx);
Measurement state_size_fixed(const StateSizeAfter& state_size_after);
Measurement phi_positive(const FeatureMap& phi);
Measurement convex_combination(const CheckContext& ctx);
Measurement causal(const CheckContext& ctx);
// The same three claims over generated cases (linear_rnn_generated.cpp).
Measurement forms_agree_generated(const CheckContext& ctx);
Measurement convex_combination_generated(const CheckContext& ctx);
Measurement causal_generated(const CheckContext& ctx);
Measurement chunked_cost_linear(const CountedChunkedForm& chunked);
Measurement cost_counted(const Forms& forms);
Measurement generation_step_cost(const NextOutput& step);

/// The lesson: listing and checks with their negative controls (linear_rnn_lesson.cpp).
Lesson lesson();

}  // namespace vl::lessons::linear_rnn
