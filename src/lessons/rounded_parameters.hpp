#pragma once
// A module's or a layer's parameters as a backend computing in precision p holds them: every entry
// rounded once (numeric/precision.hpp), so that a check's float64 reference and bound start from
// the numbers the backend computed with (backends/in_precision.hpp rounds them the same way).
#include <string>

#include "numeric/precision.hpp"
#include "numeric/torch_mha_init.hpp"
#include "numeric/torch_transformer_init.hpp"

namespace vl::lessons {

/// nn.MultiheadAttention's four entries, or a Transformer layer's whole state_dict().
template <class P>
P rounded_parameters(Precision p, P params) {
  if constexpr (requires { params.in_proj_weight; }) {
    params.in_proj_weight = rounded_to(p, params.in_proj_weight);
    params.in_proj_bias = rounded_to(p, params.in_proj_bias);
    params.out_proj_weight = rounded_to(p, params.out_proj_weight);
    params.out_proj_bias = rounded_to(p, params.out_proj_bias);
  } else {
    torch_rng::state_entries(params, [&](const std::string&, auto& t) { t = rounded_to(p, t); });
  }
  return params;
}

}  // namespace vl::lessons
