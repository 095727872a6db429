// Lesson encoder-decoder: the broken backends (see encoder_decoder_broken_backends.hpp). A broken
// step is our layer kernel's step policy with one step replaced.
#include "lessons/encoder_decoder/encoder_decoder_broken_backends.hpp"

#include "kernels/reference/decoder_step.hpp"
#include "numeric/torch_linear_init.hpp"

namespace vl::lessons::encoder_decoder {

using backends::Backend;

namespace {

template <class T>
struct NoResidual : StepSteps<T> {
  static xt::xtensor<T, 3> residual(const xt::xtensor<T, 3>&, const xt::xtensor<T, 3>& sub) { return sub; }
};

template <class T>
struct CrossOverSelf : StepSteps<T> {
  static xt::xtensor<T, 3> cross(const xt::xtensor<T, 3>& x, const xt::xtensor<T, 3>&, const MhaParameters<T>& p, std::size_t heads,
                                 const MhaOptions<T>&) {
    return LayerSteps<T>::attend(x, x, p, heads, {});  // K, V from the decoder
  }
};

template <class T>
struct CacheReplaced : StepSteps<T> {
  static void append(LayerCache<T>& c, const xt::xtensor<T, 3>& k, const xt::xtensor<T, 3>& v) {
    c.keys = k;
    c.values = v;
  }
};

LayerOptions flipped(LayerOptions o) {
  o.norm_first = !o.norm_first;
  return o;
}

}  // namespace

// Our kernels with the steps `S<T>`, for the three layer operations of a decorator, in precision T.
#define VL_ED_WITH_STEPS(Class, S, opt, T)                                                                                      \
  ops::Tensor3Of<T> Class::encoder_layer(const ops::Tensor3Of<T>& x, const EncoderLayerParameters<T>& p, std::size_t heads,    \
                                         const LayerOptions& o, const MhaOptions<T>& self) const {                             \
    return vl::encoder_layer<T, S<T>>(x, p, heads, opt, self);                                                                  \
  }                                                                                                                             \
  ops::Tensor3Of<T> Class::decoder_layer(const ops::Tensor3Of<T>& tgt, const ops::Tensor3Of<T>& memory,                        \
                                         const DecoderLayerParameters<T>& p, std::size_t heads, const LayerOptions& o,          \
                                         const MhaOptions<T>& self, const MhaOptions<T>& cross) const {                         \
    return vl::decoder_layer<T, S<T>>(tgt, memory, p, heads, opt, self, cross);                                                 \
  }                                                                                                                             \
  ops::Tensor3Of<T> Class::decoder_step(const ops::Tensor3Of<T>& x_t, const ops::Tensor3Of<T>& memory,                         \
                                        const DecoderLayerParameters<T>& p, std::size_t heads, const LayerOptions& o,           \
                                        LayerCache<T>& cache, const MhaOptions<T>& cross) const {                               \
    return vl::decoder_layer_step<T, S<T>>(x_t, memory, p, heads, opt, cache, cross);                                           \
  }

VL_ED_WITH_STEPS(NormOrderSwapped, StepSteps, flipped(o), double)
VL_ED_WITH_STEPS(NormOrderSwapped, StepSteps, flipped(o), float)
VL_ED_WITH_STEPS(ResidualDropped, NoResidual, o, double)
VL_ED_WITH_STEPS(ResidualDropped, NoResidual, o, float)
VL_ED_WITH_STEPS(CrossReadsDecoder, CrossOverSelf, o, double)
VL_ED_WITH_STEPS(CrossReadsDecoder, CrossOverSelf, o, float)
#undef VL_ED_WITH_STEPS

namespace {

template <class T>
ops::Tensor3Of<T> layer_norm_over_positions(const Backend& base, const ops::Tensor3Of<T>& x, const LayerNormParameters<T>& p, double eps) {
  // (B, S, d) → (B, d, S), normalised over its last axis (the positions) with γ = 1, β = 0, back,
  // then the affine step per feature as the real one.
  const ops::Tensor3Of<T> t = xt::transpose(x, {0, 2, 1});
  const ops::Tensor3Of<T> n = base.layer_norm(t, torch_rng::layer_norm_init<T>(t.shape(2)), eps);
  ops::Tensor3Of<T> y = xt::transpose(n, {0, 2, 1});
  y = y * xt::view(p.weight, xt::newaxis(), xt::newaxis(), xt::all()) + xt::view(p.bias, xt::newaxis(), xt::newaxis(), xt::all());
  return y;
}

}  // namespace

// The single-operation controls, in precision T.
#define VL_ED_SINGLE(T)                                                                                                          \
  ops::Tensor3Of<T> CacheNotAppended::decoder_step(const ops::Tensor3Of<T>& x_t, const ops::Tensor3Of<T>& memory,              \
                                                   const DecoderLayerParameters<T>& p, std::size_t heads, const LayerOptions& o, \
                                                   LayerCache<T>& cache, const MhaOptions<T>& cross) const {                     \
    return vl::decoder_layer_step<T, CacheReplaced<T>>(x_t, memory, p, heads, o, cache, cross);                                  \
  }                                                                                                                              \
  ops::Tensor3Of<T> LayerNormWrongAxis::layer_norm(const ops::Tensor3Of<T>& x, const LayerNormParameters<T>& p, double eps) const { \
    return layer_norm_over_positions<T>(base(), x, p, eps);                                                                      \
  }                                                                                                                              \
  ops::Tensor3Of<T> TargetNotShifted::shift_right(const ops::Tensor3Of<T>& target, const xt::xtensor<T, 1>&) const { return target; } \
  ops::Tensor3Of<T> EncoderWithCausalMask::encoder_layer(const ops::Tensor3Of<T>& x, const EncoderLayerParameters<T>& p,        \
                                                         std::size_t heads, const LayerOptions& o, const MhaOptions<T>& self)    \
      const {                                                                                                                    \
    MhaOptions<T> causal = self;                                                                                                 \
    causal.causal = true;                                                                                                        \
    return base().encoder_layer(x, p, heads, o, causal);                                                                         \
  }                                                                                                                              \
  ops::Tensor3Of<T> DecoderWithoutMask::decoder_layer(const ops::Tensor3Of<T>& tgt, const ops::Tensor3Of<T>& memory,            \
                                                      const DecoderLayerParameters<T>& p, std::size_t heads, const LayerOptions& o, \
                                                      const MhaOptions<T>& self, const MhaOptions<T>& cross) const {             \
    MhaOptions<T> open = self;                                                                                                   \
    open.causal = false;                                                                                                         \
    open.attn_mask.reset();                                                                                                      \
    return base().decoder_layer(tgt, memory, p, heads, o, open, cross);                                                          \
  }
VL_ED_SINGLE(double)
VL_ED_SINGLE(float)
#undef VL_ED_SINGLE

}  // namespace vl::lessons::encoder_decoder
