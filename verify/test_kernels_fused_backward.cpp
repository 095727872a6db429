// The fused backward (kernels/fused/fused_attention_backward.hpp) against the plain backward
// (kernels/reference/attention_backward.hpp): the options the lesson's claim does not draw (sliding
// windows, key lengths, decoding positions), lanes and threads, the edges (no query rows, a row
// that sees no key, NaN in), float32, and what it refuses.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "random_tensors.hpp"
#include "kernels/fused/fused_attention_backward.hpp"
#include "kernels/fused/fused_attention_backward_core.hpp"
#include "kernels/fused/fused_attention_steps.hpp"
#include "kernels/reference/attention_backward.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_fused_backward).
BOOST_AUTO_TEST_SUITE(test_kernels_fused_backward)

namespace {

using vl::verify::normal4;

// max |a − b| over the three gradients; a NaN on one side only counts as ∞, on both as 0.
template <class T>
double gradient_diff(const vl::AttentionGradients<T, 4>& a, const vl::AttentionGradients<T, 4>& b) {
  double w = 0;
  for (auto [x, y] : {std::pair{&a.dq, &b.dq}, std::pair{&a.dk, &b.dk}, std::pair{&a.dv, &b.dv}}) {
    BOOST_REQUIRE(x->shape() == y->shape());
    for (std::size_t i = 0; i < x->size(); ++i) {
      const double p = double(x->flat(i)), q = double(y->flat(i));
      if (std::isnan(p) || std::isnan(q)) {
        if (std::isnan(p) != std::isnan(q)) return INFINITY;
        continue;
      }
      w = std::max(w, std::fabs(p - q));
    }
  }
  return w;
}

struct Inputs {
  xt::xtensor<double, 4> q, k, v, d_out;
};
Inputs draw(std::array<std::size_t, 4> qs, std::array<std::size_t, 4> ks, std::size_t dv, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  Inputs in;
  in.q = normal4<double>(g, qs);
  in.k = normal4<double>(g, ks);
  in.v = normal4<double>(g, {ks[0], ks[1], ks[2], dv});
  in.d_out = normal4<double>(g, {qs[0], qs[1], qs[2], dv});
  return in;
}

vl::FusedConfig blocks(std::size_t bq, std::size_t bk, std::size_t lanes = 2, std::size_t threads = 2) {
  vl::FusedConfig c;
  c.block_q = bq, c.block_k = bk, c.lanes = lanes, c.threads = threads;
  return c;
}

double fused_vs_plain(const Inputs& in, const vl::AttentionOptions<double>& o, const vl::FusedConfig& c) {
  return gradient_diff(vl::fused_attention_backward<double>(in.q, in.k, in.v, in.d_out, o, c),
                       vl::attention_backward<double>(in.q, in.k, in.v, in.d_out, o));
}

}  // namespace

// The masks the claim's cases leave out, each over blocks that split the rows and keys unevenly.
const char* const kOptionNames[] = {"window 5 left, 2 right", "causal window 4", "key lengths 9 and 23", "causal, key lengths, bottom-right",
                                    "decoding: queries at 20, 21, ..."};
BOOST_DATA_TEST_CASE(options_the_claim_does_not_draw, boost::unit_test::data::xrange(5), which) {
  const Inputs in = draw({2, 4, 11, 8}, {2, 2, 29, 8}, 6, 100 + which);
  vl::AttentionOptions<double> o;
  switch (which) {
    case 0: o.left_window = 5, o.right_window = 2; break;
    case 1: o.causal = true, o.left_window = 4; break;
    case 2: o.kv_lengths = std::vector<std::size_t>{9, 23}; break;
    case 3: o.causal = true, o.alignment = vl::CausalAlignment::bottom_right, o.kv_lengths = std::vector<std::size_t>{15, 29}; break;
    case 4: o.causal = true, o.first_query = 18; break;
  }
  for (const auto& c : {blocks(4, 5), blocks(3, 7, 3), blocks(128, 64, 1)}) BOOST_TEST(fused_vs_plain(in, o, c) <= 1e-12, kOptionNames[which]);
}

// Any number of lanes (more than there are key blocks too) and of threads: the same gradients,
// and for the same blocks and lanes the same bits on 1, 2 and 3 threads. Two batches, so that
// there are at least 2 work items (B·Hkv·lanes) even with one lane: 2 threads do run.
BOOST_DATA_TEST_CASE(lanes_and_threads, boost::unit_test::data::make({1, 2, 3, 7, 50}), lanes) {
  const Inputs in = draw({2, 2, 40, 8}, {2, 1, 45, 8}, 8, 7);
  vl::AttentionOptions<double> o;
  o.causal = true;
  BOOST_TEST(fused_vs_plain(in, o, blocks(8, 6, lanes)) <= 1e-12);
  const auto one = vl::fused_attention_backward<double>(in.q, in.k, in.v, in.d_out, o, blocks(8, 6, lanes, 1));
  for (std::size_t threads : {2, 3}) {
    vl::FusedStats stats;
    const auto more = vl::fused_attention_backward<double>(in.q, in.k, in.v, in.d_out, o, blocks(8, 6, lanes, threads), &stats);
    BOOST_TEST(stats.threads == std::min<std::size_t>(threads, 2 * std::min<std::size_t>(lanes, 8)));  // 8 key blocks of 6
    for (auto [x, y] : {std::pair{&one.dq, &more.dq}, std::pair{&one.dk, &more.dk}, std::pair{&one.dv, &more.dv}})
      BOOST_TEST(std::memcmp(x->data(), y->data(), x->size() * sizeof(double)) == 0, "lanes " << lanes << ", threads " << threads);
  }
}

