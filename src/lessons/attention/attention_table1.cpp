// Lesson attention: Table 1 of Vaswani et al. 2017, as seed article 001 quotes it (specs/
// attention.md, attention.table1-costs): a recurrent layer costs O(n·d²) operations in O(n)
// sequential steps, self-attention O(n²·d) in O(1). Counted on our kernels, exactly:
//
//   self-attention (one head, kernels/reference/attention.cpp)   2·n²·d multiply-adds (QKᵀ, then P V),
//                                                                 no state carried from position to position
//   a recurrent layer (linear attention's recurrent form, an RNN  n·(2·d² + d) multiply-adds (per token v φkᵀ,
//     over a d × d state, kernels/reference/linear_attention.hpp) S φq, z·φq), n state updates in a chain
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/reference/attention.hpp"
#include "kernels/reference/feature_map.hpp"
#include "kernels/reference/linear_attention.hpp"
#include "kernels/reference/matmul.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/attention/attention_common.hpp"

namespace vl::lessons::attention {

namespace {

using Rows = xt::xtensor<double, 2>;
/// A recurrent layer over φ(Q), φ(K) (n, d) and V (n, d) → (n, d).
using RecurrentLayer = std::function<Rows(const Rows& pq, const Rows& pk, const Rows& v)>;

struct Counted {
  std::uint64_t work = 0, updates = 0;
};

template <class F>
Counted counted(const F& f) {
  state_updates() = 0;
  const std::uint64_t work = count_multiply_adds(f);
  return {work, state_updates()};
}

double miss(std::uint64_t counted, std::uint64_t formula) { return std::fabs(double(counted) - double(formula)); }

// Counts at n = 64 … 512 (d = 16): the largest |counted − formula| over work and updates.
Measurement table1(const RecurrentLayer& recurrent) {
  const std::uint64_t d = 16;
  numpy::Generator rng(17);
  double worst = 0;
  std::vector<std::string> rows;
  std::vector<double> ns, att_work, rnn_work;
  for (std::uint64_t n : {64, 128, 256, 512}) {
    const Rows q = rng.standard_normal(n, d), k = rng.standard_normal(n, d), v = rng.standard_normal(n, d);
    const Counted att = counted([&] { (void)vl::attention<double>(q, k, v); });
    const Counted rnn = counted([&] { (void)recurrent(elu_plus_one<double, 2>(q), elu_plus_one<double, 2>(k), v); });
    worst = std::max({worst, miss(att.work, 2 * n * n * d), miss(att.updates, 0), miss(rnn.work, n * (2 * d * d + d)),
                      miss(rnn.updates, n)});
    rows.push_back(fmt::format("n={}: self-attention {} multiply-adds (2n²d = {}), {} state updates; recurrent {} (n(2d²+d) = {}), "
                               "{} state updates", n, att.work, 2 * n * n * d, att.updates, rnn.work, n * (2 * d * d + d), rnn.updates));
    ns.push_back(double(n));
    att_work.push_back(double(att.work));
    rnn_work.push_back(double(rnn.work));
  }
  return {worst, fmt::format("largest |counted − formula| = {}; {}", worst, fmt::join(rows, "; ")),
          // The recurrent layer's counts first: a control's first series is what the docs' plot shows of it.
          {{"n", ns, ""}, {"multiply-adds, recurrent", rnn_work, ""}, {"multiply-adds, self-attention", att_work, ""}}};
}

Rows our_recurrent(const Rows& pq, const Rows& pk, const Rows& v) { return linear_attention_recurrent<double>(pq, pk, v); }
// A "recurrent" layer computed all at once, as the parallel form: no chain of state updates.
Rows recurrent_as_parallel(const Rows& pq, const Rows& pk, const Rows& v) { return linear_attention_parallel<double>(pq, pk, v); }

}  // namespace

std::vector<ClaimCheck> table1_checks() {
  return {{"attention.table1-costs", "multiply-adds and state updates counted, self-attention and a recurrent layer, n = 64 … 512",
           [](const CheckContext&) { return table1(our_recurrent); },
           {broken_code("the recurrent layer computed all at once (the parallel form)",
                        [](const CheckContext&) { return table1(recurrent_as_parallel); })}}};
}

}  // namespace vl::lessons::attention
