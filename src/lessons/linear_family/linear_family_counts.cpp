// Lesson linear-family: the work of each form, counted (specs/linear_family.md, "The cost,
// counted"). Every product of our kernels (kernels/reference/linear_family.hpp) adds its
// multiply-adds to the counter of kernels/reference/work_counters.hpp, and every update of the
// state adds one state update. Per key/value head, with n tokens, G query heads reading it,
// δ = 1 for the delta rules, and a block of m tokens:
//
//   mask(m)    m²·d_k, or m(m+1)/2·d_k per key dimension (m(m−1)/2·d_k strictly below the diagonal)
//   read(m)    G·(mask(m) + m·d_k·d_v + m²·d_v)       (Q ⊙ e^G) S and tril(Q Kᵀ ⊙ D) U per query head
//   write(m)   m·d_k·d_v                              the state after the block
//   recurrent  n·d_k·d_v·(1 + G + δ)                  per token: the write, G reads, δ the read Sᵀk
//              in n state updates
//   parallel   read(n) + write(n) + δ·(strict mask(n) + n·d_k·d_v + n(n−1)/2·d_v)
//              in 1 state update                       the system's right side and its forward substitution
//   chunked    Σ_c read(b) + write(b) + δ·(strict mask(b) + (b−1)b(b+1)/6 + b²·(d_k + d_v) + b·d_k·d_v)
//              in ⌈n/c⌉ state updates                 per chunk of b ≤ c tokens: the UT transform, W = T(K ⊙ e^G), T U, W S
//
// times B·Hkv heads. Exponentials and elementwise scalings are not multiply-adds and are not counted.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xview.hpp>

#include "kernels/reference/work_counters.hpp"
#include "lessons/linear_family/linear_family.hpp"
#include "numeric/compare.hpp"

namespace vl::lessons::linear_family {

namespace {

// The formulas above, for one shape, rule, form and chunk: {multiply-adds, state updates}.
struct CostFormula {
  std::uint64_t n, dk, dv, G, heads;
  bool per_dimension;

  // Pairs (t, s) with s < t among m tokens: m(m−1)/2 (0 for m = 0: unsigned m − 1 is then
  // multiplied by 0).
  static std::uint64_t below(std::uint64_t m) { return m * (m - 1) / 2; }
  std::uint64_t mask(std::uint64_t m, bool strict) const {
    if (!per_dimension) return m * m * dk;
    return (strict ? below(m) : below(m) + m) * dk;
  }
  std::uint64_t read(std::uint64_t m) const { return G * (mask(m, false) + m * dk * dv + m * m * dv); }
  std::uint64_t write(std::uint64_t m) const { return m * dk * dv; }
  std::uint64_t delta_system(std::uint64_t m) const { return mask(m, true) + m * dk * dv + below(m) * dv; }
  std::uint64_t delta_chunk(std::uint64_t m) const {
    return mask(m, true) + (m * m * m - m) / 6 + m * m * (dk + dv) + m * dk * dv;
  }