BOOST_AUTO_TEST_CASE(float32_within_the_float64_gradient) {
  const Inputs in = draw({1, 2, 70, 16}, {1, 2, 90, 16}, 16, 3);
  auto f = [](const xt::xtensor<double, 4>& x) { return xt::xtensor<float, 4>(xt::cast<float>(x)); };
  vl::AttentionOptions<float> o;
  o.causal = true;
  const auto g = vl::fused_attention_backward<float>(f(in.q), f(in.k), f(in.v), f(in.d_out), o, blocks(16, 32));
  // the exact gradient of the float32 inputs, in float64
  auto d = [](const xt::xtensor<float, 4>& x) { return xt::xtensor<double, 4>(xt::cast<double>(x)); };
  vl::AttentionOptions<double> od;
  od.causal = true;
  const auto ref = vl::attention_backward<double>(d(f(in.q)), d(f(in.k)), d(f(in.v)), d(f(in.d_out)), od);
  const vl::AttentionGradients<double, 4> got{d(g.dq), d(g.dk), d(g.dv)};
  // a few hundred float32 roundings of O(1) terms, against gradients of a few units: 1e-4 is
  // ~10³ u; a lost term (a block, a head) is O(1)
  BOOST_TEST(gradient_diff(got, ref) <= 1e-4);
  BOOST_TEST(gradient_diff(got, ref) > 0);  // float32 was computed, not float64 rounded at the end
}

BOOST_AUTO_TEST_CASE(a_row_that_sees_no_key_has_zero_gradient) {
  const Inputs in = draw({1, 1, 6, 4}, {1, 1, 9, 4}, 3, 5);
  vl::AttentionOptions<double> o;
  xt::xarray<bool> allowed = xt::ones<bool>({6, 9});
  xt::view(allowed, 2, xt::all()) = false;
  o.allowed = allowed;
  const auto g = vl::fused_attention_backward<double>(in.q, in.k, in.v, in.d_out, o, blocks(2, 4));
  for (std::size_t t = 0; t < 4; ++t) BOOST_TEST(g.dq(0, 0, 2, t) == 0.0);
  BOOST_TEST(fused_vs_plain(in, o, blocks(2, 4)) <= 1e-12);
}

// A NaN in head 0's key 3 reaches every gradient of head 0 (every query saw it) and none of
// head 1's, which must still equal the plain backward's.
BOOST_AUTO_TEST_CASE(nan_in_a_key_reaches_every_gradient_that_reads_it) {
  Inputs in = draw({1, 2, 5, 4}, {1, 2, 7, 4}, 3, 6);
  in.k(0, 0, 3, 1) = std::numeric_limits<double>::quiet_NaN();
  const auto g = vl::fused_attention_backward<double>(in.q, in.k, in.v, in.d_out, {}, blocks(2, 3));
  const auto ref = vl::attention_backward<double>(in.q, in.k, in.v, in.d_out);
  for (std::size_t i = 0; i < 5; ++i) BOOST_TEST(std::isnan(g.dq(0, 0, i, 0)));
  BOOST_TEST(std::isnan(g.dv(0, 0, 0, 0)));
  double worst = 0;
  for (auto [x, y] : {std::pair{&g.dq, &ref.dq}, std::pair{&g.dk, &ref.dk}, std::pair{&g.dv, &ref.dv}})
    for (std::size_t i = 0; i < x->shape(2); ++i)
      for (std::size_t t = 0; t < x->shape(3); ++t) {
        BOOST_REQUIRE(std::isfinite((*x)(0, 1, i, t)));
        worst = std::max(worst, std::fabs((*x)(0, 1, i, t) - (*y)(0, 1, i, t)));
      }
  BOOST_TEST(worst <= 1e-12);
  BOOST_TEST(fused_vs_plain(in, {}, blocks(2, 3)) <= 1e-12);  // NaN where, and only where, the plain backward has NaN
}

