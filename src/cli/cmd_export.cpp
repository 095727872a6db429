// lessons export: every array each listing computes, as JSON, for the docs (docs/build_docs.py).
//
// The pages' pictures and "try it" panels show this build's numbers: the attention weights with
// and without the causal mask per head, the positional-encoding table, the outputs. They are the
// same arrays the audit compares with the independent goldens (reference_outputs/), taken from
// the same listing functions, so a page never computes anything itself: its JavaScript only looks
// values up. (Compiling the kernels to WebAssembly would need emscripten, which Debian's build
// here lacks, and would put a second build of the kernels on the page for numbers the audit has
// already checked; a table of every state the panel offers is a few kilobytes.)
//
//   lessons export [LISTING...] [--root DIR] --json FILE
//
// {"listings": [{"id", "lesson", "lines": [...], "arrays": {name: {"shape": [...], "data": [...]}}}]}
// with data flattened in row-major (C) order.
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/errors.hpp"
#include "engine/audit.hpp"
#include "engine/lesson.hpp"
#include "engine/report.hpp"

namespace vl::cli {

namespace {

struct ExportArgs {
  std::vector<std::string> listings;
  std::string root, json;
};

nlohmann::ordered_json array_json(const xt::xarray<double>& a) {
  nlohmann::ordered_json data = nlohmann::ordered_json::array();
  for (double v : a) data.push_back(v);  // xarray iterates in row-major order; NaN/inf become null
  return {{"shape", std::vector<std::size_t>(a.shape().begin(), a.shape().end())}, {"data", data}};
}

void export_arrays(const ExportArgs& args) {
  if (args.json.empty()) throw InputError("export: give --json FILE");
  if (!std::filesystem::is_directory(std::filesystem::absolute(args.json).parent_path()))
    throw InputError(fmt::format("export: --json {}: its folder does not exist", args.json));
  const std::filesystem::path root = args.root.empty() ? default_root() : std::filesystem::path(args.root);
  const std::set<std::string> wanted(args.listings.begin(), args.listings.end());
  std::set<std::string> known;
  for (const Lesson& lesson : all_lessons())
    for (const Listing& l : lesson.listings) known.insert(l.id);
  for (const auto& id : wanted)  // before anything runs: a typo costs nothing
    if (!known.count(id)) throw InputError(fmt::format("export: unknown listing '{}' (see: lessons list)", id));
  nlohmann::ordered_json out = {{"listings", nlohmann::ordered_json::array()}};
  for (const Lesson& lesson : all_lessons()) {
    for (const Listing& l : lesson.listings) {
      if (!wanted.empty() && !wanted.count(l.id)) continue;
      const ListingOutput produced = l.run(ListingContext{root / "reference_outputs"});
      nlohmann::ordered_json arrays = nlohmann::ordered_json::object();
      for (const auto& [name, a] : produced.arrays) arrays[name] = array_json(a);
      out["listings"].push_back({{"id", l.id}, {"lesson", lesson.id}, {"lines", produced.lines}, {"arrays", arrays}});
    }
  }
  write_file_atomically(args.json, out.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
  fmt::print("export JSON: {}\n", std::filesystem::absolute(args.json).string());
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand("export", "Write every array the listings compute as JSON (the docs' plots and panels)");
  cmd->add_option("listings", args->listings, "Listing ids (default: every listing)");
  cmd->add_option("--root", args->root, "Checkout holding reference_outputs/ (default: this repository)");
  cmd->add_option("--json", args->json, "Write the JSON to this file")->required();
  cmd->callback([args] { export_arrays(*args); });
}

}  // namespace vl::cli
