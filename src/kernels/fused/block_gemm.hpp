#pragma once
// The fused kernels' block products without BLAS, register-blocked, for each vector path
// (kernels/platform/vector_path.hpp):
//   C (m × n) = A (m × k) · B (k × n)        (accumulate = false)
//   C (m × n) += A (m × k) · B (k × n)       (accumulate = true)
// row-major with leading dimensions lda, ldb, ldc; with transpose_a, `a` holds Aᵀ (k × m, row-major,
// leading dimension lda), as BLAS's TransA. Every C[i][j] is the same chain of fused
// multiply-adds, c ← fma(A[i][t], B[t][j], c) for t = 0 … k−1 (from 0, or from C[i][j]), on
// every path: the vectors run over the columns j, never over t, and the baseline uses
// std::fma, so AVX-512, AVX2 and the baseline give the same bits (test_kernels_block_gemm).
// The fused kernel calls it for Sᵀ = K_blk Q_blkᵀ (with Q_blkᵀ packed once per query block,
// D × block_q) and for acc += P_blk V_blk (P_blk read from Sᵀ: transpose_a); its backward for
// Sᵀ, dPᵀ, dV += Pᵀ dO, dK += dSᵀ Q and dQ += dS K (fused_attention_backward.hpp); the fast
// chunked linear attention for its chunk products (linear_attention_fast.hpp).
#include <cstddef>

#include "kernels/platform/vector_path.hpp"

namespace vl {

void block_gemm(VectorPath path, bool transpose_a, bool accumulate, std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                const float* b, std::size_t ldb, float* c, std::size_t ldc);
void block_gemm(VectorPath path, bool transpose_a, bool accumulate, std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
                const double* b, std::size_t ldb, double* c, std::size_t ldc);

}  // namespace vl
