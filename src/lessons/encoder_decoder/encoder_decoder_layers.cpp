// Lesson encoder-decoder, section "The layer": the layers against torch, LayerNorm's
// standardisation, the width the residual enforces, and our torch-compatible initialisation
// (spec: specs/encoder_decoder.md).
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/shape_checked.hpp"
#include "engine/generated_cases.hpp"
#include "lessons/encoder_decoder/encoder_decoder.hpp"
#include "backends/registry.hpp"
#include "lessons/encoder_decoder/layer_error_bound.hpp"
#include "numeric/compare.hpp"
#include "numeric/npy.hpp"
#include "numeric/torch_transformer_init.hpp"

namespace vl::lessons::encoder_decoder {

namespace {

// One case of the reference script through the judged backend: the layer drawn from the case's
// seed, copied `layers` times, on the inputs drawn after it. In float64: max |ours − torch's
// golden|. In another precision: the error against our float64 stack on the inputs and
// parameters rounded once to it, over its bound (layer_error_bound.hpp).
double case_error(const backends::Backend& b, const Case& c, const std::filesystem::path& goldens, Precision pr) {
  torch_rng::Generator gen(c.seed);
  const LayerOptions o = options_of(c);
  const bool rounded = pr != Precision::float64;
  if (!c.decoder) {
    auto one = torch_rng::encoder_layer_init<double>(gen, c.d, c.heads, c.d_ff);
    if (c.perturb != 0) perturbed(one, gen, c.perturb);
    const auto layers = torch_rng::stack_of(one, c.layers);
    const Tensor3 x = torch_rng::randn<double>(gen, {c.batch, c.S, c.d});
    MhaOptions<double> self;
    if (c.padding) self.key_padding_mask = padding_mask(c.batch, c.S);
    if (rounded)
      return encoder_layers_judged(pr, x, layers, c.heads, o, self, [&](const Tensor3& in, const auto& layer, double bound) {
        return error_over_bound(b.encoder_layer(in, layer, c.heads, o, self), backends::plain()->encoder_layer(in, layer, c.heads, o, self),
                                bound);
      });
    return max_abs_diff(encoder_stack(b, x, layers, c.heads, o, self), golden(goldens, c.name + ".out.npy"));
  }
  auto one = torch_rng::decoder_layer_init<double>(gen, c.d, c.heads, c.d_ff);
  if (c.perturb != 0) perturbed(one, gen, c.perturb);
  const auto layers = torch_rng::stack_of(one, c.layers);
  const Tensor3 tgt = torch_rng::randn<double>(gen, {c.batch, c.T, c.d});
  const Tensor3 memory = torch_rng::randn<double>(gen, {c.batch, c.S, c.d});
  MhaOptions<double> self, cross;
  self.causal = true;
  if (c.padding) cross.key_padding_mask = padding_mask(c.batch, c.S);
  if (rounded)
    return decoder_layers_judged(pr, tgt, memory, layers, c.heads, o, self, cross,
                                 [&](const Tensor3& in, const Tensor3& mem, const auto& layer, double bound) {
                                   return error_over_bound(b.decoder_layer(in, mem, layer, c.heads, o, self, cross),
                                                           backends::plain()->decoder_layer(in, mem, layer, c.heads, o, self, cross), bound);
                                 });
  return max_abs_diff(decoder_stack(b, tgt, memory, layers, c.heads, o, self, cross), golden(goldens, c.name + ".out.npy"));
}

Measurement matches_torch(const CheckContext& ctx, bool decoder) {
  double worst = 0;
  std::string where, all;
  for (const Case& c : cases()) {
    if (c.decoder != decoder) continue;
    const double e = case_error(ctx.backend, c, ctx.goldens, ctx.precision);
    all += fmt::format("{}{} {:.1e}", all.empty() ? "" : ", ", c.name, e);
    if (!(e <= worst)) worst = e, where = c.name;
  }
  if (ctx.precision != Precision::float64)
    return {worst, fmt::format("layer by layer, largest error over its bound, against our float64 layer on its input and parameters "
                               "rounded to {}: {:.2e} (worst {}); per case: {}", to_string(ctx.precision), worst, where, all)};
  return {worst,
          fmt::format("max |ours − torch 1.13| = {:.2e} (worst {}); per case: {}", worst, where, all)};
}

}  // namespace

Measurement encoder_matches_torch(const CheckContext& ctx) { return matches_torch(ctx, false); }
Measurement decoder_matches_torch(const CheckContext& ctx) { return matches_torch(ctx, true); }

namespace {

// LayerNorm of x (B, S, d) through the backend, γ and β given (both as the backend holds them):
// the largest, over the positions, of |mean x̂| and |var x̂ − σ²/(σ² + ε)| with x̂ = (y − β)/γ
// recovered per feature and σ² the input's biased variance (from the formula here, not from the
// backend); in another precision each over its bound at that position (layer_error_bound.hpp):
// x̂ recovered within e = e_y / min γ, its mean within e, its variance within 2·max|x̂|·e + e².
Measurement standardised(const CheckContext& ctx, const Tensor3& x, const LayerNormParameters<double>& p) {
  const Precision pr = ctx.precision;
  const double u = working_roundoff(pr);
  const std::size_t B = x.shape(0), S = x.shape(1), d = x.shape(2);
  const Tensor3 y = ctx.backend.layer_norm(x, p, kLayerNormEps);
  if (y.shape() != x.shape()) return Measurement::failing(kInfinity, "layer_norm returned a wrong shape");
  const double gmin = xt::amin(xt::abs(p.weight))();
  double worst = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s) {
      double mu = 0, var = 0, m = 0, v = 0;
      for (std::size_t c = 0; c < d; ++c) mu += x(b, s, c);
      mu /= double(d);
      for (std::size_t c = 0; c < d; ++c) var += (x(b, s, c) - mu) * (x(b, s, c) - mu);
      var /= double(d);
      for (std::size_t c = 0; c < d; ++c) m += (y(b, s, c) - p.bias(c)) / p.weight(c);
      m /= double(d);
      for (std::size_t c = 0; c < d; ++c) v += std::pow((y(b, s, c) - p.bias(c)) / p.weight(c) - m, 2);
      v /= double(d);
      double mean_err = std::fabs(m), var_err = std::fabs(v - var / (var + kLayerNormEps));
      if (pr != Precision::float64) {
        const Tensor3 row = xt::view(x, xt::range(b, b + 1), xt::range(s, s + 1), xt::all());
        const double e = layer_bound::layer_norm({row, 0}, p, kLayerNormEps, u).e / gmin;
        const double hmax = std::sqrt(double(d) - 1);  // |x̂| ≤ √(d − 1) at any position
        mean_err /= e;
        var_err /= 2 * hmax * e + e * e;
      }
      worst = worse(worst, mean_err);
      worst = worse(worst, var_err);
    }
  return {worst, ""};
}

// Inputs (B, S, d) from the generator at `scale`·N(0, 1) + `offset`, γ ∈ [0.5, 1.5), β normal, all
// rounded to the precision as the backend holds them. With `offset_in_sigmas`, each position's
// offset is `offset` times that position's own σ (of scale·N(0, 1)), so that |μ|/σ, which sets the
// cancellation in x − μ, is the drawn one whatever the draw.
std::pair<Tensor3, LayerNormParameters<double>> standardise_inputs(Precision pr, torch_rng::Generator& gen, std::size_t B, std::size_t S,
                                                                   std::size_t d, double offset, double scale,
                                                                   bool offset_in_sigmas = false) {
  Tensor3 x = torch_rng::randn<double>(gen, {B, S, d});
  x *= scale;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s) {
      auto row = xt::view(x, b, s, xt::all());
      const double mu = xt::mean(row)(), sigma = std::sqrt(xt::mean(xt::square(row - mu))());
      row += offset_in_sigmas ? offset * sigma : offset;
    }
  x = rounded_to(pr, x);
  LayerNormParameters<double> p;
  p.weight = rounded_to(pr, xt::xtensor<double, 1>(torch_rng::uniform<double>(gen, {d}, 0.5, 1.5)));
  p.bias = rounded_to(pr, xt::xtensor<double, 1>(torch_rng::randn<double>(gen, {d})));
  return {x, p};
}

