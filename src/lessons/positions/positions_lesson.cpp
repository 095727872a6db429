// Lesson positions: the checks of its claims, each with the broken backends it must reject
// (positions_broken_backends.hpp), every one a decorator over our plain backend.
#include <memory>
#include <vector>

#include "backends/registry.hpp"
#include "lessons/positions/positions.hpp"
#include "lessons/positions/positions_broken_backends.hpp"

namespace vl::lessons::positions {

Lesson lesson() {
  Lesson l;
  l.id = "positions";
  l.spec_file = "specs/positions.md";
  l.listings.push_back({"positions.main", "vl::lessons::positions::listing_main", listing_main,
                        {backends::Op::multi_head_attention, backends::Op::positional_encoding}});

  const auto plain = backends::plain();
  const auto swapped = std::make_shared<SinCosSwapped>(plain, "pe-sin-cos-swapped");
  const auto wrong_exponent = std::make_shared<ExponentIOverD>(plain, "pe-exponent-i-over-d");

  const std::vector<NegativeControl> equivariance_controls = {
      broken_backend("the encoder given the decoder's causal mask", std::make_shared<CausalMaskForced>(plain, "mha-causal-in-the-encoder", true))};
  l.checks.push_back({"positions.permutation-equivariant", "no positions: layer(x[perm]) vs layer(x)[perm], 5 modules × 3 permutations",
                      permutation_equivariant,
                      equivariance_controls});
  l.checks.push_back({"positions.permutation-equivariant", "generated cases: n ≤ 16, 1 … 8 heads, d ≤ 32, drawn biases",
                      permutation_equivariant_generated,
                      equivariance_controls});

  l.checks.push_back({"positions.encoding-breaks-equivariance", "positions added: outputs and weights of x[perm] vs the permuted ones",
                      encoding_breaks_equivariance,
                      {broken_backend("positions added after the attention instead of before",
                                      std::make_shared<PositionsAfterAttention>(plain, "pe-after-the-attention")),
                       broken_backend("every position given PE(0)", std::make_shared<Pe0Everywhere>(plain, "pe-0-everywhere"))}});

  l.checks.push_back({"positions.causal-knows-order", "causal mask, no positions: outputs of x[perm] vs the permuted outputs",
                      causal_breaks_equivariance,
                      {broken_backend("the decoder's causal mask dropped (an encoder)",
                                      std::make_shared<CausalMaskForced>(plain, "mha-causal-mask-dropped", false))}});

  const std::vector<NegativeControl> rotation_controls = {broken_backend("sin and cos swapped within a pair", swapped),
                                                          broken_backend("exponent i/d in place of 2i/d", wrong_exponent)};
  l.checks.push_back({"positions.shift-is-rotation", "R_k PE(pos) vs PE(pos+k), d = 16, 15, 64, 512, k = 1 … 10, pos < 30",
                      shift_is_rotation,
                      rotation_controls});
  l.checks.push_back({"positions.shift-is-rotation", "generated cases: any d ≤ 512, pos < 30, k = 1 … 10",
                      shift_is_rotation_generated,
                      rotation_controls});

  const std::vector<NegativeControl> growth_controls = {broken_backend("table computed in float32", std::make_shared<Float32Table>(plain, "pe-float32")),
                                                        broken_backend("exponent i/d in place of 2i/d", wrong_exponent)};
  l.checks.push_back({"positions.rotation-error-growth", "R_5 PE(pos) vs PE(pos+5) at pos = 1e1 … 1e9, against the rounding model",
                      rotation_error_growth, growth_controls});
  l.checks.push_back({"positions.rotation-error-growth", "generated cases: pos = m·10ᵉ up to 9·10⁹, any d ≤ 512, k ≤ 10",
                      rotation_error_growth_generated, growth_controls});

  const std::vector<NegativeControl> unit_controls = {
      broken_backend("cos replaced by sin", std::make_shared<CosReplacedBySin>(plain, "pe-cos-replaced-by-sin"))};
  l.checks.push_back({"positions.unit-pairs", "values in [−1, 1], unit pairs, ‖PE‖² = d/2 over 2048 positions",
                      unit_pairs, unit_controls});
  l.checks.push_back({"positions.unit-pairs", "generated cases: any d ≤ 512, 1 … 2048 positions", unit_pairs_generated, unit_controls});

  const std::vector<NegativeControl> wavelength_controls = {broken_backend("exponent i/d in place of 2i/d", wrong_exponent),
                                                            broken_backend("sin and cos swapped within a pair", swapped)};
  l.checks.push_back({"positions.geometric-wavelengths", "wavelengths read off the table: 2π, ratio 10000^(2/d)",
                      geometric_wavelengths,
                      wavelength_controls});
  l.checks.push_back({"positions.geometric-wavelengths", "generated cases: any d ≤ 512",
                      geometric_wavelengths_generated,
                      wavelength_controls});
  return l;
}

}  // namespace vl::lessons::positions
