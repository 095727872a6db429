#pragma once
// Lesson encoder-decoder: the broken backends its claims must reject (specs/encoder_decoder.md,
// "Negative controls"). Each is one plausible bug, a decorator over a working backend that
// overrides the operations it breaks and forwards everything else. A bug inside a layer is the
// layer kernel instantiated with one step changed (kernels/reference/encoder_layer.hpp's LayerSteps).
#include "backends/backend.hpp"

namespace vl::lessons::encoder_decoder {

using backends::Tensor3;

// The layer operations' overrides, in one precision T (each control overrides both precisions:
// the bug is written once, in the .cpp, for T = double and float).
#define VL_ED_ENCODER(T)                                                                                                       \
  ops::Tensor3Of<T> encoder_layer(const ops::Tensor3Of<T>& x, const EncoderLayerParameters<T>& p, std::size_t heads,          \
                                  const LayerOptions& o, const MhaOptions<T>& self) const override;
#define VL_ED_DECODER(T)                                                                                                       \
  ops::Tensor3Of<T> decoder_layer(const ops::Tensor3Of<T>& tgt, const ops::Tensor3Of<T>& memory, const DecoderLayerParameters<T>& p, \
                                  std::size_t heads, const LayerOptions& o, const MhaOptions<T>& self, const MhaOptions<T>& cross) \
      const override;
#define VL_ED_STEP(T)                                                                                                          \
  ops::Tensor3Of<T> decoder_step(const ops::Tensor3Of<T>& x_t, const ops::Tensor3Of<T>& memory, const DecoderLayerParameters<T>& p, \
                                 std::size_t heads, const LayerOptions& o, LayerCache<T>& cache, const MhaOptions<T>& cross)     \
      const override;
#define VL_ED_BOTH(OP) OP(double) OP(float)
/// Layer operations of a decorator that runs our layer kernels with broken steps `Steps`.
#define VL_ED_LAYER_OPS VL_ED_BOTH(VL_ED_ENCODER) VL_ED_BOTH(VL_ED_DECODER) VL_ED_BOTH(VL_ED_STEP)

/// Post-norm swapped for pre-norm (and back): norm_first inverted in every layer.
class NormOrderSwapped : public backends::Decorator {
 public:
  using Decorator::Decorator;
  VL_ED_LAYER_OPS
};

/// The residual dropped: each sub-layer's output replaces x instead of being added to it.
class ResidualDropped : public backends::Decorator {
 public:
  using Decorator::Decorator;
  VL_ED_LAYER_OPS
};

/// The encoder–decoder attention reading its keys and values from the decoder, not the memory.
class CrossReadsDecoder : public backends::Decorator {
 public:
  using Decorator::Decorator;
  VL_ED_LAYER_OPS
};

/// The KV cache not appended: each step's key and value replace the cache instead of joining it.
class CacheNotAppended : public backends::Decorator {
 public:
  using Decorator::Decorator;
  VL_ED_BOTH(VL_ED_STEP)
};

/// LayerNorm over the wrong axis: each feature normalised over the positions of its sequence.
class LayerNormWrongAxis : public backends::Decorator {
 public:
  using Decorator::Decorator;
  Tensor3 layer_norm(const Tensor3& x, const LayerNormParameters<double>& p, double eps) const override;
  ops::Tensor3Of<float> layer_norm(const ops::Tensor3Of<float>& x, const LayerNormParameters<float>& p, double eps) const override;
};

/// The target not shifted: the decoder's input is the target itself, position i seeing token i.
class TargetNotShifted : public backends::Decorator {
 public:
  using Decorator::Decorator;
  Tensor3 shift_right(const Tensor3& target, const xt::xtensor<double, 1>& start) const override;
  ops::Tensor3Of<float> shift_right(const ops::Tensor3Of<float>& target, const xt::xtensor<float, 1>& start) const override;
};

/// The encoder given the decoder's causal mask: position i sees only 0 … i.
class EncoderWithCausalMask : public backends::Decorator {
 public:
  using Decorator::Decorator;
  VL_ED_BOTH(VL_ED_ENCODER)
};

/// The decoder's self-attention without its causal mask (the mask argument ignored).
class DecoderWithoutMask : public backends::Decorator {
 public:
  using Decorator::Decorator;
  VL_ED_BOTH(VL_ED_DECODER)
};
#undef VL_ED_LAYER_OPS
#undef VL_ED_BOTH
#undef VL_ED_STEP
#undef VL_ED_DECODER
#undef VL_ED_ENCODER

}  // namespace vl::lessons::encoder_decoder
