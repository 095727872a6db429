#pragma once
// `--backend NAME` of the verbs that run an implementation (audit, onnx): the shipped backend of
// that name, or an InputError naming the option and the backends there are.
#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace vl::cli {

std::shared_ptr<const backends::Backend> backend_named(const std::string& name);

}  // namespace vl::cli
