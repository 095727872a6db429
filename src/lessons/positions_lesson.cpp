// Lesson positions: the checks of its claims, each with the broken variants it must reject.
#include <cmath>

#include <xtensor/xview.hpp>

#include "kernels/positional_encoding.hpp"
#include "lessons/positions.hpp"

namespace vl::lessons::positions {

namespace {

// --- Broken variants. Each is one plausible bug.

// sin and cos swapped within each pair: PE(pos, 2i) = cos, PE(pos, 2i+1) = sin.
Matrix sin_cos_swapped(const std::vector<double>& positions, std::size_t d) {
  Matrix pe = positional_encoding_at<double>(positions, d);
  for (std::size_t r = 0; r < pe.shape(0); ++r)
    for (std::size_t i = 0; 2 * i + 1 < d; ++i) std::swap(pe(r, 2 * i), pe(r, 2 * i + 1));
  return pe;
}

// The exponent i/d in place of 2i/d: ω_i = 1 / 10000^(i/d), the wrong frequencies.
Matrix exponent_i_over_d(const std::vector<double>& positions, std::size_t d) {
  Matrix pe = xt::zeros<double>({positions.size(), d});
  for (std::size_t i = 0; 2 * i < d; ++i) {
    const double div = std::pow(10000.0, double(i) / double(d));
    for (std::size_t r = 0; r < positions.size(); ++r) {
      pe(r, 2 * i) = std::sin(positions[r] / div);
      if (2 * i + 1 < d) pe(r, 2 * i + 1) = std::cos(positions[r] / div);
    }
  }
  return pe;
}

// cos replaced by sin: both columns of a pair hold sin (a copy-paste slip).
Matrix cos_replaced_by_sin(const std::vector<double>& positions, std::size_t d) {
  Matrix pe = positional_encoding_at<double>(positions, d);
  for (std::size_t r = 0; r < pe.shape(0); ++r)
    for (std::size_t i = 0; 2 * i + 1 < d; ++i) pe(r, 2 * i + 1) = pe(r, 2 * i);
  return pe;
}

// The table computed in float32 and widened: angles known to 2⁻²⁴ instead of 2⁻⁵³.
Matrix float32_table(const std::vector<double>& positions, std::size_t d) {
  const std::vector<float> p(positions.begin(), positions.end());
  return xt::cast<double>(positional_encoding_at<float>(p, d));
}

// Every position given PE(0): a broadcasting slip, no position information at all.
Matrix pe0_everywhere(const std::vector<double>& positions, std::size_t d) {
  return positional_encoding_at<double>(std::vector<double>(positions.size(), 0.0), d);
}

// The positions added after the attention instead of before: the weights never see them.
MhaResult<double, 2> positions_after(const MhaParameters<double>& p, std::size_t heads, const Matrix& x, const Matrix& pe) {
  MhaResult<double, 2> r = multi_head_self_attention<double, 2>(x, p, heads);
  r.output += pe;
  return r;
}

// The encoder given the decoder's causal mask: position i only sees 0 … i.
MhaResult<double, 2> encoder_with_causal_mask(const MhaParameters<double>& p, std::size_t heads, const Matrix& x, const Matrix& pe) {
  MhaOptions<double> o;
  o.causal = true;
  const Matrix input = x + pe;
  return multi_head_self_attention<double, 2>(input, p, heads, o);
}

Positions with_encoding(decltype(Positions::encoding_at) f) { Positions p = reference_positions(); p.encoding_at = std::move(f); return p; }
Positions with_layer(decltype(Positions::layer) f) { Positions p = reference_positions(); p.layer = std::move(f); return p; }

template <class Predicate>
CheckFn on(Predicate predicate, Positions impl) {
  return [predicate, impl](double tolerance) { return predicate(impl, tolerance); };
}

}  // namespace

Lesson lesson() {
  Lesson l;
  l.id = "positions";
  l.spec_file = "specs/positions.md";
  l.listings.push_back({"positions.main", "vl::lessons::positions::listing_main", listing_main});
  const Positions ref = reference_positions();
  const Positions swapped = with_encoding(sin_cos_swapped), wrong_exponent = with_encoding(exponent_i_over_d);

  l.checks.push_back({"positions.permutation-equivariant", "no positions: layer(x[perm]) vs layer(x)[perm], 5 modules × 3 permutations",
                      on(permutation_equivariant, ref),
                      {{"the encoder given the decoder's causal mask", on(permutation_equivariant, with_layer(encoder_with_causal_mask))}}});

  l.checks.push_back({"positions.encoding-breaks-equivariance", "positions added: outputs and weights of x[perm] vs the permuted ones",
                      on(encoding_breaks_equivariance, ref),
                      {{"positions added after the attention instead of before", on(encoding_breaks_equivariance, with_layer(positions_after))},
                       {"every position given PE(0)", on(encoding_breaks_equivariance, with_encoding(pe0_everywhere))}}});

  l.checks.push_back({"positions.shift-is-rotation", "R_k PE(pos) vs PE(pos+k), d = 16, 15, 64, 512, k = 1 … 10, pos < 30",
                      on(shift_is_rotation, ref),
                      {{"sin and cos swapped within a pair", on(shift_is_rotation, swapped)},
                       {"exponent i/d in place of 2i/d", on(shift_is_rotation, wrong_exponent)}}});

  l.checks.push_back({"positions.rotation-error-growth", "R_5 PE(pos) vs PE(pos+5) at pos = 1e1 … 1e9, against the rounding model",
                      on(rotation_error_growth, ref),
                      {{"table computed in float32", on(rotation_error_growth, with_encoding(float32_table))},
                       {"exponent i/d in place of 2i/d", on(rotation_error_growth, wrong_exponent)}}});

  l.checks.push_back({"positions.unit-pairs", "values in [−1, 1], unit pairs, ‖PE‖² = d/2 over 2048 positions",
                      on(unit_pairs, ref),
                      {{"cos replaced by sin", on(unit_pairs, with_encoding(cos_replaced_by_sin))}}});

  l.checks.push_back({"positions.geometric-wavelengths", "wavelengths read off the table: 2π, ratio 10000^(2/d)",
                      on(geometric_wavelengths, ref),
                      {{"exponent i/d in place of 2i/d", on(geometric_wavelengths, wrong_exponent)},
                       {"sin and cos swapped within a pair", on(geometric_wavelengths, swapped)}}});
  return l;
}

}  // namespace vl::lessons::positions
