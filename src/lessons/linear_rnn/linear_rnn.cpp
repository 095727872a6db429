// Lesson linear-rnn: causal linear attention is an RNN (spec: specs/linear_rnn.md).
//
// The listing is the C++ twin of seed notebook 000: the same inputs from default_rng(0), the
// three forms, the nine printed lines. The checks verify the lesson's claims over sweeps of
// shapes and chunk sizes, each against broken variants it must reject.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "backends/backend.hpp"
#include "kernels/reference/feature_map.hpp"
#include "kernels/reference/linear_attention.hpp"
#include "numeric/compare.hpp"
#include "numeric/precision.hpp"
#include "lessons/linear_rnn/linear_rnn.hpp"
#include "lessons/linear_rnn/linear_rnn_forms.hpp"
#include "numeric/numpy_compare.hpp"
#include "numeric/numpy_format.hpp"
#include "numeric/numpy_random.hpp"

namespace vl::lessons::linear_rnn {

using detail::Finding;
using detail::Findings;
using detail::Form;
using detail::forms_of;
using detail::over_each_form;

Matrix feature_map(const Matrix& x) { return elu_plus_one<double, 2>(x); }

Inputs draw_inputs(std::size_t n, std::size_t d_k, std::size_t d_v, std::uint64_t seed, const FeatureMap& phi) {
  numpy::Generator rng(seed);
  Inputs in;
  in.q = rng.standard_normal(n, d_k);
  in.k = rng.standard_normal(n, d_k);
  in.v = rng.standard_normal(n, d_v);
  in.pq = phi(in.q);
  in.pk = phi(in.k);
  return in;
}

// ---------------------------------------------------------------------------------------------
// The listing (seed notebook 000, all four cells): n = 6, d_k = 4, d_v = 5, B = 4, seed 0.
// Our own reproduction of the notebook's printed lines: its three forms run on the audited
// backend (ours, or anyone's), the state's shape is our kernel's.

// [linear-rnn.main]
ListingOutput listing_main(const ListingContext& ctx) {
  const std::size_t n = 6, d_k = 4, d_v = 5, B = 4;
  const backends::Backend& b = ctx.implementation();
  const Inputs in = draw_inputs(n, d_k, d_v, 0);
  ListingOutput out;
  auto& print = out.lines;
  print.push_back(fmt::format("Q, K: {}  V: {}", numpy::format_shape({n, d_k}), numpy::format_shape({n, d_v})));

  const Matrix o_par = b.linear_parallel(in.pq, in.pk, in.v);
  print.push_back(fmt::format("matrice di attenzione: {} -> cresce come n^2", numpy::format_shape({n, n})));
  print.push_back(fmt::format("output O_par: {}", numpy::format_shape({o_par.shape(0), o_par.shape(1)})));

  const Matrix o_rec = b.linear_recurrent(in.pq, in.pk, in.v);
  LinearAttentionState<double> state(d_k, d_v);
  print.push_back(fmt::format("stato S: {} -> fisso, indipendente da n",
                              numpy::format_shape({state.S().shape(0), state.S().shape(1)})));

  const double gap = numpy::max_abs_diff(o_par, o_rec);
  print.push_back(fmt::format("max |differenza| < 1e-12: {}", numpy::python_bool(gap < 1e-12)));
  print.push_back(fmt::format("le due forme coincidono: {}", numpy::python_bool(numpy::allclose(o_par, o_rec))));

  const Matrix o_blk = b.linear_chunked(in.pq, in.pk, in.v, B);
  print.push_back(fmt::format("a blocchi == ricorrente: {}", numpy::python_bool(numpy::allclose(o_blk, o_rec))));
  print.push_back(fmt::format("a blocchi == parallela: {}", numpy::python_bool(numpy::allclose(o_blk, o_par))));
  print.push_back(fmt::format("scarto massimo < 1e-12: {}", numpy::python_bool(numpy::max_abs_diff(o_blk, o_rec) < 1e-12)));

  out.arrays["Q"] = in.q;
  out.arrays["O_par"] = o_par;
  out.arrays["O_rec"] = o_rec;
  out.arrays["O_blk"] = o_blk;
  return out;
}
// [linear-rnn.main]

// ---------------------------------------------------------------------------------------------
// The claims' predicates.

namespace {

// The shapes and chunk sizes every sweep covers: n from 1 up, d_k ≠ d_v, and for each n the
// chunk sizes 1, a divisor of n, a non-divisor, n itself and more than n.
struct Case {
  std::size_t n, d_k, d_v;
};
const std::vector<Case> kCases = {{1, 4, 5}, {2, 3, 7}, {3, 1, 1}, {5, 8, 2}, {6, 4, 5},
                                  {7, 2, 3}, {12, 6, 4}, {17, 5, 9}, {64, 16, 8}};
std::vector<std::size_t> chunk_sizes(std::size_t n) {
  std::vector<std::size_t> b = {1, 2, 3, 4, 5, n, n + 3};
  for (std::size_t d = 2; d < n; ++d)
    if (n % d == 0) b.push_back(d);
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return b;
}

}  // namespace

Measurement forms_agree(const CheckContext& ctx) {
  const backends::Backend& b = ctx.backend;
  double worst = 0;
  std::string where = "all agree";
  std::size_t compared = 0;
  for (const Case& c : kCases) {
    const Inputs in = draw_inputs(c.n, c.d_k, c.d_v, 1000 + c.n);
    const Matrix rec = b.linear_recurrent(in.pq, in.pk, in.v);
    const double par = max_abs_diff(b.linear_parallel(in.pq, in.pk, in.v), rec);
    if (par > worst) { worst = par; where = fmt::format("parallel vs recurrent, n={} d_k={} d_v={}", c.n, c.d_k, c.d_v); }
    for (std::size_t chunk : chunk_sizes(c.n)) {
      const double blk = max_abs_diff(b.linear_chunked(in.pq, in.pk, in.v, chunk), rec);
      if (blk > worst) { worst = blk; where = fmt::format("chunked vs recurrent, n={} d_k={} d_v={} B={}", c.n, c.d_k, c.d_v, chunk); }
      ++compared;
    }
  }
  return {worst,
          fmt::format("max |difference| {:.2e} over {} shapes and {} chunk sizes; worst: {}", worst, kCases.size(), compared, where)};
}

Measurement state_size_fixed(const StateSizeAfter& state_size_after) {
  const std::size_t d_k = 4, d_v = 5;
  std::size_t smallest = std::numeric_limits<std::size_t>::max(), largest = 0;
  std::vector<std::string> seen;
  for (std::size_t n : {1, 16, 256, 4096}) {
    const std::size_t size = state_size_after(n, d_k, d_v);
    smallest = std::min(smallest, size);
    largest = std::max(largest, size);
    seen.push_back(fmt::format("n={}: {}", n, size));
  }
  const double growth = double(largest - smallest);
  const bool expected = largest == d_v * d_k + d_k;
  Measurement m{growth, fmt::format("state elements after n tokens (d_k={}, d_v={}; d_v·d_k + d_k = {}): {}", d_k, d_v,
                                    d_v * d_k + d_k, fmt::join(seen, ", "))};
  return m.require(expected, fmt::format("the largest state holds {} elements, not d_v·d_k + d_k = {}", largest, d_v * d_k + d_k));
}

Measurement phi_positive(const FeatureMap& phi) {
  // A grid over the range where eˣ is a normal float64, plus the lesson's kind of inputs.
  Matrix x = xt::zeros<double>({1, 2801});
  for (std::size_t i = 0; i < x.shape(1); ++i) x(0, i) = -700.0 + 0.5 * double(i);
  const Matrix on_grid = phi(x);
  double smallest = std::numeric_limits<double>::infinity();
  double at = 0;
  for (std::size_t i = 0; i < on_grid.shape(1); ++i)
    if (!(on_grid(0, i) >= smallest)) { smallest = on_grid(0, i); at = x(0, i); }
  const Inputs in = draw_inputs(64, 16, 8, 7, phi);
  for (double p : in.pq) smallest = std::min(smallest, p);
  for (double p : in.pk) smallest = std::min(smallest, p);
  return {smallest,
          fmt::format("min φ(x) = {:.3e} (at x = {}) over x in [-700, 700] and 2048 normal draws", smallest, at)};
}

namespace detail {

Finding convex_excursion(const Form& form, const Inputs& in, Precision p, const std::string& label) {
  // The values as the backend holds them: rounded once to the precision it computes in.
  Finding f;
  const Matrix v = rounded_to(p, in.v);
  const double scale = xt::amax(xt::abs(v))();
  const Matrix o = form.run(in.pq, in.pk, in.v);
  for (std::size_t col = 0; col < v.shape(1); ++col) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::size_t t = 0; t < v.shape(0); ++t) {
      lo = std::min(lo, v(t, col));
      hi = std::max(hi, v(t, col));
      const double out = o(t, col);
      const double excess = std::isnan(out) ? std::numeric_limits<double>::infinity() : std::max({0.0, lo - out, out - hi}) / scale;
      if (excess > f.worst) { f.worst = excess; f.where = fmt::format("{} form, {}, t={}, column {}", form.name, label, t, col); }
    }
  }
  return f;
}

