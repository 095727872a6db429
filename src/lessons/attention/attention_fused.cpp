// Lesson attention, beyond n² (specs/attention.md, "Beyond n²"): our fused kernel agrees with
// the plain one (float64 to 1e-12, float32 within the derived bound) and keeps a workspace of
// a few blocks; our fast chunked linear attention agrees with the three reference forms. These
// claims are about our kernels (subject: our-code). Their controls are the same kernels
// instantiated with one step wrong (kernels/fused/fused_attention_steps.hpp,
// linear_attention_fast_steps.hpp), or run with blocks that materialise the scores: the kernels
// that ship contain none of these.
#include <cmath>
#include <cstring>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xview.hpp>

#include "kernels/reference/feature_map.hpp"
#include "kernels/fused/fused_attention_core.hpp"
#include "kernels/fused/fused_attention_steps.hpp"
#include "kernels/reference/linear_attention.hpp"
#include "kernels/fused/linear_attention_fast_core.hpp"
#include "kernels/fused/linear_attention_fast_steps.hpp"
#include "kernels/fused/online_softmax_block.hpp"
#include "ops/causal_mask.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/attention/attention_common.hpp"
#include "lessons/attention/fused_cases.hpp"

namespace vl::lessons::attention {

namespace {

// ---------------------------------------------------------------------------------------------
// The fused kernel's steps, each with one plausible bug.

// The running sum and accumulator not rescaled by exp(m_old − m_new) when the maximum moves.
struct NoRescaleSteps : FusedSteps {
  template <class T>
  static void rescale(T& l, T*, std::size_t, T, T sum) { l += sum; }
};
// ⌊Sk / block_k⌋ key blocks: a last, shorter block is dropped.
struct DropLastPartialKeyBlockSteps : FusedSteps {
  static std::size_t key_blocks(std::size_t sk, std::size_t block_k) { return sk / block_k; }
};
// A causal key block skipped one block too early (the diagonal block is lost).
struct CausalSkipOffByOneSteps : FusedSteps {
  static bool causal_block_hidden(std::ptrdiff_t block_start, std::ptrdiff_t last_visible, std::size_t block_k) {
    return block_start > last_visible - std::ptrdiff_t(block_k);
  }
};

// The fast chunked linear attention's steps with one bug: S and z never updated (each chunk
// sees only itself), or the diagonal dropped (a token does not see itself).
struct StateNotCarriedSteps : LinearChunkSteps {
  template <class T>
  static void carry(VectorPath, T*, T*, const T*, const T*, std::size_t, std::size_t, std::size_t) {}
};
struct DiagonalDroppedSteps : LinearChunkSteps {
  static std::size_t first_hidden(std::size_t i) { return i; }
};

// ---------------------------------------------------------------------------------------------
// The float32 exp's constants, each with one plausible bug: ln 2 in one part (x − n·fl(ln 2) is
// one fused multiply-add, so what is left is fl(ln 2)'s own error, 1.9·10⁻⁹, times |n| ≤ 126),
// and 1/24 typed with its exponent off by one.
struct OnePartLn2 : CephesExpConstants {
  static constexpr float ln2_hi = 0.693147180559945f, ln2_lo = 0.0f;
};
struct CoefficientTypo : CephesExpConstants {
  static constexpr float p3 = 4.1665795894e-3f;
};

// ---------------------------------------------------------------------------------------------
// The float32 exp against the correctly rounded exp, on a stratified sample of [−87.3, 0].

// The correctly rounded float32 exp(x), for x in [−87.3, 0]: exp in double (glibc: < 1 ulp of
// double, relative 2⁻⁵²) rounded to float. That rounding is the correct one unless eˣ lies within
// the double's error of a midpoint between two floats; then (|e − mid| ≤ 2⁻⁵⁰·e, four times the
// error) it is recomputed with expl (64-bit significand, error ≲ 2⁻⁶²) and decided if that clears
// the midpoint by 2⁻⁶⁰·e. `resolved` is false for a case neither decides (none is expected: eˣ
// is never a midpoint for a float x ≠ 0, being transcendental, and float32's hardest case is far
// from 2⁻⁶⁰ of one).
float exp_correctly_rounded(float x, bool& resolved, std::size_t& widened) {
  resolved = true;
  const double e = std::exp(double(x));
  const float r = float(e);
  // The two floats around e and their midpoint (exact in double: 25 significant bits).
  const float other = double(r) > e ? std::nextafter(r, 0.0f) : std::nextafter(r, 2.0f);
  const double mid = (double(r) + double(other)) / 2;
  if (std::abs(e - mid) > 0x1p-50 * e) return r;
  ++widened;
  const long double el = expl((long double)x);
  if (std::abs(el - (long double)mid) <= 0x1p-60L * el) resolved = false;
  return float(el);
}

// The distance in floats between two non-negative floats (their bit patterns are ordered).
std::int64_t float_distance(float a, float b) {
  std::int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  return std::abs(std::int64_t(ia) - std::int64_t(ib));
}

// 10⁷ float32 in [−87.3, 0], in strata: 5·10⁶ by value (50 000 equal intervals, 100 uniform
// draws in each: where scores minus their maximum lie), 5·10⁶ by binade (|x| in [2ᵉ, 2ᵉ⁺¹) for
// e = −126 … 6, and the subnormals: equal counts, uniform over their bit patterns, the last
// binade cut at 87.3: exp near 1 and the tiny arguments), and the ends 0, −0, −87.3. Fixed seed.
std::vector<float> exp_sample() {
  std::vector<float> xs;
  xs.reserve(10'000'003);
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  constexpr double lo = 87.3;
  const float lo_f = -87.3f;
  for (int k = 0; k < 50'000; ++k)
    for (int t = 0; t < 100; ++t) xs.push_back(std::max(lo_f, float(-lo * (k + unit(rng)) / 50'000)));
  // Binades of |x| by biased exponent 0 (subnormals) … 133 (|x| in [64, 128), cut at 87.3).
  std::uint32_t top;
  const float top_f = 87.3f;
  std::memcpy(&top, &top_f, 4);
  constexpr int binades = 134;
  for (int b = 0; b < binades; ++b) {
    const int per_binade = 5'000'000 / binades + (b < 5'000'000 % binades);
    const std::uint32_t first = std::uint32_t(b) << 23, last = b == binades - 1 ? top : first + (1u << 23) - 1;
    std::uniform_int_distribution<std::uint32_t> bits(first, last);
    for (int t = 0; t < per_binade; ++t) {
      const std::uint32_t u = bits(rng) | 0x80000000u;  // negative
      float x;
      std::memcpy(&x, &u, 4);
      xs.push_back(x);
    }
  }
  for (float x : {0.0f, -0.0f, lo_f}) xs.push_back(x);
  return xs;
}

// The largest distance in floats from exp_f32 (constants C) to the correctly rounded exp, over
// the sample, on every vector path this CPU runs (AVX-512 is reported as not run where it lacks
// avx512f, never as passed).
struct ExpSample {
  std::vector<float> xs, ref;  // the arguments and their correctly rounded exp
};
// Built once per process and shared by the check and its controls (80 MB).
const ExpSample& exp_sample_with_reference() {
  static const ExpSample sample = [] {
    ExpSample e{exp_sample(), {}};
    e.ref.resize(e.xs.size());
    std::size_t widened = 0, unresolved = 0;
    for (std::size_t i = 0; i < e.xs.size(); ++i) {
      bool ok;
      e.ref[i] = exp_correctly_rounded(e.xs[i], ok, widened);
      unresolved += !ok;
    }
    if (unresolved) throw std::runtime_error(fmt::format("attention.exp-float32: {} reference values undecided", unresolved));
    return e;
  }();
  return sample;
}

template <class C>
Measurement exp_accuracy(const CheckContext&) {
  const auto& [xs, ref] = exp_sample_with_reference();
  std::int64_t worst = 0;
  std::vector<std::string> ran, not_run;
  float worst_x = 0;
  std::vector<float> y(xs.size()), m(xs.size()), sum(xs.size()), alpha(xs.size());
  for (VectorPath path : all_vector_paths) {
    if (!cpu_runs(path)) {
      not_run.push_back(vector_path_name(path));
      continue;
    }
    // The fused kernel's softmax step with one key and m = 0 for every query: the step's maximum
    // stays 0 (every x ≤ 0), and x − 0 = x exactly, so it leaves y_r = exp(x_r).
    std::copy(xs.begin(), xs.end(), y.begin());
    std::fill(m.begin(), m.end(), 0.0f);
    online_softmax_block<C>(path, y.data(), 1, y.size(), y.size(), m.data(), sum.data(), alpha.data());
    std::int64_t path_worst = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const std::int64_t d = float_distance(y[i], ref[i]);
      if (d > path_worst) path_worst = d;
      if (d > worst) worst = d, worst_x = xs[i];
    }
    ran.push_back(fmt::format("{} {}", vector_path_name(path), path_worst));
  }
  return {double(worst),
          fmt::format("largest distance in floats from the correctly rounded exp over {} samples of [−87.3, 0]: {} (at x = {:.9g}); "
                      "per path: {}; not run (this CPU lacks it): {}",
                      xs.size(), worst, worst_x, fmt::join(ran, ", "), not_run.empty() ? std::string("none") : fmt::format("{}", fmt::join(not_run, ", ")))};
}

// ---------------------------------------------------------------------------------------------
// fused vs plain.


// max |fused − plain| for each block configuration (the plain kernel run once), and max |v|.
template <class Steps, class T>
std::pair<std::vector<double>, double> fused_vs_plain_all(const FusedCase& c, const std::vector<FusedConfig>& configs,
                                                          std::uint64_t seed) {
  numpy::Generator rng(seed);
  const auto [q, k, v, o] = draw_fused_case<T>(c, rng);
  const auto ref = vl::attention<T>(q, k, v, o).output;
  std::vector<double> diffs;
  for (const auto& config : configs) diffs.push_back(max_abs_diff(fused_attention_with<Steps, T>(q, k, v, o, config), ref));
  return {diffs, double(xt::amax(xt::abs(v))())};
}

template <class Steps>
Measurement fused_matches_plain(const CheckContext&) {
  double worst = 0;
  std::size_t runs = 0;
  std::uint64_t seed = 40;
  std::vector<FusedConfig> configs;
  for (std::size_t bq : {16, 33, 128})
    for (std::size_t bk : {7, 32, 64, 256}) configs.push_back({bq, bk, 2});  // 7: never divides; 64, 256: sometimes
  for (const auto& c : fused_cases_f64())
    for (double d : fused_vs_plain_all<Steps, double>(c, configs, seed++).first) {
      worst = std::max(worst, d);
      ++runs;
    }
  return {worst,  // "to within 1e-12": equal passes
          fmt::format("largest |fused − plain| over {} runs (9 cases × block_q 16, 33, 128 × block_k 7, 32, 64, 256): {:.3g}", runs, worst)};
}

// float32: |fused − plain| / ((√n + d) · u₃₂ · max|v|), the bound derived in the spec.
template <class Steps>
Measurement fused_float32_bound(const CheckContext&) {
  using A = CausalAlignment;
  const std::vector<FusedCase> cases = {
      {{1, 1, 300, 64}, {1, 1, 300, 64}, {1, 1, 300, 64}},
      {{1, 1, 1000, 64}, {1, 1, 1000, 64}, {1, 1, 1000, 64}, true},
      {{1, 1, 2048, 64}, {1, 1, 2048, 64}, {1, 1, 2048, 64}},
      {{1, 4, 700, 64}, {1, 2, 1100, 64}, {1, 2, 1100, 64}, true, A::bottom_right},
      {{1, 1, 600, 16}, {1, 1, 600, 16}, {1, 1, 600, 16}, false, A::top_left, true, true},
  };
  constexpr double u32 = 5.9604644775390625e-08;  // 2⁻²⁴
  double worst = 0, worst_abs = 0;
  std::uint64_t seed = 60;
  for (const auto& c : cases) {
    const auto [diffs, vmax] = fused_vs_plain_all<Steps, float>(c, {FusedConfig{128, 100, 2}, FusedConfig{128, 256, 2}}, seed++);
    const double bound = (std::sqrt(double(c.k[2])) + double(c.q[3])) * u32 * vmax;
    for (double d : diffs) {
      worst = std::max(worst, d / bound);
      worst_abs = std::max(worst_abs, d);
    }
  }
  return {worst,
          fmt::format("largest |fused − plain| / ((√n + d)·u·max|v|) over 5 cases × block_k 100, 256: {:.3g} (largest |Δ| {:.3g})", worst,
                      worst_abs)};
}

// The kernel's own workspace count at n = 512, 1024, 2048 (d = 64, float32, causal, 2 threads),
// extrapolated to n = 65536. block 0 = one block of all n.
Measurement fused_workspace(std::size_t block_q, std::size_t block_k) {
  numpy::Generator rng(70);
  std::vector<double> w;
  for (std::size_t n : {512, 1024, 2048}) {
    const auto q = draw4_as<float>(rng, {1, 1, n, 64}), k = draw4_as<float>(rng, {1, 1, n, 64}), v = draw4_as<float>(rng, {1, 1, n, 64});
    AttentionOptions<float> o;
    o.causal = true;
    FusedStats stats;
    vl::fused_attention<float>(q, k, v, o, FusedConfig{block_q ? block_q : n, block_k ? block_k : n, 2}, &stats);
    w.push_back(double(stats.workspace_bytes));
  }
  // The quadratic a + b·n + c·n² through the three points (exact for a workspace that is
  // constant, a strip of n keys, or n × n scores), evaluated at n = 65536.
  const double x0 = 512, x1 = 1024, x2 = 2048, x = 65536;
  const double at_65536 = w[0] * (x - x1) * (x - x2) / ((x0 - x1) * (x0 - x2)) + w[1] * (x - x0) * (x - x2) / ((x1 - x0) * (x1 - x2)) +
                          w[2] * (x - x0) * (x - x1) / ((x2 - x0) * (x2 - x1));
  return {at_65536,
          fmt::format("workspace {:.0f}, {:.0f}, {:.0f} bytes at n = 512, 1024, 2048; through them, at n = 65536: {:.2f} MiB "
                      "(the score matrix: {:.0f} MiB)",
                      w[0], w[1], w[2], at_65536 / (1 << 20), 65536.0 * 65536.0 * 4 / (1 << 20))};
}

// The fused kernel's key blocks, counted by the kernel (FusedStats), at n = 512 … 4096 (d = 64,
// float32, default blocks of 128 queries × 64 keys, Q = n / 128 query blocks): unmasked it
// computes every block, 2·Q² (each 2·128·64·d multiply-adds: the n² work stays, only the n × n
// memory goes); causal it skips those wholly above the diagonal and computes Q² + Q (query block
// q needs key blocks 0 … 2q + 1). `causal_as_mask` passes the causal mask as a boolean mask
// instead of options.causal (a kernel that never skips a block: a control); Steps, the kernel's
// steps (a control's skip one block too early). Measured: the largest |counted − formula| over n,
// both cases.
template <class Steps>
Measurement fused_blocks(bool causal_as_mask) {
  numpy::Generator rng(71);
  double worst = 0;
  std::vector<std::string> rows;
  for (std::size_t n : {512, 1024, 2048, 4096}) {
    const auto q = draw4_as<float>(rng, {1, 1, n, 64}), k = draw4_as<float>(rng, {1, 1, n, 64}), v = draw4_as<float>(rng, {1, 1, n, 64});
    const std::size_t Q = n / 128;
    FusedStats full, causal;
    fused_attention_with<Steps, float>(q, k, v, {}, FusedConfig{128, 64, 2}, &full);
    AttentionOptions<float> o;
    if (causal_as_mask) o.allowed = xt::xarray<bool>(causal_allowed(n, n));
    else o.causal = true;
    fused_attention_with<Steps, float>(q, k, v, o, FusedConfig{128, 64, 2}, &causal);
    worst = std::max({worst, difference(double(full.key_blocks_computed), double(2 * Q * Q)),
                      difference(double(causal.key_blocks_computed), double(Q * Q + Q))});
    rows.push_back(fmt::format("n={}: {} key blocks (2Q² = {}); causal {} computed, {} skipped (Q² + Q = {})", n, full.key_blocks_computed,
                               2 * Q * Q, causal.key_blocks_computed, causal.key_blocks_skipped, Q * Q + Q));
  }
  return {worst, fmt::format("largest |counted − formula| = {}; {}", worst, fmt::join(rows, "; "))};
}

// The fast chunked linear attention against the three reference forms (float64).
template <class Steps>
Measurement linear_fast_matches(const CheckContext&) {
  numpy::Generator rng(80);
  double worst = 0;
  std::size_t runs = 0;
  for (auto [n, dk, dv] : {std::array<std::size_t, 3>{1, 4, 3}, {37, 8, 5}, {200, 16, 16}, {513, 32, 8}}) {
    const auto pq = elu_plus_one<double, 2>(rng.standard_normal(n, dk)), pk = elu_plus_one<double, 2>(rng.standard_normal(n, dk));
    const xt::xtensor<double, 2> v = rng.standard_normal(n, dv);
    const auto parallel = linear_attention_parallel<double>(pq, pk, v);
    const auto recurrent = linear_attention_recurrent<double>(pq, pk, v);
    for (std::size_t chunk : {1, 3, 16, 64, 1000}) {
      const auto chunked = linear_attention_chunked<double>(pq, pk, v, chunk);
      const auto fast = linear_attention_chunked_fast_with<Steps, double>(pq, pk, v, chunk);
      for (const auto* ref : {&parallel, &recurrent, &chunked}) {
        worst = std::max(worst, max_abs_diff(fast, *ref));
        ++runs;
      }
    }
  }
  return {worst,  // "to within 1e-12": equal passes
          fmt::format("largest |fast − reference| over {} comparisons (4 shapes × chunk 1, 3, 16, 64, 1000 × parallel, recurrent, "
                      "chunked): {:.3g}",
                      runs, worst)};
}

CheckFn workspace_with(std::size_t block_q, std::size_t block_k) {
  return [=](const CheckContext&) { return fused_workspace(block_q, block_k); };
}

}  // namespace

std::vector<ClaimCheck> fused_checks() {
  return {
      {"attention.exp-float32", "our float32 exp against the correctly rounded exp, 10⁷ samples, every vector path this CPU runs",
       exp_accuracy<CephesExpConstants>,
       {broken_code("ln 2 in one part (fl(ln 2) is 1.9e-9 off)", exp_accuracy<OnePartLn2>),
        broken_code("1/24 with its exponent off by one (4.17e-3)", exp_accuracy<CoefficientTypo>)}},
      {"attention.fused-matches-plain", "fused vs plain kernel, float64, 9 cases × 12 block shapes", fused_matches_plain<FusedSteps>,
       {broken_code("running sum and accumulator not rescaled by exp(m_old − m_new)", fused_matches_plain<NoRescaleSteps>),
        broken_code("last partial key block dropped", fused_matches_plain<DropLastPartialKeyBlockSteps>),
        broken_code("causal block skip off by one block", fused_matches_plain<CausalSkipOffByOneSteps>)}},
      {"attention.fused-float32", "fused vs plain kernel, float32, against (√n + d)·u·max|v|", fused_float32_bound<FusedSteps>,
       {broken_code("running sum and accumulator not rescaled", fused_float32_bound<NoRescaleSteps>),
        broken_code("last partial key block dropped", fused_float32_bound<DropLastPartialKeyBlockSteps>),
        broken_code("causal block skip off by one block", fused_float32_bound<CausalSkipOffByOneSteps>)}},
      {"attention.fused-work-quadratic", "the fused kernel's key blocks counted at n = 512 … 4096, unmasked and causal",
       [](const CheckContext&) { return fused_blocks<FusedSteps>(false); },
       {broken_code("causal passed as a boolean mask: no block skipped", [](const CheckContext&) { return fused_blocks<FusedSteps>(true); }),
        broken_code("causal block skip off by one block", [](const CheckContext&) { return fused_blocks<CausalSkipOffByOneSteps>(false); })}},
      {"attention.fused-workspace", "the fused kernel's workspace count at n = 512 … 2048, extrapolated to 65536",
       workspace_with(FusedConfig{}.block_q, FusedConfig{}.block_k),
       {broken_code("one key block spanning all n keys (a strip of 256 × n scores per thread)", workspace_with(256, 0)),
        broken_code("one block for everything: the n × n scores materialised", workspace_with(0, 0))}},
      {"attention.linear-fast-matches", "fast chunked linear attention vs the parallel, recurrent and chunked forms",
       linear_fast_matches<LinearChunkSteps>,
       {broken_code("state not carried across chunks", linear_fast_matches<StateNotCarriedSteps>),
        broken_code("diagonal dropped (a token does not see itself)", linear_fast_matches<DiagonalDroppedSteps>)}},
  };
}

}  // namespace vl::lessons::attention
