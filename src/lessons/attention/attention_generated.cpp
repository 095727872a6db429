// Lesson attention, listing 1's two invariants over generated cases (engine/generated_cases.hpp,
// lessons/attention_cases.hpp): batch, GQA groups, Sq ≠ Sk, head sizes no vector width divides,
// every mask kind and rank, both causal alignments, windows, softcaps, scales and key lengths.
// The keys are at most 7, the count the float32, bfloat16 and float16 bounds of both claims are
// derived for (specs/attention.md); a row that sees no key is masking.fully-masked-row-zero's.
//
//   attention.weights-distribution   every row that sees a key: weights in [0, 1], summing to 1
//                                    (measured: max(|Σ_j w_ij − 1|, a weight's distance outside [0, 1]))
//   attention.convex-combination     every such row's output, column by column, within the min and
//                                    max of the values its query sees, relative to max |v|
//   attention.softmax-shift-invariant every such row's scores shifted by ±100 or ±750 times 1 + i/2
//                                    (through an extra column, as the fixed sweep does; no softcap,
//                                    which is no shift): weights and outputs within the two runs' bounds
//
// And the control only options reach: key lengths applied after the softmax.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "backends/registry.hpp"
#include "kernels/reference/gqa.hpp"
#include "kernels/reference/matmul.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/attention/attention_common.hpp"
#include "lessons/attention_cases.hpp"
#include "lessons/attention_error_bound.hpp"
#include "numeric/compare.hpp"
#include "numeric/precision.hpp"

