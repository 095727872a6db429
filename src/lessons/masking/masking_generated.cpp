// Lesson masking, two claims over generated cases (engine/generated_cases.hpp,
// lessons/attention_cases.hpp): the shapes, GQA groups, masks, windows, softcaps, scales and key
// lengths no fixed sweep lists, judged by the truth of which keys each query may see.
//
//   masking.masked-weights-zero   in every row with a visible key: every weight on a hidden key
//                                 is exactly 0, the row sums to 1, and (where no weight can underflow) every
//                                 visible key has a weight above 0: a mask too wide or too narrow
//                                 by one key fails.
//   masking.nan-propagates        a NaN in a query, or in a key or value a query sees, reaches
//                                 that query's output: no kernel silences it into a number.
//   masking.fully-masked-row-zero a query that sees no key (bottom-right with Sq > Sk, a key
//                                 length of 0, a window and a mask that leave nothing) gets
//                                 all-zero weights and output, never NaN.
//   masking.padding-ignored       a key-padding mask (B, 1, 1, Sk) on top of the case's masks: every
//                                 weight on a padding key is exactly 0 and redrawing the padding keys
//                                 and values moves no output bit (rows that see some key).
//   masking.window-independent    a key the masks hide from a query (one that sees some key)
//                                 cannot move its output by a bit; a change of 2²⁰ in a visible
//                                 key's value moves it (float64, float32; in bfloat16 and float16
//                                 a small weight's move can round away). Outputs only: it judges
//                                 any backend.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/reference/causal_mask.hpp"
#include "lessons/attention_cases.hpp"
#include "lessons/masking/masking.hpp"
#include "numeric/compare.hpp"
#include "numeric/numpy_random.hpp"

