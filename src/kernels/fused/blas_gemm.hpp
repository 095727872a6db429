#pragma once
// One row-major GEMM on raw buffers for float and double, for the kernels that work block by
// block on pointers (the fused attention's BLAS-products variant, FusedConfig::blas_products; the
// materialised listing's computation, attention_materialized):
//   C (m × n) = alpha · op(A) op(B) + beta · C,   op(X) = Xᵀ when its flag is set,
// with A m × k (k × m when transposed), B k × n (n × k when transposed), leading dimensions lda,
// ldb, ldc. cblas_sgemm / cblas_dgemm (blas_gemm.cpp: OpenBLAS's cblas.h stays out of this
// header, because it conflicts with the copy xtensor-blas declares, and a kernel template may
// be instantiated next to xtensor-blas code); not counted by kernels/reference/matmul.hpp's multiply_adds().
#include <cstddef>

namespace vl::blas {

void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a, std::size_t lda,
          const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc);
void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a, std::size_t lda,
          const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc);

}  // namespace vl::blas
