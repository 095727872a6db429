// Lesson encoder-decoder, section "Three roles": who influences whom in the encoder, the masked
// decoder and the encoder–decoder attention; decoding step by step with a KV cache against one
// pass on the shifted target; and the order the encoder cannot see (spec: specs/encoder_decoder.md).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>
#include <xtensor/xsort.hpp>

#include "backends/registry.hpp"
#include "kernels/reference/matmul.hpp"
#include "kernels/reference/positional_encoding.hpp"
#include "engine/generated_cases.hpp"
#include "lessons/encoder_decoder/encoder_decoder.hpp"
#include "lessons/encoder_decoder/layer_error_bound.hpp"
#include "lessons/permutations.hpp"
#include "lessons/rounded_parameters.hpp"
#include "numeric/compare.hpp"
#include "numeric/torch_transformer_init.hpp"

namespace vl::lessons::encoder_decoder {

namespace {

// The models the checks run: post- and pre-norm, ReLU and GELU, 2 layers (the listing's sizes
// and two others), each with inputs and replacement rows drawn after it, and every parameter
// perturbed away from torch's initial values.
struct Drawn {
  Model m;
  Tensor3 src_new, tgt_new, mem_new;
};
std::vector<Drawn> models() {
  struct Spec {
    std::uint64_t seed;
    std::size_t d, h, d_ff, S, T;
    bool norm_first;
    Activation a;
  };
  const std::vector<Spec> specs = {{0, 16, 4, 32, 6, 5, false, Activation::relu},
                                   {11, 12, 3, 24, 7, 6, true, Activation::gelu},
                                   {12, 8, 2, 16, 4, 7, false, Activation::gelu}};
  std::vector<Drawn> all;
  for (const Spec& s : specs) {
    torch_rng::Generator gen(s.seed);
    LayerOptions o;
    o.norm_first = s.norm_first;
    o.activation = s.a;
    Drawn d{draw_model(gen, s.d, s.h, s.d_ff, 2, 2, s.S, s.T, o), {}, {}, {}};
    d.src_new = torch_rng::randn<double>(gen, {2, s.S, s.d});
    d.tgt_new = torch_rng::randn<double>(gen, {2, s.T, s.d});
    d.mem_new = torch_rng::randn<double>(gen, {2, s.S, s.d});
    // Every parameter of every layer perturbed (from a generator of its own, so the draws above
    // stay): the attention biases and LayerNorm's β and γ, 0, 0 and 1 at torch's initialisation,
    // then count in every check below — the decoder step's own output projection among them.
    torch_rng::Generator pg(1000 + s.seed);
    for (auto& layer : d.m.encoder) perturbed(layer, pg, 0.125);
    for (auto& layer : d.m.decoder) perturbed(layer, pg, 0.125);
    all.push_back(std::move(d));
  }
  return all;
}

MhaOptions<double> causal() {
  MhaOptions<double> o;
  o.causal = true;
  return o;
}

Tensor3 encode(const backends::Backend& b, const Model& m, const Tensor3& src) {
  return encoder_stack(b, src, m.encoder, m.heads, m.options);
}
Tensor3 decode(const backends::Backend& b, const Model& m, const Tensor3& tgt, const Tensor3& memory) {
  return decoder_stack(b, tgt, memory, m.decoder, m.heads, m.options, causal());
}

}  // namespace

Measurement encoder_sees_every_position(const CheckContext& ctx) {
  // Replace one input position: every output position of the 2-layer encoder moves by at least
  // the tolerance (a lower bound here). Value: the smallest entry of the influence tables.
  double least = kInfinity;
  bool finite = true;  // a NaN or ∞ output "moves" by ∞ (numeric/compare.hpp): it must not pass
  for (const Drawn& d : models()) {
    const auto t = influence([&](const Tensor3& x) { return encode(ctx.backend, d.m, x); }, d.m.src, d.src_new);
    least = std::min(least, xt::amin(t)());
    finite = finite && all_finite(t);
  }
  Measurement m{least, fmt::format("smallest |Δ output i| over all (i, changed j), 3 encoders: {:.2e}", least)};
  return m.require(finite, "an output is NaN or infinite: its change says nothing");
}

Measurement decoder_prefix_unchanged(const CheckContext& ctx) {
  // Replace target positions ≥ p (p = 1 … T − 1): decoder outputs < p bit-identical through both
  // layers; the outputs ≥ p must move (else nothing was tested).
  double worst = 0, least_moved = kInfinity;
  std::size_t runs = 0;
  for (const Drawn& d : models()) {
    const Tensor3 memory = encode(ctx.backend, d.m, d.m.src);
    const Tensor3 base = decode(ctx.backend, d.m, d.m.tgt, memory);
    const std::size_t T = d.m.tgt.shape(1);
    for (std::size_t p = 1; p < T; ++p, ++runs) {
      Tensor3 changed = d.m.tgt;
      xt::view(changed, xt::all(), xt::range(p, T)) = xt::view(d.tgt_new, xt::all(), xt::range(p, T));
      const Tensor3 out = decode(ctx.backend, d.m, changed, memory);
      if (out.shape() != base.shape()) return Measurement::failing(kInfinity, "the decoder returned a wrong shape");
      worst = worse(worst, max_abs_diff(xt::xtensor<double, 3>(xt::view(out, xt::all(), xt::range(0, p))),
                                    xt::xtensor<double, 3>(xt::view(base, xt::all(), xt::range(0, p)))));
      least_moved = std::min(least_moved, max_abs_diff(xt::xtensor<double, 3>(xt::view(out, xt::all(), xt::range(p, T))),
                                                   xt::xtensor<double, 3>(xt::view(base, xt::all(), xt::range(p, T)))));
    }
  }
  Measurement m{worst, fmt::format("{} runs: max |Δ output < p| = {:.1e}; outputs ≥ p moved by at least {:.2e}", runs, worst, least_moved)};
  return m.require(least_moved > 0, "an output at or after a changed position did not move: the inputs tested nothing");
}

Measurement cross_attention_reads_encoder(const CheckContext& ctx) {
  // Replace one position of the memory (the encoder's output): every decoder position moves by
  // at least the tolerance. Value: the smallest entry of the tables.
  double least = kInfinity;
  bool finite = true;  // as above: a NaN or ∞ output must not pass as "moved"
  for (const Drawn& d : models()) {
    const Tensor3 memory = encode(ctx.backend, d.m, d.m.src);
    const auto t = influence([&](const Tensor3& mem) { return decode(ctx.backend, d.m, d.m.tgt, mem); }, memory, d.mem_new);
    least = std::min(least, xt::amin(t)());
    finite = finite && all_finite(t);
  }
  Measurement m{least, fmt::format("smallest |Δ decoder output i| over all (i, changed memory j), 3 models: {:.2e}", least)};
  return m.require(finite, "a decoder output is NaN or infinite: its change says nothing");
}

namespace {

// One model's greedy decoding against its one pass on the shifted target (teacher_forcing, below);
// tokens (B, T) over V = 11, E and W (V, d), decoder outputs (B, T, d), memory (B, S, d):
// the gap — in float64 the largest difference, in another precision layer by layer over twice the
// layer's bound — or a failing measurement (a wrong shape; with `must_change_token`, a sequence
// that repeats one token, which would read the same shifted or not). `steps` counts the steps.
Measurement teacher_forcing_model(const CheckContext& ctx, const Model& m, bool must_change_token, std::size_t& steps) {
  const std::size_t V = 11;
  const std::size_t B = m.tgt.shape(0), T = m.tgt.shape(1), dm = m.tgt.shape(2);
  torch_rng::Generator gen(99);
  const xt::xtensor<double, 2> E = torch_rng::randn<double>(gen, {V, dm});
  const xt::xtensor<double, 2> W = torch_rng::randn<double>(gen, {V, dm});
  const xt::xtensor<double, 2> pe = positional_encoding<double>(T, dm);
  // In another precision the greedy tokens and the memory are our float64 model's, the
  // backend's layers judged on them one by one (below).
  const backends::Backend& run = ctx.precision == Precision::float64 ? ctx.backend : *backends::plain();
  const Tensor3 memory = encode(run, m, m.src);
  std::vector<LayerCache<double>> caches(m.decoder.size());
  std::vector<std::vector<std::size_t>> tokens(B, std::vector<std::size_t>{0});
  Tensor3 stepped = xt::zeros<double>({B, T, dm});
  for (std::size_t t = 0; t < T; ++t, ++steps) {
    Tensor3 x = xt::zeros<double>({B, std::size_t(1), dm});
    for (std::size_t b = 0; b < B; ++b) xt::view(x, b, 0) = xt::view(E, tokens[b][t]) + xt::view(pe, t);
    for (std::size_t l = 0; l < m.decoder.size(); ++l) x = run.decoder_step(x, memory, m.decoder[l], m.heads, m.options, caches[l], {});
    if (x.shape() != std::array<std::size_t, 3>{B, 1, dm}) return Measurement::failing(kInfinity, "decoder_step returned a wrong shape");
    xt::view(stepped, xt::all(), t) = xt::view(x, xt::all(), 0);
    for (std::size_t b = 0; b < B; ++b) {
      const xt::xtensor<double, 1> scores = matvec<double>(W, xt::view(x, b, 0));
      tokens[b].push_back(std::size_t(xt::argmax(scores)()));
    }
  }
  if (must_change_token)
    for (std::size_t b = 0; b < B; ++b)
      if (std::adjacent_find(tokens[b].begin(), tokens[b].end(), std::not_equal_to<>()) == tokens[b].end())
        return Measurement::failing(kInfinity, fmt::format("greedy decoding repeated token {} throughout: the check tested nothing", tokens[b][0]));
  Tensor3 target = xt::zeros<double>({B, T, dm});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t) xt::view(target, b, t) = xt::view(E, tokens[b][t + 1]);
  Tensor3 input = ctx.backend.shift_right(target, xt::xtensor<double, 1>(xt::view(E, 0)));
  if (input.shape() != target.shape()) return Measurement::failing(kInfinity, "shift_right returned a wrong shape");
  input += xt::view(pe, xt::newaxis(), xt::all(), xt::all());
  if (ctx.precision == Precision::float64) return {max_abs_diff(decode(ctx.backend, m, input, memory), stepped), ""};
  // In another precision, layer by layer (decoder_layers_judged): each layer's input as our
  // float64 decoder computes it on the pass's input (the backend's shift_right), one pass against
  // the steps with the cache, both of the judged backend; each within the layer's bound of the
  // exact layer, so the gap over twice it. The first layer's steps read what greedy decoding
  // fed them, E[y_t] + PE(t): a shift_right that does not shift shows there.
  Tensor3 step_input = xt::zeros<double>({B, T, dm});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t)  // E's rows as the pass's shift_right holds them: rounded, then + PE
      xt::view(step_input, b, t) = rounded_to(ctx.precision, xt::xtensor<double, 1>(xt::view(E, tokens[b][t]))) + xt::view(pe, t);
  std::size_t layer_index = 0;
  return {decoder_layers_judged(ctx.precision, input, memory, m.decoder, m.heads, m.options, causal(), {},
                                [&](const Tensor3& in, const Tensor3& mem, const auto& layer, double bound) {
                                  const Tensor3 pass = ctx.backend.decoder_layer(in, mem, layer, m.heads, m.options, causal(), {});
                                  const Tensor3 fed = layer_index++ == 0 ? rounded_to(ctx.precision, step_input) : in;
                                  LayerCache<double> cache;
                                  Tensor3 stepped_layer = xt::zeros_like(pass);
                                  for (std::size_t t = 0; t < T; ++t) {
                                    const Tensor3 x_t = xt::view(fed, xt::all(), xt::range(t, t + 1));
                                    const Tensor3 y = ctx.backend.decoder_step(x_t, mem, layer, m.heads, m.options, cache, {});
                                    if (y.shape() != x_t.shape()) return kInfinity;
                                    xt::view(stepped_layer, xt::all(), t) = xt::view(y, xt::all(), 0);
                                  }
                                  return error_over_bound(pass, stepped_layer, 2 * bound);
                                }),
          ""};
}

