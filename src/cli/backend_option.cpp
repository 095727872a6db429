#include "cli/backend_option.hpp"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>

#include "backends/candidate_backend.hpp"
#include "backends/candidate_signals.hpp"
#include "backends/registry.hpp"
#include "core/errors.hpp"

namespace vl::cli {

std::shared_ptr<const backends::Backend> backend_named(const std::string& name) {
  if (auto b = backends::find(name)) return b;
  std::vector<std::string> names;
  for (const auto& b : backends::shipped()) names.push_back(b->name());
  throw InputError(fmt::format("--backend {}: no such backend (there are: {}; see lessons backends)", name, fmt::join(names, ", ")));
}

std::shared_ptr<const backends::Backend> candidate_named(const std::string& command, double timeout_seconds) {
  if (!(timeout_seconds > 0) || timeout_seconds > 86400)
    throw InputError(fmt::format("--candidate-timeout {}: give a number of seconds above 0 (and at most a day)", timeout_seconds));
  backends::candidate_signals::install();  // SIGINT/SIGTERM: the candidate stopped, its folder removed
  backends::CandidateOptions co;
  co.command = command;
  co.timeout = std::chrono::milliseconds(std::llround(timeout_seconds * 1000));
  try {
    return std::make_shared<backends::CandidateBackend>(co);
  } catch (const backends::CandidateError& e) {
    throw InputError(fmt::format("--candidate: {}", e.what()));
  }
}

}  // namespace vl::cli
