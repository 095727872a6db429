// Lesson masking, the claims about one causal pass over generated cases (engine/generated_cases.hpp,
// lessons/attention_cases.hpp: causal_case): batch, key/value heads and the GQA group, the length S,
// keys past the last query, the head sizes, a boolean or additive mask of rank 2 or 4 on top of the
// causal one, a window, a softcap and a scale, and the position p a check splits the sequence at.
//
//   masking.first-position-self     query 0 gives key 0 weight exactly 1 and its output is v_0.
//   masking.prefix-unchanged        positions ≥ p redrawn: the outputs before p do not move a bit.
//   masking.one-pass-equals-decoding row t of the pass = query t alone over keys 0 … t, bottom-right.
//   masking.alignment               the first r queries top-left and the last r bottom-right = those
//                                   rows of the pass.
//   masking.cache-decoding          chunks of p queries decoded over the keys so far, once through
//                                   past_key (the queries' first position given) and once through
//                                   nonpad_kv_seqlen (the keys padded to the pass's) = those rows.
//
// The other masks are sliced with the queries and keys they belong to, so each smaller call asks
// the same question of the same keys.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "lessons/attention_cases.hpp"
#include "lessons/attention_error_bound.hpp"
#include "lessons/masking/masking.hpp"
#include "numeric/compare.hpp"
#include "numeric/numpy_random.hpp"