std::string standardised_words(Precision pr, std::size_t positions, double worst) {
  if (pr != Precision::float64)
    return fmt::format("max over {} positions of |mean x̂| and |var x̂ − σ²/(σ²+ε)|, each over its {} bound: {:.2e}", positions,
                       to_string(pr), worst);
  return fmt::format("max over {} positions of |mean x̂| and |var x̂ − σ²/(σ²+ε)| = {:.2e}", positions, worst);
}

}  // namespace

Measurement layer_norm_standardises(const CheckContext& ctx) {
  // Inputs at several offsets and scales, random γ ∈ [0.5, 1.5), β.
  double worst = 0;
  std::size_t positions = 0;
  const std::vector<std::array<double, 2>> offset_scale = {{0, 1}, {3, 10}, {-50, 0.1}, {1e3, 2}};
  for (std::size_t k = 0; k < offset_scale.size(); ++k) {
    torch_rng::Generator gen(40 + k);
    const std::size_t B = 2, S = 5 + k, d = 8 + 4 * k;
    const auto [x, p] = standardise_inputs(ctx.precision, gen, B, S, d, offset_scale[k][0], offset_scale[k][1]);
    const Measurement r = standardised(ctx, x, p);
    if (!r.unmet.empty()) return r;
    worst = worse(worst, r.value);
    positions += B * S;
  }
  return {worst, standardised_words(ctx.precision, positions, worst)};
}

