#pragma once
// The backends we ship, by name (`lessons backends`, `lessons audit --backend NAME`).
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace vl::backends {

/// plain, then fused. The first is the audit's default.
const std::vector<std::shared_ptr<const Backend>>& shipped();

/// The shipped backend of that name, or nullptr.
std::shared_ptr<const Backend> find(const std::string& name);

/// Our reference kernels (the default backend, and the base of most negative controls).
std::shared_ptr<const Backend> plain();

}  // namespace vl::backends
