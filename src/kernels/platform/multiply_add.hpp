#pragma once
// Fused multiply-add, out = a·b + c rounded once, per vector path (kernels/platform/vector_path.hpp), for
// exp_f32 and exp_f64's vector bodies (one policy per path, a template argument of theirs):
//   MultiplyAddBaseline  lane by lane with std::fma (glibc's fma where the target has no FMA
//                        instruction: correctly rounded, so the same bits, only slower);
//   MultiplyAddAvx2      one vfmadd per 8 floats / 4 doubles (16 floats: two of them);
//   MultiplyAddAvx512    one vfmadd per 16 floats / 8 doubles.
// Every one rounds a·b + c exactly once, so a lane gives the scalar std::fma's bits on every
// path. The member functions carry their path's target attribute; they are inlined into the
// caller compiled for that path (online_softmax_block.hpp, exp_rows.hpp), never called from
// code built for a narrower one. Results go out through a reference, as exp_f32's (a 64-byte
// vector by value has another ABI on a narrower target: GCC's -Wpsabi).
#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/platform/vector_types.hpp"

namespace vl::simd {

struct MultiplyAddBaseline {
  template <class F>
  static inline void fma(const F& a, const F& b, const F& c, F& out) {
    if constexpr (std::is_floating_point_v<F>) {
      out = std::fma(a, b, c);
    } else {
      // Built in a vector whose every lane starts set, then stored whole: writing the lanes of an
      // unset `out` one by one reads as a use of it to GCC at -O1 (-Wmaybe-uninitialized).
      constexpr std::size_t lanes = sizeof(F) / sizeof(a[0]);
      F r{};
      for (std::size_t i = 0; i < lanes; ++i) r[i] = std::fma(a[i], b[i], c[i]);
      out = r;
    }
  }
};

#if defined(__GNUC__) && defined(__x86_64__)
struct MultiplyAddAvx2 {
  __attribute__((target("avx2,fma"))) static inline void fma(const float& a, const float& b, const float& c, float& out) {
    out = std::fma(a, b, c);
  }
  __attribute__((target("avx2,fma"))) static inline void fma(const double& a, const double& b, const double& c, double& out) {
    out = std::fma(a, b, c);
  }
  __attribute__((target("avx2,fma"))) static inline void fma(const f32x8& a, const f32x8& b, const f32x8& c, f32x8& out) {
    out = f32x8(_mm256_fmadd_ps(__m256(a), __m256(b), __m256(c)));
  }
  __attribute__((target("avx2,fma"))) static inline void fma(const f64x4& a, const f64x4& b, const f64x4& c, f64x4& out) {
    out = f64x4(_mm256_fmadd_pd(__m256d(a), __m256d(b), __m256d(c)));
  }
  // 16 floats as two halves of 8 (exp_rows.hpp's vectors on this path).
  __attribute__((target("avx2,fma"))) static inline void fma(const f32x16& a, const f32x16& b, const f32x16& c, f32x16& out) {
    f32x8 h[3][2], r[2];
    std::memcpy(h[0], &a, sizeof a);
    std::memcpy(h[1], &b, sizeof b);
    std::memcpy(h[2], &c, sizeof c);
    for (int i = 0; i < 2; ++i) fma(h[0][i], h[1][i], h[2][i], r[i]);
    std::memcpy(&out, r, sizeof out);
  }
};

struct MultiplyAddAvx512 {
  __attribute__((target("avx512f,fma"))) static inline void fma(const float& a, const float& b, const float& c, float& out) {
    out = std::fma(a, b, c);
  }
  __attribute__((target("avx512f,fma"))) static inline void fma(const double& a, const double& b, const double& c, double& out) {
    out = std::fma(a, b, c);
  }
  __attribute__((target("avx512f,fma"))) static inline void fma(const f32x16& a, const f32x16& b, const f32x16& c, f32x16& out) {
    out = f32x16(_mm512_fmadd_ps(__m512(a), __m512(b), __m512(c)));
  }
  __attribute__((target("avx512f,fma"))) static inline void fma(const f64x8& a, const f64x8& b, const f64x8& c, f64x8& out) {
    out = f64x8(_mm512_fmadd_pd(__m512d(a), __m512d(b), __m512d(c)));
  }
};
#endif

}  // namespace vl::simd
