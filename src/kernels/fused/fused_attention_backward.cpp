// The fused backward; see fused_attention_backward.hpp. The body is in
// fused_attention_backward_core.hpp; this file instantiates it with the kernel's own steps.
#include "kernels/fused/fused_attention_backward.hpp"

#include "kernels/fused/fused_attention_backward_core.hpp"
#include "kernels/fused/fused_attention_steps.hpp"

namespace vl {

template <class T>
FusedSaved<T> fused_attention_saved(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                    const AttentionOptions<T>& options, const FusedConfig& config) {
  return fused_attention_saved_with<FusedSteps, T>(q, k, v, options, config);
}

template <class T>
AttentionGradients<T, 4> fused_attention_backward(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                                  const FusedSaved<T>& saved, const xt::xtensor<T, 4>& d_out,
                                                  const AttentionOptions<T>& options, const FusedConfig& config, FusedStats* stats) {
  return fused_attention_backward_with<FusedSteps, T>(q, k, v, saved, d_out, options, config, stats);
}

template <class T>
AttentionGradients<T, 4> fused_attention_backward(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                                  const xt::xtensor<T, 4>& d_out, const AttentionOptions<T>& options,
                                                  const FusedConfig& config, FusedStats* stats) {
  check_backward_inputs(q, k, v, d_out, options, config);  // before the forward's work, not after it
  AttentionOptions<T> forward = options;  // the backward returns gradients only: no weights or score stages to form
  forward.return_weights = false;
  forward.return_scores.reset();
  return fused_attention_backward_with<FusedSteps, T>(q, k, v, fused_attention_saved_with<FusedSteps, T>(q, k, v, forward, config), d_out,
                                                      options, config, stats);
}

#define VL_INSTANTIATE(T)                                                                                                          \
  template FusedSaved<T> fused_attention_saved(const xt::xtensor<T, 4>&, const xt::xtensor<T, 4>&, const xt::xtensor<T, 4>&,       \
                                               const AttentionOptions<T>&, const FusedConfig&);                                     \
  template AttentionGradients<T, 4> fused_attention_backward(const xt::xtensor<T, 4>&, const xt::xtensor<T, 4>&,                   \
                                                             const xt::xtensor<T, 4>&, const FusedSaved<T>&, const xt::xtensor<T, 4>&, \
                                                             const AttentionOptions<T>&, const FusedConfig&, FusedStats*);          \
  template AttentionGradients<T, 4> fused_attention_backward(const xt::xtensor<T, 4>&, const xt::xtensor<T, 4>&,                   \
                                                             const xt::xtensor<T, 4>&, const xt::xtensor<T, 4>&,                    \
                                                             const AttentionOptions<T>&, const FusedConfig&, FusedStats*);
VL_INSTANTIATE(float)
VL_INSTANTIATE(double)
#undef VL_INSTANTIATE

}  // namespace vl
