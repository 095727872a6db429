#pragma once
// One row-major GEMM on raw buffers for float and double, for the kernels that work block by
// block on pointers (fused attention, fast chunked linear attention):
//   C (m × n) = alpha · op(A) op(B) + beta · C,   op(X) = Xᵀ when its flag is set,
// with A m × k (k × m when transposed), B k × n (n × k when transposed), leading dimensions lda,
// ldb, ldc. cblas_sgemm / cblas_dgemm; not counted by kernels/matmul.hpp's multiply_adds().
#include <cstddef>
#include <type_traits>

#include <cblas.h>

namespace vl::blas {

template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, T alpha, const T* a, std::size_t lda, const T* b,
          std::size_t ldb, T beta, T* c, std::size_t ldc) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  const CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
  else
    cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

}  // namespace vl::blas
