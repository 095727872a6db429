// Lesson encoder-decoder: the broken backends (see encoder_decoder_broken_backends.hpp). A broken
// step is our layer kernel's step policy with one step replaced.
#include "lessons/encoder_decoder/encoder_decoder_broken_backends.hpp"

#include "kernels/reference/decoder_step.hpp"

namespace vl::lessons::encoder_decoder {

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

// Our kernels with the steps `S`, for the three layer operations of a decorator.
#define VL_ED_WITH_STEPS(Class, S, opt)                                                                                              \
  Tensor3 Class::encoder_layer(const Tensor3& x, const EncoderLayerParameters<double>& p, std::size_t heads, const LayerOptions& o,  \
                               const MhaOptions<double>& self) const {                                                               \
    return vl::encoder_layer<double, S>(x, p, heads, opt, self);                                                                     \
  }                                                                                                                                  \
  Tensor3 Class::decoder_layer(const Tensor3& tgt, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,\
                               const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross) const {       \
    return vl::decoder_layer<double, S>(tgt, memory, p, heads, opt, self, cross);                                                    \
  }                                                                                                                                  \
  Tensor3 Class::decoder_step(const Tensor3& x_t, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads, \
                              const LayerOptions& o, LayerCache<double>& cache, const MhaOptions<double>& cross) const {             \
    return vl::decoder_layer_step<double, S>(x_t, memory, p, heads, opt, cache, cross);                                              \
  }

VL_ED_WITH_STEPS(NormOrderSwapped, StepSteps<double>, flipped(o))
VL_ED_WITH_STEPS(ResidualDropped, NoResidual<double>, o)
VL_ED_WITH_STEPS(CrossReadsDecoder, CrossOverSelf<double>, o)
#undef VL_ED_WITH_STEPS

Tensor3 CacheNotAppended::decoder_step(const Tensor3& x_t, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                                       const LayerOptions& o, LayerCache<double>& cache, const MhaOptions<double>& cross) const {
  return vl::decoder_layer_step<double, CacheReplaced<double>>(x_t, memory, p, heads, o, cache, cross);
}

Tensor3 LayerNormWrongAxis::layer_norm(const Tensor3& x, const LayerNormParameters<double>& p, double eps) const {
  // (B, S, d) → (B, d, S), normalised over its last axis (the positions) with γ = 1, β = 0, back,
  // then the affine step per feature as the real one.
  const Tensor3 t = xt::transpose(x, {0, 2, 1});
  const Tensor3 n = base().layer_norm(t, torch_rng::layer_norm_init<double>(t.shape(2)), eps);
  Tensor3 y = xt::transpose(n, {0, 2, 1});
  y = y * xt::view(p.weight, xt::newaxis(), xt::newaxis(), xt::all()) + xt::view(p.bias, xt::newaxis(), xt::newaxis(), xt::all());
  return y;
}

Tensor3 TargetNotShifted::shift_right(const Tensor3& target, const xt::xtensor<double, 1>&) const { return target; }

Tensor3 EncoderWithCausalMask::encoder_layer(const Tensor3& x, const EncoderLayerParameters<double>& p, std::size_t heads,
                                             const LayerOptions& o, const MhaOptions<double>& self) const {
  MhaOptions<double> causal = self;
  causal.causal = true;
  return base().encoder_layer(x, p, heads, o, causal);
}

Tensor3 DecoderWithoutMask::decoder_layer(const Tensor3& tgt, const Tensor3& memory, const DecoderLayerParameters<double>& p,
                                          std::size_t heads, const LayerOptions& o, const MhaOptions<double>& self,
                                          const MhaOptions<double>& cross) const {
  MhaOptions<double> open = self;
  open.causal = false;
  open.attn_mask.reset();
  return base().decoder_layer(tgt, memory, p, heads, o, open, cross);
}

}  // namespace vl::lessons::encoder_decoder
