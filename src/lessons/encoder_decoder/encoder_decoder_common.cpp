// Lesson encoder-decoder: the cases of the reference script, and the stacks through a backend
// (encoder_decoder.hpp).
#include "lessons/encoder_decoder/encoder_decoder.hpp"

#include "backends/registry.hpp"
#include "lessons/encoder_decoder/layer_error_bound.hpp"
#include "lessons/rounded_parameters.hpp"
#include "numeric/npy.hpp"
#include "numeric/torch_transformer_init.hpp"

namespace vl::lessons::encoder_decoder {

const std::vector<Case>& cases() {
  // reference_outputs/generators/encoder_decoder_goldens.py, CASES: the listing's seed 0 and two arbitrary large
  // ones at torch's initialisation, and two more with every parameter perturbed.
  static const std::vector<Case> all = {
      {"enc_post_relu", false, 0, 16, 4, 32, 1, 2, 6, 0, false, Activation::relu, false},
      {"enc_pre_gelu", false, 918273645, 24, 3, 40, 1, 2, 7, 0, true, Activation::gelu, true},
      {"enc_stack", false, 2718281828, 16, 2, 32, 2, 2, 5, 0, false, Activation::gelu, false},
      {"dec_post_relu", true, 0, 16, 4, 32, 1, 2, 6, 5, false, Activation::relu, false},
      {"dec_pre_gelu", true, 918273645, 24, 3, 40, 1, 2, 7, 4, true, Activation::gelu, true},
      {"dec_stack", true, 2718281828, 16, 2, 32, 2, 2, 5, 6, true, Activation::relu, false},
      {"enc_perturbed", false, 31415926, 16, 4, 32, 2, 2, 6, 0, false, Activation::gelu, true, 0.25},
      {"dec_perturbed", true, 27182818, 16, 2, 24, 2, 2, 5, 6, true, Activation::relu, true, 0.25},
  };
  return all;
}

LayerOptions options_of(const Case& c) {
  LayerOptions o;
  o.norm_first = c.norm_first;
  o.activation = c.activation;
  return o;
}

xt::xarray<bool> padding_mask(std::size_t batch, std::size_t s) {
  xt::xarray<bool> m = xt::zeros<bool>({batch, s});
  m(0, s - 1) = true;
  return m;
}

xt::xarray<double> golden(const std::filesystem::path& goldens, const std::string& name) {
  return npy::load_double(goldens / "encoder-decoder" / name);
}

Tensor3 encoder_stack(const backends::Backend& b, Tensor3 x, const std::vector<EncoderLayerParameters<double>>& layers, std::size_t heads,
                      const LayerOptions& o, const MhaOptions<double>& self) {
  for (const auto& p : layers) x = b.encoder_layer(x, p, heads, o, self);
  return x;
}

Tensor3 decoder_stack(const backends::Backend& b, Tensor3 x, const Tensor3& memory, const std::vector<DecoderLayerParameters<double>>& layers,
                      std::size_t heads, const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross) {
  for (const auto& p : layers) x = b.decoder_layer(x, memory, p, heads, o, self, cross);
  return x;
}

double error_over_bound(const Tensor3& got, const Tensor3& reference, double bound) {
  const double e = max_abs_diff(got, reference) / bound;
  return std::isnan(e) ? kInfinity : e;
}

double encoder_layers_judged(Precision pr, Tensor3 x, const std::vector<EncoderLayerParameters<double>>& layers, std::size_t heads,
                             const LayerOptions& o, const MhaOptions<double>& self, const EncoderLayerJudge& judge) {
  double worst = 0;
  for (const auto& layer : layers) {
    const Tensor3 rx = rounded_to(pr, x);
    const auto rp = rounded_parameters(pr, layer);
    worst = worse(worst, judge(rx, rp, encoder_layer_bound({rx, 0}, rp, heads, o, self, working_roundoff(pr)).e));
    x = backends::plain()->encoder_layer(rx, rp, heads, o, self);
  }
  return worst;
}

double decoder_layers_judged(Precision pr, Tensor3 x, const Tensor3& memory, const std::vector<DecoderLayerParameters<double>>& layers,
                             std::size_t heads, const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross,
                             const DecoderLayerJudge& judge) {
  double worst = 0;
  const Tensor3 rm = rounded_to(pr, memory);
  for (const auto& layer : layers) {
    const Tensor3 rx = rounded_to(pr, x);
    const auto rp = rounded_parameters(pr, layer);
    worst = worse(worst, judge(rx, rm, rp, decoder_layer_bound({rx, 0}, {rm, 0}, rp, heads, o, self, cross, working_roundoff(pr)).e));
    x = backends::plain()->decoder_layer(rx, rm, rp, heads, o, self, cross);
  }
  return worst;
}

Model draw_model(torch_rng::Generator& gen, std::size_t d, std::size_t heads, std::size_t d_ff, std::size_t layers, std::size_t batch,
                 std::size_t S, std::size_t T, const LayerOptions& o) {
  Model m{heads, o, {}, {}, {}, {}};
  m.encoder = torch_rng::stack_of(torch_rng::encoder_layer_init<double>(gen, d, heads, d_ff), layers);
  m.decoder = torch_rng::stack_of(torch_rng::decoder_layer_init<double>(gen, d, heads, d_ff), layers);
  m.src = torch_rng::randn<double>(gen, {batch, S, d});
  m.tgt = torch_rng::randn<double>(gen, {batch, T, d});
  return m;
}

CaseModel case_model(const vl::Case& c, std::uint64_t seed, std::size_t S, std::size_t T) {
  const std::size_t heads = c["heads"], d = heads * std::size_t(c["d_head"]);
  LayerOptions o;
  o.norm_first = c["norm"] == 1;
  o.activation = c["activation"] == 1 ? Activation::gelu : Activation::relu;
  CaseModel r{{}, torch_rng::Generator(seed)};
  r.model = draw_model(r.gen, d, heads, std::size_t(c["d_ff"]), std::size_t(c["layers"]), std::size_t(c["batch"]), S, T, o);
  torch_rng::Generator pg(seed + 1);
  for (auto& layer : r.model.encoder) perturbed(layer, pg, 0.125);
  for (auto& layer : r.model.decoder) perturbed(layer, pg, 0.125);
  return r;
}

}  // namespace vl::lessons::encoder_decoder
