#pragma once
// Lesson positions: listings, claim predicates and negative controls (specs/positions.md).
//
// Each claim's check judges the backend it is given (CheckContext::backend) through its
// `positional_encoding` (the table's rows) and `multi_head_attention` (the layer: self-attention
// of the module over x + PE) operations. The broken variants it must reject are backends too
// (positions_broken_backends.hpp).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "engine/lesson.hpp"
#include "kernels/reference/multi_head_attention.hpp"

namespace vl::lessons::positions {

using backends::Matrix;  // xt::xtensor<double, 2>

/// ω_i as the lesson writes it, 1 / 10000 ** (2 * i / d): the checks' own, never the judged table's.
inline double omega(std::size_t i, std::size_t d) { return 1.0 / std::pow(10000.0, double(2 * i) / double(d)); }

/// The seed article's listing 4: its three printed lines, and the arrays (our kernels; it
/// reads no golden).
ListingOutput listing_main(const ListingContext& ctx);

/// layer(x[perm]) against layer(x)[perm] for each of `perms` (x: (n, d), the module's self-attention
/// through ctx.backend): the largest difference of outputs and per-head weights in float64, that
/// difference over twice the module's error bound on the rounded inputs in another precision.
double equivariance_gap(const CheckContext& ctx, const MhaParameters<double>& params, std::size_t heads, const Matrix& x,
                        const std::vector<std::vector<std::int64_t>>& perms);

/// The largest |sin² + cos² − 1| over a table's complete pairs, which bounds |‖PE‖²/(d/2) − 1| for
/// even d (positions.unit-pairs); `where` names the worst, `largest` gains the largest |PE|.
double unit_pair_error(const Matrix& pe, std::size_t d, std::string& where, double& largest);

/// The largest relative error of the wavelengths read off rows 0 and 1 of a table of width d
/// (positions.geometric-wavelengths); `where` names the worst pair.
double wavelength_error(const Matrix& pe, std::size_t d, std::string& where);

/// |R_k PE(pos) − PE(pos + k)| over the complete pairs of a width-d table read at pos and pos + k
/// (float64 positions), and its largest ratio c to the rounding model 2⁻⁵³ (2 (pos+k) ω + k ω + 4)
/// (positions.rotation-error-growth).
struct RotationGrowth {
  double error = 0, c = 0;
};
RotationGrowth rotation_growth_at(const CheckContext& ctx, double pos, std::size_t d, std::size_t k);

// The claims' checks: each measures ctx.backend; the engine judges the value against the spec.
Measurement permutation_equivariant(const CheckContext& ctx);
Measurement encoding_breaks_equivariance(const CheckContext& ctx);
Measurement causal_breaks_equivariance(const CheckContext& ctx);  // refutes seed 001's FAQ "No"
Measurement shift_is_rotation(const CheckContext& ctx);
Measurement shift_is_rotation_generated(const CheckContext& ctx);  // positions_generated.cpp
Measurement rotation_error_growth(const CheckContext& ctx);
Measurement unit_pairs(const CheckContext& ctx);
Measurement geometric_wavelengths(const CheckContext& ctx);
// The same claims over generated cases (positions_generated.cpp).
Measurement permutation_equivariant_generated(const CheckContext& ctx);
Measurement rotation_error_growth_generated(const CheckContext& ctx);
Measurement unit_pairs_generated(const CheckContext& ctx);
Measurement geometric_wavelengths_generated(const CheckContext& ctx);

/// The lesson: listing and checks with their negative controls (positions_lesson.cpp).
Lesson lesson();

}  // namespace vl::lessons::positions