std::string teacher_forcing_words(const CheckContext& ctx, std::size_t steps, double worst) {
  return fmt::format("max |one pass on the shifted target − {} greedy steps with the KV cache|{} = {:.2e}", steps,
                     ctx.precision == Precision::float64 ? "" : ", layer by layer, over twice the layer's " + to_string(ctx.precision) + " bound",
                     worst);
}

}  // namespace

Measurement teacher_forcing(const CheckContext& ctx) {
  // Greedy decoding: token y₀ = 0 (the start), then at step t the decoder, one position at a
  // time through decoder_step and each layer's KV cache, gives o_t; y_{t+1} = argmax_v o_t · W_v
  // over an output projection W (V, d); the input at t is E[y_t] + PE(t), E (V, d) an embedding
  // table; both drawn here. Teacher forcing: one pass of the masked decoder on
  // shift_right(E[y₁ … y_T], E[y₀]) + PE. The two sets of outputs must agree to round-off. A
  // sequence that repeats one token would read the same shifted or not: each must change token
  // at least once, or the check has tested nothing.
  double worst = 0;
  std::size_t steps = 0;
  for (const Drawn& d : models()) {
    const Measurement r = teacher_forcing_model(ctx, d.m, true, steps);
    if (!r.unmet.empty()) return r;
    worst = worse(worst, r.value);
  }
  return {worst, teacher_forcing_words(ctx, steps, worst)};
}