Measurement layer_norm_standardises_generated(const CheckContext& ctx) {
  // Drawn: B, S, the width d ≤ 20 (the sums the float64 argument counts), the scale (0.1 … 10) and
  // each position's offset, up to 1000 of its own σ (the fixed sweep's offset 10³ at scale 2 puts
  // its positions at |μ|/σ from 430 to 900: the cancellation the float64 tolerance allows for),
  // of either sign.
  const std::vector<CaseTerm> terms = {{"B", 1, 2, 1, {}},
                                       {"S", 1, 6, 1, {}},
                                       {"d", 2, 20, 2, {}},
                                       {"scale", 0, 4, 2, {"0.1", "0.5", "1", "2", "10"}},
                                       {"offset", 0, 6, 3, {"-1000σ", "-100σ", "-10σ", "0", "10σ", "100σ", "1000σ"}}};
  const std::vector<std::vector<int>> anchors = {{2, 5, 8, 2, 3}, {2, 6, 16, 0, 0}, {1, 4, 20, 3, 6}};
  return generated_cases(ctx, terms, anchors, Worse::larger, [&](const vl::Case& c) {
    const double scale = std::array<double, 5>{0.1, 0.5, 1, 2, 10}[std::size_t(c["scale"])];
    const double offset = std::array<double, 7>{-1000, -100, -10, 0, 10, 100, 1000}[std::size_t(c["offset"])];
    torch_rng::Generator gen(c.data_seed());
    const std::size_t B = c["B"], S = c["S"], d = c["d"];
    const auto [x, p] = standardise_inputs(ctx.precision, gen, B, S, d, offset, scale, true);
    Measurement r = standardised(ctx, x, p);
    if (r.unmet.empty())
      r.detail = fmt::format("offset {:g}σ, scale {:g}: {}", offset, scale, standardised_words(ctx.precision, B * S, r.value));
    return r;
  });
}

WidthVerdict width_change_refused(const CheckContext& ctx, const WidthCase& c) {
  // The layer as drawn (d' = d) must be accepted, of the input's shape; the same layer with its
  // FFN's second linear mapping to c.wide ≠ d (its norm, in post-norm, over d') must be refused
  // with std::invalid_argument: everything fits but the residual x + FFN(x).
  torch_rng::Generator gen(c.seed);
  LayerOptions o;
  o.norm_first = c.norm_first;
  auto widen = [&](auto& p, LayerNormParameters<double>& last_norm) {
    p.linear2 = torch_rng::linear_init<double>(gen, c.d_ff, c.wide);
    if (!c.norm_first) last_norm = torch_rng::layer_norm_init<double>(c.wide);
  };
  const Tensor3 x = torch_rng::randn<double>(gen, {c.batch, c.length, c.d});
  WidthVerdict v;
  v.what = fmt::format("{} {}-norm, d = {}, d' = {}", c.decoder ? "decoder" : "encoder", c.norm_first ? "pre" : "post", c.d, c.wide);
  auto encoder = torch_rng::encoder_layer_init<double>(gen, c.d, c.heads, c.d_ff);
  auto decoder_p = torch_rng::decoder_layer_init<double>(gen, c.d, c.heads, c.d_ff);
  const auto layer = [&] {
    return c.decoder ? ctx.backend.decoder_layer(x, x, decoder_p, c.heads, o, {}, {}) : ctx.backend.encoder_layer(x, encoder, c.heads, o, {});
  };
  try {  // the layer as drawn, d' = d: accepted, of the input's shape
    const Tensor3 y = layer();
    if (y.shape() != x.shape()) v.kept_refused = v.what + " (as drawn, d' = d) returned another shape";
  } catch (const std::invalid_argument& e) {
    v.kept_refused = fmt::format("{} (as drawn, d' = d) refused: {}", v.what, e.what());
  }
  if (c.decoder) widen(decoder_p, decoder_p.norm3);
  else widen(encoder, encoder.norm2);
  try {
    const Tensor3 y = layer();
    v.accepted = fmt::format("{} returned ({}, {}, {})", v.what, y.shape(0), y.shape(1), y.shape(2));
  } catch (const backends::Unsupported&) {
    throw;
  } catch (const backends::WrongShape& e) {  // accepted, and answered with a result of another width
    v.accepted = fmt::format("{} returned a result of the wrong shape ({})", v.what, e.what());
  } catch (const std::invalid_argument&) {
    v.refused = true;
  }
  return v;
}

