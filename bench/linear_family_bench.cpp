// The linear family's chunked form against n (kernels/reference/linear_family_heads.hpp): one head,
// d_k = d_v = 64, chunk 64, float64, per-head decay, for each update rule. The lesson's cost
// claim counts this kernel's multiply-adds (specs/linear_family.md); this is its measured time,
// from which the log-log slope over n = 1k … 64k is read (not a test: timing stays out of ctest).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "kernels/reference/linear_family_heads.hpp"

namespace {

vl::FamilyInputs<double> inputs(std::size_t n, std::size_t d) {
  std::mt19937_64 gen(21);
  std::normal_distribution<double> normal;
  vl::FamilyInputs<double> in;
  in.q = xt::zeros<double>({std::size_t(1), std::size_t(1), n, d});
  in.k = in.q;
  in.v = in.q;
  for (auto* x : {&in.q, &in.k, &in.v})
    for (auto& e : *x) e = normal(gen);
  for (std::size_t t = 0; t < n; ++t) {
    auto key = xt::view(in.k, 0, 0, t);
    key /= std::sqrt(xt::sum(key * key)());
  }
  in.g = xt::zeros<double>({std::size_t(1), std::size_t(1), n, std::size_t(1)});
  for (auto& e : in.g) e = -std::log1p(std::exp(-(normal(gen) + 2)));
  in.beta = xt::zeros<double>({std::size_t(1), std::size_t(1), n});
  for (auto& e : in.beta) e = 1 / (1 + std::exp(-normal(gen)));
  return in;
}

void BM_linear_family_chunked(benchmark::State& state, vl::UpdateRule rule) {
  const std::size_t n = std::size_t(state.range(0)), d = 64;
  const vl::FamilyInputs<double> in = inputs(n, d);
  for (auto _ : state) benchmark::DoNotOptimize(vl::linear_family<double>(in, {rule, vl::FamilyForm::chunked, 64, {}}).o.data());
  state.SetComplexityN(state.range(0));
}

}  // namespace

BENCHMARK_CAPTURE(BM_linear_family_chunked, linear, vl::UpdateRule::linear)->RangeMultiplier(4)->Range(1024, 65536)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK_CAPTURE(BM_linear_family_chunked, gated, vl::UpdateRule::gated)->RangeMultiplier(4)->Range(1024, 65536)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK_CAPTURE(BM_linear_family_chunked, delta, vl::UpdateRule::delta)->RangeMultiplier(4)->Range(1024, 65536)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK_CAPTURE(BM_linear_family_chunked, gated_delta, vl::UpdateRule::gated_delta)->RangeMultiplier(4)->Range(1024, 65536)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK_MAIN();
