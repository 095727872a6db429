// Lesson masking, claim masking.cache-decoding: decoding through a KV cache, ONNX's two ways,
// equals the one causal pass (specs/masking.md). Chunks of m new tokens t … e − 1 (e = t + m):
//   internal cache (past_key → present_key): Q (B, H, m, D) against K, V = positions 0 … e − 1,
//     query 0 at position t (AttentionOptions::first_query = the past length);
//   external cache (nonpad_kv_seqlen): the same queries against a buffer of all S positions
//     whose entries from e on are padding (other values), kv_lengths = e, bottom-right.
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "lessons/masking/masking.hpp"
#include "numeric/compare.hpp"

namespace vl::lessons::masking {
Measurement cache_decoding(const CheckContext& ctx) {
  struct Size {
    std::size_t b, h, s, d;
  };
  double worst = 0;
  std::string where = "equal";
  std::size_t steps = 0;
  for (const Size& c : {Size{1, 1, 8, 4}, Size{2, 3, 13, 8}, Size{1, 2, 32, 8}}) {
    Inputs in = draw_inputs(c.b, c.h, c.s, c.s, c.d, 900 + c.s);
    const Inputs padding = draw_inputs(c.b, c.h, c.s, c.s, c.d, 950 + c.s);
    AttentionOptions<double> one_pass;
    one_pass.causal = true;
    const double unit = agreement_unit(ctx, in.q, in.k, in.v, one_pass).unit;
    const auto full = ctx.backend.attention(in.q, in.k, in.v, one_pass);
    for (std::size_t m : {1, 3}) {
      for (std::size_t t = 0; t < c.s; t += m) {
        const std::size_t e = std::min(t + m, c.s);
        const Tensor4<double> q = positions(in.q, t, e);
        AttentionOptions<double> internal;
        internal.causal = true;
        internal.first_query = std::ptrdiff_t(t);
        const auto a = ctx.backend.attention(q, positions(in.k, 0, e), positions(in.v, 0, e), internal);
        Tensor4<double> kb = padding.k, vb = padding.v;
        positions(kb, 0, e) = positions(in.k, 0, e);
        positions(vb, 0, e) = positions(in.v, 0, e);
        AttentionOptions<double> external;
        external.causal = true;
        external.alignment = CausalAlignment::bottom_right;
        external.kv_lengths = std::vector<std::size_t>(c.b, e);
        const auto b = ctx.backend.attention(q, kb, vb, external);
        const Tensor4<double> want = positions(full.output, t, e);
        for (const auto& [got, how] : {std::pair{&a.output, "past_key"}, std::pair{&b.output, "nonpad_kv_seqlen"}}) {
          const double diff = max_abs_diff(want, *got) / unit;
          if (diff > worst) {
            worst = diff;
            where = fmt::format("S={}, tokens {}…{}, {}", c.s, t, e - 1, how);
          }
        }
        ++steps;
      }
    }
  }
  return {worst,
          fmt::format("max |one pass − decoding through a cache|{} = {:.2e} over {} chunks, each through past_key and "
                      "nonpad_kv_seqlen (worst: {})", unit_words(ctx), worst, steps, where)};
}

}  // namespace vl::lessons::masking
