// Lesson positions, the shift as a rotation over generated cases (engine/generated_cases.hpp): any
// width d from 2 to 512 (odd ones too, whose last column has no partner), a position below 30 and
// a shift k from 1 to 10, the ranges the spec's bounds are derived for; one request per case, the
// table's rows 0 … pos + k (as the fixed sweep asks: no positions attribute needed).
//
//   positions.shift-is-rotation   PE(pos + k) = R_k(ω_i) PE(pos) in every complete (sin, cos) pair.
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "engine/generated_cases.hpp"
#include "kernels/reference/positional_encoding.hpp"
#include "lessons/positions/positions.hpp"
#include "numeric/compare.hpp"

namespace vl::lessons::positions {

namespace {

std::vector<CaseTerm> rotation_terms() { return {{"d", 2, 512, 2, {}}, {"pos", 0, 29, 0, {}}, {"k", 1, 10, 1, {}}}; }

// Anchors (d, pos, k): the listing's width at a late position, an odd width, a width of 64 at 0
// (with the engine's d = 2 and d = 512 cases). Sin and cos swapped breaks every pair; the exponent
// i/d every pair but the first, so d ≥ 4 meets it.
std::vector<std::vector<int>> rotation_anchor_cases() { return {{16, 20, 7}, {15, 3, 1}, {64, 0, 5}}; }

Measurement rotation_case(const CheckContext& ctx, const Case& c) {
  const std::size_t d = c["d"], k = c["k"];
  const std::size_t at_pos = c["pos"];
  const Matrix pe = backends::positional_encoding_table(ctx.backend, at_pos + k + 1, d);
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; 2 * i + 1 < d; ++i) {
    const auto R = pe_rotation<double>(omega(i, d), double(k));
    const double a = pe(at_pos, 2 * i), b = pe(at_pos, 2 * i + 1);
    const double e = worse(worse(0, std::fabs(R(0, 0) * a + R(0, 1) * b - pe(at_pos + k, 2 * i))),
                           std::fabs(R(1, 0) * a + R(1, 1) * b - pe(at_pos + k, 2 * i + 1)));
    if (e > worst || std::isnan(e)) worst = worse(worst, e), at = i;
  }
  return {worst, fmt::format("d={} pos={} k={}: max |R_k PE(pos) − PE(pos+k)| = {:.2e} (pair {})", d, at_pos, k, worst, at)};
}

}  // namespace

Measurement shift_is_rotation_generated(const CheckContext& ctx) {
  const auto terms = rotation_terms();
  return generated_cases(ctx, terms, rotation_anchor_cases(), Worse::larger, [&](const Case& c) { return rotation_case(ctx, c); });
}

}  // namespace vl::lessons::positions
