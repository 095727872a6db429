// Lesson encoder-decoder: the listing (spec: specs/encoder_decoder.md, "The listing").
//
// The article prints no listing for this section; ours, in its style: a 2-layer encoder and
// decoder (d = 16, h = 4, d_ff = 32, post-norm, ReLU) from torch.manual_seed(0) through our
// torch-compatible generator, our kernels written out as LayerNorm(x + Sublayer(x)) against
// torch's modules (the goldens of reference_outputs/generators/encoder_decoder_goldens.py), the parameter
// counts, and the influence table of each of the three roles of the attention.
#include "lessons/encoder_decoder/encoder_decoder.hpp"

#include <fmt/format.h>

#include "kernels/reference/decoder_layer.hpp"
#include "kernels/reference/encoder_layer.hpp"
#include "lessons/encoder_decoder/layer_error_bound.hpp"
#include "numeric/precision.hpp"
#include "numeric/compare.hpp"
#include "numeric/torch_transformer_init.hpp"

namespace vl::lessons::encoder_decoder {

namespace {
void print_table(ListingOutput& out, const std::string& title, const xt::xtensor<double, 2>& table) {
  out.lines.push_back(title + ":");
  for (std::size_t i = 0; i < table.shape(0); ++i) {
    std::string row = fmt::format("  {}:", i);
    for (std::size_t j = 0; j < table.shape(1); ++j) row += fmt::format(" {:.1e}", table(i, j));
    out.lines.push_back(row);
  }
}
}  // namespace

// [encoder-decoder.main]
ListingOutput listing_main(const ListingContext& ctx) {
  const std::size_t d = 16, h = 4, d_ff = 32, n_layers = 2, S = 6, T = 5;
  torch_rng::Generator gen(0);  // torch.manual_seed(0)
  const LayerOptions o;         // post-norm, ReLU, ε = 1e-5
  const Model m = draw_model(gen, d, h, d_ff, n_layers, 1, S, T, o);
  const Tensor3 src_new = torch_rng::randn<double>(gen, {1, S, d});
  const Tensor3 tgt_new = torch_rng::randn<double>(gen, {1, T, d});
  const Tensor3 mem_new = torch_rng::randn<double>(gen, {1, S, d});
  MhaOptions<double> causal;
  causal.causal = true;  // the decoder's tgt_mask: triu(ones(T, T), diagonal=1)

  auto encoder = [&](const Tensor3& x) { return vl::encoder_stack<double>(x, m.encoder, h, o); };
  auto decoder = [&](const Tensor3& x, const Tensor3& memory) { return vl::decoder_stack<double>(x, memory, m.decoder, h, o, causal); };
  const Tensor3 memory = encoder(m.src);
  const Tensor3 out_dec = decoder(m.tgt, memory);

  ListingOutput out;
  const xt::xarray<double> memory0 = xt::view(memory, 0), out0 = xt::view(out_dec, 0);
  out.lines.push_back(fmt::format("encoder, {} strati: nn.TransformerEncoder contro LayerNorm(x + Sottostrato(x)) per esteso, "
                                  "differenza massima = {:.1e}", n_layers, max_abs_diff(golden(ctx.goldens, "main.memory.npy"), memory0)));
  out.lines.push_back(fmt::format("decoder, {} strati: nn.TransformerDecoder contro LayerNorm(x + Sottostrato(x)) per esteso, "
                                  "differenza massima = {:.1e}", n_layers, max_abs_diff(golden(ctx.goldens, "main.out.npy"), out0)));
  // Lines 1-2's residues: ours and torch's stacks each within the stack's float64 bound of the
  // exact one, the layer bound (layer_error_bound.hpp) carried through the layers in turn.
  {
    const double u = unit_roundoff(Precision::float64);
    Bounded enc{m.src, 0};
    for (const auto& p : m.encoder) enc = encoder_layer_bound(enc, p, h, o, {}, u);
    Bounded dec{m.tgt, 0};
    for (const auto& p : m.decoder) dec = decoder_layer_bound(dec, enc, p, h, o, causal, {}, u);
    out.derived_bounds = {{1, 2 * enc.e}, {2, 2 * dec.e}};
  }
  const std::size_t attn = 4 * d * d + 4 * d, ffn = 2 * d * d_ff + d_ff + d, ln = 2 * d;
  out.lines.push_back(fmt::format("parametri per strato: encoder {} = {} + {} + 2*{}, decoder {} = 2*{} + {} + 3*{}",
                                  torch_rng::parameter_count(m.encoder[0]), attn, ffn, ln, torch_rng::parameter_count(m.decoder[0]), attn,
                                  ffn, ln));

  const auto enc_table = influence(encoder, m.src, src_new);
  const auto self_table = influence([&](const Tensor3& x) { return decoder(x, memory); }, m.tgt, tgt_new);
  const auto cross_table = influence([&](const Tensor3& mem) { return decoder(m.tgt, mem); }, memory, mem_new);
  print_table(out, "auto-attenzione dell'encoder (uscita dell'encoder, posizione cambiata in ingresso)", enc_table);
  print_table(out, "auto-attenzione mascherata del decoder (uscita del decoder, posizione cambiata del target)", self_table);
  print_table(out, "attenzione encoder-decoder (uscita del decoder, posizione cambiata della memoria)", cross_table);

  out.arrays["memory"] = memory0;
  out.arrays["out"] = out0;
  out.arrays["enc_influence"] = enc_table;
  out.arrays["self_influence"] = self_table;
  out.arrays["cross_influence"] = cross_table;
  return out;
}
// [encoder-decoder.main]

}  // namespace vl::lessons::encoder_decoder
