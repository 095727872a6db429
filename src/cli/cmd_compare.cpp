// lessons compare A.npy B.npy: how close two .npy arrays are, as numpy.testing.assert_allclose
// judges it (B is the expected one: |a − b| ≤ atol + rtol·|b|).
#include <memory>

#include <fmt/core.h>

#include "cli/commands.hpp"
#include "core/errors.hpp"
#include "numeric/compare.hpp"
#include "numeric/npy.hpp"

namespace vl::cli {

namespace {
struct CompareArgs {
  std::string actual, expected;
  double rtol = 1e-7;  // numpy.testing.assert_allclose's defaults
  double atol = 0.0;
};
}  // namespace

void add_compare_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compare", "Compare two .npy arrays element-wise (A actual, B expected)");
  auto args = std::make_shared<CompareArgs>();
  cmd->add_option("A", args->actual, "The .npy array to check")->required();
  cmd->add_option("B", args->expected, "The expected .npy array")->required();
  cmd->add_option("--rtol", args->rtol, "Relative tolerance (default 1e-7, as assert_allclose)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--atol", args->atol, "Absolute tolerance (default 0)")->check(CLI::NonNegativeNumber);
  cmd->callback([args] {
    // Prints max abs error, max rel error, worst index and the verdict; exit 1 on mismatch,
    // 2 (InputError) on unreadable files or different shapes.
    const npy::Array a = npy::load(args->actual);
    const npy::Array b = npy::load(args->expected);
    if (a.shape != b.shape) {
      throw InputError(fmt::format("{} has shape {} but {} has shape {}: cannot compare", args->actual,
                                   shape_string(a.shape), args->expected, shape_string(b.shape)));
    }
    const Closeness c = closeness(a.values, b.values, args->rtol, args->atol);
    fmt::print("elements:      {} ({} vs {})\n", a.size(), a.dtype, b.dtype);
    fmt::print("max abs error: {:.3g}\n", c.max_abs_error);
    fmt::print("max rel error: {:.3g}\n", c.max_rel_error);
    if (a.size() > 0) {
      fmt::print("worst index:   {} (got {:.17g}, expected {:.17g})\n", unravel_index(c.worst, a.shape),
                 a.values[c.worst], b.values[c.worst]);
    }
    if (c.passed) {
      fmt::print("verdict:       MATCH (rtol {:g}, atol {:g})\n", args->rtol, args->atol);
    } else {
      fmt::print("verdict:       MISMATCH: {} of {} elements out of tolerance (rtol {:g}, atol {:g})\n", c.mismatches,
                 a.size(), args->rtol, args->atol);
      throw Exit{1};
    }
  });
}

}  // namespace vl::cli
