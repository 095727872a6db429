// Lesson positions, three claims over generated cases (engine/generated_cases.hpp), each within
// the ranges its spec tolerance is derived for:
//
//   positions.shift-is-rotation       PE(pos + k) = R_k(ω_i) PE(pos) in every complete (sin, cos)
//                                     pair: any width d from 2 to 512 (odd ones too, whose last
//                                     column has no partner), pos < 30, k from 1 to 10; one request,
//                                     the table's rows 0 … pos + k (no positions attribute needed).
//   positions.geometric-wavelengths   the wavelengths read off rows 0 and 1 of a table of any width
//                                     d from 2 to 512; one request.
//   positions.permutation-equivariant layer(x[perm]) = layer(x)[perm] for a module of n ≤ 16
//                                     tokens, 1 to 8 heads, d ≤ 32 (the fixed sweep's ranges), torch's
//                                     initialisation with or without drawn biases (the fixed
//                                     sweep's are torch's zeros), one or two permutations;
//                                     1 + permutations requests.
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include <xtensor/xview.hpp>

#include "engine/generated_cases.hpp"
#include "kernels/reference/positional_encoding.hpp"
#include "lessons/permutations.hpp"
#include "lessons/positions/positions.hpp"
#include "numeric/compare.hpp"
#include "numeric/torch_mha_init.hpp"
#include "numeric/torch_random.hpp"

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

// Wavelengths: the width alone. Sin and cos swapped moves λ_0 at any d; the exponent i/d moves
// the ratio from the second pair on, so d ≥ 4 (the engine's d = 512 anchor, and 6) meets it.
std::vector<CaseTerm> wavelength_terms() { return {{"d", 2, 512, 2, {}}}; }
std::vector<std::vector<int>> wavelength_anchor_cases() { return {{6}, {15}}; }

Measurement wavelength_case(const CheckContext& ctx, const Case& c) {
  const std::size_t d = c["d"];
  std::string where = "geometric";
  const double e = wavelength_error(backends::positional_encoding_table(ctx.backend, 2, d), d, where);
  return {e, fmt::format("max relative error of λ_0 = 2π and λ_(i+1)/λ_i = 10000^(2/d): {:.2e} ({})", e, where)};
}

// Equivariance: n tokens, h heads of width dh (d = h·dh, dh clamped so that d ≤ 32), biases
// (none: torch's zeros; drawn: N(0, 1) in place of them), and a second permutation.
std::vector<CaseTerm> equivariance_terms() {
  return {{"n", 2, 16, 2, {}}, {"h", 1, 8, 1, {}}, {"dh", 1, 8, 1, {}}, {"bias", 0, 1, 0, {"none", "drawn"}}, {"perms", 1, 2, 1, {}}};
}
// The causal mask forced on the module breaks equivariance at any n ≥ 2 (query 0 sees one key,
// query n − 1 all): the engine's simplest case meets it; anchors add the listing's module with
// biases and a wide one.
std::vector<std::vector<int>> equivariance_anchor_cases() { return {{7, 4, 4, 1, 2}, {16, 8, 4, 0, 1}}; }

Measurement equivariance_case(const CheckContext& ctx, const Case& c) {
  const std::size_t n = c["n"], h = c["h"], dh = std::min<std::size_t>(c["dh"], 32 / h), d = h * dh;
  torch_rng::Generator gen(c.data_seed());
  MhaParameters<double> params = torch_rng::mha_init<double>(gen, d, h);
  if (c["bias"] == 1) {
    params.in_proj_bias = torch_rng::randn<double>(gen, {3 * d});
    params.out_proj_bias = torch_rng::randn<double>(gen, {d});
  }
  const Matrix x = xt::view(torch_rng::randn<double>(gen, {1, n, d}), 0);
  const std::vector<std::vector<std::int64_t>> perms =
      non_identity_permutations(gen, std::int64_t(n), std::size_t(c["perms"]), "permutation_equivariant_generated");
  const double e = equivariance_gap(ctx, params, h, x, perms);
  return {e, fmt::format("n={} h={} d={}: max |layer(x[perm]) − layer(x)[perm]| (outputs and weights){} = {:.2e} over {} permutations", n, h,
                         d, ctx.precision == Precision::float64 ? "" : " over twice its error bound", e, perms.size())};
}