// What the forward saves: lse_i = ln Σ_j exp(s_ij) over the keys row i sees, −∞ for a row that
// sees none, against the sum taken here in long double.
BOOST_AUTO_TEST_CASE(the_saved_log_sum_exp) {
  const Inputs in = draw({1, 1, 6, 4}, {1, 1, 9, 4}, 3, 12);
  vl::AttentionOptions<double> o;
  o.causal = true;
  xt::xarray<bool> allowed = xt::ones<bool>({6, 9});
  xt::view(allowed, 4, xt::all()) = false;
  o.allowed = allowed;
  const auto saved = vl::fused_attention_saved<double>(in.q, in.k, in.v, o, blocks(2, 4));
  for (std::size_t i = 0; i < 6; ++i) {
    if (i == 4) {
      BOOST_TEST((std::isinf(saved.lse(0, 0, i)) && saved.lse(0, 0, i) < 0), "row 4 sees no key: lse " << saved.lse(0, 0, i));
      continue;
    }
    long double sum = 0;
    for (std::size_t j = 0; j <= i; ++j) {
      long double s = 0;
      for (std::size_t t = 0; t < 4; ++t) s += (long double)in.q(0, 0, i, t) * in.k(0, 0, j, t);
      sum += std::exp(s / 2);  // scale 1/√4
    }
    BOOST_TEST(std::fabs(saved.lse(0, 0, i) - double(std::log(sum))) <= 1e-14, "row " << i);
  }
}

BOOST_AUTO_TEST_CASE(no_query_rows) {
  const Inputs in = draw({1, 1, 0, 4}, {1, 1, 5, 4}, 3, 8);
  const auto g = vl::fused_attention_backward<double>(in.q, in.k, in.v, in.d_out);
  BOOST_TEST(g.dq.size() == 0u);
  BOOST_TEST(g.dk.size() == 20u);
  for (double x : g.dk) BOOST_TEST(x == 0.0);
  for (double x : g.dv) BOOST_TEST(x == 0.0);
}

BOOST_AUTO_TEST_CASE(refuses_what_it_does_not_differentiate) {
  const Inputs in = draw({1, 1, 3, 4}, {1, 1, 3, 4}, 4, 9);
  vl::AttentionOptions<double> capped;
  capped.softcap = 5.0;
  BOOST_CHECK_THROW(vl::fused_attention_backward<double>(in.q, in.k, in.v, in.d_out, capped), std::invalid_argument);
  const xt::xtensor<double, 4> wrong_d_out = xt::zeros<double>({1, 1, 3, 5});
  BOOST_CHECK_THROW(vl::fused_attention_backward<double>(in.q, in.k, in.v, wrong_d_out), std::invalid_argument);
  vl::FusedConfig blas;
  blas.blas_products = true;
  BOOST_CHECK_THROW(vl::fused_attention_backward<double>(in.q, in.k, in.v, in.d_out, {}, blas), std::invalid_argument);
  // the weights asked of the forward are not what a backward returns: ignored, not refused
  vl::AttentionOptions<double> weights;
  weights.return_weights = true;
  BOOST_TEST(gradient_diff(vl::fused_attention_backward<double>(in.q, in.k, in.v, in.d_out, weights),
                           vl::attention_backward<double>(in.q, in.k, in.v, in.d_out)) <= 1e-12);
}

// The body (fused_attention_backward_core.hpp) on its own: check_backward_inputs' refusals, each
// before any work, and the template with the kernel's own steps is the entry point, bit for bit
// (the lesson's controls instantiate it with broken ones).
BOOST_AUTO_TEST_CASE(the_core_template_and_its_input_checks) {
  const Inputs in = draw({2, 4, 5, 3}, {2, 2, 7, 3}, 2, 11);
  vl::AttentionOptions<double> o;
  o.causal = true;
  const vl::FusedConfig config{4, 3, 2};
  vl::check_backward_inputs(in.q, in.k, in.v, in.d_out, o, config);  // accepted
  const auto saved = vl::fused_attention_saved_with<vl::FusedSteps, double>(in.q, in.k, in.v, o, config);
  const auto core = vl::fused_attention_backward_with<vl::FusedSteps, double>(in.q, in.k, in.v, saved, in.d_out, o, config, nullptr);
  const auto entry = vl::fused_attention_backward<double>(in.q, in.k, in.v, in.d_out, o, config);
  BOOST_TEST((core.dq == entry.dq));
  BOOST_TEST((core.dk == entry.dk));
  BOOST_TEST((core.dv == entry.dv));
  vl::FusedConfig zero_block = config;
  zero_block.block_k = 0;
  BOOST_CHECK_THROW(vl::check_backward_inputs(in.q, in.k, in.v, in.d_out, o, zero_block), std::invalid_argument);
  vl::AttentionOptions<double> rounded = o;
  rounded.round = [](double x) { return x; };
  BOOST_CHECK_THROW(vl::check_backward_inputs(in.q, in.k, in.v, in.d_out, rounded, config), std::invalid_argument);
  const xt::xtensor<double, 4> k_short = xt::zeros<double>({2, 2, 7, 2});  // D differs from q's
  BOOST_CHECK_THROW(vl::check_backward_inputs(in.q, k_short, in.v, in.d_out, o, config), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
