#pragma once
// The vectorised code paths of our float32 kernels and how one is picked at run time: the
// widest this CPU runs, in the order GCC's target_clones resolver uses for softmax_rows.cpp's
// clones ("avx512f", "avx2", then the baseline): AVX-512F, else AVX2 (with FMA, which every
// AVX2 CPU has and the block products need), else the x86-64 baseline (SSE2). Tests and the
// exp claim call each path explicitly; the kernels call the selected one.
#include <array>

namespace vl {

enum class VectorPath { baseline, avx2, avx512 };
inline constexpr std::array<VectorPath, 3> all_vector_paths{VectorPath::baseline, VectorPath::avx2, VectorPath::avx512};

/// Whether this CPU can execute the path.
inline bool cpu_runs(VectorPath p) {
#if defined(__x86_64__) && defined(__GNUC__)
  switch (p) {
    case VectorPath::avx512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    case VectorPath::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case VectorPath::baseline: return true;
  }
  return false;
#else
  return p == VectorPath::baseline;
#endif
}
/// The widest path this CPU runs.
inline VectorPath widest_vector_path() {
  return cpu_runs(VectorPath::avx512) ? VectorPath::avx512 : cpu_runs(VectorPath::avx2) ? VectorPath::avx2 : VectorPath::baseline;
}
/// The path the kernels take: the widest the CPU runs, where GCC builds for x86-64 (the explicit
/// paths, unlike target_clones, also run under AddressSanitizer).
inline VectorPath selected_vector_path() {
#if defined(__GNUC__) && defined(__x86_64__)
  return widest_vector_path();
#else
  return VectorPath::baseline;
#endif
}
inline const char* vector_path_name(VectorPath p) {
  return p == VectorPath::avx512 ? "AVX-512" : p == VectorPath::avx2 ? "AVX2" : "baseline";
}

}  // namespace vl
