// Lesson masking, claim masking.window-independent: a causal sliding window of width w (ONNX's
// left_window_size) makes query i see keys i − w … i only, so keys further back cannot move
// its output, not by a bit (specs/masking.md).
//
//   Q, K, V: (B, H, S, D);  options: causal, left_window = w;  O: (B, H, S, D)
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "lessons/masking/masking.hpp"
#include "numeric/compare.hpp"

namespace vl::lessons::masking {
namespace {

AttentionOptions<double> windowed(std::ptrdiff_t w) {
  AttentionOptions<double> o;
  o.causal = true;
  o.left_window = w;
  return o;
}

}  // namespace

Measurement window_independent(const CheckContext& ctx) {
  // Redraw K and V at positions < p. With the window w, outputs at i ≥ p + w (they see keys
  // i − w ≥ p only) must not move a bit, and every output at i < p + w (it sees a redrawn key)
  // must move; with the causal mask alone (no window) the outputs at i ≥ p + w move too.
  struct Size {
    std::size_t b, h, s, d;
  };
  double worst = 0;
  std::string where = "unchanged", why_not;
  std::size_t compared = 0;
  for (const Size& c : {Size{1, 1, 8, 4}, Size{2, 3, 16, 8}, Size{3, 2, 32, 8}}) {
    const Inputs a = draw_inputs(c.b, c.h, c.s, c.s, c.d, 700 + c.s), fresh = draw_inputs(c.b, c.h, c.s, c.s, c.d, 800 + c.s);
    for (std::size_t w : {0, 1, 3}) {
      for (std::size_t p : {std::size_t(1), c.s / 2}) {
        if (p + w >= c.s) continue;
        Inputs b = a;
        positions(b.k, 0, p) = positions(fresh.k, 0, p);
        positions(b.v, 0, p) = positions(fresh.v, 0, p);
        const auto ra = ctx.backend.attention(a.q, a.k, a.v, windowed(std::ptrdiff_t(w)));
        const auto rb = ctx.backend.attention(b.q, b.k, b.v, windowed(std::ptrdiff_t(w)));
        const double moved = max_abs_diff(positions(ra.output, p + w, c.s), positions(rb.output, p + w, c.s));
        ++compared;
        if (moved > worst) {
          worst = moved;
          where = fmt::format("S={}, w={}, keys < {} redrawn", c.s, w, p);
        }
        for (std::size_t t = 0; t < p + w; ++t)
          if (max_abs_diff(positions(ra.output, t, t + 1), positions(rb.output, t, t + 1)) == 0)
            why_not = fmt::format("; BUT output {} did not move though it sees a redrawn key (S={}, w={}, p={})", t, c.s, w, p);
        const auto ua = ctx.backend.attention(a.q, a.k, a.v, windowed(-1)), ub = ctx.backend.attention(b.q, b.k, b.v, windowed(-1));
        if (max_abs_diff(positions(ua.output, p + w, c.s), positions(ub.output, p + w, c.s)) == 0)
          why_not = fmt::format("; BUT without the window the outputs from {} on did not move either (S={}, p={})", p + w, c.s, p);
      }
    }
  }
  Measurement m{worst,
          fmt::format("largest change of an output at i ≥ p + w when the keys and values before p are redrawn: {:.2e} ({}; {} "
                      "settings){}",
                      worst, where, compared,
                      why_not.empty() ? "; every output that sees a redrawn key moved, and all moved without the window" : why_not)};
  return m.require(why_not.empty(), why_not.empty() ? "" : why_not.substr(2)).require(compared > 0, "no setting was compared");
}

}  // namespace vl::lessons::masking
