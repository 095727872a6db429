#include <boost/test/unit_test.hpp>

// Heads as column blocks (src/kernels/reference/heads.hpp), the grouped-query head mapping
// (gqa.hpp) and seed 002's multi-head module over any attention (heads_attention.hpp), in float
// and double: split/merge placing head h in columns h·D … (h+1)·D by hand and as an exact
// round trip over a grid of shapes (empty ones included), kv(h) = ⌊h / (Hq/Hkv)⌋ against the
// mapping built group by group and as attention and its backward use it, the module's
// configuration checks and per-head options (scale 1/√hd), and its forward and backward on a
// two-head case worked out by hand. These headers were otherwise reached only through lesson claims.
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/attention.hpp"
#include "kernels/reference/attention_backward.hpp"
#include "kernels/reference/gqa.hpp"
#include "kernels/reference/heads.hpp"
#include "kernels/reference/heads_attention.hpp"
#include "kernel_types.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_heads).
BOOST_AUTO_TEST_SUITE(test_kernels_heads)

namespace {

namespace bdata = boost::unit_test::data;
using Types = vl::verify::FloatTypes;

using vl::verify::kEps;

// The reference scaled dot-product attention, as heads_forward takes it.
template <class T>
vl::AttentionResult<T, 4> reference_attend(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                           const vl::AttentionOptions<T>& o) {
  return vl::attention<T>(q, k, v, o);
}

template <class T>
vl::AttentionGradients<T, 4> reference_backward(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                                const xt::xtensor<T, 4>& d_out, const vl::AttentionOptions<T>& o) {
  return vl::attention_backward<T>(q, k, v, d_out, o);
}

// The two-head case of heads_forward_by_hand: seq = 2, d_model = 4, H = 2, hd = 2, scale 1/√2.
//   head 0 (columns 0, 1): q = 0, so every score is 0 and the weights are uniform (1/2, 1/2);
//   head 1 (columns 2, 3): q_i = (√2 ln 3, 0), k₀ = (1, 0), k₁ = 0: scores (ln 3, 0), weights (3/4, 1/4).
//   V: v₀ = (1, 2 | 4, 8), v₁ = (3, 10 | 8, 0).
template <class T>
struct TwoHeads {
  xt::xtensor<T, 2> q, k, v;
  TwoHeads() {
    const T a = T(std::sqrt(2.0) * std::log(3.0));
    q = {{T(0), T(0), a, T(0)}, {T(0), T(0), a, T(0)}};
    k = {{T(0), T(0), T(1), T(0)}, {T(0), T(0), T(0), T(0)}};
    v = {{T(1), T(2), T(4), T(8)}, {T(3), T(10), T(8), T(0)}};
  }
};

// x(b, s, c) = 1000 b + 100 s + c + 1: every entry distinct, so a misplaced one shows.
xt::xtensor<double, 3> coded_rows(std::size_t B, std::size_t S, std::size_t width) {
  xt::xtensor<double, 3> x = xt::xtensor<double, 3>::from_shape({B, S, width});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t c = 0; c < width; ++c) x(b, s, c) = 1000.0 * double(b) + 100.0 * double(s) + double(c) + 1;
  return x;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(split_and_merge)

BOOST_AUTO_TEST_CASE_TEMPLATE(split_heads_by_hand, T, Types) {
  // (1, 2, 4), H = 2 → (1, 2, 2, 2): head 0 takes columns 0–1, head 1 columns 2–3, of every row.
  // A NaN is copied like any value, to the one place its column maps to.
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const xt::xtensor<T, 3> x = {{{T(0), T(1), T(2), T(3)}, {T(10), T(11), T(12), nan}}};
  const auto y = vl::split_heads<T>(x, 2);
  const std::array<std::size_t, 4> shape{1, 2, 2, 2};
  BOOST_TEST(y.shape() == shape, boost::test_tools::per_element());
  BOOST_TEST(y(0, 0, 0, 0) == T(0));
  BOOST_TEST(y(0, 0, 0, 1) == T(1));
  BOOST_TEST(y(0, 0, 1, 0) == T(10));
  BOOST_TEST(y(0, 0, 1, 1) == T(11));
  BOOST_TEST(y(0, 1, 0, 0) == T(2));
  BOOST_TEST(y(0, 1, 0, 1) == T(3));
  BOOST_TEST(y(0, 1, 1, 0) == T(12));
  BOOST_TEST(std::isnan(y(0, 1, 1, 1)));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(merge_heads_by_hand, T, Types) {
  // (1, H = 2, S = 2, D = 2) → (1, 2, 4): row s is head 0's row s, then head 1's.
  const xt::xtensor<T, 4> y = {{{{T(1), T(2)}, {T(3), T(4)}}, {{T(5), T(6)}, {T(7), T(8)}}}};
  const auto x = vl::merge_heads<T>(y);
  const xt::xtensor<T, 3> want = {{{T(1), T(2), T(5), T(6)}, {T(3), T(4), T(7), T(8)}}};
  BOOST_TEST(x.shape() == want.shape(), boost::test_tools::per_element());
  BOOST_TEST(x == want, boost::test_tools::per_element());
}

BOOST_DATA_TEST_CASE(round_trips_over_a_grid,
                     bdata::make(std::vector<std::size_t>{0, 1, 2}) * bdata::make(std::vector<std::size_t>{0, 1, 3}) *
                         bdata::make(std::vector<std::size_t>{1, 2, 4}) * bdata::make(std::vector<std::size_t>{0, 1, 3}),
                     B, S, H, D) {
  // split: (B, S, H·D) → (B, H, S, D) with y(b, h, s, c) = x(b, s, h·D + c) (the definition);
  // merge(split(x)) = x and split(merge(y)) = y exactly (pure copies), empty shapes included.
  const auto x = coded_rows(B, S, H * D);
  const auto y = vl::split_heads<double>(x, H);
  const std::array<std::size_t, 4> shape{B, H, S, D};
  BOOST_TEST(y.shape() == shape, boost::test_tools::per_element());
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t s = 0; s < S; ++s)
        for (std::size_t c = 0; c < D; ++c) BOOST_TEST(y(b, h, s, c) == x(b, s, h * D + c));
  const auto back = vl::merge_heads<double>(y);
  BOOST_TEST(back.shape() == x.shape(), boost::test_tools::per_element());
  BOOST_TEST(back == x, boost::test_tools::per_element());
  // The other way round, from a (B, H, S, D) tensor of distinct entries.
  xt::xtensor<double, 4> z = xt::xtensor<double, 4>::from_shape({B, H, S, D});
  for (std::size_t i = 0; i < z.size(); ++i) z.data()[i] = double(i) + 0.5;
  BOOST_TEST(vl::split_heads<double>(vl::merge_heads<double>(z), H) == z, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(one_sequence_forms_round_trip) {
  // (S, H·D) → (1, H, S, D) → (S, H·D): S = 3, H = 3, D = 2.
  const xt::xtensor<double, 2> x = xt::view(coded_rows(1, 3, 6), 0);
  const auto y = vl::split_heads<double>(x, 3);
  const std::array<std::size_t, 4> shape{1, 3, 3, 2};
  BOOST_TEST(y.shape() == shape, boost::test_tools::per_element());
  BOOST_TEST(y(0, 2, 1, 0) == x(1, 4));  // head 2, row 1, column 0 = column 2·2 + 0
  BOOST_TEST(vl::merge_heads_2d<double>(y) == x, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(heads_must_divide_the_width) {
  const xt::xtensor<double, 3> x = xt::zeros<double>({1, 2, 4});
  BOOST_CHECK_THROW(vl::split_heads<double>(x, 0), std::invalid_argument);
  BOOST_CHECK_THROW(vl::split_heads<double>(x, 3), std::invalid_argument);
  BOOST_CHECK_NO_THROW(vl::split_heads<double>(x, 4));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(grouped_query_heads)

BOOST_DATA_TEST_CASE(kv_head_of_follows_the_groups,
                     bdata::make(std::vector<std::size_t>{1, 4, 4, 4, 6, 6, 8, 12}) ^ bdata::make(std::vector<std::size_t>{1, 4, 2, 1, 3, 2, 2, 4}),
                     Hq, Hkv) {
  // Each key/value head serves g = Hq / Hkv consecutive query heads: kv head j serves query heads
  // j·g … j·g + g − 1. Built group by group here, then compared with kv_head_of for every h.
  const std::size_t g = Hq / Hkv;
  std::vector<std::size_t> want(Hq);
  for (std::size_t j = 0; j < Hkv; ++j)
    for (std::size_t i = 0; i < g; ++i) want[j * g + i] = j;
  for (std::size_t h = 0; h < Hq; ++h) BOOST_TEST(vl::kv_head_of(h, Hq, Hkv) == want[h], "query head " << h);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(attention_reads_the_kv_head_of_each_query_head, T, Types) {
  // Hq = 4, Hkv = 2 (g = 2) and Hkv = 1: q = k = 0 makes the weights uniform, and kv head j's
  // values are all j + 1, so query head h outputs exactly kv(h) + 1: (1, 1, 2, 2), or (1, 1, 1, 1).
  // (Interleaved groups, h mod Hkv, would give (1, 2, 1, 2).)
  for (const std::size_t Hkv : {std::size_t(2), std::size_t(1)}) {
    const xt::xtensor<T, 4> q = xt::zeros<T>({std::size_t(1), std::size_t(4), std::size_t(2), std::size_t(1)});
    const xt::xtensor<T, 4> k = xt::zeros<T>({std::size_t(1), Hkv, std::size_t(2), std::size_t(1)});
    xt::xtensor<T, 4> v = xt::zeros<T>({std::size_t(1), Hkv, std::size_t(2), std::size_t(1)});
    for (std::size_t j = 0; j < Hkv; ++j) xt::view(v, 0, j) = T(j + 1);
    const auto r = vl::attention<T>(q, k, v);
    for (std::size_t h = 0; h < 4; ++h)
      for (std::size_t s = 0; s < 2; ++s) BOOST_TEST(r.output(0, h, s, 0) == T(h / (4 / Hkv) + 1), "Hkv " << Hkv << " head " << h);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(backward_sums_a_kv_heads_gradient_over_its_group, T, Types) {
  // Same uniform weights (1/2 over Sk = 2 keys), Sq = 2; dO of query head h is h + 1 everywhere:
  // dV = Σ over the group of Pᵀ dO_h = Σ_h 2 · ½ (h + 1): kv head 0 gets 1 + 2 = 3, kv head 1
  // gets 3 + 4 = 7 (interleaved groups would give 4 and 6). Constant V leaves dP constant per
  // row, so dS = 0 and dQ = dK = 0. Every value exact.
  const xt::xtensor<T, 4> q = xt::zeros<T>({1, 4, 2, 1});
  const xt::xtensor<T, 4> k = xt::zeros<T>({1, 2, 2, 1});
  const xt::xtensor<T, 4> v = xt::ones<T>({1, 2, 2, 1});
  xt::xtensor<T, 4> d_out = xt::zeros<T>({1, 4, 2, 1});
  for (std::size_t h = 0; h < 4; ++h) xt::view(d_out, 0, h) = T(h + 1);
  const auto g = vl::attention_backward<T>(q, k, v, d_out);
  for (std::size_t s = 0; s < 2; ++s) {
    BOOST_TEST(g.dv(0, 0, s, 0) == T(3));
    BOOST_TEST(g.dv(0, 1, s, 0) == T(7));
  }
  BOOST_TEST(xt::all(xt::equal(g.dq, T(0))));
  BOOST_TEST(xt::all(xt::equal(g.dk, T(0))));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(heads_module)

BOOST_AUTO_TEST_CASE(configuration_checks) {
  // d_model divisible by num_heads ≥ 1, 0 ≤ dropout < 1 (NaN is not in it), q, k, v all (seq, d_model).
  const vl::HeadsShapes ok{{{3, 4}, {3, 4}, {3, 4}}};
  BOOST_CHECK_NO_THROW(vl::check_heads_config({4, 2, 0.0f, false}, ok));
  BOOST_CHECK_NO_THROW(vl::check_heads_config({4, 4, 0.999f, true}, ok));
  BOOST_CHECK_THROW(vl::check_heads_config({4, 0, 0.0f, false}, ok), std::invalid_argument);
  BOOST_CHECK_THROW(vl::check_heads_config({4, 3, 0.0f, false}, ok), std::invalid_argument);
  BOOST_CHECK_THROW(vl::check_heads_config({4, 2, -0.1f, false}, ok), std::invalid_argument);
  BOOST_CHECK_THROW(vl::check_heads_config({4, 2, 1.0f, false}, ok), std::invalid_argument);
  BOOST_CHECK_THROW(vl::check_heads_config({4, 2, std::numeric_limits<float>::quiet_NaN(), false}, ok), std::invalid_argument);
  BOOST_CHECK_THROW(vl::check_heads_config({4, 2, 0.0f, false}, {{{3, 4}, {2, 4}, {3, 4}}}), std::invalid_argument);
  BOOST_CHECK_THROW(vl::check_heads_config({4, 2, 0.0f, false}, {{{3, 4}, {3, 4}, {3, 6}}}), std::invalid_argument);
  BOOST_CHECK_THROW(vl::check_heads_config({4, 2, 0.0f, false}, {{{3, 6}, {3, 6}, {3, 6}}}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(every_head_runs_with_scale_one_over_root_hd, T, Types) {
  // hd = d_model / num_heads: 8/2 = 4 → 1/2, 8/8 = 1 → 1, 18/2 = 9 → 1/3 (one rounding of 1/3 in T).
  // Not 1/√d_model (1/√8). The weights are always asked for; `causal` is carried.
  BOOST_TEST(*vl::heads_options<T>({8, 2, 0.0f, false}).scale == T(0.5));
  BOOST_TEST(*vl::heads_options<T>({8, 8, 0.0f, false}).scale == T(1));
  BOOST_TEST(*vl::heads_options<T>({18, 2, 0.0f, false}).scale == T(1) / T(3));
  const auto o = vl::heads_options<T>({8, 2, 0.0f, true});
  BOOST_TEST(o.causal);
  BOOST_TEST(o.return_weights);
  BOOST_TEST(!vl::heads_options<T>({8, 2, 0.0f, false}).causal);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(forward_hands_each_head_its_columns, T, Types) {
  // A spy attention: it sees (1, H, seq, hd) heads and the module's options, and returns Q as the
  // output, so the module must return q exactly (merge ∘ split), and weights (1, H, seq, seq)
  // whose batch 0 comes back as (H, seq, seq). seq = 3, d_model = 6, H = 3, hd = 2.
  const xt::xtensor<T, 2> q = xt::cast<T>(xt::xtensor<double, 2>(xt::view(coded_rows(1, 3, 6), 0)));
  const xt::xtensor<T, 2> kv = xt::zeros<T>({3, 6});
  std::size_t calls = 0;
  auto spy = [&](const xt::xtensor<T, 4>& q4, const xt::xtensor<T, 4>& k4, const xt::xtensor<T, 4>& v4, const vl::AttentionOptions<T>& o) {
    ++calls;
    const std::array<std::size_t, 4> shape{1, 3, 3, 2};
    BOOST_TEST(q4.shape() == shape, boost::test_tools::per_element());
    BOOST_TEST(k4.shape() == shape, boost::test_tools::per_element());
    BOOST_TEST(v4.shape() == shape, boost::test_tools::per_element());
    BOOST_TEST(q4(0, 1, 2, 0) == q(2, 2));  // head 1, row 2, column 0 = column 1·2 + 0
    BOOST_TEST(*o.scale == T(1) / std::sqrt(T(2)));
    BOOST_TEST(o.causal);
    vl::AttentionResult<T, 4> r;
    r.output = q4;
    r.weights = xt::zeros<T>({1, 3, 3, 3});
    r.weights(0, 2, 1, 0) = T(7);
    return r;
  };
  const auto out = vl::heads_forward<T>(spy, q, kv, kv, {6, 3, 0.0f, true});
  BOOST_TEST(calls == 1u);
  BOOST_TEST(out.output == q, boost::test_tools::per_element());
  const std::array<std::size_t, 3> wshape{3, 3, 3};
  BOOST_TEST(out.weights.shape() == wshape, boost::test_tools::per_element());
  BOOST_TEST(out.weights(2, 1, 0) == T(7));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(forward_by_hand, T, Types) {
  // TwoHeads (above). Head 0: the mean of v₀, v₁ in columns 0–1 = (2, 6); head 1: ¾ (4, 8) + ¼ (8, 0)
  // = (5, 6); both rows alike. Causal: row 0 sees only key 0, so it outputs v₀ = (1, 2, 4, 8) with
  // weights (1, 0) in both heads; row 1 is unchanged.
  // Error: the score ln 3 carries ≤ 5 roundings (√2, ln 3, their product, the scale, q·k: ≤ 6u
  // absolute, u = eps/2); the weight's sensitivity w(1 − w) = 3/16 and the softmax's own ~3
  // roundings keep the weights within 2 eps; outputs Σ w v with |v| ≤ 10 and 2 roundings: ≤ 2 eps ·
  // 12 + 2 · 6u = 30 eps. Tolerances 2 eps (weights), 32 eps (outputs).
  const TwoHeads<T> c;
  for (const bool causal : {false, true}) {
    const auto r = vl::heads_forward<T>(reference_attend<T>, c.q, c.k, c.v, {4, 2, 0.0f, causal});
    const std::array<std::size_t, 2> oshape{2, 4};
    const std::array<std::size_t, 3> wshape{2, 2, 2};
    BOOST_TEST(r.output.shape() == oshape, boost::test_tools::per_element());
    BOOST_TEST(r.weights.shape() == wshape, boost::test_tools::per_element());
    const double want_out[2][4] = {{causal ? 1.0 : 2.0, causal ? 2.0 : 6.0, causal ? 4.0 : 5.0, causal ? 8.0 : 6.0}, {2, 6, 5, 6}};
    const double want_w[2][2][2] = {{{causal ? 1.0 : 0.5, causal ? 0.0 : 0.5}, {0.5, 0.5}},
                                    {{causal ? 1.0 : 0.75, causal ? 0.0 : 0.25}, {0.75, 0.25}}};
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t j = 0; j < 4; ++j)
        BOOST_TEST(std::abs(r.output(i, j) - want_out[i][j]) <= 32 * kEps<T>, "causal " << causal << " O(" << i << ", " << j << ")");
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t j = 0; j < 2; ++j)
          BOOST_TEST(std::abs(r.weights(h, i, j) - want_w[h][i][j]) <= 2 * kEps<T>, "causal " << causal << " W(" << h << ", " << i << ", " << j << ")");
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(backward_by_hand, T, Types) {
  // TwoHeads, dO = 1 everywhere, not causal; per head dV = Pᵀ dO, dP = dO Vᵀ, dS = P ⊙ (dP −
  // rowsum(P ⊙ dP)), dQ = s dS K, dK = s dSᵀ Q (s = 1/√2):
  //   head 0: P = ½: dV = (1, 1) in both rows; K and Q are 0 in columns 0–1, so dQ = dK = 0 there.
  //   head 1: P = (¾, ¼): dV rows (1.5, 1.5), (0.5, 0.5); dP = (12, 8) per row, rowsum(P ⊙ dP) = 11,
  //           dS = (¾ · 1, ¼ · (−3)) = (0.75, −0.75) per row;
  //           dQ_i = s · 0.75 · (k₀ − k₁) = (0.75/√2, 0);  dK₀ = s · 1.5 · q = (1.5 ln 3, 0), dK₁ = −dK₀.
  // Error: the weights within 2 eps (above); rowsum(P ⊙ dP) ≤ 20 · 2 eps; dS ≤ 0.75 · 40 eps +
  // 4 · 2 eps ≈ 38 eps; dK sums two rows of dS times s·|q| = ln 3: ≤ 84 eps. Tolerance 128 eps.
  const TwoHeads<T> c;
  const xt::xtensor<T, 2> d_out = xt::ones<T>({2, 4});
  const auto g = vl::heads_backward<T>(reference_backward<T>, c.q, c.k, c.v, d_out, {4, 2, 0.0f, false});
  const double dq = 0.75 / std::sqrt(2.0), dk = 1.5 * std::log(3.0);
  const double want_dq[2][4] = {{0, 0, dq, 0}, {0, 0, dq, 0}};
  const double want_dk[2][4] = {{0, 0, dk, 0}, {0, 0, -dk, 0}};
  const double want_dv[2][4] = {{1, 1, 1.5, 1.5}, {1, 1, 0.5, 0.5}};
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 4; ++j) {
      BOOST_TEST(std::abs(g.dq(i, j) - want_dq[i][j]) <= 128 * kEps<T>, "dQ(" << i << ", " << j << ")");
      BOOST_TEST(std::abs(g.dk(i, j) - want_dk[i][j]) <= 128 * kEps<T>, "dK(" << i << ", " << j << ")");
      BOOST_TEST(std::abs(g.dv(i, j) - want_dv[i][j]) <= 128 * kEps<T>, "dV(" << i << ", " << j << ")");
    }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(backward_hands_each_head_its_columns, T, Types) {
  // A spy backward returning (Q, 2K, dO) per head: the module must return (q, 2k, dO) exactly.
  const xt::xtensor<T, 2> q = xt::cast<T>(xt::xtensor<double, 2>(xt::view(coded_rows(1, 2, 6), 0)));
  const xt::xtensor<T, 2> k = q + T(0.5), v = q + T(0.25), d_out = q - T(100);
  auto spy = [](const xt::xtensor<T, 4>& q4, const xt::xtensor<T, 4>& k4, const xt::xtensor<T, 4>&, const xt::xtensor<T, 4>& d4,
                const vl::AttentionOptions<T>& o) {
    BOOST_TEST(*o.scale == T(1) / std::sqrt(T(3)));  // hd = 6 / 2 = 3
    return vl::AttentionGradients<T, 4>{q4, xt::xtensor<T, 4>(T(2) * k4), d4};
  };
  const auto g = vl::heads_backward<T>(spy, q, k, v, d_out, {6, 2, 0.0f, false});
  BOOST_TEST(g.dq == q, boost::test_tools::per_element());
  const xt::xtensor<T, 2> two_k = T(2) * k;
  BOOST_TEST(g.dk == two_k, boost::test_tools::per_element());
  BOOST_TEST(g.dv == d_out, boost::test_tools::per_element());
}

BOOST_DATA_TEST_CASE(forward_shapes_over_a_grid,
                     bdata::make(std::vector<std::size_t>{1, 2, 5}) *
                         (bdata::make(std::vector<std::size_t>{4, 4, 4, 6}) ^ bdata::make(std::vector<std::size_t>{1, 2, 4, 3})),
                     seq, d_model, heads) {
  // (seq, d_model) → output (seq, d_model), weights (heads, seq, seq) whose rows sum to 1 (a
  // softmax over seq ≤ 5 terms: within 8 eps).
  xt::xtensor<double, 2> q = xt::xtensor<double, 2>::from_shape({seq, d_model});
  for (std::size_t i = 0; i < q.size(); ++i) q.data()[i] = std::sin(double(i));
  const xt::xtensor<double, 2> k = xt::cos(q), v = q * 2.0;
  const auto r = vl::heads_forward<double>(reference_attend<double>, q, k, v, {d_model, heads, 0.0f, false});
  const std::array<std::size_t, 2> oshape{seq, d_model};
  const std::array<std::size_t, 3> wshape{heads, seq, seq};
  BOOST_TEST(r.output.shape() == oshape, boost::test_tools::per_element());
  BOOST_TEST(r.weights.shape() == wshape, boost::test_tools::per_element());
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < seq; ++i) {
      double sum = 0;
      for (std::size_t j = 0; j < seq; ++j) sum += r.weights(h, i, j);
      BOOST_TEST(std::abs(sum - 1) <= 8 * kEps<double>);
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()