namespace vl::lessons::masking {

namespace {

std::string at(std::size_t b, std::size_t h, std::size_t i, std::size_t j) {
  return fmt::format("batch {}, head {}, query {}, key {}", b, h, i, j);
}

Measurement masked_weights_case(const CheckContext& ctx, const Case& c) {
  const AttentionCase a = attention_case(c);
  const auto r = ctx.backend.attention(a.q, a.k, a.v, a.options);
  const auto& vis = a.visible;
  double worst_sum = 0;
  std::string leak, lost;
  const bool no_underflow = a.score_spread <= no_underflow_spread(ctx.precision);
  for (std::size_t b = 0; b < vis.shape(0); ++b)
    for (std::size_t h = 0; h < vis.shape(1); ++h)
      for (std::size_t i = 0; i < vis.shape(2); ++i) {
        // A row with no visible key is masking.fully-masked-row-zero's (torch gives it NaN).
        if (!a.sees_a_key(b, h, i)) continue;
        double sum = 0;
        for (std::size_t j = 0; j < vis.shape(3); ++j) {
          const double w = r.weights(b, h, i, j);
          sum += w;
          if (!vis(b, h, i, j) && w != 0.0 && leak.empty()) leak = fmt::format("weight {:.3g} on a hidden key ({})", w, at(b, h, i, j));
          if (vis(b, h, i, j) && no_underflow && !(w > 0.0) && lost.empty())
            lost = fmt::format("weight {:.3g} on a visible key ({})", w, at(b, h, i, j));
        }
        worst_sum = worse(worst_sum, std::fabs(sum - 1.0));
      }
  Measurement m{worst_sum, fmt::format("max |row sum − 1| = {:.2e}{}{}", worst_sum, leak.empty() ? "" : "; " + leak,
                                       lost.empty() ? "" : "; " + lost)};
  return m.require(leak.empty(), leak).require(lost.empty(), lost);
}

Measurement window_case(const CheckContext& ctx, const Case& c) {
  AttentionCase a = attention_case(c);
  a.options.return_weights = false;
  const std::size_t j = std::min<std::size_t>(c["key"], a.k.shape(2) - 1);
  // Δ = 2²⁰ (4 in float16, whose largest number is 65504): key j's value + Δ leaves the weights
  // as they are and moves a row that sees j by exactly w_j·Δ ≥ 5.6·10⁻⁷·2²⁰ ≈ 0.59 per entry,
  // far above float32's rounding of outputs and sums of magnitude |v| + w_j·Δ.
  const double delta = ctx.precision == Precision::float16 ? 4.0 : 1048576.0;
  const auto base = ctx.backend.attention(a.q, a.k, a.v, a.options).output;
  // (a) key j's value + Δ: the weights stay; a row that sees j moves, one that cannot does not.
  auto v4 = a.v;
  positions(v4, j, j + 1) += delta;
  const auto moved_v = ctx.backend.attention(a.q, a.k, v4, a.options).output;
  // (b) key j's key scaled by −3 as well: its score changes; a row that cannot see j must not.
  auto k3 = a.k;
  positions(k3, j, j + 1) *= -3.0;
  const auto moved_kv = ctx.backend.attention(a.q, k3, v4, a.options).output;
  const bool must_move = (ctx.precision == Precision::float64 || ctx.precision == Precision::float32) &&
                         a.score_spread <= no_underflow_spread(ctx.precision);
  double hidden_moved = 0;
  std::string where, still;
  for (std::size_t b = 0; b < base.shape(0); ++b)
    for (std::size_t h = 0; h < base.shape(1); ++h)
      for (std::size_t i = 0; i < base.shape(2); ++i) {
        if (!a.sees_a_key(b, h, i)) continue;  // a row with no visible key: fully-masked-row-zero's (torch gives it NaN)
        double dv = 0, dkv = 0;
        for (std::size_t x = 0; x < base.shape(3); ++x) {
          dv = worse(dv, std::fabs(moved_v(b, h, i, x) - base(b, h, i, x)));
          dkv = worse(dkv, std::fabs(moved_kv(b, h, i, x) - base(b, h, i, x)));
        }
        if (!a.visible(b, h, i, j)) {
          const double d = worse(dv, dkv);
          if (d > hidden_moved || std::isnan(d)) hidden_moved = d, where = fmt::format("; key {} hidden from {} moved it by {:.3g}", j, at(b, h, i, j), d);
        } else if (must_move && dv == 0 && still.empty()) {
          still = fmt::format("key {} visible to {} changed by {:g} and the output did not move", j, at(b, h, i, j), delta);
        }
      }
  Measurement m{hidden_moved, fmt::format("largest move of an output whose query cannot see the changed key {}: {:.3g}{}{}", j,
                                          hidden_moved, where, still.empty() ? "" : "; " + still)};
  return m.require(still.empty(), still);
}

// A key-padding mask on top of the case's, of lengths drawn from the case's data seed
// (draw_key_lengths: in batch 0 some key is padding and some is not), the padding keys' keys and
// values redrawn.
Measurement padding_case(const CheckContext& ctx, const Case& c) {
  AttentionCase a = attention_case(c);
  const std::size_t B = a.k.shape(0), Sk = a.k.shape(2);
  numpy::Generator rng(c.data_seed() + 2);
  const std::vector<std::size_t> lengths = draw_key_lengths(rng, B, Sk);
  const xt::xarray<bool> padding = key_padding_allowed_4d(key_padding_blocked(lengths, Sk));  // (B, 1, 1, Sk)
  a.options.allowed = a.options.allowed ? xt::xarray<bool>(*a.options.allowed && padding) : padding;
  for (std::size_t b = 0; b < B; ++b)
    xt::view(a.visible, b, xt::all(), xt::all(), xt::range(lengths[b], Sk)) = false;
  AttentionCase redrawn = a;
  const Tensor4<double> k = normal_like(rng, a.k, 0.5), v = normal_like(rng, a.v);
  for (std::size_t b = 0; b < B; ++b) {
    auto pad = xt::range(lengths[b], Sk);
    xt::view(redrawn.k, b, xt::all(), pad, xt::all()) = xt::view(k, b, xt::all(), pad, xt::all());
    xt::view(redrawn.v, b, xt::all(), pad, xt::all()) = xt::view(v, b, xt::all(), pad, xt::all());
  }
  const auto r = ctx.backend.attention(a.q, a.k, a.v, a.options);
  AttentionOptions<double> outputs = a.options;
  outputs.return_weights = false;
  const auto moved = ctx.backend.attention(redrawn.q, redrawn.k, redrawn.v, outputs).output;
  double weight = 0, move = 0;
  std::string where;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < r.output.shape(1); ++h)
      for (std::size_t i = 0; i < r.output.shape(2); ++i) {
        if (!a.sees_a_key(b, h, i)) continue;  // a row with no visible key: fully-masked-row-zero's (torch gives it NaN)
        for (std::size_t j = lengths[b]; j < Sk; ++j)
          if (std::fabs(r.weights(b, h, i, j)) > weight || std::isnan(r.weights(b, h, i, j)))
            weight = worse(weight, std::fabs(r.weights(b, h, i, j))), where = fmt::format("; weight {:.3g} on padding key ({})", r.weights(b, h, i, j), at(b, h, i, j));
        for (std::size_t x = 0; x < r.output.shape(3); ++x) move = worse(move, std::fabs(moved(b, h, i, x) - r.output(b, h, i, x)));
      }
  const double worst = worse(weight, move);
  return {worst, fmt::format("key lengths {}: largest weight on a padding key {:.2e}, largest output move when they are redrawn {:.2e}{}",
                             fmt::join(lengths, ", "), weight, move, where)};
}

// One NaN put where a query sees it: in query i0 (its whole output NaN), in key j of key/value
// head 0 (the whole output of every query of its group that sees j), in entry 0 of value j (entry 0
// of those queries' outputs). Counts the output entries that should be NaN and are not; a query
// that sees no key is masking.fully-masked-row-zero's.
Measurement nan_case(const CheckContext& ctx, const Case& c) {
  AttentionCase a = attention_case(c);
  a.options.return_weights = false;
  const std::size_t Sq = a.q.shape(2), Sk = a.k.shape(2), group = a.q.shape(1) / a.k.shape(1);
  const std::size_t i0 = c.data_seed() % Sq, j = std::min<std::size_t>(c["key"], Sk - 1);
  // A visible weight above 0 (no underflow at this spread) carries value j's NaN; below it a kernel
  // that skips zero weights need not.
  const bool weight_above_zero = a.score_spread <= no_underflow_spread(ctx.precision);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::size_t missed = 0, expected = 0;
  std::string first;
  const auto judge = [&](const char* where, const backends::Tensor4<double>& out, auto must_be_nan) {
    for (std::size_t h = 0; h < out.shape(1); ++h)
      for (std::size_t i = 0; i < Sq; ++i) {
        if (!a.sees_a_key(0, h, i)) continue;
        for (std::size_t x = 0; x < out.shape(3); ++x)
          if (must_be_nan(h, i, x)) {
            ++expected;
            if (!std::isnan(out(0, h, i, x)) && ++missed == 1)
              first = fmt::format("a NaN in {} reached batch 0, head {}, query {}, entry {} as {}", where, h, i, x, out(0, h, i, x));
          }
      }
  };
  auto q = a.q;
  q(0, 0, i0, 0) = nan;
  judge("query 0's entry 0", ctx.backend.attention(q, a.k, a.v, a.options).output, [&](auto h, auto i, auto) { return h == 0 && i == i0; });
  auto k = a.k;
  k(0, 0, j, 0) = nan;
  judge("key 0's entry 0", ctx.backend.attention(a.q, k, a.v, a.options).output,
        [&](auto h, auto i, auto) { return h < group && a.visible(0, h, i, j); });
  auto v = a.v;
  v(0, 0, j, 0) = nan;
  judge("value 0's entry 0", ctx.backend.attention(a.q, a.k, v, a.options).output,
        [&](auto h, auto i, auto x) { return weight_above_zero && x == 0 && h < group && a.visible(0, h, i, j); });
  return {double(missed), fmt::format("{} of {} output entries that see a NaN are not NaN{}", missed, expected, first.empty() ? "" : ": " + first)};
}

// Every row that sees no key: the largest |weight| or |output| (row_magnitude: a NaN read as ∞, and said).
Measurement fully_masked_case(const CheckContext& ctx, const Case& c) {
  const AttentionCase a = attention_case(c);
  const auto r = ctx.backend.attention(a.q, a.k, a.v, a.options);
  double worst = 0;
  std::size_t rows = 0;
  std::string where = "all zero";
  for (std::size_t b = 0; b < r.output.shape(0); ++b)
    for (std::size_t h = 0; h < r.output.shape(1); ++h)
      for (std::size_t i = 0; i < r.output.shape(2); ++i) {
        if (a.sees_a_key(b, h, i)) continue;
        ++rows;
        const RowMagnitude m = row_magnitude(r, b, h, i);
        if (m.largest > worst)
          worst = m.largest, where = m.nan ? fmt::format("batch {}, head {}, query {}: NaN weights or output", b, h, i)
                                           : fmt::format("batch {}, head {}, query {}: |weight| or |output| up to {:.3g}", b, h, i, m.largest);
      }
  return {worst, fmt::format("{} rows with no visible key: largest |weight| or |output| {:.2e} ({})", rows, worst, where)};
}

}  // namespace