  CountedWork operator()(UpdateRule rule, FamilyForm form, std::uint64_t c) const {
    const std::uint64_t d = delta(rule) ? 1 : 0;
    CountedWork w;
    if (form == FamilyForm::recurrent) {
      w = {n * dk * dv * (1 + G + d), n};
    } else if (form == FamilyForm::parallel) {
      w = {read(n) + write(n) + d * delta_system(n), 1};
    } else {
      for (std::uint64_t a = 0; a < n; a += c) {
        const std::uint64_t b = std::min(c, n - a);
        w.multiply_adds += read(b) + write(b) + d * delta_chunk(b);
        ++w.state_updates;
      }
    }
    return {w.multiply_adds * heads, w.state_updates * heads};
  }
};

// The sweep: one token, chunk 1; GQA groups of 1 to 4; decay per head and per key dimension;
// a chunk dividing n, one that does not, one larger than n.
struct CostShape {
  Shape shape;
  std::size_t chunk;
};
const std::vector<CostShape> kCostShapes = {
    {{1, 1, 1, 1, 4, 5, false, false}, 1}, {{1, 2, 2, 7, 3, 4, true, true}, 3},  {{2, 4, 2, 12, 5, 3, false, true}, 4},
    {{1, 6, 2, 24, 4, 4, true, true}, 64}, {{1, 4, 1, 100, 16, 8, true, false}, 16},
};

}  // namespace

FamilyResult<double> our_kernel(const FamilyInputs<double>& in, const FamilyOptions& o) { return vl::linear_family<double>(in, o); }

Measurement cost_counted(const FamilyKernel& kernel) {
  double worst = 0;
  std::string where;
  std::size_t runs = 0;
  std::vector<std::string> largest;  // the last shape's counts, for the detail
  for (const CostShape& cs : kCostShapes) {
    const Shape& s = cs.shape;
    const FamilyInputs<double> in = draw<double>(s, 2800 + s.n);
    largest.clear();
    for (UpdateRule rule : kRules) {
      const CostFormula formula{s.n, s.dk, s.dv, s.Hq / s.Hkv, s.B * s.Hkv, gated(rule) && s.per_dimension};
      for (FamilyForm form : {FamilyForm::recurrent, FamilyForm::parallel, FamilyForm::chunked}) {
        const CountedWork counted = count_work([&] { (void)kernel(in, FamilyOptions{rule, form, cs.chunk, {}}); });
        const CountedWork want = formula(rule, form, cs.chunk);
        // Counts and formulas are integers below 2⁵³ here: their differences are exact in double.
        const double miss = std::max(difference(double(counted.multiply_adds), double(want.multiply_adds)),
                                     difference(double(counted.state_updates), double(want.state_updates)));
        ++runs;
        if (miss > worst)
          where = fmt::format("{} {}, n={} d_k={} d_v={} G={} chunk {}: counted {} in {} updates, formula {} in {}", to_string(rule),
                              to_string(form), s.n, s.dk, s.dv, s.Hq / s.Hkv, cs.chunk, counted.multiply_adds, counted.state_updates,
                              want.multiply_adds, want.state_updates);
        worst = std::max(worst, miss);
        largest.push_back(fmt::format("{} {} {} in {}", to_string(rule), to_string(form), counted.multiply_adds, counted.state_updates));
      }
    }
  }
  const Shape& last = kCostShapes.back().shape;
  return {worst, fmt::format("largest |counted − formula| over multiply-adds and state updates = {} in {} runs (4 rules × 3 forms × "
                             "{} shapes){}; at n={} d_k={} d_v={} G={} chunk {} (the gated rules' decay per key dimension), counted: {}",
                             worst, runs, kCostShapes.size(), worst > 0 ? "; worst: " + where : std::string(), last.n, last.dk, last.dv, last.Hq / last.Hkv,
                             kCostShapes.back().chunk, fmt::join(largest, "; "))};
}

Measurement chunked_linear_cost(const ChunkFor& chunk_for, const CheckContext& ctx) {
  // Multiply-adds of our chunked kernel, one head, d_k = d_v = 64, per-head decay, at
  // n = 1024 … 65536; the slope of log(work) against log(n) between successive sizes, per rule,
  // and the present state's size at each n. A slope over the bound ends the sweep.
  const std::vector<std::size_t> sizes = {1024, 4096, 16384, 65536};
  const std::size_t d = 64;
  double worst = 0;
  bool state_fixed = true;
  std::vector<Series> series = {{"n", {}, ""}};
  std::map<std::string, std::uint64_t> prev;
  std::vector<std::string> rows;
  for (UpdateRule rule : kRules) series.push_back({std::string("multiply-adds, ") + to_string(rule), {}, ""});
  for (std::size_t n : sizes) {
    const FamilyInputs<double> in = draw<double>({1, 1, 1, n, d, d, false, false}, 2700);
    series[0].values.push_back(double(n));
    std::vector<std::string> row;
    for (std::size_t r = 0; r < 4; ++r) {
      const UpdateRule rule = kRules[r];
      FamilyResult<double> out;
      const std::uint64_t work =
          count_multiply_adds([&] { out = vl::linear_family<double>(in, {rule, FamilyForm::chunked, chunk_for(n), {}}); });
      state_fixed = state_fixed && out.state.size() == d * d;
      series[r + 1].values.push_back(double(work));
      const std::string name = to_string(rule);
      if (prev.count(name)) {
        const double slope = std::log(double(work) / double(prev[name])) / std::log(4.0);
        worst = worse(worst, slope);
        row.push_back(fmt::format("{} {:.3f}", name, slope));
      }
      prev[name] = work;
    }
    if (!row.empty()) rows.push_back(fmt::format("to n = {}: {}", n, fmt::join(row, ", ")));
    if (ctx.settled_failing(worst)) break;  // a slope already past the bound: the larger sizes cost, and settle nothing
  }
  Measurement m{worst,
          fmt::format("largest log-log slope of the counted multiply-adds {:.3f}; {}; present state {} elements at every n{}", worst,
                      fmt::join(rows, "; "), d * d, state_fixed ? "" : " — NOT: it changed with n"),
          series};
  return m.require(state_fixed, "the present state's size changed with n");
}

}  // namespace vl::lessons::linear_family
