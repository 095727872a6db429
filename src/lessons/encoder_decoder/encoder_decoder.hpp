#pragma once
// Lesson encoder-decoder: one attention in three roles, LayerNorm(x + Sublayer(x)), a decoder
// that decodes as it trains (specs/encoder_decoder.md).
//
// Each claim's check judges the backend it is given through its layer_norm, encoder_layer,
// decoder_layer, decoder_step and shift_right operations; the broken variants it must reject
// are backends too (encoder_decoder_broken_backends.hpp). The layers' weights and inputs are
// drawn by our torch-compatible generator from the cases below, the same that
// reference_outputs/generators/encoder_decoder_goldens.py runs in torch.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xview.hpp>

#include "backends/backend.hpp"
#include "engine/generated_cases.hpp"
#include "engine/lesson.hpp"
#include "numeric/compare.hpp"
#include "numeric/precision.hpp"
#include "numeric/torch_random.hpp"
#include "numeric/torch_transformer_init.hpp"

namespace vl::lessons::encoder_decoder {

using backends::Tensor3;

/// A case of the reference script (its CASES, in the same order).
struct Case {
  std::string name;
  bool decoder;
  std::uint64_t seed;
  std::size_t d, heads, d_ff, layers, batch, S, T;  // S: encoder positions, T: decoder positions
  bool norm_first;
  Activation activation;
  bool padding;  // the last key of batch 0 is padding
  double perturb = 0;  // > 0: every parameter + perturb · randn after the initialisation (perturbed())
};
const std::vector<Case>& cases();

LayerOptions options_of(const Case& c);

/// The reference script's perturbation: every state_dict() entry of the layer += alpha · randn(its
/// shape), drawn from gen in torch's order, so that the attention biases and LayerNorm's β and γ
/// (0, 0 and 1 at torch's initialisation) count. alpha is a power of two: p + alpha·r rounds alike
/// fused or not, so torch's add_(r, alpha=alpha) gives the same bits.
template <class P>
void perturbed(P& layer, torch_rng::Generator& gen, double alpha) {
  torch_rng::state_entries(layer, [&](const std::string&, auto& t) {
    const xt::xarray<double> r = torch_rng::randn<double>(gen, {t.shape().begin(), t.shape().end()});
    for (std::size_t i = 0; i < t.size(); ++i) t.flat(i) += alpha * r.flat(i);
  });
}


/// torch's key_padding_mask of the cases: (B, S), true at the last key of batch 0.
xt::xarray<bool> padding_mask(std::size_t batch, std::size_t s);

/// A golden of reference_outputs/encoder-decoder/ as double.
xt::xarray<double> golden(const std::filesystem::path& goldens, const std::string& name);

// The stacks through a backend: its layer operation, layer after layer (torch's
// TransformerEncoder / TransformerDecoder without a final norm).
Tensor3 encoder_stack(const backends::Backend& b, Tensor3 x, const std::vector<EncoderLayerParameters<double>>& layers,
                      std::size_t heads, const LayerOptions& o, const MhaOptions<double>& self = {});
Tensor3 decoder_stack(const backends::Backend& b, Tensor3 x, const Tensor3& memory, const std::vector<DecoderLayerParameters<double>>& layers,
                      std::size_t heads, const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross = {});

/// In a precision other than float64 a stack is judged layer by layer (specs/encoder_decoder.md,
/// "In float32"): each layer on its input as our float64 stack computes it, rounded once to the
/// precision, with the layer's parameters so rounded and its error bound (layer_error_bound.hpp).
/// `judge(input, layer, bound)` measures one layer of the judged backend; these return the largest.
using EncoderLayerJudge = std::function<double(const Tensor3& input, const EncoderLayerParameters<double>& layer, double bound)>;
using DecoderLayerJudge = std::function<double(const Tensor3& input, const Tensor3& memory, const DecoderLayerParameters<double>& layer,
                                               double bound)>;
double encoder_layers_judged(Precision pr, Tensor3 x, const std::vector<EncoderLayerParameters<double>>& layers, std::size_t heads,
                             const LayerOptions& o, const MhaOptions<double>& self, const EncoderLayerJudge& judge);
double decoder_layers_judged(Precision pr, Tensor3 x, const Tensor3& memory, const std::vector<DecoderLayerParameters<double>>& layers,
                             std::size_t heads, const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross,
                             const DecoderLayerJudge& judge);
/// |got − reference| over the bound (NaN: ∞).
double error_over_bound(const Tensor3& got, const Tensor3& reference, double bound);

/// A small encoder–decoder drawn as the listing draws it: torch.manual_seed(seed), the encoder
/// layer, the decoder layer (each copied `layers` times), src randn(B, S, d), tgt randn(B, T, d).
struct Model {
  std::size_t heads;
  LayerOptions options;
  std::vector<EncoderLayerParameters<double>> encoder;
  std::vector<DecoderLayerParameters<double>> decoder;
  Tensor3 src, tgt;
};
Model draw_model(torch_rng::Generator& gen, std::size_t d, std::size_t heads, std::size_t d_ff, std::size_t layers, std::size_t batch,
                 std::size_t S, std::size_t T, const LayerOptions& o);

/// A generated case's model (engine/generated_cases.hpp): the case's terms batch, heads, d_head
/// (d = heads · d_head), d_ff, layers, norm (post, pre) and activation (relu, gelu), drawn by
/// draw_model from torch's generator seeded `seed`, then every parameter perturbed (0.125·randn
/// from a generator seeded seed + 1), as the fixed sweeps' models are. `gen` is left after the
/// model's draws, for the check's own.
struct CaseModel {
  Model model;
  torch_rng::Generator gen;
};
CaseModel case_model(const vl::Case& c, std::uint64_t seed, std::size_t S, std::size_t T);

/// table(i, j) = max over batches and features of |Δ run(inputs)[·, i]| when input position j
/// is replaced by fresh[·, j].
template <class Run>
xt::xtensor<double, 2> influence(const Run& run, const Tensor3& inputs, const Tensor3& fresh) {
  const Tensor3 base = run(inputs);
  xt::xtensor<double, 2> table = xt::zeros<double>({base.shape(1), inputs.shape(1)});
  for (std::size_t j = 0; j < inputs.shape(1); ++j) {
    Tensor3 changed = inputs;
    xt::view(changed, xt::all(), j) = xt::view(fresh, xt::all(), j);
    const Tensor3 out = run(changed);
    for (std::size_t b = 0; b < out.shape(0); ++b)
      for (std::size_t i = 0; i < out.shape(1); ++i)
        for (std::size_t c = 0; c < out.shape(2); ++c) {
          const double delta = std::fabs(out(b, i, c) - base(b, i, c));
          table(i, j) = worse(table(i, j), delta);
        }
  }
  return table;
}

/// The listing: a 2-layer encoder and decoder, d = 16, h = 4, d_ff = 32, torch.manual_seed(0).
ListingOutput listing_main(const ListingContext& ctx);

// The claims' checks: each measures ctx.backend; the engine judges the value against the spec.
Measurement encoder_matches_torch(const CheckContext& ctx);
Measurement decoder_matches_torch(const CheckContext& ctx);
Measurement layer_norm_standardises(const CheckContext& ctx);
Measurement layer_norm_standardises_generated(const CheckContext& ctx);
Measurement residual_keeps_width(const CheckContext& ctx);
Measurement residual_keeps_width_generated(const CheckContext& ctx);  // encoder_decoder_generated.cpp

/// One layer of encoder-decoder.residual-keeps-width: an encoder or decoder layer of width d
/// (`heads` heads, FFN width d_ff, drawn from torch's generator seeded `seed`) on (batch, length, d)
/// tokens, first as drawn, then with its FFN returning width `wide` ≠ d.
struct WidthCase {
  bool decoder, norm_first;
  std::size_t d, wide, heads, d_ff, batch, length;
  std::uint64_t seed;
};
/// What the backend did: refused the wide layer (std::invalid_argument), or accepted it (what it
/// returned); and whether it refused the layer as drawn (it must not).
struct WidthVerdict {
  std::string what;
  bool refused = false;
  std::string accepted, kept_refused;
};
WidthVerdict width_change_refused(const CheckContext& ctx, const WidthCase& c);
/// The claim's measurement over some layers: the number refused, required to be all of them,
/// with every layer as drawn accepted.
Measurement width_measurement(const std::vector<WidthVerdict>& verdicts);
Measurement encoder_sees_every_position(const CheckContext& ctx);
Measurement decoder_prefix_unchanged(const CheckContext& ctx);
Measurement decoder_prefix_generated(const CheckContext& ctx);  // encoder_decoder_generated.cpp
Measurement cross_attention_reads_encoder(const CheckContext& ctx);
Measurement teacher_forcing(const CheckContext& ctx);
Measurement teacher_forcing_generated(const CheckContext& ctx);
Measurement permutation_equivariance(const CheckContext& ctx);
Measurement permutation_equivariance_generated(const CheckContext& ctx);  // its invariant half

// Claims about our own code (the torch-compatible initialisation), with the piece a control breaks.
using InitFn = torch_rng::EncoderLayerParameters<double> (*)(torch_rng::Generator&, std::size_t, std::size_t, std::size_t);
Measurement torch_init_bit_exact(const CheckContext& ctx, InitFn encoder_init);
using CountFn = std::size_t (*)(const torch_rng::DecoderLayerParameters<double>&);
Measurement parameter_counts(const CheckContext& ctx, CountFn decoder_count);

/// The lesson: listing and checks with their negative controls (encoder_decoder_lesson.cpp).
Lesson lesson();

}  // namespace vl::lessons::encoder_decoder
