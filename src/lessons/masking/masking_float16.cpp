// Lesson masking, claim masking.float16-bound: attention with every stored value rounded to
// float16 (AttentionOptions::round, as ONNX's float16 reference stores them) stays within a
// bound derived from float16's unit round-off u = 2^-11 of the float64 result on the same
// inputs (specs/masking.md derives it), over a fixed sweep and generated cases.
//
//   Q: (B, Hq, Sq, D), K: (B, Hkv, Sk, D), V: (B, Hkv, Sk, Dv), values representable in float16;
//   O: (B, Hq, Sq, Dv)
#include <cmath>
#include <functional>
#include <limits>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "kernels/reference/gqa.hpp"
#include "lessons/attention_cases.hpp"
#include "lessons/masking/masking.hpp"
#include "numeric/float16.hpp"

namespace vl::lessons::masking {

namespace {

struct Float16Worst {
  double ratio = 0;  // max |O16 − O64| / bound
  std::string where = "none";
  std::size_t rows = 0;  // rows judged
};

// One call in float64 and with float16 storage, every output of a judged row against its bound:
// E = u·max_j(|S_j| + |S_j − m|) (+ 4u²·max|S|) over the row's visible keys (the masked scores
// of the float64 run), f = e^(2E + 3.01u) − 1, bound (f + u(1 + f))·max|v| + 10⁻¹⁵·max|v| (the
// float64 sums), max|v| over the row's key/value head. Masks that only hide keys (boolean, causal,
// window, key lengths) leave the derivation as it is; an additive mask or a softcap would add
// roundings it does not count, so the generated cases draw neither.
void float16_rows(const backends::Backend& backend, const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                  AttentionOptions<double> exact, const std::function<bool(std::size_t, std::size_t, std::size_t)>& judged,
                  const std::string& label, Float16Worst& w) {
  constexpr double u = kHalfUnitRoundoff;
  AttentionOptions<double> half = exact;
  half.round = round_to_half;
  half.round_through = ScoreStage::softmax;
  exact.return_scores = ScoreStage::masked;
  const auto r64 = backend.attention(q, k, v, exact);
  const auto r16 = backend.attention(q, k, v, half);
  const std::size_t Hq = q.shape(1), Sq = q.shape(2), Hkv = k.shape(1), Sk = k.shape(2), Dv = v.shape(3);
  for (std::size_t b = 0; b < q.shape(0); ++b)
    for (std::size_t h = 0; h < Hq; ++h) {
      double vmax = 0;
      for (double e : xt::view(v, b, kv_head_of(h, Hq, Hkv))) vmax = std::max(vmax, std::abs(e));
      for (std::size_t i = 0; i < Sq; ++i) {
        if (!judged(b, h, i)) continue;
        ++w.rows;
        double m = -std::numeric_limits<double>::infinity(), smax = 0, e_max = 0;
        for (std::size_t j = 0; j < Sk; ++j) m = std::max(m, r64.scores(b, h, i, j));
        for (std::size_t j = 0; j < Sk; ++j) {
          const double s = r64.scores(b, h, i, j);
          if (std::isinf(s)) continue;
          smax = std::max(smax, std::abs(s));
          e_max = std::max(e_max, std::abs(s) + std::abs(s - m));
        }
        const double E = u * (e_max + 4 * u * smax);
        const double f = std::expm1(2 * E + 3.01 * u);  // |w_j / p_j − 1| ≤ f
        const double bound = (f + u * (1 + f)) * vmax + 1e-15 * vmax;
        for (std::size_t d = 0; d < Dv; ++d) {
          // The output is stored in float16 too.
          const double diff = std::abs(round_to_half(r16.output(b, h, i, d)) - r64.output(b, h, i, d));
          const double ratio = std::isnan(diff) ? std::numeric_limits<double>::infinity() : diff / bound;
          if (ratio > w.ratio) {
            w.ratio = ratio;
            w.where = fmt::format("{}, batch {}, head {}, row {}: |Δ| = {:.2e}, bound {:.2e}", label, b, h, i, diff, bound);
          }
        }
      }
    }
}

// The generated terms: the attention terms with boolean masks only and no softcap (above), and the
// inputs' spread, 1, 2, 4 or 8 times the case's own (scores up to 8² = 64 times larger:
// exponentials overflow float16, 65504, from a score of 11.1 up unless the row maximum is subtracted).
std::vector<CaseTerm> float16_terms() {
  std::vector<CaseTerm> t = attention_case_terms(false);
  for (CaseTerm& term : t) {
    if (term.name == "softcap") term.hi = 0;
    if (term.name == "mask") term.hi = term.lo + 1;  // none or boolean
  }
  t.push_back({"spread", 0, 3, 0, {"1", "2", "4", "8"}});
  return t;
}

// The attention anchors (their masks, windows and key lengths), each at spread 8, where the
// control's overflowing exponentials meet a score above 11.1 in some row.
std::vector<std::vector<int>> float16_anchor_cases() {
  std::vector<std::vector<int>> anchors = attention_anchor_cases();
  for (auto& a : anchors) a.push_back(3);
  return anchors;
}

Measurement float16_case(const CheckContext& ctx, const Case& c) {
  AttentionCase a = attention_case(c);
  const double spread = double(1 << c["spread"]);
  for (auto* x : {&a.q, &a.k, &a.v})
    for (auto& e : *x) e = round_to_half(e * spread);
  a.options.return_weights = false;
  Float16Worst w;
  // A row that sees no key is masking.fully-masked-row-zero's.
  float16_rows(ctx.backend, a.q, a.k, a.v, a.options, [&](std::size_t b, std::size_t h, std::size_t i) { return a.sees_a_key(b, h, i); },
               "generated", w);
  if (w.rows == 0)  // every query's keys hidden (key lengths of 0, a window past them): said, not judged
    return {0, "no query of this case sees a key: nothing for this claim to judge (masking.fully-masked-row-zero's)"};
  return {w.ratio, fmt::format("largest |O16 − O64| / derived bound = {:.3g} over {} rows ({})", w.ratio, w.rows, w.where)};
}

}  // namespace

Measurement float16_bound(const CheckContext& ctx) {
  Float16Worst w;
  struct Size {
    std::size_t b, h, s, d;
    double spread;  // the inputs' scale: scores up to ~spread² · √D
  };
  for (const Size& c : {Size{1, 2, 8, 8, 1.0}, Size{2, 2, 16, 8, 3.0}, Size{1, 3, 32, 16, 2.0}}) {
    Inputs in = draw_inputs(c.b, c.h, c.s, c.s, c.d, 1000 + c.s);
    for (auto* x : {&in.q, &in.k, &in.v})
      for (auto& e : *x) e = round_to_half(e * c.spread);
    for (bool causal : {false, true})
      float16_rows(ctx.backend, in.q, in.k, in.v, AttentionOptions<double>{.scale = 1 / std::sqrt(double(c.d)), .causal = causal},
                   [](std::size_t, std::size_t, std::size_t) { return true; },
                   fmt::format("S={}, spread {}, {}", c.s, c.spread, causal ? "causal" : "no mask"), w);
  }
  return {w.ratio, fmt::format("largest |O16 − O64| / derived bound = {:.3g} ({})", w.ratio, w.where)};
}

Measurement float16_generated(const CheckContext& ctx) {
  const auto terms = float16_terms();
  return generated_cases(ctx, terms, float16_anchor_cases(), Worse::larger, [&](const Case& c) { return float16_case(ctx, c); });
}

}  // namespace vl::lessons::masking
