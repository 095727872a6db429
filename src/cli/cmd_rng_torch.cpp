// lessons rng torch ...: PyTorch CPU random streams written as .npy (vl::torch_rng).
//   normal   --seed S --shape A[,B,...] [--dtype float32|float64] --out F.npy
//            torch.manual_seed(S); torch.randn(A, B, ..., dtype=...)
//   uniform  --seed S --shape A[,B,...] [--dtype ...] [--low L] [--high H] --out F.npy
//            torch.manual_seed(S); torch.empty(A, B, ..., dtype=...).uniform_(L, H)  (default 0, 1)
//   mha-init --seed S --embed-dim D --heads H [--dtype ...] --out-dir DIR
//            torch.manual_seed(S); nn.MultiheadAttention(D, H, dtype=...) -> DIR/in_proj_weight.npy,
//            in_proj_bias.npy, out_proj_weight.npy, out_proj_bias.npy
//   encoder-layer-init / decoder-layer-init --seed S --d-model D --heads H --dim-feedforward F
//            [--dtype ...] --out-dir DIR
//            torch.manual_seed(S); nn.TransformerEncoderLayer(D, H, F, dtype=...) (or Decoder): its
//            state_dict(), one DIR/<name>.npy per entry under torch's names (self_attn.in_proj_weight.npy, ...)
// Every argument is checked here and a bad one throws vl::InputError naming it.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xarray.hpp>

#include "cli/commands.hpp"
#include "cli/numeric_options.hpp"
#include "core/errors.hpp"
#include "numeric/npy.hpp"
#include "numeric/torch_mha_init.hpp"
#include "numeric/torch_random.hpp"
#include "numeric/torch_transformer_init.hpp"

namespace vl::cli {
namespace {

namespace fs = std::filesystem;


/// "float64" -> true, "float32" -> false.
bool parse_dtype_is_double(const std::string& text) {
  if (text == "float64") return true;
  if (text == "float32") return false;
  throw InputError(fmt::format("--dtype: '{}' is not float32 or float64", text));
}

/// A finite double (for --low / --high).
double parse_finite(const std::string& text, const std::string& arg) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isfinite(v)) {
    throw InputError(fmt::format("{}: '{}' is not a finite number", arg, text));
  }
  return v;
}

struct StreamArgs {
  std::string seed, shape, dtype = "float64", out, low = "0", high = "1";
};

// normal / uniform: one tensor drawn from a freshly seeded generator, saved as .npy.
void add_stream_verb(CLI::App& torch, const std::string& name, const std::string& help, bool is_uniform) {
  auto* cmd = torch.add_subcommand(name, help);
  auto a = std::make_shared<StreamArgs>();
  cmd->add_option("--seed", a->seed, "torch.manual_seed value (0 .. 2^64-1)")->required();
  cmd->add_option("--shape", a->shape, "Comma-separated dimensions, e.g. 1,6,16")->required();
  cmd->add_option("--dtype", a->dtype, "float64 (default) or float32");
  cmd->add_option("--out", a->out, "Output .npy file")->required();
  if (is_uniform) {
    cmd->add_option("--low", a->low, "Lower bound (default 0)");
    cmd->add_option("--high", a->high, "Upper bound (default 1)");
  }
  cmd->callback([a, is_uniform] {
    const std::uint64_t seed = parse_unsigned(a->seed, "--seed");
    const std::vector<std::size_t> shape = parse_shape_option(a->shape, /*allow_zero=*/true);
    const bool f64 = parse_dtype_is_double(a->dtype);
    double low = 0, high = 1;
    if (is_uniform) {
      low = parse_finite(a->low, "--low");
      high = parse_finite(a->high, "--high");
      if (!(low <= high)) throw InputError(fmt::format("--low {} is greater than --high {}", a->low, a->high));
      // uniform_real_distribution requires to - from to be finite in the tensor's type.
      const bool finite = f64 ? std::isfinite(high - low)
                              : std::isfinite(static_cast<float>(high) - static_cast<float>(low));
      if (!finite) throw InputError(fmt::format("--low {} / --high {}: the range overflows {}", a->low, a->high, a->dtype));
    }
    if (a->out.empty()) throw InputError("--out: empty path");
    torch_rng::Generator gen(seed);
    if (f64) {
      npy::save(a->out, is_uniform ? torch_rng::uniform<double>(gen, shape, low, high)
                                   : torch_rng::randn<double>(gen, shape));
    } else {
      npy::save(a->out, is_uniform ? torch_rng::uniform<float>(gen, shape, low, high)
                                   : torch_rng::randn<float>(gen, shape));
    }
  });
}

/// --out-dir, created if missing.
fs::path out_dir(const std::string& path) {
  if (path.empty()) throw InputError("--out-dir: empty path");
  const fs::path dir = path;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw InputError(fmt::format("--out-dir: cannot create folder '{}'{}", path, ec ? ": " + ec.message() : ""));
  }
  return dir;
}

struct MhaInitArgs {
  std::string seed, embed_dim, heads, dtype = "float64", out_dir;
};

template <class T>
void save_mha(const fs::path& dir, const torch_rng::MhaParameters<T>& p) {
  npy::save(dir / "in_proj_weight.npy", xt::xarray<T>(p.in_proj_weight));
  npy::save(dir / "in_proj_bias.npy", xt::xarray<T>(p.in_proj_bias));
  npy::save(dir / "out_proj_weight.npy", xt::xarray<T>(p.out_proj_weight));
  npy::save(dir / "out_proj_bias.npy", xt::xarray<T>(p.out_proj_bias));
}