Measurement fully_masked_generated(const CheckContext& ctx) {
  const auto terms = attention_case_terms(false);
  return generated_cases(ctx, terms, attention_anchor_cases(), Worse::larger, [&](const Case& c) { return fully_masked_case(ctx, c); });
}

Measurement masked_weights_generated(const CheckContext& ctx) {
  const auto terms = attention_case_terms(false);
  return generated_cases(ctx, terms, attention_anchor_cases(), Worse::larger, [&](const Case& c) { return masked_weights_case(ctx, c); });
}

Measurement nan_generated(const CheckContext& ctx) {
  const auto terms = attention_case_terms(false);
  return generated_cases(ctx, terms, attention_anchor_cases(), Worse::larger, [&](const Case& c) { return nan_case(ctx, c); });
}

Measurement padding_generated(const CheckContext& ctx) {
  const auto terms = attention_case_terms(false);
  return generated_cases(ctx, terms, attention_anchor_cases(), Worse::larger, [&](const Case& c) { return padding_case(ctx, c); });
}

Measurement window_generated(const CheckContext& ctx) {
  const auto terms = attention_case_terms(true);
  return generated_cases(ctx, terms, attention_anchor_cases(), Worse::larger, [&](const Case& c) { return window_case(ctx, c); });
}

}  // namespace vl::lessons::masking
