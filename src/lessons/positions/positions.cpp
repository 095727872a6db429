// Lesson positions: attention does not know the order; the sinusoidal encoding tells it, and a
// shift of the encoding is a rotation (spec: specs/positions.md).
//
// The listing is the C++ twin of the seed article's listing 4: the same nn.MultiheadAttention
// weights, input and permutation from torch's generator (our torch-compatible one), with and
// without the encoding, and the rotation check, with its three printed lines. The checks verify
// the claims over sweeps of sizes, permutations and positions, each against broken variants.
#include "numeric/compare.hpp"
#include "lessons/positions/positions.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "backends/backend.hpp"
#include "kernels/reference/multi_head_attention.hpp"
#include "kernels/reference/positional_encoding.hpp"
#include "lessons/mha_error_bound.hpp"
#include "lessons/permutations.hpp"
#include "lessons/rounded_parameters.hpp"
#include "numeric/precision.hpp"
#include "numeric/numpy_compare.hpp"
#include "numeric/numpy_format.hpp"
#include "numeric/torch_mha_init.hpp"
#include "numeric/torch_random.hpp"

namespace vl::lessons::positions {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEps = 0x1p-53;  // unit round-off of float64

// The round-off bound on |R_k PE(pos) − PE(pos + k)| with everything computed in a precision of
// unit round-off u (specs/positions.md, above positions.shift-is-rotation): an angle p·ω_i is
// within 23.4u·p and its sin or cos within (23.4·p + 4)u, so PE(pos) errs by √2·(23.4·pos + 4)u
// (a rotation keeps it), PE(pos + k) by (23.4·(pos + k) + 4)u, R_k's entries by (23.4·k + 4)u
// (acting on a unit pair: √2 times that) and R_k·PE's two-term sums by γ₂·√2 ≈ 2√2·u.
double rotation_residue_bound(double pos, double k, double u) {
  return (std::sqrt(2.0) * (23.4 * pos + 4) + (23.4 * (pos + k) + 4) + std::sqrt(2.0) * (23.4 * k + 4) + 2 * std::sqrt(2.0)) * u;
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// The listing (seed article, listing 4): d = 16, h = 4, n = 7, torch.manual_seed(0), randperm
// from a generator seeded 3, and the rotation check for k = 5 on pe(40, 16).

// [positions.main]
ListingOutput listing_main(const ListingContext& ctx) {
  const std::size_t d = 16, h = 4, n = 7;
  const backends::Backend& b = ctx.implementation();  // the audited backend: its MHA and its PE table
  torch_rng::Generator gen(0);  // torch.manual_seed(0)
  const MhaParameters<double> mha = torch_rng::mha_init<double>(gen, d, h);
  const Matrix x = xt::view(torch_rng::randn<double>(gen, {1, n, d}), 0);
  torch_rng::Generator perm_gen(3);
  const std::vector<std::int64_t> perm = torch_rng::randperm(perm_gen, std::int64_t(n));
  const Matrix none = xt::zeros<double>({n, d});
  auto run = [&](const Matrix& tokens, const Matrix& pe) {
    const Matrix input = tokens + pe;  // positions enter before the attention
    return backends::multi_head_attention_2d(b, input, input, input, mha, h).output;
  };

  ListingOutput out;
  const Matrix y = run(x, none), y_perm = run(permute_rows(x, perm), none);
  const Matrix y_permuted = permute_rows(y, perm);
  out.lines.push_back(fmt::format("senza posizione: uscita(permutato) == permutata(uscita)? {} (errore {:.1e})",
                                  numpy::python_bool(numpy::allclose(y_perm, y_permuted)), numpy::max_abs_diff(y_perm, y_permuted)));

  const Matrix P = backends::positional_encoding_table(b, n, d);
  const Matrix z = run(x, P), z_perm = run(permute_rows(x, perm), P);  // same tokens, new order, fixed positions
  const Matrix z_permuted = permute_rows(z, perm);
  out.lines.push_back(fmt::format("con codifica posizionale: stessa uguaglianza? {} (errore {:.1e})",
                                  numpy::python_bool(numpy::allclose(z_perm, z_permuted)), numpy::max_abs_diff(z_perm, z_permuted)));

  // PE(pos + k) = R_k PE(pos): each (sin, cos) pair turns by an angle that depends on k only.
  const std::size_t k = 5;
  const Matrix big = backends::positional_encoding_table(b, 40, d);
  double worst = 0;
  for (std::size_t pos = 0; pos < 30; ++pos)
    for (std::size_t i = 0; i < d / 2; ++i) {
      const xt::xtensor<double, 2> R = pe_rotation<double>(omega(i, d), double(k));
      const double a = big(pos, 2 * i), b = big(pos, 2 * i + 1);
      const double pred0 = R(0, 0) * a + R(0, 1) * b, pred1 = R(1, 0) * a + R(1, 1) * b;
      worst = std::max({worst, std::fabs(pred0 - big(pos + k, 2 * i)), std::fabs(pred1 - big(pos + k, 2 * i + 1))});
    }
  out.lines.push_back(fmt::format("PE(pos+{}) = R_{} PE(pos): errore massimo su 30 posizioni e {} frequenze = {:.1e}", k, k, d / 2, worst));

  // The round-off bounds of lines 1 and 3, from the inputs (u = 2⁻⁵³): two runs of the module,
  // each within its bound of the exact layer; the rotation's at the largest pos, 29.
  const double u = unit_roundoff(Precision::float64);
  const xt::xtensor<double, 3> x3 = xt::reshape_view(x, std::array<std::size_t, 3>{1, n, d});
  out.derived_bounds = {{1, 2 * mha_error_bound(x3, x3, x3, mha, h, {}, u).output}, {3, rotation_residue_bound(29, double(k), u)}};

  out.arrays["in_proj_weight"] = mha.in_proj_weight;
  out.arrays["out_proj_weight"] = mha.out_proj_weight;
  out.arrays["x"] = x;
  xt::xtensor<double, 1> perm_d = xt::zeros<double>({n});
  for (std::size_t r = 0; r < n; ++r) perm_d(r) = double(perm[r]);
  out.arrays["perm"] = perm_d;
  out.arrays["P"] = P;
  out.arrays["y"] = y;
  out.arrays["y_perm"] = y_perm;
  out.arrays["z"] = z;
  out.arrays["z_perm"] = z_perm;
  out.arrays["pe40"] = big;
  return out;
}
// [positions.main]

// ---------------------------------------------------------------------------------------------
// The claims' checks. Each calls only the judged backend's `positional_encoding` and
// `multi_head_attention`; ω, R_k and the expected values always come from the formulas, never
// from the backend under test.

namespace {

struct Module {
  std::size_t n, d, h;
  std::uint64_t seed;
};
const std::vector<Module> kModules = {{7, 16, 4, 0}, {2, 8, 2, 1}, {5, 12, 3, 2}, {16, 32, 8, 3}, {9, 16, 1, 4}};

struct Drawn {
  MhaParameters<double> p;
  Matrix x;
  std::vector<std::vector<std::int64_t>> perms;  // three permutations, the identity excluded
};

Drawn draw(const Module& m) {
  torch_rng::Generator gen(m.seed);
  Drawn r{torch_rng::mha_init<double>(gen, m.d, m.h), xt::view(torch_rng::randn<double>(gen, {1, m.n, m.d}), 0), {}};
  torch_rng::Generator pg(100 + m.seed);
  r.perms = non_identity_permutations(pg, std::int64_t(m.n), 3, "positions' modules");
  return r;
}

// W'[r, c] vs W[perm[r], perm[c]] for every head: the weights of the permuted input against the
// permuted weights.
double weights_mismatch(const xt::xtensor<double, 3>& w_perm, const xt::xtensor<double, 3>& w, const std::vector<std::int64_t>& perm) {
  double worst = 0;
  for (std::size_t h = 0; h < w.shape(0); ++h)
    for (std::size_t r = 0; r < perm.size(); ++r)
      for (std::size_t c = 0; c < perm.size(); ++c) {
        worst = std::max(worst, difference(w_perm(h, r, c), w(h, std::size_t(perm[r]), std::size_t(perm[c]))));
      }
  return worst;
}

// The layer: self-attention of the module over `input` (n, d) (x, or x + PE: positions enter
// before the attention) through the backend; output (n, d) and per-head weights (h, n, n).
MhaResult<double, 2> self_attention(const backends::Backend& b, const Drawn& in, std::size_t heads, const Matrix& input) {
  return backends::multi_head_attention_2d(b, input, input, input, in.p, heads);
}

}  // namespace

double equivariance_gap(const CheckContext& ctx, const MhaParameters<double>& params, std::size_t heads, const Matrix& x,
                        const std::vector<std::vector<std::int64_t>>& perms) {
  // Without positions: layer(x[perm]) = layer(x)[perm], outputs and weights, to rounding. In
  // float64 the measure is the largest difference; in another precision, where the two orders
  // round differently, it is that difference over twice the module's error bound on the inputs
  // as rounded (lessons/mha_error_bound.hpp): each side is within one bound of the exact layer.
  const Precision p = ctx.precision;
  const std::size_t n = x.shape(0), d = x.shape(1);
  std::optional<MhaErrorBound> bound;
  if (p != Precision::float64) {
    const MhaParameters<double> rp = rounded_parameters(p, params);
    const xt::xtensor<double, 3> x3 = xt::reshape_view(rounded_to(p, x), std::array<std::size_t, 3>{1, n, d});
    bound = mha_error_bound(x3, x3, x3, rp, heads, {}, working_roundoff(p));
  }
  const auto base = backends::multi_head_attention_2d(ctx.backend, x, x, x, params, heads);
  double worst = 0;
  for (const auto& perm : perms) {
    const Matrix moved_x = permute_rows(x, perm);
    const auto moved = backends::multi_head_attention_2d(ctx.backend, moved_x, moved_x, moved_x, params, heads);
    double out = max_abs_diff(moved.output, permute_rows(base.output, perm)), w = weights_mismatch(moved.weights, base.weights, perm);
    if (bound) out /= 2 * bound->output, w /= 2 * bound->weights;
    worst = worse(worst, worse(out, w));
  }
  return worst;
}

Measurement permutation_equivariant(const CheckContext& ctx) {
  double worst = 0;
  std::string where = "equivariant";
  std::size_t cases = 0;
  for (const Module& m : kModules) {
    const Drawn in = draw(m);
    const double e = equivariance_gap(ctx, in.p, m.h, in.x, in.perms);
    if (e > worst || std::isnan(e)) { worst = worse(worst, e); where = fmt::format("n={} d={} h={}", m.n, m.d, m.h); }
    cases += in.perms.size();
  }
  const Precision p = ctx.precision;
  return {worst, fmt::format("max |layer(x[perm]) − layer(x)[perm]| (outputs and weights){} = {:.2e} over {} permutations of {} "
                             "modules (worst: {})",
                             p == Precision::float64 ? "" : fmt::format(" over twice its {} error bound", to_string(p)), worst, cases,
                             kModules.size(), where)};
}

namespace {

/// The smallest gap, over kModules and their three permutations, between layer(x[perm]) and
/// layer(x)[perm]: `layer(m, in, x)` runs the module on x, `gap(moved, base, perm)` measures one
/// case (a difference, and words on it). A NaN or ∞ "differs" by ∞ (numeric/compare.hpp), so every
/// output and weight must also be finite, or a broken implementation would pass by returning NaN.
struct LeastGap {
  double least = kInf;
  std::string where;
  std::size_t cases = 0;
  bool finite = true;
};

template <class Layer, class Gap>
LeastGap least_gap(const Layer& layer, const Gap& gap) {
  LeastGap r;
  for (const Module& m : kModules) {
    const Drawn in = draw(m);
    const auto base = layer(m, in, in.x);
    for (const auto& perm : in.perms) {
      const auto moved = layer(m, in, Matrix(permute_rows(in.x, perm)));
      r.finite = r.finite && all_finite(base.output) && all_finite(base.weights) && all_finite(moved.output) && all_finite(moved.weights);
      const auto [e, words] = gap(moved, base, perm);
      if (e < r.least) { r.least = e; r.where = fmt::format("n={} d={} h={}{}", m.n, m.d, m.h, words); }
      ++r.cases;
    }
  }
  return r;
}

}  // namespace

Measurement encoding_breaks_equivariance(const CheckContext& ctx) {
  // With the encoding added to the tokens (positions fixed), the permuted sequence's outputs AND
  // attention weights must differ from the permuted ones, by at least the tolerance, for every
  // non-identity permutation.
  // Each module's table, asked of the backend once (a candidate answers each request).
  std::map<const Module*, Matrix> table;
  for (const Module& m : kModules) table[&m] = backends::positional_encoding_table(ctx.backend, m.n, m.d);
  const LeastGap g = least_gap(
      [&](const Module& m, const Drawn& in, const Matrix& x) { return self_attention(ctx.backend, in, m.h, Matrix(x + table.at(&m))); },
      [](const auto& moved, const auto& base, const std::vector<std::int64_t>& perm) {
        const double out_err = max_abs_diff(moved.output, permute_rows(base.output, perm));
        const double w_err = weights_mismatch(moved.weights, base.weights, perm);
        return std::pair{std::min(out_err, w_err), fmt::format(": outputs differ by {:.2e}, weights by {:.2e}", out_err, w_err)};
      });
  Measurement r{g.least, fmt::format("smallest min(output difference, weight difference) over {} permutations: {:.2e} (at {})", g.cases,
                                     g.least, g.where)};
  return r.require(g.finite, "an output or weight is NaN or infinite: a difference from it says nothing");
}

Measurement causal_breaks_equivariance(const CheckContext& ctx) {
  // A causal layer without positions: query i sees keys 0 … i, so the mask alone tells positions
  // apart. For every non-identity permutation the permuted sequence's outputs must differ from
  // the permuted outputs by at least the tolerance (the largest difference over the rows, the
  // smallest over the permutations).
  MhaOptions<double> causal;
  causal.causal = true;
  const LeastGap g = least_gap(
      [&](const Module& m, const Drawn& in, const Matrix& x) { return backends::multi_head_attention_2d(ctx.backend, x, x, x, in.p, m.h, causal); },
      [](const auto& moved, const auto& base, const std::vector<std::int64_t>& perm) {
        return std::pair{max_abs_diff(moved.output, permute_rows(base.output, perm)), std::string()};
      });
  Measurement r{g.least, fmt::format("causal, no positions: smallest max |layer(x[perm]) − layer(x)[perm]| over {} permutations of {} "
                                     "modules: {:.2e} (at {})", g.cases, kModules.size(), g.least, g.where)};
  return r.require(g.finite, "an output or weight is NaN or infinite: a difference from it says nothing");
}

Measurement shift_is_rotation(const CheckContext& ctx) {
  // PE(pos + k) = R_k(ω_i) PE(pos) for pos < 30, k = 1 … 10 and every complete pair, d = 16
  // (the listing's), 15 (odd), 64 and 512.
  double worst = 0;
  std::string where = "exact";
  std::size_t checked = 0;
  for (std::size_t d : {16, 15, 64, 512}) {
    const Matrix pe = backends::positional_encoding_table(ctx.backend, 40, d);
    for (std::size_t k = 1; k <= 10; ++k)
      for (std::size_t pos = 0; pos < 30; ++pos)
        for (std::size_t i = 0; 2 * i + 1 < d; ++i) {
          const auto R = pe_rotation<double>(omega(i, d), double(k));
          const double a = pe(pos, 2 * i), b = pe(pos, 2 * i + 1);
          const double e = worse(worse(0, std::fabs(R(0, 0) * a + R(0, 1) * b - pe(pos + k, 2 * i))),
                                 std::fabs(R(1, 0) * a + R(1, 1) * b - pe(pos + k, 2 * i + 1)));
          if (e > worst) { worst = e; where = fmt::format("d={} pos={} k={} pair {}", d, pos, k, i); }
          ++checked;
        }
  }
  return {worst,
          fmt::format("max |R_k PE(pos) − PE(pos+k)| = {:.2e} over {} (d, pos, k, pair) cases (worst: {})", worst, checked, where)};
}

RotationGrowth rotation_growth_at(const CheckContext& ctx, double pos, std::size_t d, std::size_t k) {
  // At large positions the relation holds to the rounding of the angle: sin and cos of an angle
  // a = pos·ω known to a·2⁻⁵³. Model: |R_k PE(pos) − PE(pos+k)| ≤ c · 2⁻⁵³ (2 (pos+k) ω + k ω + 4);
  // c is the largest over the complete pairs (∞ for a NaN).
  const Matrix pe = ctx.backend.positional_encoding(std::vector<double>{pos, pos + double(k)}, d);
  RotationGrowth g;
  for (std::size_t i = 0; 2 * i + 1 < d; ++i) {
    const double w = omega(i, d);
    const auto R = pe_rotation<double>(w, double(k));
    const double a = pe(0, 2 * i), b = pe(0, 2 * i + 1);
    const double e =
        worse(worse(0, std::fabs(R(0, 0) * a + R(0, 1) * b - pe(1, 2 * i))), std::fabs(R(1, 0) * a + R(1, 1) * b - pe(1, 2 * i + 1)));
    g.error = worse(g.error, e);
    g.c = worse(g.c, e / (kEps * (2 * (pos + double(k)) * w + double(k) * w + 4)));
  }
  return g;
}

Measurement rotation_error_growth(const CheckContext& ctx) {
  // The measured c must stay ≤ tolerance from pos = 10 to 10⁹ (d = 16, k = 5).
  const std::size_t d = 16, k = 5;
  double worst_ratio = 0;
  std::vector<std::string> rows;
  for (double pos : {1e1, 1e3, 1e5, 1e7, 1e9}) {
    const RotationGrowth g = rotation_growth_at(ctx, pos, d, k);
    worst_ratio = worse(worst_ratio, g.c);
    rows.push_back(fmt::format("pos={:.0e}: error {:.1e} (c = {:.2f})", pos, g.error, g.c));
  }
  return {worst_ratio,
          fmt::format("largest c = {:.2f}; d={}, k={}: {}", worst_ratio, d, k, fmt::join(rows, "; "))};
}

double unit_pair_error(const Matrix& pe, std::size_t d, std::string& where, double& largest) {
  // Every value in [−1, 1] (`largest` is the largest |PE|); every complete (sin, cos) pair of unit
  // norm, its residue s² + c² − 1 formed as fma(s, s, fma(c, c, −1)), whose only rounding that
  // matters is u/2·|c² − 1| ≤ 5.6·10⁻¹⁷: the check adds no error of the residues' size. For even d,
  // ‖PE_pos‖²/(d/2) − 1 is exactly the mean of the row's residues, never larger than the largest:
  // the norm half of the claim follows from the pairs (specs/positions.md).
  double worst = 0;
  for (std::size_t pos = 0; pos < pe.shape(0); ++pos) {
    for (std::size_t c = 0; c < d; ++c) largest = std::max(largest, std::isnan(pe(pos, c)) ? kInf : std::fabs(pe(pos, c)));
    for (std::size_t i = 0; 2 * i + 1 < d; ++i) {
      const double s_ = pe(pos, 2 * i), c_ = pe(pos, 2 * i + 1);
      const double e = std::fabs(std::fma(s_, s_, std::fma(c_, c_, -1.0)));
      if (!(e <= worst)) { worst = std::isnan(e) ? kInf : e; where = fmt::format("pair {} at pos {}, d={}", i, pos, d); }
    }
  }
  return worst;
}

Measurement unit_pairs(const CheckContext& ctx) {
  // Over 2048 positions, d = 16, 15, 512.
  double worst = 0, largest = 0;
  std::string where = "unit";
  for (std::size_t d : {16, 15, 512}) {
    std::string at;
    const double e = unit_pair_error(backends::positional_encoding_table(ctx.backend, 2048, d), d, at, largest);
    if (!(e <= worst)) worst = e, where = at;
  }
  Measurement m{worst, fmt::format("max |sin² + cos² − 1| (bounding |‖PE‖²/(d/2) − 1|) = {:.2e} (worst: {}); max |PE| = {}", worst, where, largest)};
  return m.require(largest <= 1.0, fmt::format("an entry of the table has |PE| = {} > 1", largest));
}

double wavelength_error(const Matrix& pe, std::size_t d, std::string& where) {
  // The wavelengths read off the table (ω_i = atan2(PE(1, 2i), PE(1, 2i+1)), λ_i = 2π/ω_i): λ_0 = 2π,
  // λ_{i+1}/λ_i = 10000^(2/d), all below 10000·2π; relative errors (∞ for a NaN or a λ too long).
  const double ratio = std::pow(10000.0, 2.0 / double(d)), two_pi = 2 * std::numbers::pi;
  double worst = 0, prev = 0;
  for (std::size_t i = 0; 2 * i + 1 < d; ++i) {
    const double lambda = two_pi / std::atan2(pe(1, 2 * i), pe(1, 2 * i + 1));
    double e = i == 0 ? std::fabs(lambda / two_pi - 1) : std::fabs(lambda / prev / ratio - 1);
    if (!(lambda < 10000 * two_pi)) e = kInf;
    if (!(e <= worst)) { worst = std::isnan(e) ? kInf : e; where = fmt::format("d={}, pair {}: λ = {:.6g}", d, i, lambda); }
    prev = lambda;
  }
  return worst;
}

Measurement geometric_wavelengths(const CheckContext& ctx) {
  double worst = 0;
  std::string where = "geometric";
  for (std::size_t d : {16, 64, 512}) {
    std::string at;
    const double e = wavelength_error(backends::positional_encoding_table(ctx.backend, 2, d), d, at);
    if (!(e <= worst)) worst = e, where = at;
  }
  return {worst, fmt::format("max relative error of λ_0 = 2π and λ_(i+1)/λ_i = 10000^(2/d): {:.2e} (worst: {})", worst, where)};
}

}  // namespace vl::lessons::positions
