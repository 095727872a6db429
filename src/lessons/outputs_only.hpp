#pragma once
// A claim about the attention weights, judged through the outputs alone: the same check and
// controls, with the weights read from what the judged backend computes
// (backends/weights_from_outputs.hpp: one-hot values make y the weights). A fused kernel, or
// a candidate that returns y only, is then judged on the claim instead of being not applicable;
// on a backend that forms its weights both checks run, and each must pass.
#include <string>

#include "backends/weights_from_outputs.hpp"
#include "engine/lesson.hpp"

namespace vl::lessons {

inline ClaimCheck outputs_only(ClaimCheck check) {
  check.name += "; the weights read from the outputs (one-hot values)";
  check.run = [run = check.run](const CheckContext& ctx) {
    const auto through = backends::WeightsFromOutputs::over(ctx.backend);
    return run(CheckContext{*through, ctx.goldens, ctx.settled_failing, ctx.precision});
  };
  return check;
}

}  // namespace vl::lessons
