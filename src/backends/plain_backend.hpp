#pragma once
// Backend `plain`: our reference kernels, every operation (kernels/reference/attention.hpp,
// attention_backward.hpp, multi_head_attention.hpp, positional_encoding.hpp, linear_attention.hpp,
// linear_family_heads.hpp, layer_norm.hpp, encoder_layer.hpp, decoder_layer.hpp, decoder_step.hpp).
#include "backends/backend.hpp"

namespace vl::backends {

class PlainBackend : public Backend {
 public:
  std::string name() const override { return "plain"; }
  std::string summary() const override { return "our reference kernels: the score matrix formed, every operation"; }
  bool ours() const override { return true; }
  /// float64 and float32 computed; bfloat16 and float16 stored (float32 arithmetic: StoredIn, in_precision.hpp).
  std::vector<Precision> precisions() const override {
    return {Precision::float64, Precision::float32, Precision::bfloat16, Precision::float16};
  }
  bool supports(Need) const override { return true; }

  VL_OPERATIONS(VL_NO_OP, VL_DECLARE_OVERRIDE)  // every operation: ops/all.hpp
};

}  // namespace vl::backends
