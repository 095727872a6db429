// Lesson attention: Table 1 of Vaswani et al. 2017, as seed article 001 quotes it (specs/
// attention.md, attention.table1-costs): a recurrent layer costs O(n·d²) operations in O(n)
// sequential steps, self-attention O(n²·d) in O(1). Counted on our kernels, exactly:
//
//   self-attention (one head, kernels/reference/attention.cpp)   2·n²·d multiply-adds (QKᵀ, then P V)
//   a recurrent layer (linear attention's recurrent form, an RNN  n·(2·d² + d) multiply-adds (per token v φkᵀ,
//     over a d × d state, kernels/reference/linear_attention.hpp) S φq, z·φq), n state updates in a chain
//
// Self-attention's O(1) sequential steps are structural (every query row is computed from the
// inputs alone) and not counted: the state-update counter sees only recurrences.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xview.hpp>

#include "kernels/reference/attention.hpp"
#include "kernels/reference/feature_map.hpp"
#include "kernels/reference/linear_attention.hpp"
#include "kernels/reference/matmul.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/attention/attention_common.hpp"
#include "numeric/compare.hpp"

namespace vl::lessons::attention {

namespace {

using SeqRows = xt::xtensor<double, 2>;  // (n, d)
/// A layer over (n, d) queries, keys and values → (n, d): self-attention, or a recurrent layer
/// (given φ(Q), φ(K)).
using Layer = std::function<SeqRows(const SeqRows& q, const SeqRows& k, const SeqRows& v)>;

// Counts at n = 64 … 512 (d = 16): the largest |counted − formula| over work and updates.
Measurement table1(const Layer& self_attention, const Layer& recurrent) {
  const std::uint64_t d = 16;
  numpy::Generator rng(17);
  double worst = 0;
  std::vector<std::string> rows;
  std::vector<double> ns, att_work, rnn_work;
  for (std::uint64_t n : {64, 128, 256, 512}) {
    const SeqRows q = rng.standard_normal(n, d), k = rng.standard_normal(n, d), v = rng.standard_normal(n, d);
    const CountedWork att = count_work([&] { (void)self_attention(q, k, v); });
    const CountedWork rnn = count_work([&] { (void)recurrent(elu_plus_one<double, 2>(q), elu_plus_one<double, 2>(k), v); });
    worst = std::max({worst, difference(double(att.multiply_adds), double(2 * n * n * d)), difference(double(rnn.multiply_adds), double(n * (2 * d * d + d))),
                      difference(double(rnn.state_updates), double(n))});
    rows.push_back(fmt::format("n={}: self-attention {} multiply-adds (2n²d = {}); recurrent {} (n(2d²+d) = {}) in {} state updates",
                               n, att.multiply_adds, 2 * n * n * d, rnn.multiply_adds, n * (2 * d * d + d), rnn.state_updates));
    ns.push_back(double(n));
    att_work.push_back(double(att.multiply_adds));
    rnn_work.push_back(double(rnn.multiply_adds));
  }
  return {worst, fmt::format("largest |counted − formula| = {}; {}", worst, fmt::join(rows, "; ")),
          {{"n", ns, ""}, {"multiply-adds, recurrent", rnn_work, ""}, {"multiply-adds, self-attention", att_work, ""}}};
}

SeqRows our_self_attention(const SeqRows& q, const SeqRows& k, const SeqRows& v) { return vl::attention<double>(q, k, v).output; }
SeqRows our_recurrent(const SeqRows& pq, const SeqRows& pk, const SeqRows& v) { return linear_attention_recurrent<double>(pq, pk, v); }

// A "recurrent" layer computed all at once, as the parallel form: no chain of state updates.
SeqRows recurrent_as_parallel(const SeqRows& pq, const SeqRows& pk, const SeqRows& v) {
  return linear_attention_parallel<double>(pq, pk, v);
}

// Self-attention that forms the scores again for each column of the values (a loop over the
// output's columns around the whole computation): n²·d per column, n²·d² + n²·d in all.
SeqRows scores_per_value_column(const SeqRows& q, const SeqRows& k, const SeqRows& v) {
  SeqRows out = xt::zeros<double>({q.shape(0), v.shape(1)});
  for (std::size_t c = 0; c < v.shape(1); ++c) {
    const SeqRows column = xt::view(v, xt::all(), xt::range(c, c + 1));
    xt::view(out, xt::all(), xt::range(c, c + 1)) = vl::attention<double>(q, k, column).output;
  }
  return out;
}

}  // namespace

std::vector<ClaimCheck> table1_checks() {
  return {{"attention.table1-costs", "multiply-adds and state updates counted, self-attention and a recurrent layer, n = 64 … 512",
           [](const CheckContext&) { return table1(our_self_attention, our_recurrent); },
           {broken_code("the recurrent layer computed all at once (the parallel form)",
                        [](const CheckContext&) { return table1(our_self_attention, recurrent_as_parallel); }),
            broken_code("self-attention forming the scores again for each column of V",
                        [](const CheckContext&) { return table1(scores_per_value_column, our_recurrent); })}}};
}

}  // namespace vl::lessons::attention