namespace vl::lessons::masking {

namespace {

/// Rows [i0, i1) and columns [0, sk) of a mask of rank 2 (Sq, Sk) or 4 (B, H, Sq, Sk).
template <class T>
xt::xarray<T> mask_block(const xt::xarray<T>& m, std::size_t i0, std::size_t i1, std::size_t sk) {
  if (m.dimension() == 2) return xt::view(m, xt::range(i0, i1), xt::range(0, sk));
  return xt::view(m, xt::all(), xt::all(), xt::range(i0, i1), xt::range(0, sk));
}

/// The options of query rows [i0, i1) over keys [0, sk): the masks cut to them, the alignment given.
AttentionOptions<double> rows_of(const AttentionOptions<double>& o, std::size_t i0, std::size_t i1, std::size_t sk, CausalAlignment al) {
  AttentionOptions<double> r = o;
  if (o.allowed) r.allowed = mask_block(*o.allowed, i0, i1, sk);
  if (o.bias) r.bias = mask_block(*o.bias, i0, i1, sk);
  r.alignment = al;
  return r;
}

/// Redraws of q, k, v at positions ≥ p (k and v: every key from p on, the extra keys too).
void redraw_from(AttentionCase& a, std::size_t p, std::uint64_t seed) {
  numpy::Generator rng(seed);
  const Tensor4<double> q = normal_like(rng, a.q, 0.5), k = normal_like(rng, a.k, 0.5), v = normal_like(rng, a.v);
  positions(a.q, p, a.q.shape(2)) = positions(q, p, q.shape(2));
  positions(a.k, p, a.k.shape(2)) = positions(k, p, k.shape(2));
  positions(a.v, p, a.v.shape(2)) = positions(v, p, v.shape(2));
}

/// Whether row t of (b, h) differs between two outputs in some entry.
bool row_moved(const Tensor4<double>& x, const Tensor4<double>& y, std::size_t b, std::size_t h, std::size_t t) {
  for (std::size_t e = 0; e < x.shape(3); ++e)
    if (!(x(b, h, t, e) == y(b, h, t, e))) return true;
  return false;
}

Measurement first_position_case(const CheckContext& ctx, const Case& c) {
  const AttentionCase a = causal_case(c);
  const auto r = ctx.backend.attention(a.q, a.k, a.v, a.options);
  const std::size_t group = a.q.shape(1) / a.k.shape(1);
  double worst = 0;
  std::string where = "exact";
  for (std::size_t b = 0; b < a.q.shape(0); ++b)
    for (std::size_t h = 0; h < a.q.shape(1); ++h) {
      double err = worse(0, std::fabs(r.weights(b, h, 0, 0) - 1.0));
      for (std::size_t x = 0; x < a.v.shape(3); ++x)
        err = worse(err, std::fabs(r.output(b, h, 0, x) - round_to(ctx.precision, a.v(b, h / group, 0, x))));
      if (err > worst) worst = err, where = fmt::format("batch {}, head {}: w[0,0] = {}, output row 0 off by up to {:.3g}", b, h, r.weights(b, h, 0, 0), err);
    }
  return {worst, fmt::format("max(|w[0,0] − 1|, |o_0 − v_0|) = {:.2e} ({})", worst, where)};
}

Measurement prefix_case(const CheckContext& ctx, const Case& c) {
  AttentionCase a = causal_case(c);
  a.options.return_weights = false;
  const std::size_t S = a.q.shape(2), p = std::min<std::size_t>(c["p"], S - 1);
  AttentionCase b = a;
  redraw_from(b, p, c.data_seed() + 1);
  const auto ra = ctx.backend.attention(a.q, a.k, a.v, a.options).output, rb = ctx.backend.attention(b.q, b.k, b.v, a.options).output;
  const double moved = max_abs_diff(positions(ra, 0, p), positions(rb, 0, p));
  // The inputs can show a leak: every output from p on moves with the mask (query t sees its own
  // redrawn key t), and every output moves without any mask. Required in float64 only, where a
  // visible key's weight, at least e^(−score spread)/Sk, is far above the rounding of a sum of
  // values of order 1 at these inputs' spreads (a few units); in the narrow formats a small
  // weight's move can round away.
  std::string still;
  if (ctx.precision == Precision::float64) {
    AttentionOptions<double> none = a.options;  // the scale and softcap kept, every mask and the window dropped
    none.causal = false, none.allowed.reset(), none.bias.reset(), none.left_window = -1;
    const auto ua = ctx.backend.attention(a.q, a.k, a.v, none).output, ub = ctx.backend.attention(b.q, b.k, b.v, none).output;
    for (std::size_t bb = 0; bb < ra.shape(0) && still.empty(); ++bb)
      for (std::size_t h = 0; h < ra.shape(1) && still.empty(); ++h)
        for (std::size_t t = 0; t < S && still.empty(); ++t) {
          if (t >= p && !row_moved(ra, rb, bb, h, t)) still = fmt::format("output {} (batch {}, head {}) did not move with the mask", t, bb, h);
          if (!row_moved(ua, ub, bb, h, t)) still = fmt::format("output {} (batch {}, head {}) did not move without a mask", t, bb, h);
        }
  }
  Measurement m{moved, fmt::format("positions ≥ {} of {} redrawn: largest change of an output before them {:.3g}{}", p, S, moved,
                                   still.empty() ? "" : "; BUT " + still + ": the inputs could not show a leak")};
  return m.require(still.empty(), still);
}

Measurement one_pass_case(const CheckContext& ctx, const Case& c) {
  AttentionCase a = causal_case(c);
  a.options.return_weights = false;
  const Agreement ag = agreement_unit(ctx, a.q, a.k, a.v, a.options);
  const double unit = ag.unit;
  const std::size_t S = a.q.shape(2);
  const auto full = ctx.backend.attention(a.q, a.k, a.v, a.options).output;
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t t = 0; t < S; ++t) {
    const Tensor4<double> q = positions(a.q, t, t + 1), k = positions(a.k, 0, t + 1), v = positions(a.v, 0, t + 1);
    const auto step = ctx.backend.attention(q, k, v, rows_of(a.options, t, t + 1, t + 1, CausalAlignment::bottom_right)).output;
    const double d = max_abs_diff(positions(full, t, t + 1), step) / unit;
    if (d > worst || std::isnan(d)) worst = worse(worst, d), at = t;
  }
  return {worst, fmt::format("max |one pass − token by token|{} = {:.2e} over {} steps (worst: step {}; values scaled by 2^{})", unit_words(ctx),
                             worst, S, at, std::ilogb(ag.value_scale))};
}

Measurement alignment_case(const CheckContext& ctx, const Case& c) {
  AttentionCase a = causal_case(c);
  a.options.return_weights = false;
  const Agreement ag = agreement_unit(ctx, a.q, a.k, a.v, a.options);
  const double unit = ag.unit;
  const std::size_t S = a.q.shape(2), Sk = a.k.shape(2), r = std::min<std::size_t>(c["p"], S - 1);
  const auto full = ctx.backend.attention(a.q, a.k, a.v, a.options).output;
  // The first r queries top-left over every key; the last r bottom-right over keys 0 … S − 1 (the
  // extra keys, which no query of the pass sees, left out: bottom-right puts the last query at the
  // last key).
  const Tensor4<double> first = positions(a.q, 0, r), last = positions(a.q, S - r, S);
  const auto tl = ctx.backend.attention(first, a.k, a.v, rows_of(a.options, 0, r, Sk, CausalAlignment::top_left)).output;
  const Tensor4<double> k = positions(a.k, 0, S), v = positions(a.v, 0, S);
  const auto br = ctx.backend.attention(last, k, v, rows_of(a.options, S - r, S, S, CausalAlignment::bottom_right)).output;
  const double d_tl = max_abs_diff(positions(full, 0, r), tl) / unit, d_br = max_abs_diff(positions(full, S - r, S), br) / unit;
  const double worst = worse(worse(0, d_tl), d_br);
  return {worst, fmt::format("max |query block − rows of the full causal pass|{} = {:.2e} (first {} of {} top-left {:.2e}, last {} "
                             "bottom-right {:.2e}; values scaled by 2^{})", unit_words(ctx), worst, r, S, d_tl, r, d_br, std::ilogb(ag.value_scale))};
}

Measurement cache_case(const CheckContext& ctx, const Case& c) {
  AttentionCase a = causal_case(c);
  a.options.return_weights = false;
  const Agreement ag = agreement_unit(ctx, a.q, a.k, a.v, a.options);
  const std::size_t S = a.q.shape(2), Sk = a.k.shape(2), m = std::size_t(c["p"]);
  const auto full = ctx.backend.attention(a.q, a.k, a.v, a.options).output;
  // Padding past the keys so far, redrawn: a decoder that attends to it moves.
  numpy::Generator rng(c.data_seed() + 3);
  const Tensor4<double> pad_k = normal_like(rng, a.k, 0.5), pad_v = normal_like(rng, a.v);
  double worst = 0;
  std::string where = "equal";
  for (std::size_t t = 0; t < S; t += m) {
    const std::size_t e = std::min(t + m, S);
    const Tensor4<double> q = positions(a.q, t, e), k = positions(a.k, 0, e), v = positions(a.v, 0, e);
    AttentionOptions<double> past = rows_of(a.options, t, e, e, CausalAlignment::top_left);
    past.first_query = std::ptrdiff_t(t);
    const auto through_past = ctx.backend.attention(q, k, v, past).output;
    Tensor4<double> kp = pad_k, vp = pad_v * ag.value_scale;
    positions(kp, 0, e) = k;
    positions(vp, 0, e) = v;
    AttentionOptions<double> padded = rows_of(a.options, t, e, Sk, CausalAlignment::bottom_right);
    padded.kv_lengths = std::vector<std::size_t>(a.k.shape(0), e);
    const auto through_lengths = ctx.backend.attention(q, kp, vp, padded).output;
    const Tensor4<double> want = positions(full, t, e);
    for (const auto& [got, how] : {std::pair{&through_past, "past_key"}, std::pair{&through_lengths, "nonpad_kv_seqlen"}}) {
      const double d = max_abs_diff(want, *got) / ag.unit;
      if (d > worst || std::isnan(d)) worst = worse(worst, d), where = fmt::format("queries {}…{} through {}", t, e - 1, how);
    }
  }
  return {worst, fmt::format("max |one pass − decoding through a cache|{} = {:.2e}, chunks of {} (worst: {}; values scaled by 2^{})",
                             unit_words(ctx), worst, m, where, std::ilogb(ag.value_scale))};
}

// One causal check over generated cases: causal_case_terms(min_s), causal_anchor_cases(), `measure` per case.
Measurement causal_generated(const CheckContext& ctx, int min_s, Measurement (*measure)(const CheckContext&, const Case&)) {
  const auto terms = causal_case_terms(min_s);
  return generated_cases(ctx, terms, causal_anchor_cases(), Worse::larger, [&](const Case& c) { return measure(ctx, c); });
}
}  // namespace

Measurement first_position_generated(const CheckContext& ctx) { return causal_generated(ctx, 1, first_position_case); }
Measurement prefix_generated(const CheckContext& ctx) { return causal_generated(ctx, 2, prefix_case); }
Measurement one_pass_generated(const CheckContext& ctx) { return causal_generated(ctx, 1, one_pass_case); }
Measurement alignment_generated(const CheckContext& ctx) { return causal_generated(ctx, 2, alignment_case); }
Measurement cache_generated(const CheckContext& ctx) { return causal_generated(ctx, 1, cache_case); }

}  // namespace vl::lessons::masking
