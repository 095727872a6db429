#pragma once
// The causal mask's two boolean forms, defined once for the kernels and for the requests that
// send it (kernels/reference/causal_mask.hpp explains the alignments and the conventions):
//   causal_allowed  (Sq, Sk), true = query i MAY attend key j (ONNX)
//   causal_blocked  (Sq, Sk), true = query i may NOT attend key j (torch's attn_mask)
#include <algorithm>
#include <cstddef>

#include <xtensor/xoperation.hpp>
#include <xtensor/xtensor.hpp>

#include "ops/attention.hpp"  // CausalAlignment

namespace vl {

/// The last key query i may see, plus one, clamped to [0, Sk]: keys j < visible_keys(i) are
/// allowed.
inline std::size_t causal_visible_keys(std::size_t i, std::size_t sq, std::size_t sk, CausalAlignment alignment) {
  const auto offset = alignment == CausalAlignment::bottom_right ? static_cast<std::ptrdiff_t>(sk) - static_cast<std::ptrdiff_t>(sq) : 0;
  const std::ptrdiff_t visible = static_cast<std::ptrdiff_t>(i) + offset + 1;
  return visible <= 0 ? 0 : std::min<std::size_t>(sk, static_cast<std::size_t>(visible));
}

/// Causal mask, ONNX convention: (Sq, Sk), true = query i MAY attend key j.
inline xt::xtensor<bool, 2> causal_allowed(std::size_t sq, std::size_t sk, CausalAlignment alignment = CausalAlignment::top_left) {
  xt::xtensor<bool, 2> m = xt::zeros<bool>({sq, sk});
  for (std::size_t i = 0; i < sq; ++i)
    for (std::size_t j = 0; j < causal_visible_keys(i, sq, sk, alignment); ++j) m(i, j) = true;
  return m;
}

/// Causal mask, torch attn_mask convention: (Sq, Sk), true = query i may NOT attend key j.
/// For Sq = Sk this is torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1).
inline xt::xtensor<bool, 2> causal_blocked(std::size_t sq, std::size_t sk, CausalAlignment alignment = CausalAlignment::top_left) {
  return !causal_allowed(sq, sk, alignment);
}

}  // namespace vl