namespace vl::lessons::attention {

namespace {

constexpr int kMaxKeys = 7;

std::string row_at(std::size_t b, std::size_t h, std::size_t i) { return fmt::format("batch {}, head {}, query {}", b, h, i); }

Measurement weights_distribution_case(const CheckContext& ctx, const Case& c) {
  const AttentionCase a = attention_case(c);
  const auto w = ctx.backend.attention(a.q, a.k, a.v, a.options).weights;
  double worst = 0;
  std::string where = "every row a distribution";
  for (std::size_t b = 0; b < w.shape(0); ++b)
    for (std::size_t h = 0; h < w.shape(1); ++h)
      for (std::size_t i = 0; i < w.shape(2); ++i) {
        if (!a.sees_a_key(b, h, i)) continue;
        const double dev = row_deviation(w, b, h, i);
        if (dev > worst) worst = dev, where = row_at(b, h, i);
      }
  return {worst, fmt::format("largest |row sum − 1| or weight outside [0, 1]: {:.2e} ({})", worst, where)};
}

Measurement convex_combination_case(const CheckContext& ctx, const Case& c) {
  AttentionCase a = attention_case(c);
  a.options.return_weights = false;
  const auto out = ctx.backend.attention(a.q, a.k, a.v, a.options).output;
  const std::size_t Hq = a.q.shape(1), Hkv = a.k.shape(1);
  const double scale = std::max(xt::amax(xt::abs(a.v))(), std::numeric_limits<double>::min());
  double worst = 0;
  std::string where = "inside";
  for (std::size_t b = 0; b < out.shape(0); ++b)
    for (std::size_t h = 0; h < Hq; ++h)
      for (std::size_t i = 0; i < out.shape(2); ++i) {
        if (!a.sees_a_key(b, h, i)) continue;
        for (std::size_t col = 0; col < out.shape(3); ++col) {
          double lo = kInf, hi = -kInf;
          for (std::size_t j = 0; j < a.v.shape(2); ++j)
            if (a.visible(b, h, i, j)) {
              lo = std::min(lo, a.v(b, kv_head_of(h, Hq, Hkv), j, col));
              hi = std::max(hi, a.v(b, kv_head_of(h, Hq, Hkv), j, col));
            }
          const double excess = excursion(out(b, h, i, col), lo, hi, scale);
          if (excess > worst) worst = excess, where = fmt::format("{}, column {}", row_at(b, h, i), col);
        }
      }
  return {worst, fmt::format("largest excursion outside the min/max of the visible values, relative to max|v|: {:.2e} ({})", worst, where)};
}

// Broken: the key lengths applied after the softmax: every key weighed, then the padded keys'
// weights (j ≥ L_b) zeroed and the row not renormalised, O = W V (a causal mask or window then counts
// its offset from Sk, as without lengths). Both precisions (attention_break.hpp).
class LengthsAfterSoftmax : public AttentionBreak<LengthsAfterSoftmax> {
 public:
  LengthsAfterSoftmax() : AttentionBreak(backends::plain(), "key lengths applied after the softmax") {}
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const {
    if (!o.kv_lengths) return base().attention(q, k, v, o);
    AttentionOptions<T> all_keys = o;
    all_keys.kv_lengths.reset();
    all_keys.return_weights = true;
    AttentionResult<T, 4> r = base().attention(q, k, v, all_keys);
    const std::size_t B = q.shape(0), Hq = q.shape(1), Hkv = k.shape(1);
    for (std::size_t b = 0; b < B; ++b) {
      for (std::size_t j = (*o.kv_lengths)[b]; j < k.shape(2); ++j) xt::view(r.weights, b, xt::all(), xt::all(), j) = T(0);
      for (std::size_t h = 0; h < Hq; ++h)
        xt::view(r.output, b, h) = matmul<T>(xt::view(r.weights, b, h), xt::view(v, b, kv_head_of(h, Hq, Hkv)));
    }
    if (!o.return_weights) r.weights = {};
    return r;
  }
};

std::vector<CaseTerm> terms() { return attention_case_terms(false, kMaxKeys); }

// The shift terms: the attention terms over any number of keys (the bound is the case's own), no
// softcap (tanh of a shifted score is no shift), and the shift: ±100 or ±750 (exp overflows or
// underflows past ±745 without the row maximum's subtraction).
std::vector<CaseTerm> shift_terms() {
  std::vector<CaseTerm> t = attention_case_terms(false);
  for (CaseTerm& term : t)
    if (term.name == "softcap") term.hi = 0;
  t.push_back({"shift", 0, 3, 0, {"100", "-100", "750", "-750"}});
  return t;
}

// The attention anchors, each with a shift of ±750 (the controls' bugs show there, not at ±100).
std::vector<std::vector<int>> shift_anchor_cases() {
  std::vector<std::vector<int>> anchors = attention_anchor_cases();
  for (std::size_t i = 0; i < anchors.size(); ++i) anchors[i].push_back(2 + int(i % 2));
  return anchors;
}

Measurement shift_case(const CheckContext& ctx, const Case& c) {
  const Precision p = ctx.precision;
  const double u = working_roundoff(p);
  AttentionCase a = attention_case(c);
  const std::size_t B = a.q.shape(0), Hq = a.q.shape(1), Sq = a.q.shape(2), D = a.q.shape(3), Hkv = a.k.shape(1), Sk = a.k.shape(2);
  // The inputs as the precision stores them, so that both runs have the same exact weights.
  a.q = rounded_to(p, a.q), a.k = rounded_to(p, a.k), a.v = rounded_to(p, a.v);
  AttentionOptions<double>& o = a.options;
  o.scale = round_to(p, o.scale.value_or(1 / std::sqrt(double(D))));
  const double shift = std::array<double, 4>{100, -100, 750, -750}[std::size_t(c["shift"])];
  // Q gets a_i = shift·(1 + i/2)/scale in an extra column, K gets 1: row i's scores move by scale·a_i.
  Tensor4<double> qs = xt::zeros<double>({B, Hq, Sq, D + 1}), ks = xt::ones<double>({B, Hkv, Sk, D + 1});
  xt::view(qs, xt::all(), xt::all(), xt::all(), xt::range(0, D)) = a.q;
  xt::view(ks, xt::all(), xt::all(), xt::all(), xt::range(0, D)) = a.k;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < Hq; ++h)
      for (std::size_t i = 0; i < Sq; ++i) qs(b, h, i, D) = round_to(p, shift * (1 + 0.5 * double(i)) / *o.scale);
  const auto plain_run = ctx.backend.attention(a.q, a.k, a.v, o);
  const auto shifted_run = ctx.backend.attention(qs, ks, a.v, o);
  const double factor = attention_error_factor(a.q, a.k, o, u) + attention_error_factor(qs, ks, o, u);
  const double vmax = std::max(xt::amax(xt::abs(a.v))(), std::numeric_limits<double>::min());
  double worst = 0;
  std::string where = "every row unmoved";
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < Hq; ++h)
      for (std::size_t i = 0; i < Sq; ++i) {
        if (!a.sees_a_key(b, h, i)) continue;  // a row with no visible key is masking.fully-masked-row-zero's (torch: NaN)
        double w = 0, y = 0;
        for (std::size_t j = 0; j < Sk; ++j) w = worse(w, difference(shifted_run.weights(b, h, i, j), plain_run.weights(b, h, i, j)) / factor);
        for (std::size_t x = 0; x < a.v.shape(3); ++x)
          y = worse(y, difference(shifted_run.output(b, h, i, x), plain_run.output(b, h, i, x)) / (factor * vmax));
        if (worse(w, y) > worst || std::isnan(worse(w, y)))
          worst = worse(worst, worse(w, y)), where = fmt::format("{}: weights {:.2e}, outputs {:.2e} of their bounds", row_at(b, h, i), w, y);
      }
  return {worst, fmt::format("shift {:g}: largest |softmax(s + c) − softmax(s)| over the two runs' bounds {:.3g} ({}; bound {:.2e})", shift,
                             worst, where, factor)};
}

}  // namespace

Measurement weights_distribution_generated(const CheckContext& ctx) {
  const auto t = terms();
  return generated_cases(ctx, t, attention_anchor_cases(), Worse::larger, [&](const Case& c) { return weights_distribution_case(ctx, c); });
}

Measurement convex_combination_generated(const CheckContext& ctx) {
  const auto t = terms();
  return generated_cases(ctx, t, attention_anchor_cases(), Worse::larger, [&](const Case& c) { return convex_combination_case(ctx, c); });
}

Measurement shift_invariant_generated(const CheckContext& ctx) {
  const auto t = shift_terms();
  return generated_cases(ctx, t, shift_anchor_cases(), Worse::larger, [&](const Case& c) { return shift_case(ctx, c); });
}

std::shared_ptr<const backends::Backend> lengths_after_softmax() { return std::make_shared<LengthsAfterSoftmax>(); }

}  // namespace vl::lessons::attention
