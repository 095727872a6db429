// lessons backends: the implementations `lessons audit --backend NAME` can judge, and the
// operations and options each has (a claim needing another one is not applicable to it), and the
// precisions it computes in.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/registry.hpp"
#include "cli/commands.hpp"

namespace vl::cli {

namespace {
void list_backends() {
  for (const auto& b : backends::shipped()) {
    std::vector<std::string> has, lacks;
    for (const backends::Need& need : ops::all_needs()) (b->supports(need) ? has : lacks).push_back(backends::to_string(need));
    fmt::print("{}{}: {}\n", b->name(), b == backends::plain() ? " (default)" : "", b->summary());
    fmt::print("  operations: {}\n", fmt::join(has, ", "));
    if (!lacks.empty()) fmt::print("  lacks:      {}\n", fmt::join(lacks, ", "));
    std::vector<std::string> precisions;
    for (Precision p : b->precisions()) precisions.push_back(to_string(p));
    fmt::print("  computes in: {} (lessons audit judges each unless --dtype says otherwise)\n", fmt::join(precisions, ", "));
  }
}
}  // namespace

void add_backends_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("backends", "List the backends the audit can judge, with their operations");
  cmd->callback(list_backends);
}

}  // namespace vl::cli
