#pragma once
// torch.nn.MultiheadAttention's forward (kernels/reference/multi_head_attention.hpp, the same
// equations, masks and checks) with nothing formed that a caller does not ask for and no BLAS:
//
//   Q, K, V = X W_{q,k,v}ᵀ + b      four affine maps Y = X Wᵀ + b on block_gemm (block_gemm.hpp),
//   head_h  = fused_attention(...)   the heads through the fused kernel (no Sq × Sk weights),
//   out     = concat(heads) W_oᵀ + b_o
//
// So a short `lessons eval mha` never opens OpenBLAS (kernels/platform/blas_library.hpp), and the
// fused backend's multi-head attention is its own kernels throughout. The per-head weights are
// never formed: options.need_weights must be false (std::invalid_argument otherwise).
//   query (B, Sq, d), key and value (B, Sk, d) → output (B, Sq, d)
#include <cstddef>

#include <xtensor/xtensor.hpp>

#include "kernels/fused/fused_attention.hpp"
#include "ops/multi_head_attention.hpp"

namespace vl {

/// Y = X Wᵀ + b on block_gemm:  X (S, d_in), W (d_out, d_in), b (d_out) → Y (S, d_out). Each
/// Y[i][j] is b[j] + (the chain of fused multiply-adds Σ_t X[i][t] W[j][t], t in order).
template <class T>
xt::xtensor<T, 2> affine_block_gemm(const xt::xtensor<T, 2>& x, const xt::xtensor<T, 2>& w, const xt::xtensor<T, 1>& b);

/// See the file comment. Throws std::invalid_argument on need_weights and on what
/// multi_head_attention refuses (shapes, masks, d not divisible by the heads).
template <class T>
xt::xtensor<T, 3> multi_head_attention_fused(const xt::xtensor<T, 3>& query, const xt::xtensor<T, 3>& key, const xt::xtensor<T, 3>& value,
                                             const MhaParameters<T>& p, std::size_t num_heads, const MhaOptions<T>& o,
                                             const FusedConfig& config = {});

}  // namespace vl
