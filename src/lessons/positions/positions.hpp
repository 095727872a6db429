#pragma once
// Lesson positions: listings, claim predicates and negative controls (specs/positions.md).
//
// Each claim's check judges the backend it is given (CheckContext::backend) through its
// `positional_encoding` (the table's rows) and `multi_head_attention` (the layer: self-attention
// of the module over x + PE) operations. The broken variants it must reject are backends too
// (positions_broken_backends.hpp).
#include <cmath>
#include <cstddef>

#include "backends/backend.hpp"
#include "engine/lesson.hpp"

namespace vl::lessons::positions {

using backends::Matrix;  // xt::xtensor<double, 2>

/// ω_i as the lesson writes it, 1 / 10000 ** (2 * i / d): the checks' own, never the judged table's.
inline double omega(std::size_t i, std::size_t d) { return 1.0 / std::pow(10000.0, double(2 * i) / double(d)); }

/// The seed article's listing 4: its three printed lines, and the arrays (our kernels; it
/// reads no golden).
ListingOutput listing_main(const ListingContext& ctx);

// The claims' checks: each measures ctx.backend; the engine judges the value against the spec.
Measurement permutation_equivariant(const CheckContext& ctx);
Measurement encoding_breaks_equivariance(const CheckContext& ctx);
Measurement causal_breaks_equivariance(const CheckContext& ctx);  // refutes seed 001's FAQ "No"
Measurement shift_is_rotation(const CheckContext& ctx);
Measurement shift_is_rotation_generated(const CheckContext& ctx);  // positions_generated.cpp
Measurement rotation_error_growth(const CheckContext& ctx);
Measurement unit_pairs(const CheckContext& ctx);
Measurement geometric_wavelengths(const CheckContext& ctx);

/// The lesson: listing and checks with their negative controls (positions_lesson.cpp).
Lesson lesson();

}  // namespace vl::lessons::positions
