#pragma once
// A claim about the attention weights, judged through the outputs alone: the same check and
// controls, with the weights read from what the judged backend computes
// (backends/weights_from_outputs.hpp: one-hot values make y the weights). A fused kernel, or
// a candidate that returns y only, is then judged on the claim instead of being not applicable;
// on a backend that forms its weights both checks run, and each must pass.
#include <initializer_list>
#include <string>

#include "backends/weights_from_outputs.hpp"
#include "engine/lesson.hpp"

namespace vl::lessons {

inline ClaimCheck outputs_only(ClaimCheck check) {
  check.name += "; the weights read from the outputs (one-hot values)";
  check.run = [run = check.run](const CheckContext& ctx) {
    const auto through = backends::WeightsFromOutputs::over(ctx.backend);
    return run(ctx.judging(*through));
  };
  return check;
}

/// Each check of these claims, twinned by outputs_only (after the lesson's own checks).
inline void add_outputs_only(Lesson& lesson, std::initializer_list<const char*> claim_ids) {
  for (const char* id : claim_ids)
    for (std::size_t i = 0, n = lesson.checks.size(); i < n; ++i)
      if (lesson.checks[i].claim_id == id) lesson.checks.push_back(outputs_only(lesson.checks[i]));
}

}  // namespace vl::lessons
