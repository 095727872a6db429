#pragma once
// Lesson linear-rnn: listings, claim predicates and negative controls (specs/linear_rnn.md).
#include <cstdint>
#include <functional>

#include <xtensor/xtensor.hpp>

#include "engine/lesson.hpp"

namespace vl::lessons::linear_rnn {

using Matrix = xt::xtensor<double, 2>;

/// An implementation of the lesson, as the checks see it: the three forms and the feature map.
/// The reference one is our kernels; the negative controls swap in broken pieces.
struct Forms {
  std::function<Matrix(const Matrix& pq, const Matrix& pk, const Matrix& v)> parallel;
  std::function<Matrix(const Matrix& pq, const Matrix& pk, const Matrix& v)> recurrent;
  std::function<Matrix(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk)> chunked;
  std::function<Matrix(const Matrix& x)> phi;
};
Forms reference_forms();

/// Q, K (n, d_k) and V (n, d_v) from default_rng(seed), drawn in that order, and φ(Q), φ(K).
struct Inputs {
  Matrix q, k, v, pq, pk;
};
Inputs draw_inputs(std::size_t n, std::size_t d_k, std::size_t d_v, std::uint64_t seed, const Forms& forms);

/// The seed notebook's listing: its nine printed lines, and O_par/O_rec/O_blk.
ListingOutput listing_main();

/// Number of state elements a recurrent implementation holds after n tokens.
using StateSizeAfter = std::function<std::size_t(std::size_t n, std::size_t d_k, std::size_t d_v)>;

// The claims' predicates (tolerances come from the spec).
Measurement forms_agree(const Forms& forms, double tolerance);
Measurement state_size_fixed(const StateSizeAfter& state_size_after, double tolerance);
Measurement phi_positive(const Forms& forms, double tolerance);
Measurement convex_combination(const Forms& forms, double tolerance);
Measurement causal(const Forms& forms, double tolerance);
Measurement chunked_cost_linear(const Forms& forms, double tolerance);

/// The lesson: listing and checks with their negative controls (linear_rnn_lesson.cpp).
Lesson lesson();

}  // namespace vl::lessons::linear_rnn
