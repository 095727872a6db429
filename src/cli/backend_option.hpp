#pragma once
// `--backend NAME` and `--candidate 'CMD'` of the verbs that run an implementation (audit, onnx):
// the shipped backend of that name, or an external candidate started and greeted; an InputError
// naming the option otherwise.
#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace vl::cli {

std::shared_ptr<const backends::Backend> backend_named(const std::string& name);

/// The candidate `command` (vl-candidate/1), each request allowed `timeout_seconds`; its signal
/// handlers installed (SIGINT/SIGTERM stop it and remove its folder). Throws InputError for a bad
/// timeout or a candidate that does not answer its hello.
std::shared_ptr<const backends::Backend> candidate_named(const std::string& command, double timeout_seconds);

}  // namespace vl::cli
