// lessons eval encoder-layer | decoder-layer: torch.nn.TransformerEncoderLayer /
// TransformerDecoderLayer (eval mode, batch_first) on anyone's weights and inputs.
//
//   encoder-layer  --x X.npy (B, S, d) or (S, d)
//   decoder-layer  --tgt T.npy (B, T, d) or (T, d)  --memory M.npy (B, S, d) or (S, d)
//   both           --weights DIR  one .npy per entry of the layer's state_dict(), named as torch
//                                 names it (self_attn.in_proj_weight.npy, linear1.bias.npy, ...)
//                  --heads H  [--norm-first] [--activation relu|gelu] [--causal]
//                  [--key-padding-mask K.npy]  bool (B, S): true = that key is padding (the
//                                 layer's self-attention: src's, or tgt's)
//                  [--memory-key-padding-mask K.npy]  (decoder) bool (B, S) over the memory
//                  --out OUT.npy
// The precision is the input's (float32 or float64); every weight must have it and the shape
// torch gives it (d from the input, d_ff from linear1.weight). A missing or mis-shaped weight
// file is named in the error; nothing is written unless the whole layer ran.
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xmanipulation.hpp>

#include "cli/commands.hpp"
#include "cli/eval_inputs.hpp"
#include "cli/eval_outputs.hpp"
#include "kernels/reference/decoder_layer.hpp"
#include "kernels/reference/encoder_layer.hpp"
#include "numeric/torch_transformer_init.hpp"

namespace vl::cli {

namespace {

namespace fs = std::filesystem;
using Shape = std::vector<std::size_t>;

struct LayerArgs {
  std::string x, tgt, memory, weights, activation = "relu", key_padding, memory_key_padding, out;
  std::size_t heads = 0;
  bool norm_first = false, causal = false;
};

/// An input (B, S, d) or (S, d) as (B, S, d).
template <class T>
xt::xtensor<T, 3> sequence_input(const std::string& path, const char* option, Precision p) {
  xt::xarray<T> x = checked_input<T>(path, option, p, 2);
  if (x.dimension() == 2) x = xt::expand_dims(x, 0);
  if (x.dimension() != 3)
    throw InputError(fmt::format("{} {}: {} dimensions, expected (B, S, d) or (S, d)", option, path, x.dimension()));
  return x;
}

/// Every state_dict() entry from `DIR/<name>.npy`, each checked against the shape torch gives it.
template <class T, class P>
P load_layer(const LayerArgs& a, Precision p, std::size_t d) {
  const fs::path dir = a.weights;
  if (!fs::is_directory(dir)) throw InputError(fmt::format("--weights {}: not a folder", a.weights));
  const fs::path l1 = dir / "linear1.weight.npy";
  if (!fs::exists(l1)) throw InputError(fmt::format("--weights {}: missing {} (one .npy per state_dict() entry)", a.weights, l1.string()));
  const npy::Info l1_info = read_npy_info(l1.string(), "--weights");
  if (l1_info.shape.size() != 2 || l1_info.shape[0] == 0)
    throw InputError(fmt::format("--weights: {}: shape {}, expected (dim_feedforward, {})", l1.string(), dims_string(l1_info.shape), d));
  const std::size_t d_ff = l1_info.shape[0];
  P layer;
  torch_rng::state_entries(layer, [&](const std::string& name, auto& tensor) {
    using Tensor = std::decay_t<decltype(tensor)>;
    Shape want;
    if (name.ends_with("in_proj_weight")) want = {3 * d, d};
    else if (name.ends_with("in_proj_bias")) want = {3 * d};
    else if (name.ends_with("out_proj.weight")) want = {d, d};
    else if (name == "linear1.weight") want = {d_ff, d};
    else if (name == "linear1.bias") want = {d_ff};
    else if (name == "linear2.weight") want = {d, d_ff};
    else want = {d};  // out_proj.bias, linear2.bias, norm*.weight, norm*.bias
    const fs::path file = dir / (name + ".npy");
    if (!fs::exists(file)) throw InputError(fmt::format("--weights {}: missing {} (state_dict entry '{}')", a.weights, file.string(), name));
    const xt::xarray<T> w = checked_input<T>(file.string(), "--weights", p, 1);
    const Shape got(w.shape().begin(), w.shape().end());
    if (got != want)
      throw InputError(fmt::format("--weights: {}: shape {}, expected {} (d_model {}, dim_feedforward {})", file.string(), dims_string(got),
                                   dims_string(want), d, d_ff));
    tensor = Tensor(w);
  });
  return layer;
}

xt::xarray<bool> padding_mask(const std::string& path, const char* option, std::size_t batch, std::size_t keys) {
  const npy::Array m = load_npy(path, option);
  if (m.dtype != "bool") throw InputError(fmt::format("{} {}: dtype {}, expected bool (true = padding)", option, path, m.dtype));
  xt::xarray<bool> k = npy::to_xarray<bool>(m);
  if (k.dimension() == 1) k = xt::expand_dims(k, 0);
  if (k.dimension() != 2 || k.shape(0) != batch || k.shape(1) != keys)
    throw InputError(fmt::format("{} {}: shape {}, expected (B, S) = ({}, {})", option, path, dims_string(m.shape), batch, keys));
  return k;
}

LayerOptions layer_options(const LayerArgs& a) {
  LayerOptions o;
  o.norm_first = a.norm_first;
  if (a.activation == "gelu") o.activation = Activation::gelu;
  else if (a.activation != "relu") throw InputError(fmt::format("--activation: '{}' is not relu or gelu", a.activation));
  return o;
}

template <class T>
void save_result(const std::string& path, const xt::xtensor<T, 3>& y) {
  const xt::xarray<T> out = y;
  save_results<T>({{path, "output", &out}});
}

void check_heads(std::size_t heads, std::size_t d) {
  if (heads == 0 || d % heads != 0) throw InputError(fmt::format("--heads {}: must divide d_model {}", heads, d));
}

template <class T>
void eval_encoder(const LayerArgs& a, Precision p) {
  const LayerOptions o = layer_options(a);
  const xt::xtensor<T, 3> x = sequence_input<T>(a.x, "--x", p);
  check_heads(a.heads, x.shape(2));
  const auto layer = load_layer<T, torch_rng::EncoderLayerParameters<T>>(a, p, x.shape(2));
  MhaOptions<T> self;
  self.causal = a.causal;
  if (!a.key_padding.empty()) self.key_padding_mask = padding_mask(a.key_padding, "--key-padding-mask", x.shape(0), x.shape(1));
  xt::xtensor<T, 3> y;
  try {
    y = encoder_layer<T>(x, layer, a.heads, o, self);
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("eval encoder-layer: {}", e.what()));
  }
  save_result<T>(a.out, y);
}

template <class T>
void eval_decoder(const LayerArgs& a, Precision p) {
  const LayerOptions o = layer_options(a);
  const xt::xtensor<T, 3> tgt = sequence_input<T>(a.tgt, "--tgt", p);
  const xt::xtensor<T, 3> memory = sequence_input<T>(a.memory, "--memory", p);
  if (memory.shape(0) != tgt.shape(0) || memory.shape(2) != tgt.shape(2))
    throw InputError(fmt::format("--memory {}: shape {} does not match --tgt's batch and width {}", a.memory,
                                 dims_string({memory.shape().begin(), memory.shape().end()}), dims_string({tgt.shape().begin(), tgt.shape().end()})));
  check_heads(a.heads, tgt.shape(2));
  const auto layer = load_layer<T, torch_rng::DecoderLayerParameters<T>>(a, p, tgt.shape(2));
  MhaOptions<T> self, cross;
  self.causal = a.causal;
  if (!a.key_padding.empty()) self.key_padding_mask = padding_mask(a.key_padding, "--key-padding-mask", tgt.shape(0), tgt.shape(1));
  if (!a.memory_key_padding.empty())
    cross.key_padding_mask = padding_mask(a.memory_key_padding, "--memory-key-padding-mask", memory.shape(0), memory.shape(1));
  xt::xtensor<T, 3> y;
  try {
    y = decoder_layer<T>(tgt, memory, layer, a.heads, o, self, cross);
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("eval decoder-layer: {}", e.what()));
  }
  save_result<T>(a.out, y);
}

