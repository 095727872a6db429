// The fused multi-head attention of multi_head_attention_fused.hpp, for float and double.
#include "kernels/fused/multi_head_attention_fused.hpp"

#include <stdexcept>

#include "kernels/fused/block_gemm.hpp"
#include "kernels/reference/multi_head_attention.hpp"

namespace vl {

template <class T>
xt::xtensor<T, 2> affine_block_gemm(const xt::xtensor<T, 2>& x, const xt::xtensor<T, 2>& w, const xt::xtensor<T, 1>& b) {
  const std::size_t s = x.shape(0), d_in = x.shape(1), d_out = w.shape(0);
  if (w.shape(1) != d_in || b.size() != d_out)
    throw std::invalid_argument("affine_block_gemm: X (S, d_in), W (d_out, d_in) and b (d_out) do not agree");
  // block_gemm multiplies row-major A (S × d_in) by row-major B (d_in × d_out): B = Wᵀ, packed once.
  xt::xtensor<T, 2> wt = xt::transpose(w);
  // Y starts as b in every row, and the products accumulate onto it: b[j] + Σ_t X[i][t] W[j][t].
  xt::xtensor<T, 2> y = xt::xtensor<T, 2>::from_shape({s, d_out});
  for (std::size_t i = 0; i < s; ++i)
    for (std::size_t j = 0; j < d_out; ++j) y(i, j) = b(j);
  if (s && d_out && d_in)
    block_gemm(selected_vector_path(), false, true, s, d_out, d_in, x.data(), d_in, wt.data(), d_out, y.data(), d_out);
  return y;
}

namespace {
struct BlockGemmAffine {
  template <class T>
  xt::xtensor<T, 2> operator()(const xt::xtensor<T, 2>& x, const xt::xtensor<T, 2>& w, const xt::xtensor<T, 1>& b) const {
    return affine_block_gemm<T>(x, w, b);
  }
};
}  // namespace

template <class T>
xt::xtensor<T, 3> multi_head_attention_fused(const xt::xtensor<T, 3>& query, const xt::xtensor<T, 3>& key, const xt::xtensor<T, 3>& value,
                                             const MhaParameters<T>& p, std::size_t num_heads, const MhaOptions<T>& o,
                                             const FusedConfig& config) {
  if (o.need_weights) throw std::invalid_argument("multi_head_attention_fused: the fused kernel never forms the per-head weights");
  const auto attend = [&config](const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                const AttentionOptions<T>& ao) {
    return AttentionResult<T, 4>{fused_attention<T>(q, k, v, ao, config), {}, {}};
  };
  return multi_head_attention_over<T>(attend, query, key, value, p, num_heads, o, BlockGemmAffine{}).output;
}

template xt::xtensor<float, 2> affine_block_gemm<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 1>&);
template xt::xtensor<double, 2> affine_block_gemm<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&,
                                                          const xt::xtensor<double, 1>&);
template xt::xtensor<float, 3> multi_head_attention_fused<float>(const xt::xtensor<float, 3>&, const xt::xtensor<float, 3>&,
                                                                 const xt::xtensor<float, 3>&, const MhaParameters<float>&, std::size_t,
                                                                 const MhaOptions<float>&, const FusedConfig&);
template xt::xtensor<double, 3> multi_head_attention_fused<double>(const xt::xtensor<double, 3>&, const xt::xtensor<double, 3>&,
                                                                   const xt::xtensor<double, 3>&, const MhaParameters<double>&, std::size_t,
                                                                   const MhaOptions<double>&, const FusedConfig&);

}  // namespace vl