Finding prefix_moves(const Form& form, const Inputs& a, const Matrix& out_a, const Inputs& fresh, std::size_t t, const std::string& label) {
  Finding f;
  const std::size_t n = a.v.shape(0);
  Inputs b = a;
  auto later = xt::range(t + 1, n);
  xt::view(b.pq, later, xt::all()) = xt::view(fresh.pq, later, xt::all());
  xt::view(b.pk, later, xt::all()) = xt::view(fresh.pk, later, xt::all());
  xt::view(b.v, later, xt::all()) = xt::view(fresh.v, later, xt::all());
  const Matrix out_b = form.run(b.pq, b.pk, b.v);
  f.worst = max_abs_diff(xt::view(out_a, xt::range(0, t + 1), xt::all()), xt::view(out_b, xt::range(0, t + 1), xt::all()));
  f.where = fmt::format("{} form, {}, tokens after t={} changed", form.name, label, t);
  if (max_abs_diff(xt::view(out_a, later, xt::all()), xt::view(out_b, later, xt::all())) == 0)
    f.failure = fmt::format("{} form, {}, t={}: outputs after t unchanged", form.name, label, t);
  return f;
}

}  // namespace detail

Measurement convex_combination(const CheckContext& ctx) {
  // o_t must lie in [min_{j≤t} v_j, max_{j≤t} v_j] column by column, up to tolerance·max|v|;
  // each form the backend has is judged on its own.
  const Precision p = ctx.precision;
  const Findings found = over_each_form(forms_of(ctx.backend, 3), "inside", [p](const Form& form) {
    Finding f;
    for (const Case& c : kCases) {
      const Finding one = detail::convex_excursion(form, draw_inputs(c.n, c.d_k, c.d_v, 2000 + c.n), p, fmt::format("n={}", c.n));
      if (one.worst > f.worst) f = one;
    }
    return f;
  });
  return {found.worst,
          fmt::format("largest excursion outside the running min/max of the values, relative to max|v|: {:.2e} ({}); {}",
                      found.worst, found.where, found.forms())};
}

