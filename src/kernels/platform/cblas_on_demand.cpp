// The CBLAS routines this project calls (blas_gemm.cpp; xtensor-blas's linalg in the reference
// kernels), each opening OpenBLAS on its first call and then calling the library's own
// (blas_library.hpp says why the program is not linked against it). The prototypes are
// OpenBLAS's cblas.h's, so a mismatch does not compile; a routine not listed here does not link:
// add it here.
#include <cblas.h>

#include <stdexcept>
#include <string>

#include "kernels/platform/blas_library.hpp"

namespace {
// The library's definition of `name`, looked up once.
template <class F>
F routine(const char* name) {
  F f = reinterpret_cast<F>(vl::blas::symbol(name));
  if (!f) throw std::runtime_error(std::string("BLAS: ") + vl::blas::library_name() + " has no " + name);
  return f;
}
}  // namespace

#define VL_FORWARD(NAME, ...)                                   \
  static const auto f = routine<decltype(&NAME)>(#NAME);       \
  f(__VA_ARGS__)

extern "C" {

void cblas_sgemm(OPENBLAS_CONST enum CBLAS_ORDER Order, OPENBLAS_CONST enum CBLAS_TRANSPOSE TransA, OPENBLAS_CONST enum CBLAS_TRANSPOSE TransB,
                 OPENBLAS_CONST blasint M, OPENBLAS_CONST blasint N, OPENBLAS_CONST blasint K, OPENBLAS_CONST float alpha,
                 OPENBLAS_CONST float* A, OPENBLAS_CONST blasint lda, OPENBLAS_CONST float* B, OPENBLAS_CONST blasint ldb,
                 OPENBLAS_CONST float beta, float* C, OPENBLAS_CONST blasint ldc) {
  VL_FORWARD(cblas_sgemm, Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
void cblas_dgemm(OPENBLAS_CONST enum CBLAS_ORDER Order, OPENBLAS_CONST enum CBLAS_TRANSPOSE TransA, OPENBLAS_CONST enum CBLAS_TRANSPOSE TransB,
                 OPENBLAS_CONST blasint M, OPENBLAS_CONST blasint N, OPENBLAS_CONST blasint K, OPENBLAS_CONST double alpha,
                 OPENBLAS_CONST double* A, OPENBLAS_CONST blasint lda, OPENBLAS_CONST double* B, OPENBLAS_CONST blasint ldb,
                 OPENBLAS_CONST double beta, double* C, OPENBLAS_CONST blasint ldc) {
  VL_FORWARD(cblas_dgemm, Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
void cblas_sgemv(OPENBLAS_CONST enum CBLAS_ORDER order, OPENBLAS_CONST enum CBLAS_TRANSPOSE trans, OPENBLAS_CONST blasint m,
                 OPENBLAS_CONST blasint n, OPENBLAS_CONST float alpha, OPENBLAS_CONST float* a, OPENBLAS_CONST blasint lda,
                 OPENBLAS_CONST float* x, OPENBLAS_CONST blasint incx, OPENBLAS_CONST float beta, float* y, OPENBLAS_CONST blasint incy) {
  VL_FORWARD(cblas_sgemv, order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
void cblas_dgemv(OPENBLAS_CONST enum CBLAS_ORDER order, OPENBLAS_CONST enum CBLAS_TRANSPOSE trans, OPENBLAS_CONST blasint m,
                 OPENBLAS_CONST blasint n, OPENBLAS_CONST double alpha, OPENBLAS_CONST double* a, OPENBLAS_CONST blasint lda,
                 OPENBLAS_CONST double* x, OPENBLAS_CONST blasint incx, OPENBLAS_CONST double beta, double* y, OPENBLAS_CONST blasint incy) {
  VL_FORWARD(cblas_dgemv, order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
void cblas_ssyrk(OPENBLAS_CONST enum CBLAS_ORDER Order, OPENBLAS_CONST enum CBLAS_UPLO Uplo, OPENBLAS_CONST enum CBLAS_TRANSPOSE Trans,
                 OPENBLAS_CONST blasint N, OPENBLAS_CONST blasint K, OPENBLAS_CONST float alpha, OPENBLAS_CONST float* A,
                 OPENBLAS_CONST blasint lda, OPENBLAS_CONST float beta, float* C, OPENBLAS_CONST blasint ldc) {
  VL_FORWARD(cblas_ssyrk, Order, Uplo, Trans, N, K, alpha, A, lda, beta, C, ldc);
}
void cblas_dsyrk(OPENBLAS_CONST enum CBLAS_ORDER Order, OPENBLAS_CONST enum CBLAS_UPLO Uplo, OPENBLAS_CONST enum CBLAS_TRANSPOSE Trans,
                 OPENBLAS_CONST blasint N, OPENBLAS_CONST blasint K, OPENBLAS_CONST double alpha, OPENBLAS_CONST double* A,
                 OPENBLAS_CONST blasint lda, OPENBLAS_CONST double beta, double* C, OPENBLAS_CONST blasint ldc) {
  VL_FORWARD(cblas_dsyrk, Order, Uplo, Trans, N, K, alpha, A, lda, beta, C, ldc);
}

}  // extern "C"
