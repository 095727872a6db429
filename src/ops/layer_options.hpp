#pragma once
// The settings of a Transformer layer (torch's TransformerEncoderLayer / TransformerDecoderLayer
// constructor arguments that change what it computes): the norm's place, the FFN's activation, ε.
#include <string>

#include "ops/layer_norm.hpp"

namespace vl {

/// The feed-forward network's activation (torch's `activation`).
enum class Activation { relu, gelu };

inline std::string to_string(Activation a) { return a == Activation::relu ? "relu" : "gelu"; }

struct LayerOptions {
  bool norm_first = false;                 ///< pre-norm (torch's norm_first); false: the paper's post-norm
  Activation activation = Activation::relu;
  double eps = kLayerNormEps;              ///< LayerNorm's ε
};

}  // namespace vl