Measurement causal(const CheckContext& ctx) {
  // Replace the tokens after t by fresh draws: rows ≤ t must not move (tolerance 0: not a bit),
  // and some row after t must move (else the perturbation proved nothing). Each form the
  // backend has is judged on its own.
  const Findings found = over_each_form(forms_of(ctx.backend, 4), "prefixes unchanged", [](const Form& form) {
    Finding f;
    for (const Case& c : kCases) {
      if (c.n < 2) continue;
      const Inputs a = draw_inputs(c.n, c.d_k, c.d_v, 3000 + c.n);
      const Inputs fresh = draw_inputs(c.n, c.d_k, c.d_v, 4000 + c.n);
      const Matrix out_a = form.run(a.pq, a.pk, a.v);
      for (std::size_t t : {std::size_t(0), (c.n - 1) / 2, c.n - 2}) {  // t < n − 1: some token comes after t
        const Finding one = detail::prefix_moves(form, a, out_a, fresh, t, fmt::format("n={}", c.n));
        if (one.worst > f.worst) f.worst = one.worst, f.where = one.where;
        if (!one.failure.empty()) f.failure = one.failure;
      }
    }
    return f;
  });
  const bool later_moved = found.failures.empty();
  Measurement m{found.worst,
          fmt::format("largest change of an output at or before t when tokens after t change: {:.2e} ({}){}; {}", found.worst,
                      found.where,
                      later_moved ? "; outputs after t did change"
                                  : fmt::format("; BUT some output after t did not change ({})", fmt::join(found.failures, "; ")),
                      found.forms())};
  return m.require(later_moved, fmt::format("an output after t did not change: {}", fmt::join(found.failures, "; ")));
}

Measurement chunked_cost_linear(const CountedChunkedForm& chunked) {
  // Count the multiply-adds of our chunked and parallel forms at n = 256 … 4096 (d_k = d_v = 16,
  // B = 32) and fit the growth exponent between successive doublings: 1 for linear work, 2 for
  // quadratic.
  const std::size_t d = 16, B = 32;
  double worst_slope = 0, parallel_slope = 0;
  std::vector<std::string> rows;
  std::vector<Series> series = {{"n", {}, ""}, {"chunked", {}, ""}, {"n·B·d + n·d²", {}, "chunked"},
                                {"parallel", {}, ""}, {"n²·d", {}, "parallel"}};
  std::uint64_t prev_chunked = 0, prev_parallel = 0;
  for (std::size_t n = 256; n <= 4096; n *= 2) {
    const Inputs in = draw_inputs(n, d, d, 5000 + n);
    const auto chunked_work = count_multiply_adds([&] { chunked(in.pq, in.pk, in.v, B); });
    const auto parallel_work = count_multiply_adds([&] { linear_attention_parallel<double>(in.pq, in.pk, in.v); });
    rows.push_back(fmt::format("n={}: chunked {} (n·B·d + n·d² = {}), parallel {} (n²·d = {})", n, chunked_work,
                               n * B * d + n * d * d, parallel_work, n * n * d));
    const double row[] = {double(n), double(chunked_work), double(n * B * d + n * d * d), double(parallel_work), double(n * n * d)};
    for (std::size_t k = 0; k < series.size(); ++k) series[k].values.push_back(row[k]);
    if (prev_chunked) {
      worst_slope = std::max(worst_slope, std::log2(double(chunked_work) / double(prev_chunked)));
      parallel_slope = std::log2(double(parallel_work) / double(prev_parallel));
    }
    prev_chunked = chunked_work;
    prev_parallel = parallel_work;
  }
  return {worst_slope,
          fmt::format("growth exponent of the chunked form's multiply-adds {:.3f} (parallel form: {:.3f}); {}", worst_slope,
                      parallel_slope, fmt::join(rows, "; ")),
          series};
}

}  // namespace vl::lessons::linear_rnn
