// Lesson masking, claim masking.float16-bound: attention with every stored value rounded to
// float16 (AttentionOptions::round, as ONNX's float16 reference stores them) stays within a
// bound derived from float16's unit round-off u = 2^-11 of the float64 result on the same
// inputs (specs/masking.md derives it).
//
//   Q, K, V: (B, H, S, D), values representable in float16;  O: (B, H, S, D)
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "lessons/masking/masking.hpp"
#include "numeric/float16.hpp"

namespace vl::lessons::masking {

Measurement float16_bound(const CheckContext& ctx) {
  constexpr double u = kHalfUnitRoundoff;
  double worst = 0;  // max |O16 − O64| / bound
  std::string where = "none";
  struct Size {
    std::size_t b, h, s, d;
    double spread;  // the inputs' scale: scores up to ~spread² · √D
  };
  for (const Size& c : {Size{1, 2, 8, 8, 1.0}, Size{2, 2, 16, 8, 3.0}, Size{1, 3, 32, 16, 2.0}}) {
    Inputs in = draw_inputs(c.b, c.h, c.s, c.s, c.d, 1000 + c.s);
    for (auto* x : {&in.q, &in.k, &in.v})
      for (auto& e : *x) e = round_to_half(e * c.spread);
    for (bool causal : {false, true}) {
      const double scale = 1 / std::sqrt(double(c.d));
      AttentionOptions<double> exact{.scale = scale, .causal = causal};
      AttentionOptions<double> half = exact;
      half.round = round_to_half;
      half.round_through = ScoreStage::softmax;
      exact.return_scores = ScoreStage::masked;
      const auto r64 = ctx.backend.attention(in.q, in.k, in.v, exact);
      const auto r16 = ctx.backend.attention(in.q, in.k, in.v, half);
      for (std::size_t b = 0; b < c.b; ++b)
        for (std::size_t h = 0; h < c.h; ++h) {
          double vmax = 0;
          for (double e : xt::view(in.v, b, h)) vmax = std::max(vmax, std::abs(e));
          for (std::size_t i = 0; i < c.s; ++i) {
            // E: the largest exponent error, u·(|S_j| + |S_j − m|) over the visible keys (+ second order)
            double m = -std::numeric_limits<double>::infinity(), smax = 0, e_max = 0;
            for (std::size_t j = 0; j < c.s; ++j) m = std::max(m, r64.scores(b, h, i, j));
            for (std::size_t j = 0; j < c.s; ++j) {
              const double s = r64.scores(b, h, i, j);
              if (std::isinf(s)) continue;
              smax = std::max(smax, std::abs(s));
              e_max = std::max(e_max, std::abs(s) + std::abs(s - m));
            }
            const double E = u * (e_max + 4 * u * smax);
            const double f = std::expm1(2 * E + 3.01 * u);  // |w_j / p_j − 1| ≤ f
            const double bound = (f + u * (1 + f)) * vmax + 1e-15 * vmax;
            for (std::size_t d = 0; d < c.d; ++d) {
              // The output is stored in float16 too.
              const double diff = std::abs(round_to_half(r16.output(b, h, i, d)) - r64.output(b, h, i, d));
              const double ratio = std::isnan(diff) ? std::numeric_limits<double>::infinity() : diff / bound;
              if (ratio > worst) {
                worst = ratio;
                where = fmt::format("S={}, spread {}, {}, row {}: |Δ| = {:.2e}, bound {:.2e}", c.s, c.spread,
                                    causal ? "causal" : "no mask", i, diff, bound);
              }
            }
          }
        }
    }
  }
  return {worst,
          fmt::format("largest |O16 − O64| / derived bound = {:.3g} ({})", worst, where)};
}

}  // namespace vl::lessons::masking
