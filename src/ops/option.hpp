#pragma once
// An option of an operation that a backend may lack while it has the operation itself (the
// fused kernel computes attention but never forms its weights). An op header lists the options
// it has (`options`); a backend says which it supports (Backend::supports(Need)), and a claim
// that needs one it lacks is not applicable.
namespace vl::ops {

enum class Option {
  none,              ///< the operation itself
  weights,           ///< the attention weights W, returned beside the output
  score_stages,      ///< an intermediate of the score pipeline (ONNX's qk_matmul_output modes)
  storage_rounding,  ///< every stored value rounded to a narrower format (ONNX's float16 reference)
};

/// The suffix of a need's name: "weights" → "attention-weights".
inline const char* to_string(Option o) {
  switch (o) {
    case Option::none: return "";
    case Option::weights: return "weights";
    case Option::score_stages: return "scores";
    case Option::storage_rounding: return "storage-rounding";
  }
  return "?";
}

}  // namespace vl::ops