Measurement teacher_forcing_generated(const CheckContext& ctx) {
  // Drawn models (the prefix check's terms, perturbed the same way), one or two layers. The model
  // is the first one, from the case's data seed on (two seeds per try: weights, perturbation),
  // whose greedy tokens change under our plain float64 decoder, so that every case, the anchors
  // among them, tests the shift (a target not shifted reads the same as one that repeats a token);
  // the judged backend is then not required to change token (its near-tied argmax may differ).
  const std::vector<CaseTerm> terms = {{"batch", 1, 2, 1, {}},  {"heads", 1, 4, 1, {}},  {"d_head", 4, 8, 4, {}},
                                       {"d_ff", 1, 24, 1, {}},  {"layers", 1, 2, 1, {}}, {"S", 1, 6, 1, {}},
                                       {"T", 1, 7, 1, {}},      {"norm", 0, 1, 0, {"post", "pre"}},
                                       {"activation", 0, 1, 0, {"relu", "gelu"}}};
  const std::vector<std::vector<int>> anchors = {{2, 4, 4, 32, 2, 6, 5, 0, 0}, {2, 3, 4, 24, 2, 7, 6, 1, 1}};
  return generated_cases(ctx, terms, anchors, Worse::larger, [&](const vl::Case& c) {
    CheckContext ours = ctx.judging(*backends::plain());
    ours.precision = Precision::float64;
    std::size_t steps = 0;
    for (std::uint64_t seed = c.data_seed(), tries = 0;; seed += 2, ++tries) {
      if (tries == 32) throw std::logic_error("teacher_forcing_generated: no model whose greedy tokens change in 32 draws");
      const Model m = case_model(c, seed, std::size_t(c["S"]), std::size_t(c["T"])).model;
      if (!teacher_forcing_model(ours, m, true, steps).unmet.empty()) continue;  // a repeated token: the next model
      steps = 0;
      Measurement r = teacher_forcing_model(ctx, m, false, steps);
      if (r.unmet.empty()) r.detail = teacher_forcing_words(ctx, steps, r.value);
      return r;
    }
  });
}