Measurement width_measurement(const std::vector<WidthVerdict>& verdicts) {
  std::size_t refused = 0;
  std::vector<std::string> accepted, kept_refused;
  for (const WidthVerdict& v : verdicts) {
    refused += v.refused;
    if (!v.accepted.empty()) accepted.push_back(v.accepted);
    if (!v.kept_refused.empty()) kept_refused.push_back(v.kept_refused);
  }
  const std::size_t n = verdicts.size();
  const bool all_refused = refused == n;
  Measurement m{double(refused), all_refused ? fmt::format("all {} layers with a width-changing FFN refused (std::invalid_argument)", n)
                                             : fmt::format("{} of {} refused; accepted: {}", refused, n, fmt::join(accepted, "; "))};
  if (kept_refused.empty()) m.detail += ", the same layers with d' = d accepted";
  m.require(kept_refused.empty(), "a layer whose FFN keeps the width was not accepted: " + fmt::format("{}", fmt::join(kept_refused, "; ")));
  return m.require(all_refused, fmt::format("{} of {} layers with a width-changing FFN accepted", n - refused, n));
}

Measurement residual_keeps_width(const CheckContext& ctx) {
  // d = 8, d' = 11, 2 heads, d_ff = 16, 4 tokens; encoder and decoder, post- and pre-norm.
  std::vector<WidthVerdict> verdicts;
  for (bool decoder : {false, true})
    for (bool norm_first : {false, true}) verdicts.push_back(width_change_refused(ctx, {decoder, norm_first, 8, 11, 2, 16, 1, 4, 7}));
  return width_measurement(verdicts);
}

// ---------------------------------------------------------------------------------------------
// Our own code: the torch-compatible initialisation, bit for bit.

Measurement torch_init_bit_exact(const CheckContext& ctx, InitFn encoder_init) {
  double worst = 0;
  std::size_t values = 0;
  for (const Case& c : cases()) {
    torch_rng::Generator gen(c.seed);
    std::vector<double> flat;
    auto collect = [&](const std::string&, const auto& t) { flat.insert(flat.end(), t.begin(), t.end()); };
    if (c.decoder) {
      const auto p = torch_rng::decoder_layer_init<double>(gen, c.d, c.heads, c.d_ff);
      torch_rng::state_entries(p, collect);
    } else {
      const auto p = encoder_init(gen, c.d, c.heads, c.d_ff);
      torch_rng::state_entries(p, collect);
    }
    const xt::xarray<double> want = golden(ctx.goldens, "init." + c.name + ".npy");
    values += want.size();
    if (want.size() != flat.size()) return Measurement::failing(kInfinity, fmt::format("{}: {} values, torch has {}", c.name, flat.size(), want.size()));
    for (std::size_t i = 0; i < flat.size(); ++i) worst = worse(worst, std::fabs(flat[i] - want.flat(i)));
  }
  return {worst,
          fmt::format("max |ours − torch's state_dict()| over {} values of {} layers = {:.1e}", values, cases().size(), worst)};
}

Measurement parameter_counts(const CheckContext& ctx, CountFn decoder_count) {
  // Per layer: 4d² + 4d per attention, 2·d·d_ff + d_ff + d per FFN, 2d per LayerNorm, against
  // torch's count (sum of numel, counts.npy) and our layer's entries.
  const xt::xarray<double> torch_counts = golden(ctx.goldens, "counts.npy");
  double worst = 0;
  std::string all;
  for (std::size_t k = 0; k < cases().size(); ++k) {
    const Case& c = cases()[k];
    const std::size_t d = c.d, attn = 4 * d * d + 4 * d, ffn = 2 * d * c.d_ff + c.d_ff + d, ln = 2 * d;
    const std::size_t formula = c.decoder ? 2 * attn + ffn + 3 * ln : attn + ffn + 2 * ln;
    torch_rng::Generator gen(c.seed);
    const std::size_t ours = c.decoder ? decoder_count(torch_rng::decoder_layer_init<double>(gen, d, c.heads, c.d_ff))
                                       : torch_rng::parameter_count(torch_rng::encoder_layer_init<double>(gen, d, c.heads, c.d_ff));
    const double t = k < torch_counts.size() ? torch_counts(k) : -1;
    worst = std::max({worst, std::fabs(double(ours) - double(formula)), std::fabs(t - double(formula))});
    all += fmt::format("{}{} {}", all.empty() ? "" : ", ", c.name, formula);
  }
  return {worst, fmt::format("max |count − formula| (ours and torch's) = {}; formula: {}", worst, all)};
}

}  // namespace vl::lessons::encoder_decoder
