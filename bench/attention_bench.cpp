// Each attention kernel against the sequence length n (d = 64, one head), float32 unless the
// name says f64, plus the BLAS rates they are measured against; the fused kernel also with BLAS
// products, on each vector path explicitly, and on batched heads (B = 4, H = 8). Counters: flops/s ("rate") on
// the kernel's nominal work — 4·n²·d for softmax attention (QKᵀ and PV), half of it causal.
//
//   attention_bench --benchmark_format=json   (bench/compare.py does this)
#include <benchmark/benchmark.h>

#include <random>

#include "kernels/fused/blas_gemm.hpp"  // vl::blas::gemm: cblas_sgemm, row-major
#include "kernels/reference/attention.hpp"
#include "kernels/reference/feature_map.hpp"
#include "kernels/fused/fused_attention.hpp"
#include "kernels/fused/fused_attention_backward.hpp"
#include "kernels/reference/linear_attention.hpp"
#include "kernels/fused/linear_attention_fast.hpp"

namespace {

constexpr std::size_t kD = 64;

template <class T>
xt::xtensor<T, 2> normal(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  xt::xtensor<T, 2> x = xt::xtensor<T, 2>::from_shape({n, d});
  for (auto& e : x) e = T(nd(g));
  return x;
}

void set_rate(benchmark::State& state, double flops_per_iteration) {
  state.counters["n"] = double(state.range(0));
  state.counters["rate"] = benchmark::Counter(flops_per_iteration, benchmark::Counter::kIsIterationInvariantRate);
}

// The plain reference kernel: materialises scores and weights (xtensor + BLAS).
void BM_attention_plain(benchmark::State& state) {
  const std::size_t n = state.range(0);
  const auto q = normal<float>(n, kD, 1), k = normal<float>(n, kD, 2), v = normal<float>(n, kD, 3);
  for (auto _ : state) benchmark::DoNotOptimize(vl::attention<float>(q, k, v).output.data());
  set_rate(state, 4.0 * n * n * kD);
}

// The listing's computation, materialised, the fast way: S = QKᵀ/√d (sgemm), softmax in place, SV.
void BM_attention_materialized(benchmark::State& state) {
  const std::size_t n = state.range(0);
  const auto q = normal<float>(n, kD, 1), k = normal<float>(n, kD, 2), v = normal<float>(n, kD, 3);
  for (auto _ : state) benchmark::DoNotOptimize(vl::attention_materialized<float>(q, k, v).output.data());
  set_rate(state, 4.0 * n * n * kD);
}

// The fused kernel on (B, H, n, d = 64). products: our block_gemm on the selected path (-1), on
// a given path (0 baseline, 1 AVX2, 2 AVX-512: skipped where the CPU lacks it), or BLAS (-2).
// "rate_computed": 4·d flops per score cell of the key blocks it computes (causal: the blocks
// above the diagonal are skipped, the diagonal ones computed whole).
template <class T>
void fused(benchmark::State& state, bool causal, std::size_t threads, int products = -1, std::size_t B = 1, std::size_t H = 1) {
  const std::size_t n = state.range(0);
  std::mt19937_64 g(1);
  std::normal_distribution<double> nd;
  xt::xtensor<T, 4> q = xt::xtensor<T, 4>::from_shape({B, H, n, kD}), k = q, v = q;
  for (auto* x : {&q, &k, &v})
    for (auto& e : *x) e = T(nd(g));
  vl::AttentionOptions<T> o;
  o.causal = causal;
  vl::FusedConfig cfg;
  cfg.threads = threads;
  cfg.blas_products = products == -2;
  if (products >= 0) {
    cfg.path = vl::all_vector_paths[std::size_t(products)];
    if (!vl::cpu_runs(*cfg.path)) {
      state.SkipWithError("this CPU cannot run that vector path");
      return;
    }
  }
  vl::FusedStats stats;
  for (auto _ : state) benchmark::DoNotOptimize(vl::fused_attention<T>(q, k, v, o, cfg, &stats).data());
  set_rate(state, double(B * H) * (causal ? 2.0 : 4.0) * n * n * kD);
  const double cells = double(stats.key_blocks_computed) * double(std::min(cfg.block_q, n)) * double(std::min(cfg.block_k, n));
  state.counters["rate_computed"] = benchmark::Counter(4.0 * kD * cells, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["workspace_MiB"] = double(stats.workspace_bytes) / (1 << 20);
  state.counters["threads"] = double(stats.threads);
}
// Block sizes (n, block_q, block_k), one thread (or `threads`): the tuning of the defaults.
template <class T>
void fused_blocks(benchmark::State& state, std::size_t threads = 1, std::optional<vl::VectorPath> path = {}) {
  const std::size_t n = state.range(0);
  const auto q = normal<T>(n, kD, 1), k = normal<T>(n, kD, 2), v = normal<T>(n, kD, 3);
  vl::FusedConfig cfg;
  cfg.block_q = state.range(1);
  cfg.block_k = state.range(2);
  cfg.threads = threads;
  cfg.path = path;
  if (path && !vl::cpu_runs(*path)) {
    state.SkipWithError("this CPU cannot run that vector path");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(vl::fused_attention<T>(q, k, v, {}, cfg).data());
  set_rate(state, 4.0 * n * n * kD);
}
void BM_attention_fused_blocks(benchmark::State& s) { fused_blocks<float>(s); }
void BM_attention_fused_blocks_f64(benchmark::State& s) { fused_blocks<double>(s); }
void BM_attention_fused_blocks_2threads(benchmark::State& s) { fused_blocks<float>(s, 2); }
void BM_attention_fused_blocks_2threads_avx2(benchmark::State& s) { fused_blocks<float>(s, 2, vl::VectorPath::avx2); }
void BM_attention_fused(benchmark::State& s) { fused<float>(s, false, 0); }
void BM_attention_fused_1thread(benchmark::State& s) { fused<float>(s, false, 1); }
void BM_attention_fused_causal(benchmark::State& s) { fused<float>(s, true, 0); }
void BM_attention_fused_f64(benchmark::State& s) { fused<double>(s, false, 0); }
// Issue 23's comparisons: the same calls with BLAS products, on each explicit vector path, batched heads.
void BM_attention_fused_blas(benchmark::State& s) { fused<float>(s, false, 0, -2); }
void BM_attention_fused_causal_blas(benchmark::State& s) { fused<float>(s, true, 0, -2); }
void BM_attention_fused_f64_blas(benchmark::State& s) { fused<double>(s, false, 0, -2); }
void BM_attention_fused_baseline(benchmark::State& s) { fused<float>(s, false, 0, 0); }
void BM_attention_fused_avx2(benchmark::State& s) { fused<float>(s, false, 0, 1); }
void BM_attention_fused_avx512(benchmark::State& s) { fused<float>(s, false, 0, 2); }
void BM_attention_fused_batched(benchmark::State& s) { fused<float>(s, false, 0, -1, 4, 8); }
void BM_attention_fused_batched_blas(benchmark::State& s) { fused<float>(s, false, 0, -2, 4, 8); }

// The fused backward from the forward's saved O and lse (the part FlashAttention-2 times), one
// head. "rate": FlashAttention-2's count (Dao 2023, §4.1), the backward as 2.5 × the forward's
// 4·n²·d = 10·n²·d flops (five n × n × d products: S, dP, dV, dK, dQ), half of it causal, which
// is also what our kernel computes (fused_attention_backward.hpp).
template <class T>
void fused_backward(benchmark::State& state, bool causal, std::size_t threads, bool blocks = false) {
  const std::size_t n = state.range(0);
  std::mt19937_64 g(1);
  std::normal_distribution<double> nd;
  xt::xtensor<T, 4> q = xt::xtensor<T, 4>::from_shape({1, 1, n, kD}), k = q, v = q, d_out = q;
  for (auto* x : {&q, &k, &v, &d_out})
    for (auto& e : *x) e = T(nd(g));
  vl::AttentionOptions<T> o;
  o.causal = causal;
  vl::FusedConfig cfg;
  cfg.threads = threads;
  if (blocks) {  // (n, block_q, block_k): the block sizes' tuning
    cfg.block_q = state.range(1);
    cfg.block_k = state.range(2);
  }
  const auto saved = vl::fused_attention_saved<T>(q, k, v, o, cfg);
  vl::FusedStats stats;
  for (auto _ : state) benchmark::DoNotOptimize(vl::fused_attention_backward<T>(q, k, v, saved, d_out, o, cfg, &stats).dq.data());
  set_rate(state, (causal ? 5.0 : 10.0) * n * n * kD);
  state.counters["workspace_MiB"] = double(stats.workspace_bytes) / (1 << 20);
  state.counters["threads"] = double(stats.threads);
}
void BM_attention_fused_backward(benchmark::State& s) { fused_backward<float>(s, false, 0); }
void BM_attention_fused_backward_1thread(benchmark::State& s) { fused_backward<float>(s, false, 1); }
void BM_attention_fused_backward_causal(benchmark::State& s) { fused_backward<float>(s, true, 0); }
void BM_attention_fused_backward_f64(benchmark::State& s) { fused_backward<double>(s, false, 0); }
void BM_attention_fused_backward_blocks(benchmark::State& s) { fused_backward<float>(s, false, 0, true); }

// Causal linear attention, chunked form (chunk 64), φ = elu + 1 applied outside the timing.
void BM_linear_chunked_xtensor(benchmark::State& state) {
  const std::size_t n = state.range(0);
  const auto pq = vl::elu_plus_one<float, 2>(normal<float>(n, kD, 1)), pk = vl::elu_plus_one<float, 2>(normal<float>(n, kD, 2));
  const auto v = normal<float>(n, kD, 3);
  for (auto _ : state) benchmark::DoNotOptimize(vl::linear_attention_chunked<float>(pq, pk, v, 64).data());
  state.counters["n"] = double(n);
}
void BM_linear_chunked_fast(benchmark::State& state) {
  const std::size_t n = state.range(0);
  const auto pq = vl::elu_plus_one<float, 2>(normal<float>(n, kD, 1)), pk = vl::elu_plus_one<float, 2>(normal<float>(n, kD, 2));
  const auto v = normal<float>(n, kD, 3);
  for (auto _ : state) benchmark::DoNotOptimize(vl::linear_attention_chunked_fast<float>(pq, pk, v, 64).data());
  state.counters["n"] = double(n);
}

// sgemm rates: the shape of S = Q Kᵀ (n × n × d), and a square n³ product (the machine's best).
void BM_sgemm_nxnxd(benchmark::State& state) {
  const std::size_t n = state.range(0);
  const auto a = normal<float>(n, kD, 1), b = normal<float>(n, kD, 2);
  std::vector<float> c(n * n);
  for (auto _ : state) {
    vl::blas::gemm(false, true, n, n, kD, 1.0f, a.data(), kD, b.data(), kD, 0.0f, c.data(), n);
    benchmark::ClobberMemory();
  }
  set_rate(state, 2.0 * n * n * kD);
}
void BM_sgemm_square(benchmark::State& state) {
  const std::size_t n = state.range(0);
  const auto a = normal<float>(n, n, 1), b = normal<float>(n, n, 2);
  std::vector<float> c(n * n);
  for (auto _ : state) {
    vl::blas::gemm(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    benchmark::ClobberMemory();
  }
  set_rate(state, 2.0 * n * n * n);
}

}  // namespace

BENCHMARK(BM_attention_plain)->RangeMultiplier(2)->Range(512, 4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_materialized)->RangeMultiplier(2)->Range(512, 4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused)->RangeMultiplier(2)->Range(512, 16384)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_1thread)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_blocks)
    ->ArgsProduct({{4096}, {64, 128, 256}, {64, 128, 256, 512}})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_blocks_2threads)
    ->ArgsProduct({{1024, 2048, 4096}, {32, 64, 128, 256}, {32, 64, 128, 256}})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_blocks_2threads_avx2)
    ->ArgsProduct({{1024, 4096}, {64, 128}, {64, 128, 256}})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_blocks_f64)
    ->ArgsProduct({{4096}, {64, 128}, {64, 128, 256}})
    ->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_causal)->RangeMultiplier(2)->Range(512, 16384)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_f64)->Arg(4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_blas)->Arg(4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_causal_blas)->Arg(4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_f64_blas)->Arg(4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_baseline)->Arg(1024)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_avx2)->Arg(4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_avx512)->Arg(4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_batched)->Arg(1024)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_batched_blas)->Arg(1024)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_backward)->RangeMultiplier(2)->Range(1024, 4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_backward_blocks)
    ->ArgsProduct({{1024, 4096}, {64, 128}, {64, 128, 256}})
    ->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_backward_1thread)->Arg(4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_backward_causal)->Arg(4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_attention_fused_backward_f64)->Arg(4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_linear_chunked_xtensor)->RangeMultiplier(4)->Range(4096, 262144)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_linear_chunked_fast)->RangeMultiplier(4)->Range(4096, 262144)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_sgemm_nxnxd)->Arg(4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_sgemm_square)->Arg(2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

BENCHMARK_MAIN();
