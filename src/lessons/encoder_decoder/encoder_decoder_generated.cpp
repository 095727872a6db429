// Lesson encoder-decoder, two claims over generated cases (engine/generated_cases.hpp), each
// case's weights drawn by torch's initialisation from its data seed:
//
//   encoder-decoder.decoder-prefix-unchanged   the model's width, heads, feed-forward width, depth,
//                                              post- or pre-norm, ReLU or GELU, the batch, the
//                                              encoder's and the decoder's lengths and the position
//                                              p from which the target is redrawn (every parameter
//                                              perturbed, as the fixed sweep's models are): every
//                                              decoder output at a position < p bit-identical.
//   encoder-decoder.residual-keeps-width       an encoder or decoder layer, post- or pre-norm, of
//                                              any width, heads and FFN width, whose FFN returns a
//                                              width d' ≠ d (narrower or wider): refused; the layer
//                                              as drawn accepted.
#include <algorithm>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "engine/generated_cases.hpp"
#include "lessons/encoder_decoder/encoder_decoder.hpp"
#include "numeric/compare.hpp"

namespace vl::lessons::encoder_decoder {

namespace {

// d = heads · d_head with d_head ≥ 4: a LayerNorm over 2 features gives ±1 whatever its input.
std::vector<CaseTerm> prefix_terms() {
  return {{"batch", 1, 2, 1, {}},   {"heads", 1, 4, 1, {}},  {"d_head", 4, 8, 4, {}},
          {"d_ff", 1, 24, 1, {}},   {"layers", 1, 2, 1, {}}, {"S", 1, 6, 1, {}},
          {"T", 2, 7, 2, {}},       {"norm", 0, 1, 0, {"post", "pre"}},
          {"activation", 0, 1, 0, {"relu", "gelu"}}, {"p", 1, 6, 1, {}}};
}

// Anchors: post-norm ReLU and pre-norm GELU, 2 layers, each control's bug met in either.
std::vector<std::vector<int>> prefix_anchor_cases() { return {{1, 2, 4, 8, 2, 3, 5, 0, 0, 2}, {2, 3, 4, 12, 2, 4, 6, 1, 1, 4}}; }

Measurement decoder_prefix_case(const CheckContext& ctx, const vl::Case& c) {
  const std::size_t batch = c["batch"], heads = c["heads"], d = heads * std::size_t(c["d_head"]), S = c["S"], T = c["T"];
  const std::size_t p = std::min<std::size_t>(c["p"], T - 1);
  CaseModel cm = case_model(c, c.data_seed(), S, T);
  const Model& m = cm.model;
  const LayerOptions& o = m.options;
  const Tensor3 fresh = torch_rng::randn<double>(cm.gen, {batch, T, d});
  MhaOptions<double> causal;
  causal.causal = true;
  const Tensor3 memory = encoder_stack(ctx.backend, m.src, m.encoder, heads, o);
  const Tensor3 base = decoder_stack(ctx.backend, m.tgt, memory, m.decoder, heads, o, causal);
  Tensor3 changed = m.tgt;
  xt::view(changed, xt::all(), xt::range(p, T)) = xt::view(fresh, xt::all(), xt::range(p, T));
  const Tensor3 out = decoder_stack(ctx.backend, changed, memory, m.decoder, heads, o, causal);
  const double moved = max_abs_diff(xt::xtensor<double, 3>(xt::view(out, xt::all(), xt::range(0, p))),
                                    xt::xtensor<double, 3>(xt::view(base, xt::all(), xt::range(0, p))));
  // That every output from p on moves shows the redraw could reveal a leak; required in float64,
  // where no change of an input row can round away.
  std::string still;
  if (ctx.precision == Precision::float64)
    for (std::size_t t = p; t < T && still.empty(); ++t)
      if (max_abs_diff(xt::xtensor<double, 3>(xt::view(out, xt::all(), xt::range(t, t + 1))),
                       xt::xtensor<double, 3>(xt::view(base, xt::all(), xt::range(t, t + 1)))) == 0)
        still = fmt::format("decoder output {} did not move when the target from {} on was redrawn", t, p);
  Measurement r{moved, fmt::format("target positions ≥ {} of {} redrawn: largest change of a decoder output before them {:.3g}{}", p, T,
                                   moved, still.empty() ? "" : "; BUT " + still)};
  return r.require(still.empty(), still);
}

// d = heads · d_head ≥ 2; d' = d + step (wider) or d − step (narrower, where d − step ≥ 2; else
// wider). Neither width is 1: NumPy's and torch's broadcasting add a width-1 tensor to any width,
// so torch's layer accepts d = 1, d' = 2 (it returns (1, 1, 2)) and d' = 1 — the residual of two
// widths, neither 1, is what the claim is about (specs/encoder_decoder.md).
std::vector<CaseTerm> width_terms() {
  return {{"layer", 0, 1, 0, {"encoder", "decoder"}}, {"norm", 0, 1, 0, {"post", "pre"}}, {"heads", 1, 4, 1, {}},
          {"d_head", 2, 6, 2, {}},  {"d_ff", 1, 24, 1, {}}, {"step", 1, 5, 1, {}}, {"narrower", 0, 1, 0, {"no", "yes"}},
          {"batch", 1, 2, 1, {}},   {"length", 1, 6, 1, {}}};
}
// Anchors: each kind of layer and norm once, wider and narrower (a backend that skips the residual
// when the widths differ, or drops the FFN's output, meets its bug in every one).
std::vector<std::vector<int>> width_anchor_cases() {
  return {{0, 0, 2, 4, 16, 3, 0, 1, 4}, {0, 1, 1, 4, 5, 2, 1, 2, 3}, {1, 0, 3, 2, 7, 1, 1, 1, 2}, {1, 1, 2, 4, 16, 3, 0, 1, 4}};
}

Measurement width_case(const CheckContext& ctx, const vl::Case& c) {
  const std::size_t d = std::size_t(c["heads"]) * std::size_t(c["d_head"]), step = c["step"];
  const std::size_t wide = c["narrower"] == 1 && d >= step + 2 ? d - step : d + step;
  return width_measurement({width_change_refused(
      ctx, {c["layer"] == 1, c["norm"] == 1, d, wide, std::size_t(c["heads"]), std::size_t(c["d_ff"]), std::size_t(c["batch"]),
            std::size_t(c["length"]), c.data_seed()})});
}

}  // namespace

Measurement residual_keeps_width_generated(const CheckContext& ctx) {
  const auto terms = width_terms();
  return generated_cases(ctx, terms, width_anchor_cases(), Worse::smaller, [&](const vl::Case& c) { return width_case(ctx, c); });
}

Measurement decoder_prefix_generated(const CheckContext& ctx) {
  const auto terms = prefix_terms();
  return generated_cases(ctx, terms, prefix_anchor_cases(), Worse::larger, [&](const vl::Case& c) { return decoder_prefix_case(ctx, c); });
}

}  // namespace vl::lessons::encoder_decoder
