// The shipped backends.
#include "backends/registry.hpp"

#include "backends/fused_backend.hpp"
#include "backends/plain_backend.hpp"

namespace vl::backends {

const std::vector<std::shared_ptr<const Backend>>& shipped() {
  static const std::vector<std::shared_ptr<const Backend>> all = {std::make_shared<PlainBackend>(), std::make_shared<FusedBackend>()};
  return all;
}

std::shared_ptr<const Backend> find(const std::string& name) {
  for (const auto& b : shipped())
    if (b->name() == name) return b;
  return nullptr;
}

std::shared_ptr<const Backend> plain() { return shipped().front(); }

}  // namespace vl::backends
