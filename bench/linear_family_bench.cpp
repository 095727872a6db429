// The linear family's forms against n (kernels/reference/linear_family_heads.hpp), and the fast
// chunked kernel at T = 16k (kernels/fused/linear_family_fast.hpp): one head,
// d_k = d_v = 64, chunk 64, float64, per-head decay. The lesson's cost claims count these kernels'
// multiply-adds (specs/linear_family.md); this is their measured time, from which the log-log
// slope over n is read beside the counted one (not a test: timing stays out of ctest).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "kernels/fused/linear_family_fast.hpp"
#include "kernels/platform/blas_threads.hpp"
#include "kernels/reference/linear_family_heads.hpp"

namespace {

template <class T = double>
vl::FamilyInputs<T> inputs(std::size_t n, std::size_t d) {
  std::mt19937_64 gen(21);
  std::normal_distribution<double> normal;
  vl::FamilyInputs<T> in;
  in.q = xt::zeros<T>({std::size_t(1), std::size_t(1), n, d});
  in.k = in.q;
  in.v = in.q;
  for (auto* x : {&in.q, &in.k, &in.v})
    for (auto& e : *x) e = T(normal(gen));
  for (std::size_t t = 0; t < n; ++t) {
    auto key = xt::view(in.k, 0, 0, t);
    key /= std::sqrt(xt::sum(key * key)());
  }
  in.g = xt::zeros<T>({std::size_t(1), std::size_t(1), n, std::size_t(1)});
  for (auto& e : in.g) e = T(-std::log1p(std::exp(-(normal(gen) + 2))));
  in.beta = xt::zeros<T>({std::size_t(1), std::size_t(1), n});
  for (auto& e : in.beta) e = T(1 / (1 + std::exp(-normal(gen))));
  return in;
}

// Each iteration's multiply-adds, counted as the cost claim counts them, are reported beside the
// time (the counter `multiply_adds`), so the time's slope can be read against the count's; and
// "rate", two flops per counted multiply-add per second (bench/compare.py divides it by the FMA
// ceiling).
template <class T>
void family(benchmark::State& state, vl::UpdateRule rule, vl::FamilyForm form) {
  const std::size_t n = std::size_t(state.range(0)), d = 64;
  const vl::FamilyInputs<T> in = inputs<T>(n, d);
  vl::multiply_adds() = 0;
  for (auto _ : state) benchmark::DoNotOptimize(vl::linear_family<T>(in, {rule, form, 64, {}}).o.data());
  const double per_iteration = double(vl::multiply_adds()) / double(state.iterations());
  state.counters["multiply_adds"] = per_iteration;
  state.counters["rate"] = benchmark::Counter(2 * per_iteration, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["n"] = double(n);
  state.SetComplexityN(state.range(0));
}
void BM_linear_family(benchmark::State& state, vl::UpdateRule rule, vl::FamilyForm form) { family<double>(state, rule, form); }
void BM_linear_family_f32(benchmark::State& state, vl::UpdateRule rule) { family<float>(state, rule, vl::FamilyForm::chunked); }

// The fast chunked kernel (kernels/fused/linear_family_fast.hpp) on the same inputs, every thread.
// It tallies nothing; its "rate" counts the multiply-adds the reference's chunked form tallies for
// the same problem (the same eight products per chunk and the UT substitution), counted once here.
void BM_linear_family_fast_f32(benchmark::State& state, vl::UpdateRule rule) {
  const std::size_t n = std::size_t(state.range(0)), d = 64;
  const vl::FamilyInputs<float> in = inputs<float>(n, d);
  const vl::FamilyOptions o{rule, vl::FamilyForm::chunked, 64, {}};
  vl::multiply_adds() = 0;
  vl::linear_family<float>(in, o);
  const double counted = double(vl::multiply_adds());
  vl::blas::SingleThreaded quiet(true);  // the counting run's OpenBLAS pool, stopped while ours run
  for (auto _ : state) benchmark::DoNotOptimize(vl::linear_family_chunked_fast<float>(in, o).o.data());
  state.counters["multiply_adds"] = counted;
  state.counters["rate"] = benchmark::Counter(2 * counted, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["n"] = double(n);
}

}  // namespace

// The chunked form, every rule, n = 1k … 64k (counted: linear in n); the recurrent form over the
// same n (linear, one token at a time); the parallel form to 4k (quadratic).
BENCHMARK_CAPTURE(BM_linear_family, chunked_linear, vl::UpdateRule::linear, vl::FamilyForm::chunked)->RangeMultiplier(4)->Range(1024, 65536)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK_CAPTURE(BM_linear_family, chunked_gated, vl::UpdateRule::gated, vl::FamilyForm::chunked)->RangeMultiplier(4)->Range(1024, 65536)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK_CAPTURE(BM_linear_family, chunked_delta, vl::UpdateRule::delta, vl::FamilyForm::chunked)->RangeMultiplier(4)->Range(1024, 65536)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK_CAPTURE(BM_linear_family, chunked_gated_delta, vl::UpdateRule::gated_delta, vl::FamilyForm::chunked)->RangeMultiplier(4)->Range(1024, 65536)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK_CAPTURE(BM_linear_family, recurrent_gated_delta, vl::UpdateRule::gated_delta, vl::FamilyForm::recurrent)->RangeMultiplier(4)->Range(1024, 65536)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK_CAPTURE(BM_linear_family, parallel_gated_delta, vl::UpdateRule::gated_delta, vl::FamilyForm::parallel)->RangeMultiplier(2)->Range(1024, 4096)->Unit(benchmark::kMillisecond)->Complexity();
// Issue 40: the chunked forms in float32 at T = 16k, against the FMA ceiling (bench/compare.py).
BENCHMARK_CAPTURE(BM_linear_family_f32, gated, vl::UpdateRule::gated)->Arg(16384)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK_CAPTURE(BM_linear_family_f32, delta, vl::UpdateRule::delta)->Arg(16384)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK_CAPTURE(BM_linear_family_f32, gated_delta, vl::UpdateRule::gated_delta)->Arg(16384)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK_CAPTURE(BM_linear_family_fast_f32, gated, vl::UpdateRule::gated)->Arg(16384)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK_CAPTURE(BM_linear_family_fast_f32, delta, vl::UpdateRule::delta)->Arg(16384)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK_CAPTURE(BM_linear_family_fast_f32, gated_delta, vl::UpdateRule::gated_delta)->Arg(16384)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK_MAIN();