void common_options(CLI::App* cmd, LayerArgs& a) {
  cmd->add_option("--weights", a.weights, "folder: one .npy per state_dict() entry, named as torch names it")->required();
  cmd->add_option("--heads", a.heads, "number of heads")->required()->check(CLI::NonNegativeNumber);
  cmd->add_flag("--norm-first", a.norm_first, "pre-norm (torch's norm_first=True); default post-norm");
  cmd->add_option("--activation", a.activation, "relu (default) or gelu");
  cmd->add_flag("--causal", a.causal, "causal mask on the self-attention (the decoder's tgt_mask)");
  cmd->add_option("--key-padding-mask", a.key_padding, "bool (B, S): true = that key of the self-attention is padding");
  cmd->add_option("--out", a.out, "output .npy, the shape of the input")->required();
}

template <class F32, class F64>
void in_precision(const LayerArgs& a, const std::string& path, const char* option, F32 f32, F64 f64) {
  check_output_path(a.out, "--out");
  if (precision_of(read_npy_info(path, option), option, path) == Precision::float32) f32(a, Precision::float32);
  else f64(a, Precision::float64);
}

}  // namespace

void add_eval_layers(CLI::App& eval) {
  auto enc = std::make_shared<LayerArgs>();
  auto* e = eval.add_subcommand("encoder-layer", "torch.nn.TransformerEncoderLayer (eval, batch_first) on your weights and input");
  e->add_option("--x", enc->x, "input (B, S, d) or (S, d)")->required();
  common_options(e, *enc);
  e->callback([enc] { in_precision(*enc, enc->x, "--x", eval_encoder<float>, eval_encoder<double>); });

  auto dec = std::make_shared<LayerArgs>();
  auto* d = eval.add_subcommand("decoder-layer", "torch.nn.TransformerDecoderLayer (eval, batch_first) on your weights and inputs");
  d->add_option("--tgt", dec->tgt, "decoder input (B, T, d) or (T, d)")->required();
  d->add_option("--memory", dec->memory, "the encoder's output (B, S, d) or (S, d)")->required();
  d->add_option("--memory-key-padding-mask", dec->memory_key_padding, "bool (B, S): true = that memory position is padding");
  common_options(d, *dec);
  d->callback([dec] { in_precision(*dec, dec->tgt, "--tgt", eval_decoder<float>, eval_decoder<double>); });
}

}  // namespace vl::cli
