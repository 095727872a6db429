#include "cli/backend_option.hpp"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/registry.hpp"
#include "core/errors.hpp"

namespace vl::cli {

std::shared_ptr<const backends::Backend> backend_named(const std::string& name) {
  if (auto b = backends::find(name)) return b;
  std::vector<std::string> names;
  for (const auto& b : backends::shipped()) names.push_back(b->name());
  throw InputError(fmt::format("--backend {}: no such backend (there are: {}; see lessons backends)", name, fmt::join(names, ", ")));
}

}  // namespace vl::cli
