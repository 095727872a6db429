#pragma once
// Causal linear attention, chunked form, on raw buffers with our block products: the same
// equations as linear_attention_chunked (kernels/reference/linear_attention.hpp) without xtensor's views
// and temporaries per chunk. For chunk rows [c, c + b):
//
//   A   = tril(PQ_c PK_cᵀ)                         (b × b, upper triangle zeroed)
//   num = A V_c + PQ_c Sᵀ,   den = rowsum(A) + PQ_c z      (S: d_v × d_k, z: d_k: the chunks before)
//   O_c = num ⊘ den
//   S  += V_cᵀ PK_c,   z += Σ_rows PK_c
//
// The products are block_gemm's (kernels/fused/block_gemm.hpp), as the fused attention's: the
// same bits on every vector path and every CPU, and no BLAS to open (blas_library.hpp) for a
// short `lessons eval linear-attention`.
//
// Work O(n·(B·d + d²)), memory O(B² + B·d + d²) besides the output. The body is a template over
// the causal cut and the state carry (linear_attention_fast_steps.hpp, linear_attention_fast_core.hpp).
#include <cstddef>

#include <xtensor/xtensor.hpp>

namespace vl {

/// PQ = φ(Q): (n, d_k), PK = φ(K): (n, d_k), V: (n, d_v), chunk B ≥ 1 → O: (n, d_v).
/// Throws std::invalid_argument on a zero chunk or inconsistent shapes.
template <class T>
xt::xtensor<T, 2> linear_attention_chunked_fast(const xt::xtensor<T, 2>& pq, const xt::xtensor<T, 2>& pk, const xt::xtensor<T, 2>& v,
                                                std::size_t chunk);

}  // namespace vl
