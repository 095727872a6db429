// block_gemm.hpp's products. The tile bodies (block_gemm_tiles.hpp) are written once and
// compiled three times, each inside one path's namespace and `#pragma GCC target`: tiles of
// 6 rows × 2 vectors of columns = 12 accumulators kept in registers while t runs over k (AVX2
// has 16 vector registers, AVX-512 32): for each t, 2 vectors of B's row t are loaded and each
// of the 6 rows broadcasts A[i][t] and fuses it into its 2 accumulators; the columns left over
// take one vector at a time, then one element at a time with std::fma. The baseline runs the
// same tiles on single elements (6 × 4 of them). Our own code rather than BLAS: OpenBLAS picks
// its kernels by CPU model and on a model it does not know falls back to SSE3 kernels (issue 23);
// this is the same code on every CPU, chosen by its features (kernels/platform/vector_path.hpp).
#include "kernels/fused/block_gemm.hpp"

#include <cmath>
#include <cstddef>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define VL_X86_PATHS 1
#endif

namespace vl {

namespace block_gemm_baseline {
#include "block_gemm_tiles.hpp"  // this directory: see that file
}  // namespace block_gemm_baseline

#ifdef VL_X86_PATHS
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace block_gemm_avx2 {
#include "block_gemm_tiles.hpp"  // this directory: see that file
struct F32 {
  using reg = __m256;
  static constexpr std::size_t width = 8;
  static inline reg load(const float* p) { return _mm256_loadu_ps(p); }
  static inline void store(float* p, reg v) { _mm256_storeu_ps(p, v); }
  static inline reg broadcast(float x) { return _mm256_set1_ps(x); }
  static inline reg zero() { return _mm256_setzero_ps(); }
  static inline reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
};
struct F64 {
  using reg = __m256d;
  static constexpr std::size_t width = 4;
  static inline reg load(const double* p) { return _mm256_loadu_pd(p); }
  static inline void store(double* p, reg v) { _mm256_storeu_pd(p, v); }
  static inline reg broadcast(double x) { return _mm256_set1_pd(x); }
  static inline reg zero() { return _mm256_setzero_pd(); }
  static inline reg fma(reg a, reg b, reg c) { return _mm256_fmadd_pd(a, b, c); }
};
}  // namespace block_gemm_avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,fma")
namespace block_gemm_avx512 {
#include "block_gemm_tiles.hpp"  // this directory: see that file
struct F32 {
  using reg = __m512;
  static constexpr std::size_t width = 16;
  static inline reg load(const float* p) { return _mm512_loadu_ps(p); }
  static inline void store(float* p, reg v) { _mm512_storeu_ps(p, v); }
  static inline reg broadcast(float x) { return _mm512_set1_ps(x); }
  static inline reg zero() { return _mm512_setzero_ps(); }
  static inline reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
};
struct F64 {
  using reg = __m512d;
  static constexpr std::size_t width = 8;
  static inline reg load(const double* p) { return _mm512_loadu_pd(p); }
  static inline void store(double* p, reg v) { _mm512_storeu_pd(p, v); }
  static inline reg broadcast(double x) { return _mm512_set1_pd(x); }
  static inline reg zero() { return _mm512_setzero_pd(); }
  static inline reg fma(reg a, reg b, reg c) { return _mm512_fmadd_pd(a, b, c); }
};
}  // namespace block_gemm_avx512
#pragma GCC pop_options
#endif

namespace {

template <class T>
void dispatch(VectorPath path, bool transpose_a, bool accumulate, std::size_t m, std::size_t n, std::size_t k, const T* a, std::size_t lda, const T* b,
              std::size_t ldb, T* c, std::size_t ldc) {
#ifdef VL_X86_PATHS
  if (path == VectorPath::avx512) {
    if constexpr (sizeof(T) == 4) return block_gemm_avx512::gemm<block_gemm_avx512::F32, 2>(transpose_a, accumulate, m, n, k, a, lda, b, ldb, c, ldc);
    else return block_gemm_avx512::gemm<block_gemm_avx512::F64, 2>(transpose_a, accumulate, m, n, k, a, lda, b, ldb, c, ldc);
  }
  if (path == VectorPath::avx2) {
    if constexpr (sizeof(T) == 4) return block_gemm_avx2::gemm<block_gemm_avx2::F32, 2>(transpose_a, accumulate, m, n, k, a, lda, b, ldb, c, ldc);
    else return block_gemm_avx2::gemm<block_gemm_avx2::F64, 2>(transpose_a, accumulate, m, n, k, a, lda, b, ldb, c, ldc);
  }
#endif
  (void)path;
  block_gemm_baseline::gemm<block_gemm_baseline::ScalarLane<T>, 4>(transpose_a, accumulate, m, n, k, a, lda, b, ldb, c, ldc);
}

}  // namespace

void block_gemm(VectorPath path, bool transpose_a, bool accumulate, std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                const float* b, std::size_t ldb, float* c, std::size_t ldc) {
  dispatch<float>(path, transpose_a, accumulate, m, n, k, a, lda, b, ldb, c, ldc);
}
void block_gemm(VectorPath path, bool transpose_a, bool accumulate, std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
                const double* b, std::size_t ldb, double* c, std::size_t ldc) {
  dispatch<double>(path, transpose_a, accumulate, m, n, k, a, lda, b, ldb, c, ldc);
}

}  // namespace vl
