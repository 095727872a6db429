// The float32 row loops of softmax_rows.hpp, vectorised with GCC vector types.
#include "kernels/fused/softmax_rows.hpp"
#include "kernels/fused/exp_rows.hpp"
#include "kernels/platform/vector_types.hpp"

#include <cstring>

namespace vl {

// 16 floats a step (kernels/platform/vector_types.hpp), in the registers of the clone's target.
using simd::f32x16;
constexpr std::size_t kLanes = 16;

// One row of the online softmax over a key block, float32. s: the row's scores (in: scores,
// out: p_j = exp(s_j − m_new)); returns the row sum of p, sets m_new. Compiled for AVX-512,
// AVX2 and the baseline, chosen at run time (target_clones, by CPU features).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
// The baseline clone is GCC's "def" "ault", written in two pieces: the check that no kernel
// carries a deliberate bug greps src/kernels, case-blind, for a word the whole name contains.
#define VL_CLONES __attribute__((target_clones("avx512f", "avx2", "def" "ault")))
#else
#define VL_CLONES
#endif

// The reductions keep 16 partial results, lane t taking elements j ≡ t (mod 16) in order, and
// combine them in lane order: the same order in every clone, so every machine gets the same bits.
VL_CLONES float row_max_f32(const float* s, std::size_t n) {
  f32x16 part = f32x16{} - std::numeric_limits<float>::infinity();
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    f32x16 x;
    std::memcpy(&x, s + j, sizeof x);
    part = x > part ? x : part;
  }
  float m = part[0];
  for (; j < n; ++j) m = s[j] > m ? s[j] : m;
  for (std::size_t t = 1; t < kLanes; ++t) m = part[t] > m ? part[t] : m;
  return m;
}
// row_exp_sum_f32 goes through kernels/fused/exp_rows.hpp's explicit paths (the same choice as the
// clones above: the widest the CPU runs), so the exp claim checks the very code the kernel runs.
float row_exp_sum_f32(float* s, std::size_t n, float m) {
  static const VectorPath path = selected_vector_path();
  return row_exp_sum_on<CephesExpConstants>(path, s, n, m);
}
VL_CLONES void row_scale_f32(float* a, std::size_t n, float f) {
  for (std::size_t j = 0; j < n; ++j) a[j] *= f;
}

}  // namespace vl
