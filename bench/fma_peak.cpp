// The machine's float32 FMA ceiling: the rate no float32 kernel on this machine can beat, to
// judge the attention kernels' rates and the time targets against.
//
//   fma_peak [--threads N]     prints one JSON object: GFLOP/s for 1 thread and for N threads
//                              (default: all cores), with the widest FMA this CPU has
//
// Each thread runs 12 independent chains of fused multiply-adds a ← a·b + c on registers only
// (AVX-512: 16 floats per instruction, else AVX2: 8), so neither memory nor dependencies limit
// the rate: 2 flops per lane per instruction. The chains stay finite (b < 1, c small).
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kChains = 12;
constexpr long kIterations = 100'000'000;

__attribute__((target("avx512f"))) float chains_avx512(long iterations) {
  __m512 a[kChains];
  for (int i = 0; i < kChains; ++i) a[i] = _mm512_set1_ps(0.001f * float(i));
  const __m512 b = _mm512_set1_ps(0.9999f), c = _mm512_set1_ps(1e-6f);
  for (long it = 0; it < iterations; ++it)
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) a[i] = _mm512_fmadd_ps(a[i], b, c);
  float sum = 0;
  for (int i = 0; i < kChains; ++i) sum += _mm512_reduce_add_ps(a[i]);
  return sum;
}

__attribute__((target("avx2,fma"))) float chains_avx2(long iterations) {
  __m256 a[kChains];
  for (int i = 0; i < kChains; ++i) a[i] = _mm256_set1_ps(0.001f * float(i));
  const __m256 b = _mm256_set1_ps(0.9999f), c = _mm256_set1_ps(1e-6f);
  for (long it = 0; it < iterations; ++it)
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) a[i] = _mm256_fmadd_ps(a[i], b, c);
  float lanes[8], sum = 0;
  for (int i = 0; i < kChains; ++i) {
    _mm256_storeu_ps(lanes, a[i]);
    for (float x : lanes) sum += x;
  }
  return sum;
}

// GFLOP/s of `threads` threads each running the chains at `width` floats per instruction.
double rate(int threads, int width) {
  std::vector<float> sink(threads);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&sink, t, width] { sink[t] = width == 16 ? chains_avx512(kIterations) : chains_avx2(kIterations); });
  for (auto& th : pool) th.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (sink[0] != sink[0]) std::fprintf(stderr, "fma_peak: the chains gave NaN\n");
  return 2.0 * width * kChains * double(kIterations) * threads / seconds / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
      if (threads < 1) {
        std::fprintf(stderr, "fma_peak: --threads must be a positive integer, got '%s'\n", argv[i]);
        return 2;
      }
    } else {
      std::fprintf(stderr, "fma_peak: unknown argument '%s' (usage: fma_peak [--threads N])\n", argv[i]);
      return 2;
    }
  }
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr, "fma_peak: this CPU has no AVX2 FMA; nothing to measure\n");
    return 1;
  }
  const bool avx512 = __builtin_cpu_supports("avx512f");
  // Best of five, and of both widths where AVX-512 exists (on some cores 512-bit FMAs run at
  // the 256-bit rate: the ceiling is whichever is faster).
  double one = 0, all = 0, all_avx2 = 0;
  std::string isa = "avx2";
  for (int width : avx512 ? std::vector<int>{8, 16} : std::vector<int>{8}) {
    for (int rep = 0; rep < 5; ++rep) {  // 5, as compare.py takes the kernels' best of 5
      const double r1 = rate(1, width), rn = rate(threads, width);
      if (rn > all) isa = width == 16 ? "avx512f" : "avx2";
      one = std::max(one, r1);
      all = std::max(all, rn);
      if (width == 8) all_avx2 = std::max(all_avx2, rn);
    }
  }
  // gflops_all_threads_avx2: the ceiling of the AVX2 code path (8 lanes), on any CPU. float64's
  // ceiling is half of float32's (the same FMA instructions, half the lanes).
  std::printf("{\"gflops_1thread\": %.2f, \"gflops_all_threads\": %.2f, \"gflops_all_threads_avx2\": %.2f, \"threads\": %d, "
              "\"isa\": \"%s\"}\n",
              one, all, all_avx2, threads, isa.c_str());
  return 0;
}
