// block_gemm.cpp's tile bodies, written once over a "vector" type V (load, store, broadcast,
// zero, fma; `width` elements). No include guard, on purpose: block_gemm.cpp includes this file
// once per vector path, inside that path's namespace and `#pragma GCC target`, so that every
// function here is compiled for that path's instructions (a target attribute on a template
// that always_inlines intrinsics would not be). Include nothing here.

// A "vector" of one element: the baseline, and every path's last columns. std::fma is the
// scalar fused multiply-add (one instruction where the target has FMA, glibc's correctly
// rounded fma elsewhere): the same operation as one lane of the vector one.
template <class T>
struct ScalarLane {
  using reg = T;
  static constexpr std::size_t width = 1;
  static inline reg load(const T* p) { return *p; }
  static inline void store(T* p, reg v) { *p = v; }
  static inline reg broadcast(T x) { return x; }
  static inline reg zero() { return T(0); }
  static inline reg fma(reg a, reg b, reg c) { return std::fma(a, b, c); }
};

// A (m × k) as stored: row-major (A[i][t] = a[i·lda + t]) or transposed (A[i][t] = a[t·lda + i],
// i.e. Aᵀ stored row-major). A compile-time choice, so that the broadcasts of a tile's rows read
// fixed offsets from one pointer.
template <bool TransposeA, class T>
inline const T& a_at(const T* a, std::size_t lda, std::size_t i, std::size_t t) {
  return TransposeA ? a[t * lda + i] : a[i * lda + t];
}
// Where row i of A starts (as a pointer that a_at then offsets by t).
template <bool TransposeA, class T>
inline const T* a_row(const T* a, std::size_t lda, std::size_t i) {
  return TransposeA ? a + i : a + i * lda;
}

// One tile: rows [0, R) × columns [0, CV·width) of C, from A's rows and B's columns there.
//   C[i][j] ← fma(A[i][t], B[t][j], C[i][j]),  t = 0 … k−1   (from C[i][j] if Acc, else from 0)
// The loops over i and j are unrolled by pragma so that GCC turns acc into R·CV registers before
// its loop passes run: left to its later unrolling, it kept acc as an array on the stack and
// moved it to registers only around the loop over t, so every tile stored and reloaded it (~36
// stack moves on a 6 × 2 tile; with them gone the fused forward runs 5–7 % faster, issue 40's note).
template <class V, int R, int CV, bool TA, bool Acc, class T>
inline void tile(std::size_t k, const T* a, std::size_t lda, const T* b, std::size_t ldb, T* c, std::size_t ldc) {
  typename V::reg acc[R][CV];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 16
    for (int j = 0; j < CV; ++j) acc[i][j] = Acc ? V::load(c + i * ldc + j * V::width) : V::zero();
  for (std::size_t t = 0; t < k; ++t) {
    typename V::reg bt[CV];
#pragma GCC unroll 16
    for (int j = 0; j < CV; ++j) bt[j] = V::load(b + t * ldb + j * V::width);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const typename V::reg ai = V::broadcast(a_at<TA>(a, lda, i, t));
#pragma GCC unroll 16
      for (int j = 0; j < CV; ++j) acc[i][j] = V::fma(ai, bt[j], acc[i][j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 16
    for (int j = 0; j < CV; ++j) V::store(c + i * ldc + j * V::width, acc[i][j]);
}

// R rows of C: tiles of CV vectors, then single vectors, then single elements.
template <class V, int R, int CV, bool TA, bool Acc, class T>
inline void row_strip(std::size_t n, std::size_t k, const T* a, std::size_t lda, const T* b, std::size_t ldb, T* c,
                      std::size_t ldc) {
  std::size_t j = 0;
  for (; j + CV * V::width <= n; j += CV * V::width) tile<V, R, CV, TA, Acc>(k, a, lda, b + j, ldb, c + j, ldc);
  for (; j + V::width <= n; j += V::width) tile<V, R, 1, TA, Acc>(k, a, lda, b + j, ldb, c + j, ldc);
  for (; j < n; ++j) tile<ScalarLane<T>, R, 1, TA, Acc>(k, a, lda, b + j, ldb, c + j, ldc);
}

// All of C: strips of 6 rows, then one strip of the 1 … 5 rows left; but 7 or 8 rows left are
// 4 + 3 or 4 + 4, not 6 + 1 or 6 + 2: a strip of 1 or 2 rows has CV or 2·CV accumulators (2 or 4
// on the vector paths), too few chains to keep two FMA units busy through the FMA's latency
// (m = 128: 4 + 4 takes the time of 8 rows, 6 + 2 about that of 10).
template <class V, int CV, bool TA, bool Acc, class T>
void gemm_as(std::size_t m, std::size_t n, std::size_t k, const T* a, std::size_t lda, const T* b, std::size_t ldb, T* c,
             std::size_t ldc) {
  const std::size_t left = m >= 6 && (m % 6 == 1 || m % 6 == 2) ? 6 + m % 6 : m % 6;  // rows after the 6-row strips
  std::size_t i = 0;
  for (; i + left < m; i += 6) row_strip<V, 6, CV, TA, Acc>(n, k, a_row<TA>(a, lda, i), lda, b, ldb, c + i * ldc, ldc);
  if (m - i > 6) {  // 7 or 8: first 4
    row_strip<V, 4, CV, TA, Acc>(n, k, a_row<TA>(a, lda, i), lda, b, ldb, c + i * ldc, ldc);
    i += 4;
  }
  a = a_row<TA>(a, lda, i), c += i * ldc;
  switch (m - i) {
    case 5: row_strip<V, 5, CV, TA, Acc>(n, k, a, lda, b, ldb, c, ldc); break;
    case 4: row_strip<V, 4, CV, TA, Acc>(n, k, a, lda, b, ldb, c, ldc); break;
    case 3: row_strip<V, 3, CV, TA, Acc>(n, k, a, lda, b, ldb, c, ldc); break;
    case 2: row_strip<V, 2, CV, TA, Acc>(n, k, a, lda, b, ldb, c, ldc); break;
    case 1: row_strip<V, 1, CV, TA, Acc>(n, k, a, lda, b, ldb, c, ldc); break;
    case 0: break;
  }
}

// C = A · B or C += A · B, with A row-major or transposed.
template <class V, int CV, class T>
void gemm(bool transpose_a, bool accumulate, std::size_t m, std::size_t n, std::size_t k, const T* a, std::size_t lda, const T* b,
          std::size_t ldb, T* c, std::size_t ldc) {
  if (transpose_a) {
    if (accumulate) gemm_as<V, CV, true, true>(m, n, k, a, lda, b, ldb, c, ldc);
    else gemm_as<V, CV, true, false>(m, n, k, a, lda, b, ldb, c, ldc);
  } else {
    if (accumulate) gemm_as<V, CV, false, true>(m, n, k, a, lda, b, ldb, c, ldc);
    else gemm_as<V, CV, false, false>(m, n, k, a, lda, b, ldb, c, ldc);
  }
}
