#pragma once
// Generated attention cases (engine/generated_cases.hpp) over the terms of ONNX's Attention and
// torch's scaled_dot_product_attention: batch, key/value heads and the GQA group, Sq and Sk, the
// head sizes D and Dv (any, not only multiples of a vector width), a mask (none, boolean or
// additive, of rank 2 or 4), the causal mask (none, top-left or bottom-right, with or without the
// other mask), a sliding window to the left, a softcap, an explicit scale, per-batch key lengths
// (an external KV cache padded to Sk), and the key a check changes (`key`, clamped to Sk − 1).
// Not drawn: a window to the right and a query offset other than the alignment's.
//
//   Q (B, Hkv·group, Sq, D), K (B, Hkv, Sk, D), V (B, Hkv, Sk, Dv)
//
// With each case, the truth the claims about masking judge by: which keys each query may see,
// decided here from the operation's definition (ops/attention.hpp, ONNX Attention), never by the
// backend under test; and a bound on how far apart a row's scores can be.
#include <cstddef>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "backends/backend.hpp"
#include "engine/generated_cases.hpp"
#include "numeric/numpy_random.hpp"

namespace vl::lessons {

struct AttentionCase {
  backends::Tensor4<double> q, k, v;
  AttentionOptions<double> options;
  xt::xtensor<bool, 4> visible;  // (B, Hq, Sq, Sk): query i of (b, h) may see key j
  /// Query i of (b, h) sees some key (a row that sees none is masking.fully-masked-row-zero's).
  bool sees_a_key(std::size_t b, std::size_t h, std::size_t i) const {
    for (std::size_t j = 0; j < visible.shape(3); ++j)
      if (visible(b, h, i, j)) return true;
    return false;
  }
  /// An upper bound on max_j s_ij − min_j s_ij over the visible keys of any row (Cauchy–Schwarz on
  /// the scaled products, 2·softcap with a softcap, plus the additive mask's spread): where it is
  /// at most kNoUnderflowSpread, no visible weight can round to 0 in any precision the audit runs.
  double score_spread = 0;
};

/// The largest score spread at which no visible weight can be 0 in precision p: exp(−12)/11 ≈
/// 5.6·10⁻⁷ (the smallest weight of a visible key among at most 11 keys whose scores are within 12
/// of each other) is a normal number in float64, float32 and bfloat16; in float16 it would be
/// subnormal, which a kernel that flushes subnormals to zero (FZ16 on GPUs and ARM) may drop, so
/// there the spread must be at most 7: exp(−7)/11 ≈ 8.3·10⁻⁵ is above its smallest normal 6.1·10⁻⁵.
inline double no_underflow_spread(Precision p) { return p == Precision::float16 ? 7 : 12; }

/// The terms; the sliding window's width is drawn from −1 (none) … 4, or 0 … 4 with `window_always`;
/// Sk from 1 to `max_keys` (a claim whose bound is derived for at most so many keys).
std::vector<CaseTerm> attention_case_terms(bool window_always, int max_keys = 11);

/// Anchor cases (engine/generated_cases.hpp), in the terms' order, each a shape of its own: a
/// boolean mask of rank 2 with GQA, an additive one of rank 4 with a softcap, the causal mask
/// top-left with a window of 1 (the changed key 2), bottom-right with Sq < Sk and a window of 2,
/// key lengths with a window of 3, no mask with a window of 0, and bottom-right with Sq > Sk over
/// a boolean mask and key lengths (queries that see no key). With the inputs' built-in structure
/// (below) every broken mask, window or key length the masking checks reject meets its bug in one
/// of them, whatever the seed.
std::vector<std::vector<int>> attention_anchor_cases();

/// The case's inputs (drawn from its data seed), options and truth. Built-in structure, so that
/// each mask hides and shows something: a boolean or additive mask lets query i see key i mod Sk
/// and (Sk ≥ 2) hides key (i + 1) mod Sk, the rest drawn (a quarter hidden, a fifth −∞); drawn
/// key lengths give batch 0 a length in [1, Sk − 1] (Sk ≥ 2), the others [0, Sk].
AttentionCase attention_case(const Case& c);

/// The terms of a causal pass over one sequence (masking's claims about it): B, Hkv, group, S
/// queries (min_s … 8) over S + extra_keys keys (0 … 3, the extra ones hidden from every query), D,
/// Dv, the other mask, its rank, the window, the softcap, the scale, and the position `p` a check
/// splits the sequence at (1 … 7, clamped to S − 1).
std::vector<CaseTerm> causal_case_terms(int min_s);

/// Anchor cases of causal_case_terms: the causal mask alone over 3 queries (a future key let
/// through meets it there: the other masks hide key i + 1 from query i), then a boolean mask of
/// rank 2 with GQA and extra keys, an additive one of rank 4 with a softcap, and a window of 1 with
/// an explicit scale.
std::vector<std::vector<int>> causal_anchor_cases();

/// Key lengths for B sequences padded to Sk, drawn from `rng`: batch 0's in 1 … Sk − 1 when Sk ≥ 2
/// (some key is padding and some is not), the others' in 0 … Sk.
std::vector<std::size_t> draw_key_lengths(numpy::Generator& rng, std::size_t B, std::size_t Sk);

/// A tensor of `like`'s shape, sd·N(0, 1) drawn from `rng`: a check's redraw of some of a case's
/// queries, keys or values (the case's own are 0.5·N for Q and K, N for V).
backends::Tensor4<double> normal_like(numpy::Generator& rng, const backends::Tensor4<double>& like, double sd = 1);

/// attention_case with Sq = S, Sk = S + extra_keys, the causal mask top-left, no key lengths.
AttentionCase causal_case(const Case& c);

}  // namespace vl::lessons
