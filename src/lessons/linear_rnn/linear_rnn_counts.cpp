// Lesson linear-rnn: the work of each form, counted exactly (specs/linear_rnn.md, "The cost,
// counted"). Every product of the kernels goes through matmul/matvec (kernels/reference/
// matmul.hpp), which count m·n·k multiply-adds; row sums and divisions are not products and are
// not counted. The counts are compared with the formulas, exactly:
//
//   parallel   n²·(d_k + d_v)                              the table PQ PKᵀ, then A V
//   recurrent  n·(2·d_k·d_v + d_k)                         per token: v φkᵀ, S φq, z·φq
//   chunked    Σ_c b_c²·(d_k + d_v) + n·(2·d_k·d_v + d_k)  each chunk's table, the state per token
//
// and, for generation, the cost of producing the next output: the recurrent step's
// 2·d_k·d_v + d_k at every t, against a step over a cache of every key and value so far
// (softmax attention's way, and the parallel form's row t): (t + 1)·(d_k + d_v).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xview.hpp>

#include "kernels/reference/linear_attention.hpp"
#include "kernels/reference/matmul.hpp"
#include "lessons/linear_rnn/linear_rnn.hpp"
#include "numeric/compare.hpp"

namespace vl::lessons::linear_rnn {

namespace {

std::uint64_t parallel_formula(std::uint64_t n, std::uint64_t dk, std::uint64_t dv) { return n * n * (dk + dv); }
std::uint64_t recurrent_formula(std::uint64_t n, std::uint64_t dk, std::uint64_t dv) { return n * (2 * dk * dv + dk); }
std::uint64_t chunked_formula(std::uint64_t n, std::uint64_t dk, std::uint64_t dv, std::uint64_t B) {
  std::uint64_t tables = 0;
  for (std::uint64_t c = 0; c < n; c += B) tables += std::min(B, n - c) * std::min(B, n - c);
  return tables * (dk + dv) + recurrent_formula(n, dk, dv);
}

}  // namespace

Measurement cost_counted(const Forms& forms) {
  // Shapes with B dividing n and not, B = 1 and B ≥ n, d_k ≠ d_v.
  struct Shape { std::size_t n, dk, dv, B; };
  const std::vector<Shape> shapes = {{1, 4, 3, 1}, {7, 4, 3, 3}, {64, 16, 16, 16}, {300, 8, 5, 64}, {33, 6, 6, 40}};
  double worst = 0;
  std::vector<std::string> rows;
  for (const Shape& s : shapes) {
    const Inputs in = draw_inputs(s.n, s.dk, s.dv, 7000 + s.n);
    const std::uint64_t par = count_multiply_adds([&] { forms.parallel(in.pq, in.pk, in.v); });
    const std::uint64_t rec = count_multiply_adds([&] { forms.recurrent(in.pq, in.pk, in.v); });
    const std::uint64_t blk = count_multiply_adds([&] { forms.chunked(in.pq, in.pk, in.v, s.B); });
    const std::uint64_t fp = parallel_formula(s.n, s.dk, s.dv), fr = recurrent_formula(s.n, s.dk, s.dv),
                        fc = chunked_formula(s.n, s.dk, s.dv, s.B);
    // Counts and formulas are exact integers below 2⁵³ here: their difference is exact in double.
    worst = std::max({worst, difference(double(par), double(fp)), difference(double(rec), double(fr)), difference(double(blk), double(fc))});
    rows.push_back(fmt::format("n={} d_k={} d_v={} B={}: parallel {} ({}), recurrent {} ({}), chunked {} ({})", s.n, s.dk, s.dv, s.B,
                               par, fp, rec, fr, blk, fc));
  }
  return {worst, fmt::format("largest |counted − formula| = {}; counted (formula): {}", worst, fmt::join(rows, "; "))};
}

Measurement generation_step_cost(const NextOutput& step) {
  // Generate n = 1024 tokens one by one (d_k = d_v = 16): count each step's multiply-adds. The
  // measure is the largest step's cost over the smallest's: 1 when every step costs the same.
  const std::size_t n = 1024, dk = 16, dv = 16;
  const Inputs in = draw_inputs(n, dk, dv, 7100);
  LinearAttentionState<double> state(dk, dv);
  std::vector<double> ts, costs, cache_costs;
  std::uint64_t first = 0, largest = 0, smallest = UINT64_MAX;
  Measurement m;
  for (std::size_t t = 0; t < n; ++t) {
    const std::uint64_t cost = count_multiply_adds([&] { step(in, t, state); });
    if (t == 0) first = cost;
    largest = std::max(largest, cost);
    smallest = std::min(smallest, cost);
    if ((t & (t + 1)) == 0 || t + 1 == n) {  // t = 0, 1, 3, 7, …, 1023: the series for the docs
      ts.push_back(double(t));
      costs.push_back(double(cost));
      cache_costs.push_back(double((t + 1) * (dk + dv)));
    }
  }
  m.require(first == recurrent_formula(1, dk, dv),
            fmt::format("the first step costs {} multiply-adds, not 2·d_k·d_v + d_k = {}", first, recurrent_formula(1, dk, dv)));
  m.value = smallest ? double(largest) / double(smallest) : std::nan("");
  m.detail = fmt::format("per-token multiply-adds over {} steps: first {}, smallest {}, largest {} (ratio {:.3g}); a step over a cache of every "
                         "key and value costs (t + 1)·(d_k + d_v): {} at t = 0, {} at t = {}, above the recurrent step from t = {}",
                         n, first, smallest, largest, m.value, dk + dv, n * (dk + dv), n - 1, (2 * dk * dv + dk) / (dk + dv));
  m.series = {{"t", ts, ""}, {"recurrent step", costs, ""}, {"(t + 1)·(d_k + d_v)", cache_costs, ""}};
  return m;
}

// Our recurrent step: absorb token t into the state, read it with φq_t (kernels/reference/
// linear_attention.hpp, the recurrent form's loop body).
void recurrent_step(const Inputs& in, std::size_t t, LinearAttentionState<double>& state) {
  auto row = xt::range(t, t + 1);
  state.absorb(xt::view(in.pk, row, xt::all()), xt::view(in.v, row, xt::all()));
  const auto q = xt::view(in.pq, row, xt::all());
  (void)divide_rows<double>(state.numerators(q), state.normalisers(q));
}

// A "recurrent" step that keeps every key and value and recomputes row t over them (a cache in
// place of the state).
void cache_step(const Inputs& in, std::size_t t, LinearAttentionState<double>&) {
  auto seen = xt::range(0, t + 1);
  const Matrix q = xt::view(in.pq, xt::range(t, t + 1), xt::all());
  const Matrix a = matmul<double>(q, xt::transpose(xt::view(in.pk, seen, xt::all())));
  (void)divide_rows<double>(matmul<double>(a, xt::view(in.v, seen, xt::all())), xt::sum(a, {1}));
}

Forms our_forms() {
  return {[](const Matrix& pq, const Matrix& pk, const Matrix& v) { return linear_attention_parallel<double>(pq, pk, v); },
          [](const Matrix& pq, const Matrix& pk, const Matrix& v) { return linear_attention_recurrent<double>(pq, pk, v); },
          [](const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t B) { return linear_attention_chunked<double>(pq, pk, v, B); }};
}

}  // namespace vl::lessons::linear_rnn
