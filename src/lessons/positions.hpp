#pragma once
// Lesson positions: listings, claim predicates and negative controls (specs/positions.md).
#include <functional>

#include <xtensor/xtensor.hpp>

#include "engine/lesson.hpp"
#include "kernels/multi_head_attention.hpp"

namespace vl::lessons::positions {

using Matrix = xt::xtensor<double, 2>;

/// An implementation of the lesson, as the checks see it. The reference one is our kernels
/// (kernels/positional_encoding.hpp, kernels/multi_head_attention.hpp); the negative controls swap
/// in broken pieces.
struct Positions {
  /// Rows of the table PE at the given positions: (positions, d).
  std::function<Matrix(const std::vector<double>& positions, std::size_t d)> encoding_at;
  /// The table for positions 0 … n − 1.
  Matrix encoding(std::size_t n, std::size_t d) const;
  /// The layer with positions: self-attention of the module over x (n, d) with the table pe (n, d)
  /// (zeros: no positions); returns the output and the per-head weights.
  std::function<MhaResult<double, 2>(const MhaParameters<double>& p, std::size_t heads, const Matrix& x, const Matrix& pe)> layer;
};
Positions reference_positions();

/// The seed article's listing 4: its three printed lines, and the arrays.
ListingOutput listing_main();

// The claims' predicates (tolerances come from the spec).
Measurement permutation_equivariant(const Positions& impl, double tolerance);
Measurement encoding_breaks_equivariance(const Positions& impl, double tolerance);
Measurement shift_is_rotation(const Positions& impl, double tolerance);
Measurement rotation_error_growth(const Positions& impl, double tolerance);
Measurement unit_pairs(const Positions& impl, double tolerance);
Measurement geometric_wavelengths(const Positions& impl, double tolerance);

/// The lesson: listing and checks with their negative controls (positions_lesson.cpp).
Lesson lesson();

}  // namespace vl::lessons::positions