// Rotation error growth: pos = m·10^e (m 1 … 9, e 1 … 9: up to 9·10⁹), any width d ≤ 512, k ≤ 10.
// Both controls (a float32 table, the exponent i/d) meet their bugs at the engine's largest case
// and at the fixed sweep's d = 16, pos = 10⁹, k = 5.
std::vector<CaseTerm> growth_terms() {
  return {{"m", 1, 9, 1, {}}, {"e", 1, 9, 1, {}}, {"d", 2, 512, 2, {}}, {"k", 1, 10, 1, {}}};
}
std::vector<std::vector<int>> growth_anchor_cases() { return {{1, 9, 16, 5}, {3, 4, 15, 1}}; }

Measurement growth_case(const CheckContext& ctx, const Case& c) {
  const double pos = double(c["m"]) * std::pow(10.0, double(c["e"]));
  const std::size_t d = c["d"], k = c["k"];
  const RotationGrowth g = rotation_growth_at(ctx, pos, d, k);
  return {g.c, fmt::format("pos={:.0e} d={} k={}: error {:.1e} (c = {:.2f})", pos, d, k, g.error, g.c)};
}

// Unit pairs: any width d ≤ 512 (odd too; d = 1 has no pair, only the range), a table of 1 to 2048
// positions. Cos replaced by sin breaks every pair at position 0 (sin 0 = 0): any d ≥ 2 meets it.
std::vector<CaseTerm> unit_terms() { return {{"d", 1, 512, 1, {}}, {"positions", 1, 2048, 1, {}}}; }
std::vector<std::vector<int>> unit_anchor_cases() { return {{16, 2048}, {15, 40}, {2, 3}}; }

Measurement unit_case(const CheckContext& ctx, const Case& c) {
  const std::size_t d = c["d"], n = c["positions"];
  std::string where = "unit";
  double largest = 0;
  const double e = unit_pair_error(backends::positional_encoding_table(ctx.backend, n, d), d, where, largest);
  Measurement m{e, fmt::format("d={}, {} positions: max |sin² + cos² − 1| (bounding |‖PE‖²/(d/2) − 1|) = {:.2e} ({}); max |PE| = {}", d, n, e, where,
                               largest)};
  return m.require(largest <= 1.0, fmt::format("an entry of the table has |PE| = {} > 1", largest));
}

}  // namespace

Measurement unit_pairs_generated(const CheckContext& ctx) {
  const auto terms = unit_terms();
  return generated_cases(ctx, terms, unit_anchor_cases(), Worse::larger, [&](const Case& c) { return unit_case(ctx, c); });
}

Measurement rotation_error_growth_generated(const CheckContext& ctx) {
  const auto terms = growth_terms();
  return generated_cases(ctx, terms, growth_anchor_cases(), Worse::larger, [&](const Case& c) { return growth_case(ctx, c); });
}

Measurement geometric_wavelengths_generated(const CheckContext& ctx) {
  const auto terms = wavelength_terms();
  return generated_cases(ctx, terms, wavelength_anchor_cases(), Worse::larger, [&](const Case& c) { return wavelength_case(ctx, c); });
}

Measurement permutation_equivariant_generated(const CheckContext& ctx) {
  const auto terms = equivariance_terms();
  return generated_cases(ctx, terms, equivariance_anchor_cases(), Worse::larger, [&](const Case& c) { return equivariance_case(ctx, c); });
}

Measurement shift_is_rotation_generated(const CheckContext& ctx) {
  const auto terms = rotation_terms();
  return generated_cases(ctx, terms, rotation_anchor_cases(), Worse::larger, [&](const Case& c) { return rotation_case(ctx, c); });
}

}  // namespace vl::lessons::positions
