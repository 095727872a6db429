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
#include "engine/errors.hpp"
#include "numeric/npy.hpp"
#include "numeric/numpy_format.hpp"
#include "numeric/numpy_random.hpp"

namespace vl::cli {
namespace {

// Most elements one command may draw (2^31): keeps a typo from filling the disk.
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 31;

/// "A,B,C" -> {A, B, C}: each dimension a positive decimal integer, kMaxElements at most in all.
std::vector<std::size_t> parse_positive_shape(const std::string& text) {
  if (text.empty()) throw InputError("--shape: empty; expected positive dimensions A[,B,...]");
  std::vector<std::size_t> shape;
  std::uint64_t total = 1;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (part.empty() || part.size() > 12 || part.find_first_not_of("0123456789") != std::string::npos) {
      throw InputError(fmt::format("--shape: '{}': dimension '{}' is not a positive integer", text, part));
    }
    const std::uint64_t dim = std::stoull(part);
    if (dim == 0) throw InputError(fmt::format("--shape: '{}': dimensions must be positive", text));
    if (dim > kMaxElements || total > kMaxElements / dim) {
      throw InputError(fmt::format("--shape: '{}' has more than {} elements", text, kMaxElements));
    }
    total *= dim;
    shape.push_back(static_cast<std::size_t>(dim));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return shape;
}

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
  const std::vector<std::size_t> shape = parse_positive_shape(a.shape);
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
