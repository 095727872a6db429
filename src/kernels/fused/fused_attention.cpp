// Fused, blocked attention with the online softmax; see fused_attention.hpp. The body is in
// fused_attention_core.hpp; this file instantiates it with the kernel's own steps.
#include "kernels/fused/fused_attention.hpp"

#include "kernels/fused/fused_attention_core.hpp"
#include "kernels/fused/fused_attention_steps.hpp"

namespace vl {

template <class T>
xt::xtensor<T, 4> fused_attention(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                  const AttentionOptions<T>& options, const FusedConfig& config, FusedStats* stats) {
  return fused_attention_with<FusedSteps, T>(q, k, v, options, config, stats);
}

template <class T>
xt::xtensor<T, 2> fused_attention(const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k, const xt::xtensor<T, 2>& v,
                                  const AttentionOptions<T>& options, const FusedConfig& config, FusedStats* stats) {
  // The same buffers seen as (1, 1, S, D): no copy.
  xt::xtensor<T, 2> out = xt::xtensor<T, 2>::from_shape({q.shape(0), v.shape(1)});
  detail::fused_core<FusedSteps, T>({1, 1, q.shape(0), q.shape(1)}, {1, 1, k.shape(0), k.shape(1)}, {1, 1, v.shape(0), v.shape(1)}, q.data(), k.data(),
                v.data(), out.data(), nullptr, options, config, stats);
  return out;
}

template <class T>
AttentionResult<T, 2> attention_materialized(const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k, const xt::xtensor<T, 2>& v) {
  const std::size_t n = q.shape(0), D = q.shape(1), Sk = k.shape(0), Dv = v.shape(1);
  if (k.shape(1) != D || v.shape(0) != Sk) throw std::invalid_argument("attention_materialized: inconsistent shapes");
  AttentionResult<T, 2> r;
  r.weights = xt::xtensor<T, 2>::from_shape({n, Sk});
  r.output = xt::xtensor<T, 2>::from_shape({n, Dv});
  const T scale = T(1) / std::sqrt(static_cast<T>(D));
  T* s = r.weights.data();
  blas::gemm(false, true, n, Sk, D, scale, q.data(), D, k.data(), D, T(0), s, Sk);
  for (std::size_t i = 0; i < n; ++i) {
    T* row = s + i * Sk;
    const T m = row_max(row, Sk);
    const T sum = row_exp_sum(row, Sk, m);
    row_scale(row, Sk, T(1) / sum);
  }
  blas::gemm(false, false, n, Dv, Sk, T(1), s, Sk, v.data(), Dv, T(0), r.output.data(), Dv);
  return r;
}

template xt::xtensor<float, 4> fused_attention(const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&,
                                               const AttentionOptions<float>&, const FusedConfig&, FusedStats*);
template xt::xtensor<double, 4> fused_attention(const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&,
                                                const xt::xtensor<double, 4>&, const AttentionOptions<double>&, const FusedConfig&,
                                                FusedStats*);
template xt::xtensor<float, 2> fused_attention(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&,
                                               const AttentionOptions<float>&, const FusedConfig&, FusedStats*);
template xt::xtensor<double, 2> fused_attention(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&,
                                                const xt::xtensor<double, 2>&, const AttentionOptions<double>&, const FusedConfig&,
                                                FusedStats*);
template AttentionResult<float, 2> attention_materialized(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&,
                                                          const xt::xtensor<float, 2>&);
template AttentionResult<double, 2> attention_materialized(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&,
                                                           const xt::xtensor<double, 2>&);

}  // namespace vl