namespace {

// x's positions (axis 1) in the order perm: r[:, i] = a[:, perm[i]].
Tensor3 permuted_positions(const Tensor3& a, const std::vector<std::int64_t>& perm) {
  Tensor3 r = a;
  for (std::size_t i = 0; i < perm.size(); ++i) xt::view(r, xt::all(), i) = xt::view(a, xt::all(), std::size_t(perm[i]));
  return r;
}

// Without positions, encoder(x[perm]) against encoder(x)[perm] for the model's encoder on x: in
// float64 the largest difference; in another precision layer by layer (encoder_layers_judged),
// each order within the layer's bound of the exact layer, so their gap over twice it.
double encoder_equivariance_gap(const CheckContext& ctx, const Model& m, const Tensor3& x, const std::vector<std::int64_t>& perm) {
  const auto permuted = [&](const Tensor3& a) { return permuted_positions(a, perm); };
  if (ctx.precision == Precision::float64) return max_abs_diff(encode(ctx.backend, m, permuted(x)), permuted(encode(ctx.backend, m, x)));
  const auto layer_of = [&](const Tensor3& in, const EncoderLayerParameters<double>& layer) {
    return ctx.backend.encoder_layer(in, layer, m.heads, m.options, {});
  };
  return encoder_layers_judged(ctx.precision, x, m.encoder, m.heads, m.options, {}, [&](const Tensor3& in, const auto& layer, double bound) {
    return error_over_bound(layer_of(permuted(in), layer), permuted(layer_of(in, layer)), 2 * bound);
  });
}

}  // namespace

