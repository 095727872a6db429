// Lesson attention: seed 002's "try it" as a claim (specs/attention.md, attention.fixture-try-it).
// The seed asks the reader to toggle the mask and read row 0, then compare two heads in row 2, on
// its fixture (seq 3, d_model 4, 2 heads of 2 columns). The check does exactly that through the
// audited backend, and hands the arrays it judged to the docs' panel (its series).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xview.hpp>

#include "backends/registry.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/attention/attention_common.hpp"
#include "numeric/compare.hpp"

namespace vl::lessons::attention {

namespace {

// Row `i` of head `h`'s weights (heads, seq, seq), as doubles.
std::vector<double> weight_row(const xt::xtensor<float, 3>& w, std::size_t h, std::size_t i) {
  std::vector<double> row;
  for (std::size_t j = 0; j < w.shape(2); ++j) row.push_back(double(w(h, i, j)));
  return row;
}

// max_j |W[0, 2, j] − W[1, 2, j]|: how differently the two heads weigh the keys of row 2.
double heads_gap_row2(const xt::xtensor<float, 3>& w) {
  double gap = 0;
  for (std::size_t j = 0; j < w.shape(2); ++j) gap = worse(gap, std::fabs(double(w(0, 2, j)) - double(w(1, 2, j))));
  return gap;
}

template <class A>
Series flat(const std::string& name, const A& a) {
  return {name, std::vector<double>(a.begin(), a.end()), ""};
}

}  // namespace

// The toggle: unmasked, row 0 of each head spreads over the three keys (every weight at least
// 0.25: the lesson's "read row 0"); causal, it is exactly [1, 0, 0]. Measured: the smaller of the
// two heads' gaps in row 2 (unmasked and causal: row 2 sees every key either way).
Measurement fixture_try_it(const CheckContext& ctx) {
  const Fixture f = seed_fixture();
  const auto open = heads_forward_on<float>(ctx.backend, f.q, f.k, f.v, HeadsConfig{4, 2, 0.0f, false});
  const auto causal = heads_forward_on<float>(ctx.backend, f.q, f.k, f.v, HeadsConfig{4, 2, 0.0f, true});
  Measurement m;
  for (std::size_t h = 0; h < 2; ++h) {
    const std::vector<double> spread = weight_row(open.weights, h, 0), one_hot = weight_row(causal.weights, h, 0);
    m.require(std::all_of(spread.begin(), spread.end(), [](double w) { return w >= 0.25; }),
              fmt::format("unmasked, head {} row 0 = [{:.4g}] is not spread over the keys (a weight below 0.25)", h, fmt::join(spread, ", ")));
    m.require(one_hot == std::vector<double>{1.0, 0.0, 0.0},
              fmt::format("causal, head {} row 0 = [{:.4g}], not exactly [1, 0, 0]", h, fmt::join(one_hot, ", ")));
  }
  // A NaN or ∞ weight would read as a gap of ∞, which this "at least" claim would pass: every
  // weight must be finite (as in positions' equivariance checks).
  m.require(all_finite(open.weights) && all_finite(causal.weights), "a weight is NaN or infinite: a gap from it says nothing");
  const double gap_open = heads_gap_row2(open.weights), gap_causal = heads_gap_row2(causal.weights);
  m.value = std::min(gap_open, gap_causal);
  m.detail = fmt::format("row 0 unmasked: head 0 [{:.4f}], head 1 [{:.4f}]; causal: [{}] and [{}]; row 2, max |head 0 − head 1| = "
                         "{:.4f} unmasked, {:.4f} causal",
                         fmt::join(weight_row(open.weights, 0, 0), ", "), fmt::join(weight_row(open.weights, 1, 0), ", "),
                         fmt::join(weight_row(causal.weights, 0, 0), ", "), fmt::join(weight_row(causal.weights, 1, 0), ", "),
                         gap_open, gap_causal);
  // The arrays judged, for the docs' panel (docs/tryit.py): weights (heads, seq, seq) and outputs
  // (seq, d_model) in both states, row-major, after their shape.
  m.series = {{"shape (heads, seq, d_model)", {2, 3, 4}, ""}, flat("W_unmasked", open.weights), flat("W_causal", causal.weights),
              flat("Y_unmasked", open.output), flat("Y_causal", causal.output)};
  return m;
}

namespace {

/// Broken: every head scores with head 0's queries and keys (a head index dropped), so the heads
/// weigh the keys alike.
class HeadsShareScores : public AttentionBreak<HeadsShareScores> {
 public:
  HeadsShareScores() : AttentionBreak(backends::plain(), "heads-share-head-0-scores") {}
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const {
    Tensor4<T> q0 = q, k0 = k;
    for (std::size_t h = 1; h < q.shape(1); ++h) {
      xt::view(q0, xt::all(), h) = xt::view(q, xt::all(), 0);
      xt::view(k0, xt::all(), std::min(h, k.shape(1) - 1)) = xt::view(k, xt::all(), 0);
    }
    return base().attention(q0, k0, v, o);
  }
};

}  // namespace

std::vector<ClaimCheck> try_it_checks() {
  return {{"attention.fixture-try-it", "seed 002's try it: the mask toggled, row 0 read, two heads compared in row 2", fixture_try_it,
           {broken_backend("mask ignored", std::make_shared<MaskIgnored>()),
            broken_backend("every head scores with head 0's queries and keys", std::make_shared<HeadsShareScores>())}}};
}

}  // namespace vl::lessons::attention
