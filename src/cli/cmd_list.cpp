// lessons list: the lessons, their listings and claim ids.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "engine/audit.hpp"
#include "core/errors.hpp"
#include "engine/lesson.hpp"
#include "engine/spec.hpp"

namespace vl::cli {

void add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List the lessons, their listings and claim ids");
  auto root = std::make_shared<std::string>();
  cmd->add_option("--root", *root, "Checkout holding specs/ and reference_outputs/");
  cmd->callback([root] {
    const std::filesystem::path dir = root->empty() ? default_root() : std::filesystem::path(*root);
    for (const Lesson& lesson : all_lessons()) {
      const Spec spec = parse_spec(dir / lesson.spec_file);
      fmt::print("{}  {}  ({})\n", lesson.id, spec.title, lesson.spec_file);
      for (const auto& l : spec.listings) fmt::print("  listing {}  [{}]\n", l.id, l.function);
      for (const auto& c : spec.claims) {
        int checks = 0;
        for (const auto& ch : lesson.checks) checks += ch.claim_id == c.id;
        // "tolerance <= 1e-12", ">= 0.001", "none": the direction is the spec's (compare:).
        fmt::print("  claim   {}  ({}, tolerance {}){}\n", c.id, to_string(c.kind), c.stated_bound(), checks ? "" : "  [no check]");
      }
    }
  });
}

}  // namespace vl::cli
