// lessons rng ...: reproducible random arrays written as .npy.
//   rng numpy normal|uniform --seed S --shape A[,B,...] [--dtype float64|float32] --out F.npy
//       rng = np.random.default_rng(S)
//       normal:  rng.standard_normal((A, B, ...), dtype=...)
//       uniform: rng.random((A, B, ...), dtype=...)
//   rng torch ...  (cmd_rng_torch.cpp)
// Every argument is checked here; a bad one throws vl::InputError naming it (exit status 2).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xarray.hpp>

#include "cli/commands.hpp"
#include "cli/numeric_options.hpp"
#include "core/errors.hpp"
#include "numeric/npy.hpp"
#include "numeric/numpy_format.hpp"
#include "numeric/numpy_random.hpp"

namespace vl::cli {
namespace {


struct NumpyArgs {
  std::string distribution, seed, shape, dtype = "float64", out;
};

// Draws one array from a freshly seeded np.random.default_rng(S) and saves it; npy::save
// is atomic, and its InputError already names the output path.
void run_numpy(const NumpyArgs& a) {
  const bool normal = a.distribution == "normal";
  if (!normal && a.distribution != "uniform") {
    throw InputError(fmt::format("distribution: '{}' is not normal or uniform", a.distribution));
  }
  const numpy::uint128 seed = numpy::parse_seed(a.seed, "--seed");
  const std::vector<std::size_t> shape = parse_shape_option(a.shape, /*allow_zero=*/false);
  if (a.dtype != "float64" && a.dtype != "float32") {
    throw InputError(fmt::format("--dtype: '{}' is not float64 or float32", a.dtype));
  }
  if (a.out.empty()) throw InputError("--out: empty path");
  numpy::Generator rng{numpy::SeedSequence(seed)};
  try {
    if (a.dtype == "float64") {
      npy::save(a.out, normal ? rng.standard_normal(shape) : rng.random(shape));
    } else {
      npy::save(a.out, normal ? rng.standard_normal_f32(shape) : rng.random_f32(shape));
    }
  } catch (const InputError& e) {
    throw InputError(fmt::format("--out: {}", e.what()));
  }
  fmt::print("wrote {}: np.random.default_rng({}).{}({}, dtype={})\n", a.out, a.seed,
             normal ? "standard_normal" : "random", numpy::format_shape(shape), a.dtype);
}

void add_numpy_verb(CLI::App& rng) {
  auto* cmd = rng.add_subcommand("numpy", "NumPy streams, bit for bit: np.random.default_rng(S)");
  auto a = std::make_shared<NumpyArgs>();
  cmd->add_option("distribution", a->distribution, "normal (standard_normal) or uniform (random)")->required();
  cmd->add_option("--seed", a->seed, "default_rng seed (0 .. 2^128-1, decimal)")->required();
  cmd->add_option("--shape", a->shape, "Comma-separated positive dimensions, e.g. 6,4")->required();
  cmd->add_option("--dtype", a->dtype, "float64 (default) or float32");
  cmd->add_option("--out", a->out, "Output .npy file")->required();
  cmd->callback([a] { run_numpy(*a); });
}

}  // namespace

void add_rng_command(CLI::App& app) {
  auto* rng = app.add_subcommand("rng", "Random arrays exactly as NumPy / PyTorch draw them, as .npy");
  rng->require_subcommand(1);
  add_numpy_verb(*rng);
  add_rng_torch(*rng);
}

}  // namespace vl::cli
