// Lesson encoder-decoder: the checks of its claims, each with the broken backends it must reject
// (encoder_decoder_broken_backends.hpp, decorators over our plain backend), and the two claims
// about our own code with the piece of it their controls break.
#include <memory>
#include <vector>

#include "backends/registry.hpp"
#include "lessons/encoder_decoder/encoder_decoder.hpp"
#include "lessons/encoder_decoder/encoder_decoder_broken_backends.hpp"
#include "numeric/torch_transformer_init.hpp"

namespace vl::lessons::encoder_decoder {

namespace {

// Broken initialisation: linear2 drawn before linear1 (the construction order swapped).
torch_rng::EncoderLayerParameters<double> linears_swapped(torch_rng::Generator& gen, std::size_t d, std::size_t h, std::size_t d_ff) {
  torch_rng::EncoderLayerParameters<double> p;
  p.self_attn = torch_rng::mha_init<double>(gen, d, h);
  p.linear2 = torch_rng::linear_init<double>(gen, d_ff, d);
  p.linear1 = torch_rng::linear_init<double>(gen, d, d_ff);
  p.norm1 = p.norm2 = torch_rng::layer_norm_init<double>(d);
  return p;
}

// Broken count: LayerNorm counted as d (its bias forgotten).
std::size_t norm_bias_forgotten(const torch_rng::DecoderLayerParameters<double>& p) {
  return torch_rng::parameter_count(p) - p.norm1.bias.size() - p.norm2.bias.size() - p.norm3.bias.size();
}

}  // namespace

Lesson lesson() {
  Lesson l;
  l.id = "encoder-decoder";
  l.spec_file = "specs/encoder_decoder.md";
  l.listings.push_back({"encoder-decoder.main", "vl::lessons::encoder_decoder::listing_main", listing_main});

  const auto plain = backends::plain();
  const auto swapped = std::make_shared<NormOrderSwapped>(plain, "post-norm-swapped-for-pre-norm");
  const auto no_residual = std::make_shared<ResidualDropped>(plain, "residual-dropped");
  const auto cross_self = std::make_shared<CrossReadsDecoder>(plain, "cross-attention-kv-from-decoder");

  l.checks.push_back({"encoder-decoder.encoder-matches-torch", "3 encoder cases (post/pre-norm, ReLU/GELU, padding, 2-layer stack) vs torch 1.13",
                      encoder_matches_torch,
                      {broken_backend("post-norm swapped for pre-norm", swapped), broken_backend("the residual dropped", no_residual)}});
  l.checks.push_back({"encoder-decoder.decoder-matches-torch", "3 decoder cases (post/pre-norm, ReLU/GELU, memory padding, 2-layer stack) vs torch 1.13",
                      decoder_matches_torch,
                      {broken_backend("post-norm swapped for pre-norm", swapped), broken_backend("cross-attention reading K/V from the decoder", cross_self)}});
  const std::vector<NegativeControl> layer_norm_controls = {
      broken_backend("LayerNorm over the wrong axis (the positions)", std::make_shared<LayerNormWrongAxis>(plain, "layer-norm-over-positions"))};
  l.checks.push_back({"encoder-decoder.layer-norm-standardises", "x̂ = (y − β)/γ per position: mean 0, variance σ²/(σ²+ε), 4 offsets and scales",
                      layer_norm_standardises, layer_norm_controls});
  l.checks.push_back({"encoder-decoder.layer-norm-standardises", "generated cases: B, S, d ≤ 20, scale 0.1 … 10, each position offset by up to ±1000 of its σ",
                      layer_norm_standardises_generated, layer_norm_controls});
  const std::vector<NegativeControl> width_controls = {broken_backend("the residual dropped", no_residual)};
  l.checks.push_back({"encoder-decoder.residual-keeps-width", "a FFN back to d' ≠ d refused and d' = d accepted, encoder and decoder, post- and pre-norm",
                      residual_keeps_width, width_controls});
  l.checks.push_back({"encoder-decoder.residual-keeps-width", "generated cases: any width, heads and FFN width, d' narrower or wider",
                      residual_keeps_width_generated, width_controls});
  l.checks.push_back({"encoder-decoder.encoder-sees-every-position", "influence table of the 2-layer encoder, 3 models",
                      encoder_sees_every_position,
                      {broken_backend("the encoder given the causal mask", std::make_shared<EncoderWithCausalMask>(plain, "encoder-causal"))}});
  const std::vector<NegativeControl> prefix_controls = {
      broken_backend("the decoder's self-attention without its mask", std::make_shared<DecoderWithoutMask>(plain, "decoder-unmasked")),
      broken_backend("cross-attention reading K/V from the decoder", cross_self)};
  l.checks.push_back({"encoder-decoder.decoder-prefix-unchanged", "target positions ≥ p redrawn, p = 1 … T − 1, 2-layer decoder, 3 models",
                      decoder_prefix_unchanged,
                      prefix_controls});
  l.checks.push_back({"encoder-decoder.decoder-prefix-unchanged", "generated cases: width, heads, depth, norm, activation, lengths, p",
                      decoder_prefix_generated,
                      prefix_controls});
  l.checks.push_back({"encoder-decoder.cross-attention-reads-encoder", "influence of each memory position on each decoder position, 3 models",
                      cross_attention_reads_encoder, {broken_backend("cross-attention reading K/V from the decoder", cross_self)}});
  const std::vector<NegativeControl> teacher_controls = {
      broken_backend("the target not shifted", std::make_shared<TargetNotShifted>(plain, "target-not-shifted")),
      broken_backend("the KV cache not appended (replaced)", std::make_shared<CacheNotAppended>(plain, "kv-cache-not-appended"))};
  l.checks.push_back({"encoder-decoder.teacher-forcing", "one pass on the shifted target vs greedy steps with a KV cache, 3 models × 2 sequences",
                      teacher_forcing, teacher_controls});
  l.checks.push_back({"encoder-decoder.teacher-forcing", "generated cases: width, heads, FFN width, 1–2 layers, norm, activation, lengths",
                      teacher_forcing_generated, teacher_controls});
  const std::vector<NegativeControl> equivariance_controls = {
      broken_backend("the encoder given the causal mask", std::make_shared<EncoderWithCausalMask>(plain, "encoder-causal"))};
  l.checks.push_back({"encoder-decoder.permutation-equivariance", "2-layer encoders without and with the sinusoidal encoding, 3 models",
                      permutation_equivariance, equivariance_controls});
  l.checks.push_back({"encoder-decoder.permutation-equivariance", "generated cases, without positions: drawn encoders, batch, length, permutation",
                      permutation_equivariance_generated, equivariance_controls});

  l.checks.push_back({"encoder-decoder.torch-init", "6 layers' state_dict() from 3 seeds vs torch's, bit for bit",
                      [](const CheckContext& c) { return torch_init_bit_exact(c, torch_rng::encoder_layer_init<double>); },
                      {broken_code("linear2 drawn before linear1", [](const CheckContext& c) { return torch_init_bit_exact(c, linears_swapped); })}});
  l.checks.push_back({"encoder-decoder.parameter-count", "6 layers: ours, torch's and the formula",
                      [](const CheckContext& c) { return parameter_counts(c, torch_rng::parameter_count<torch_rng::DecoderLayerParameters<double>>); },
                      {broken_code("LayerNorm counted as d (its bias forgotten)", [](const CheckContext& c) { return parameter_counts(c, norm_bias_forgotten); })}});
  return l;
}

}  // namespace vl::lessons::encoder_decoder
