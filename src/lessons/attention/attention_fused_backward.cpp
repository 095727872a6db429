// Lesson attention, beyond n²: our fused backward (kernels/fused/fused_attention_backward.hpp)
// agrees with the plain backward in float64 over the fused kernel's cases and block shapes, and
// gives the same bits on 1 and 2 threads (specs/attention.md, attention.fused-backward-matches-plain).
// Its controls are the same kernel instantiated with one of its own steps wrong
// (kernels/fused/fused_attention_steps.hpp): the kernel that ships contains none of these. Through
// `lessons audit --backend fused`, the same kernel is judged by the backward claims about the
// computation (attention.backward-fd, backward-matches-torch, fixture-gradient).
#include <cstring>

#include <fmt/format.h>
#include <xtensor/xsort.hpp>

#include "kernels/fused/fused_attention_backward_core.hpp"
#include "kernels/fused/fused_attention_steps.hpp"
#include "kernels/reference/attention_backward.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/attention/attention_common.hpp"
#include "lessons/attention/fused_cases.hpp"

namespace vl::lessons::attention {

namespace {

// The backward's steps, each with one plausible bug.

// The log-sum-exp saved as the row's maximum alone (ln l forgotten): P = exp(s − m), rows no longer sum to 1.
struct LseWithoutLogSteps : FusedSteps {
  template <class T>
  static T row_lse(T m, T) {
    return m;
  }
};
// The backward's causal skip one block too early: the diagonal block's gradient terms are lost.
struct BackwardSkipOffByOneSteps : FusedSteps {
  static bool backward_block_hidden(std::ptrdiff_t block_start, std::ptrdiff_t last_visible, std::size_t block_k) {
    return block_start > last_visible - std::ptrdiff_t(block_k);
  }
};
// dK, dV of a key/value head from the first query head of its group only.
struct GroupNotSummedSteps : FusedSteps {
  static std::size_t heads_summed(std::size_t) { return 1; }
};

double max_abs(const Tensor4<double>& x) { return x.size() ? double(xt::amax(xt::abs(x))()) : 0.0; }

bool same_bits(const AttentionGradients<double, 4>& a, const AttentionGradients<double, 4>& b) {
  auto same = [](const Tensor4<double>& x, const Tensor4<double>& y) {
    return x.shape() == y.shape() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
  };
  return same(a.dq, b.dq) && same(a.dk, b.dk) && same(a.dv, b.dv);
}

template <class Steps>
Measurement fused_backward_matches_plain(const CheckContext&) {
  double worst = 0, largest = 0;
  std::size_t runs = 0, cases = 0;
  bool deterministic = true;
  std::uint64_t seed = 60;
  std::vector<FusedConfig> configs;
  for (std::size_t bq : {16, 33})
    for (std::size_t bk : {7, 32, 64}) {  // 7 never divides n; 32, 64 sometimes
      FusedConfig c{bq, bk, 2};
      c.lanes = 1 + configs.size() % 3;  // dQ summed in 1, 2 or 3 lanes
      configs.push_back(c);
    }
  for (const FusedCase& c : fused_cases_f64()) {
    if (c.softcap > 0) continue;  // no backward through the soft cap's tanh (either kernel)
    numpy::Generator rng(seed++);
    const auto [q, k, v, o] = draw_fused_case<double>(c, rng);
    const Tensor4<double> d_out = draw4_as<double>(rng, {c.q[0], c.q[1], c.q[2], c.v[3]});
    const auto ref = vl::attention_backward<double>(q, k, v, d_out, o);
    largest = std::max({largest, max_abs(ref.dq), max_abs(ref.dk), max_abs(ref.dv)});
    ++cases;
    for (const FusedConfig& config : configs) {
      const auto saved = fused_attention_saved_with<Steps, double>(q, k, v, o, config);
      const auto g = fused_attention_backward_with<Steps, double>(q, k, v, saved, d_out, o, config, nullptr);
      worst = std::max({worst, max_abs_diff(g.dq, ref.dq), max_abs_diff(g.dk, ref.dk), max_abs_diff(g.dv, ref.dv)});
      ++runs;
      if (&config == &configs[1]) {  // the same blocks and lanes (2) on one thread: the same bits
        FusedConfig one = config;
        one.threads = 1;
        deterministic = deterministic && same_bits(g, fused_attention_backward_with<Steps, double>(q, k, v, saved, d_out, o, one, nullptr));
      }
    }
  }
  Measurement m{worst, fmt::format("largest |fused − plain| over dQ, dK, dV in {} runs ({} cases × block_q 16, 33 × block_k 7, 32, 64, dQ in 1 to 3 lanes; "
                                   "the gradients up to {:.3g}): {:.3g}; 1 and 2 threads {}",
                                   runs, cases, largest, worst, deterministic ? "bit-identical" : "DIFFER")};
  return m.require(deterministic, "the fused backward gives different bits on 1 and 2 threads");
}

}  // namespace

std::vector<ClaimCheck> fused_backward_checks() {
  return {
      {"attention.fused-backward-matches-plain", "fused vs plain backward, float64, 8 cases × 6 block shapes and lanes, 1 and 2 threads",
       fused_backward_matches_plain<FusedSteps>,
       {broken_code("lse saved as the row maximum (ln l forgotten)", fused_backward_matches_plain<LseWithoutLogSteps>),
        broken_code("backward causal skip off by one block", fused_backward_matches_plain<BackwardSkipOffByOneSteps>),
        broken_code("GQA: dK, dV from the first query head of each group only", fused_backward_matches_plain<GroupNotSummedSteps>)}},
  };
}

}  // namespace vl::lessons::attention
