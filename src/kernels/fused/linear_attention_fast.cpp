// Chunked causal linear attention with our block products on chunks; see linear_attention_fast.hpp. The body
// is in linear_attention_fast_core.hpp; this file instantiates it with the kernel's own steps.
#include "kernels/fused/linear_attention_fast.hpp"

#include "kernels/fused/linear_attention_fast_core.hpp"
#include "kernels/fused/linear_attention_fast_steps.hpp"

namespace vl {

template <class T>
xt::xtensor<T, 2> linear_attention_chunked_fast(const xt::xtensor<T, 2>& pq, const xt::xtensor<T, 2>& pk, const xt::xtensor<T, 2>& v,
                                                std::size_t chunk) {
  return linear_attention_chunked_fast_with<LinearChunkSteps, T>(pq, pk, v, chunk);
}

template xt::xtensor<float, 2> linear_attention_chunked_fast(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&,
                                                             const xt::xtensor<float, 2>&, std::size_t);
template xt::xtensor<double, 2> linear_attention_chunked_fast(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&,
                                                              const xt::xtensor<double, 2>&, std::size_t);

}  // namespace vl
