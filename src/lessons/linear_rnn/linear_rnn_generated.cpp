// Lesson linear-rnn, the claims about the computation over generated cases (engine/generated_cases.hpp):
// the length n, the key and value widths, the chunk size (any, a divisor of n or not, above n) and
// the position t a check splits the sequence at, each case's inputs from its own data seed.
//
//   linear-rnn.forms-agree          parallel and chunked (at the drawn size) against recurrent.
//   linear-rnn.convex-combination   each output within the running min/max of the values, each form.
//   linear-rnn.causal               tokens after t redrawn: the outputs up to t do not move a bit.
//
// The spec's tolerances are derived for n + d_k ≤ 80 and max|v| ≤ 3.03 (specs/linear_rnn.md): the
// terms stay within n ≤ 64, d_k ≤ 16, and the values are scaled by a power of two (exactly) until
// their largest magnitude is at most 3.03.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/generated_cases.hpp"
#include "lessons/linear_rnn/linear_rnn.hpp"
#include "lessons/linear_rnn/linear_rnn_forms.hpp"
#include "numeric/compare.hpp"

namespace vl::lessons::linear_rnn {

namespace {

// The largest |v| the spec's float32 and float16 tolerances are derived for.
constexpr double kLargestValue = 3.03;

std::vector<CaseTerm> rnn_case_terms() { return {{"n", 1, 64, 1, {}}, {"d_k", 1, 16, 1, {}}, {"d_v", 1, 9, 1, {}}, {"chunk", 1, 67, 1, {}}}; }

// causal's: n from 2 (a token after t), and t.
std::vector<CaseTerm> rnn_causal_terms() {
  std::vector<CaseTerm> t = rnn_case_terms();
  t[0].lo = t[0].simplest = 2;
  t.push_back({"t", 0, 62, 0, {}});
  return t;
}

// Anchors (n, d_k, d_v, chunk[, t]): every control meets its bug in one of them whatever the seed —
// 7 tokens in chunks of 3 (a state to carry, a short last chunk, a future token inside a chunk at
// t = 0), 12 in chunks of 4 (a divisor), 5 in one chunk larger than n.
const std::vector<std::vector<int>> kRnnAnchors = {{7, 3, 2, 3}, {12, 5, 4, 4}, {5, 2, 3, 8}};
std::vector<std::vector<int>> rnn_anchor_cases() { return kRnnAnchors; }
std::vector<std::vector<int>> rnn_causal_anchors() {
  std::vector<std::vector<int>> a = kRnnAnchors;
  const int t[] = {0, 5, 3};
  for (std::size_t i = 0; i < a.size(); ++i) a[i].push_back(t[i]);
  return a;
}

struct RnnCase {
  Inputs in;
  std::size_t chunk;
  std::string label;  // "n=7 d_k=3 d_v=2 B=3"
};

RnnCase rnn_case(const vl::Case& c, std::uint64_t stream = 0) {
  const std::size_t n = c["n"], d_k = c["d_k"], d_v = c["d_v"];
  RnnCase r{draw_inputs(n, d_k, d_v, c.data_seed() + stream), std::min<std::size_t>(c["chunk"], n + 3), ""};
  double s = 1;
  const double largest = xt::amax(xt::abs(r.in.v))();
  while (largest * s > kLargestValue) s /= 2;
  r.in.v *= s;
  r.label = fmt::format("n={} d_k={} d_v={} B={}", n, d_k, d_v, r.chunk);
  return r;
}

}  // namespace

Measurement forms_agree_generated(const CheckContext& ctx) {
  const auto terms = rnn_case_terms();
  return generated_cases(ctx, terms, rnn_anchor_cases(), Worse::larger, [&](const vl::Case& c) {
    const RnnCase r = rnn_case(c);
    const backends::Backend& b = ctx.backend;
    const Matrix rec = b.linear_recurrent(r.in.pq, r.in.pk, r.in.v);
    const double par = max_abs_diff(b.linear_parallel(r.in.pq, r.in.pk, r.in.v), rec);
    const double chk = max_abs_diff(b.linear_chunked(r.in.pq, r.in.pk, r.in.v, r.chunk), rec);
    return Measurement{worse(worse(0, par), chk),
                       fmt::format("{}: |parallel − recurrent| {:.2e}, |chunked − recurrent| {:.2e}", r.label, par, chk)};
  });
}

Measurement convex_combination_generated(const CheckContext& ctx) {
  const auto terms = rnn_case_terms();
  return generated_cases(ctx, terms, rnn_anchor_cases(), Worse::larger, [&](const vl::Case& c) {
    const RnnCase r = rnn_case(c);
    const detail::Findings found = detail::over_each_form(detail::forms_of(ctx.backend, r.chunk), "inside", [&](const detail::Form& form) {
      return detail::convex_excursion(form, r.in, ctx.precision, r.label);
    });
    return Measurement{found.worst, fmt::format("largest excursion over max|v| {:.2e} ({}); {}", found.worst, found.where, found.forms())};
  });
}

Measurement causal_generated(const CheckContext& ctx) {
  const auto terms = rnn_causal_terms();
  return generated_cases(ctx, terms, rnn_causal_anchors(), Worse::larger, [&](const vl::Case& c) {
    const RnnCase a = rnn_case(c), fresh = rnn_case(c, 1);
    const std::size_t n = a.in.v.shape(0);
    const std::size_t t = std::min<std::size_t>(c["t"], n - 2);
    const detail::Findings found = detail::over_each_form(detail::forms_of(ctx.backend, a.chunk), "prefixes unchanged", [&](const detail::Form& form) {
      return detail::prefix_moves(form, a.in, form.run(a.in.pq, a.in.pk, a.in.v), fresh.in, t, a.label);
    });
    // That the outputs after t move shows the change could reveal a leak; required in float64, where
    // the redrawn token t + 1's positive weight moves output t + 1 far above the rounding (in the
    // narrow formats a small weight's move can round away).
    const std::string still = ctx.precision == Precision::float64 && !found.failures.empty() ? found.failures.front() : "";
    Measurement m{found.worst, fmt::format("largest move of an output at or before t = {} {:.2e} ({}){}; {}", t, found.worst, found.where,
                                           still.empty() ? "" : "; BUT " + still, found.forms())};
    return m.require(still.empty(), still);
  });
}

}  // namespace vl::lessons::linear_rnn
