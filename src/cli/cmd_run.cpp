// lessons run LESSON[/LISTING]: run the C++ listings and print what the lesson printed.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/errors.hpp"
#include "engine/audit.hpp"
#include "engine/lesson.hpp"

namespace vl::cli {

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run a lesson's listings (LESSON or LESSON/LISTING) and print their output");
  auto target = std::make_shared<std::string>();
  cmd->add_option("target", *target, "linear-rnn, or linear-rnn/main")->required();
  cmd->callback([target] {
    const auto slash = target->find('/');
    const std::string lesson_id = target->substr(0, slash);
    const std::string listing = slash == std::string::npos ? "" : lesson_id + "." + target->substr(slash + 1);
    for (const Lesson& lesson : all_lessons()) {
      if (lesson.id != lesson_id) continue;
      bool found = false;
      for (const Listing& l : lesson.listings) {
        if (!listing.empty() && l.id != listing) continue;
        found = true;
        if (listing.empty()) fmt::print("# {}\n", l.id);
        for (const auto& line : l.run(ListingContext{default_root() / "reference_outputs"}).lines) fmt::print("{}\n", line);
      }
      if (!found) throw InputError(fmt::format("run: lesson '{}' has no listing '{}' (see: lessons list)", lesson_id, target->substr(slash + 1)));
      return;
    }
    throw InputError(fmt::format("run: unknown lesson '{}' (see: lessons list)", lesson_id));
  });
}

}  // namespace vl::cli