Measurement permutation_equivariance(const CheckContext& ctx) {
  // Without positions: encoder(x[perm]) = encoder(x)[perm] to the tolerance; with the sinusoidal
  // encoding added to the tokens (positions fixed) the two differ by at least 1e-2.
  double worst = 0, least_broken = kInfinity;
  for (const Drawn& d : models()) {
    const Tensor3& x = d.m.src;
    const std::size_t S = x.shape(1);
    torch_rng::Generator pg(5);
    const std::vector<std::int64_t> perm = non_identity_permutations(pg, std::int64_t(S), 1, "encoder-decoder.permutation-equivariance")[0];
    auto permuted = [&](const Tensor3& a) { return permuted_positions(a, perm); };
    const Tensor3 pe = xt::view(positional_encoding<double>(S, x.shape(2)), xt::newaxis(), xt::all(), xt::all()) * xt::ones<double>(x.shape());
    worst = worse(worst, encoder_equivariance_gap(ctx, d.m, x, perm));
    if (ctx.precision == Precision::float64) {
      least_broken = std::min(least_broken, max_abs_diff(encode(ctx.backend, d.m, permuted(x) + pe), permuted(encode(ctx.backend, d.m, x + pe))));
      continue;
    }
    // In another precision, with positions, the first layer's gap less both sides' bounds must
    // still reach 1e-2.
    const auto layer_of = [&](const Tensor3& in, const EncoderLayerParameters<double>& layer) {
      return ctx.backend.encoder_layer(in, layer, d.m.heads, d.m.options, {});
    };
    // The first layer with positions: each side on its own rounded input, within its own bound.
    const Precision pr = ctx.precision;
    const auto first = rounded_parameters(pr, d.m.encoder.front());
    const Tensor3 in = rounded_to(pr, Tensor3(x + pe)), moved = rounded_to(pr, Tensor3(permuted(x) + pe));
    const auto bound_at = [&](const Tensor3& input) {
      return encoder_layer_bound({input, 0}, first, d.m.heads, d.m.options, {}, working_roundoff(pr)).e;
    };
    least_broken = std::min(least_broken, max_abs_diff(layer_of(moved, first), permuted(layer_of(in, first))) - bound_at(in) -
                                              bound_at(moved));
  }
  Measurement m{worst, fmt::format("without positions max |enc(x[perm]) − enc(x)[perm]|{} = {:.1e}; with them at least {:.2e} (≥ 1e-2 "
                                   "required)",
                                   ctx.precision == Precision::float64 ? "" : ", layer by layer, over twice the layer's " + to_string(ctx.precision) + " bound",
                                   worst, least_broken)};
  // The claim's second half, with its own number (the statement's "by at least 1e-2").
  return m.require(least_broken >= 1e-2, fmt::format("with positions added the two differ by only {:.2e} (< 1e-2)", least_broken));
}

Measurement permutation_equivariance_generated(const CheckContext& ctx) {
  // The claim's invariant half over drawn encoders (the prefix check's model terms: width, heads,
  // FFN width, one or two layers, norm, activation, every parameter perturbed), batch, length and
  // a permutation other than the identity. Its lower bound (with positions, a difference of at
  // least 1e-2) stays on the sweep's models: a drawn input can make it as small as it likes.
  const std::vector<CaseTerm> terms = {{"batch", 1, 2, 1, {}},  {"heads", 1, 4, 1, {}},  {"d_head", 4, 8, 4, {}},
                                       {"d_ff", 1, 24, 1, {}},  {"layers", 1, 2, 1, {}}, {"S", 2, 7, 2, {}},
                                       {"norm", 0, 1, 0, {"post", "pre"}}, {"activation", 0, 1, 0, {"relu", "gelu"}}};
  const std::vector<std::vector<int>> anchors = {{2, 4, 4, 32, 2, 6, 0, 0}, {2, 3, 4, 24, 2, 7, 1, 1}};
  return generated_cases(ctx, terms, anchors, Worse::larger, [&](const vl::Case& c) {
    const std::size_t S = c["S"];
    const Model m = case_model(c, c.data_seed(), S, 1).model;
    torch_rng::Generator pg(c.data_seed() + 2);
    const std::vector<std::int64_t> perm = non_identity_permutations(pg, std::int64_t(S), 1, "encoder-decoder.permutation-equivariance")[0];
    const double g = encoder_equivariance_gap(ctx, m, m.src, perm);
    return Measurement{g, fmt::format("S={}: without positions max |enc(x[perm]) − enc(x)[perm]|{} = {:.1e}", S,
                                      ctx.precision == Precision::float64 ? "" : ", layer by layer, over twice the layer's " + to_string(ctx.precision) + " bound",
                                      g)};
  });
}

}  // namespace vl::lessons::encoder_decoder