// mha-init: nn.MultiheadAttention's initial parameters, one .npy per tensor.
void add_mha_verb(CLI::App& torch) {
  auto* cmd = torch.add_subcommand("mha-init", "nn.MultiheadAttention(D, H) initial parameters after torch.manual_seed(S)");
  auto a = std::make_shared<MhaInitArgs>();
  cmd->add_option("--seed", a->seed, "torch.manual_seed value (0 .. 2^64-1)")->required();
  cmd->add_option("--embed-dim", a->embed_dim, "embed_dim D")->required();
  cmd->add_option("--heads", a->heads, "num_heads H (must divide D)")->required();
  cmd->add_option("--dtype", a->dtype, "float64 (default) or float32");
  cmd->add_option("--out-dir", a->out_dir, "Folder for the four .npy files (created if missing)")->required();
  cmd->callback([a] {
    const std::uint64_t seed = parse_unsigned(a->seed, "--seed");
    const std::uint64_t d = parse_unsigned(a->embed_dim, "--embed-dim");
    const std::uint64_t h = parse_unsigned(a->heads, "--heads");
    const bool f64 = parse_dtype_is_double(a->dtype);
    // 4 d^2 + 4 d parameters; the bound keeps d^2 far from overflow.
    if (d == 0 || d > 16384) throw InputError(fmt::format("--embed-dim: {} is not in 1..16384", a->embed_dim));
    if (h == 0) throw InputError("--heads: must be positive");
    if (d % h != 0) throw InputError(fmt::format("--embed-dim {} is not divisible by --heads {}", d, h));
    const fs::path dir = out_dir(a->out_dir);
    torch_rng::Generator gen(seed);
    if (f64) {
      save_mha(dir, torch_rng::mha_init<double>(gen, d, h));
    } else {
      save_mha(dir, torch_rng::mha_init<float>(gen, d, h));
    }
  });
}

struct LayerInitArgs {
  std::string seed, d_model, heads, d_ff, dtype = "float64", out_dir;
};

template <class P>
void save_state(const fs::path& dir, const P& p) {
  torch_rng::state_entries(p, [&](const std::string& name, const auto& t) {
    using T = typename std::decay_t<decltype(t)>::value_type;
    npy::save(dir / (name + ".npy"), xt::xarray<T>(t));
  });
}

// encoder-layer-init / decoder-layer-init: a Transformer layer's initial state_dict().
void add_layer_init_verb(CLI::App& torch, bool decoder) {
  auto* cmd = torch.add_subcommand(decoder ? "decoder-layer-init" : "encoder-layer-init",
                                   decoder ? "nn.TransformerDecoderLayer(D, H, F) state_dict() after torch.manual_seed(S)"
                                           : "nn.TransformerEncoderLayer(D, H, F) state_dict() after torch.manual_seed(S)");
  auto a = std::make_shared<LayerInitArgs>();
  cmd->add_option("--seed", a->seed, "torch.manual_seed value (0 .. 2^64-1)")->required();
  cmd->add_option("--d-model", a->d_model, "d_model D")->required();
  cmd->add_option("--heads", a->heads, "nhead H (must divide D)")->required();
  cmd->add_option("--dim-feedforward", a->d_ff, "dim_feedforward F")->required();
  cmd->add_option("--dtype", a->dtype, "float64 (default) or float32");
  cmd->add_option("--out-dir", a->out_dir, "Folder for one .npy per state_dict() entry (created if missing)")->required();
  cmd->callback([a, decoder] {
    const std::uint64_t seed = parse_unsigned(a->seed, "--seed");
    const std::uint64_t d = parse_unsigned(a->d_model, "--d-model");
    const std::uint64_t h = parse_unsigned(a->heads, "--heads");
    const std::uint64_t f = parse_unsigned(a->d_ff, "--dim-feedforward");
    const bool f64 = parse_dtype_is_double(a->dtype);
    if (d == 0 || d > 16384) throw InputError(fmt::format("--d-model: {} is not in 1..16384", a->d_model));
    if (f == 0 || f > 65536) throw InputError(fmt::format("--dim-feedforward: {} is not in 1..65536", a->d_ff));
    if (h == 0) throw InputError("--heads: must be positive");
    if (d % h != 0) throw InputError(fmt::format("--d-model {} is not divisible by --heads {}", d, h));
    const fs::path dir = out_dir(a->out_dir);
    torch_rng::Generator gen(seed);
    if (decoder && f64) save_state(dir, torch_rng::decoder_layer_init<double>(gen, d, h, f));
    else if (decoder) save_state(dir, torch_rng::decoder_layer_init<float>(gen, d, h, f));
    else if (f64) save_state(dir, torch_rng::encoder_layer_init<double>(gen, d, h, f));
    else save_state(dir, torch_rng::encoder_layer_init<float>(gen, d, h, f));
  });
}

}  // namespace

void add_rng_torch(CLI::App& rng) {
  auto* torch = rng.add_subcommand("torch", "PyTorch CPU random streams, bit for bit (torch.manual_seed)");
  torch->require_subcommand(1);
  add_stream_verb(*torch, "normal", "torch.randn(shape, dtype) after torch.manual_seed(S)", false);
  add_stream_verb(*torch, "uniform", "torch.empty(shape, dtype).uniform_(low, high) after torch.manual_seed(S)", true);
  add_mha_verb(*torch);
  add_layer_init_verb(*torch, false);
  add_layer_init_verb(*torch, true);
}

}  // namespace vl::cli
