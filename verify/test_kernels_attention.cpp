#include <boost/test/unit_test.hpp>

// The general attention kernel (src/kernels/reference/attention.hpp) and the stable softmax, on cases
// whose answers can be worked out by hand.
#include <cmath>
#include <limits>
#include <stdexcept>

#include <xtensor/xrandom.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/attention.hpp"
#include "kernels/reference/softmax.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_attention).
BOOST_AUTO_TEST_SUITE(test_kernels_attention)

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// max |a − b| over all elements (same shapes).
template <class A, class B>
double max_abs_diff(const A& a, const B& b) {
  return xt::amax(xt::abs(xt::cast<double>(a) - xt::cast<double>(b)))();
}

// A plain-loop reference: O[i] = Σ_j softmax_j(s·q_i·k_j + m_ij) v_j (no BLAS, no shortcuts).
xt::xtensor<double, 2> naive_attention(const xt::xtensor<double, 2>& q, const xt::xtensor<double, 2>& k,
                                       const xt::xtensor<double, 2>& v, double scale,
                                       const xt::xtensor<double, 2>& mask) {
  xt::xtensor<double, 2> out = xt::zeros<double>({q.shape(0), v.shape(1)});
  for (std::size_t i = 0; i < q.shape(0); ++i) {
    std::vector<double> s(k.shape(0));
    double m = -kInf;
    for (std::size_t j = 0; j < k.shape(0); ++j) {
      s[j] = 0;
      for (std::size_t d = 0; d < q.shape(1); ++d) s[j] += q(i, d) * k(j, d);
      s[j] = scale * s[j] + mask(i, j);
      m = std::max(m, s[j]);
    }
    if (m == -kInf) continue;
    double z = 0;
    for (double& x : s) z += (x = std::exp(x - m));
    for (std::size_t j = 0; j < k.shape(0); ++j)
      for (std::size_t e = 0; e < v.shape(1); ++e) out(i, e) += s[j] / z * v(j, e);
  }
  return out;
}

xt::xtensor<double, 2> random_matrix(std::size_t r, std::size_t c) {
  return xt::random::randn<double>({r, c});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(softmax)

BOOST_AUTO_TEST_CASE(rows_sum_to_one_and_large_scores_do_not_overflow) {
  // exp(1000) overflows; the shifted form does not. (1000 − ln 2 is only good to ~1e-13.)
  const xt::xtensor<double, 2> s = {{1000.0, 1000.0, 1000.0 - std::log(2.0)}, {-1.0, 0.0, 1.0}};
  const auto w = vl::softmax_rows(s);
  BOOST_TEST(w(0, 0) == 0.4, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(w(0, 2) == 0.2, boost::test_tools::tolerance(1e-12));
  for (std::size_t i = 0; i < 2; ++i) BOOST_TEST(xt::sum(xt::row(w, i))() == 1.0, boost::test_tools::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(masked_entries_get_zero_and_fully_masked_rows_are_zero) {
  const xt::xtensor<float, 2> s = {{0.0f, -INFINITY, 0.0f}, {-INFINITY, -INFINITY, -INFINITY}};
  const auto w = vl::softmax_rows(s);
  BOOST_TEST(w(0, 0) == 0.5f);
  BOOST_TEST(w(0, 1) == 0.0f);
  BOOST_TEST(w(1, 0) == 0.0f);
  BOOST_TEST(!xt::any(xt::isnan(w)));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(attention)

BOOST_AUTO_TEST_CASE(identical_keys_give_the_mean_of_the_values) {
  // All keys equal → all scores in a row equal → uniform weights → each output is mean(V).
  const xt::xtensor<double, 2> q = {{1.0, 2.0}, {-3.0, 0.5}};
  const xt::xtensor<double, 2> k = {{0.3, -0.7}, {0.3, -0.7}, {0.3, -0.7}, {0.3, -0.7}};
  const xt::xtensor<double, 2> v = {{1.0, 10.0, 0.0}, {2.0, 20.0, 0.0}, {3.0, 30.0, 0.0}, {6.0, 60.0, 4.0}};
  const auto r = vl::attention<double>(q, k, v, {.return_weights = true});
  for (std::size_t i = 0; i < 2; ++i) {
    BOOST_TEST(r.output(i, 0) == 3.0, boost::test_tools::tolerance(1e-14));
    BOOST_TEST(r.output(i, 1) == 30.0, boost::test_tools::tolerance(1e-14));
    BOOST_TEST(r.output(i, 2) == 1.0, boost::test_tools::tolerance(1e-14));
    for (std::size_t j = 0; j < 4; ++j) BOOST_TEST(r.weights(i, j) == 0.25, boost::test_tools::tolerance(1e-14));
  }
}

BOOST_AUTO_TEST_CASE(two_keys_by_hand) {
  // q = (1, 0), k0 = (ln 3 · √2, 0), k1 = 0, scale 1/√2 → scores (ln 3, 0) → weights (3/4, 1/4).
  const xt::xtensor<double, 2> q = {{1.0, 0.0}};
  const xt::xtensor<double, 2> k = {{std::log(3.0) * std::sqrt(2.0), 0.0}, {0.0, 0.0}};
  const xt::xtensor<double, 2> v = {{4.0}, {8.0}};
  const auto r = vl::attention<double>(q, k, v);
  BOOST_TEST(r.output(0, 0) == 0.75 * 4 + 0.25 * 8, boost::test_tools::tolerance(1e-14));
  // An explicit scale replaces 1/√D: scale √2 doubles the scores → weights (9/10, 1/10).
  const auto r2 = vl::attention<double>(q, k, v, {.scale = std::sqrt(2.0)});
  BOOST_TEST(r2.output(0, 0) == 0.9 * 4 + 0.1 * 8, boost::test_tools::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(matches_a_plain_loop_reference) {
  const auto q = random_matrix(5, 4), k = random_matrix(7, 4), v = random_matrix(7, 3);
  xt::xtensor<double, 2> bias = random_matrix(5, 7);
  bias(2, 3) = -kInf;
  const auto r = vl::attention<double>(q, k, v, {.bias = xt::xarray<double>(bias)});
  BOOST_TEST(max_abs_diff(r.output, naive_attention(q, k, v, 0.5, bias)) < 1e-13);
}

BOOST_AUTO_TEST_CASE(boolean_mask_hides_keys) {
  // Key 1 carries a huge value; hiding it must leave the mean of the others.
  const xt::xtensor<double, 2> q = xt::zeros<double>({2, 2});
  const xt::xtensor<double, 2> k = xt::zeros<double>({3, 2});
  const xt::xtensor<double, 2> v = {{1.0}, {1000.0}, {3.0}};
  const xt::xarray<bool> allowed = {true, false, true};  // (Sk,) broadcast to every query
  const auto r = vl::attention<double>(q, k, v, {.allowed = allowed, .return_weights = true});
  BOOST_TEST(r.output(0, 0) == 2.0, boost::test_tools::tolerance(1e-14));
  BOOST_TEST(r.output(1, 0) == 2.0, boost::test_tools::tolerance(1e-14));
  BOOST_TEST(r.weights(0, 1) == 0.0);
  // The same through an additive −∞ mask.
  const xt::xarray<double> bias = {0.0, -kInf, 0.0};
  BOOST_TEST(max_abs_diff(vl::attention<double>(q, k, v, {.bias = bias}).output, r.output) == 0.0);
}

BOOST_AUTO_TEST_CASE(causal_top_left_and_bottom_right) {
  // Zero queries and keys: uniform weights over the visible keys, V = key index,
  // so each output is the mean index of the keys its query sees.
  const std::size_t sq = 2, sk = 4;
  const xt::xtensor<double, 2> q = xt::zeros<double>({sq, std::size_t{3}});
  const xt::xtensor<double, 2> k = xt::zeros<double>({sk, std::size_t{3}});
  const xt::xtensor<double, 2> v = {{0.0}, {1.0}, {2.0}, {3.0}};
  // top-left: query i sees keys 0..i → means 0, 0.5
  const auto tl = vl::attention<double>(q, k, v, {.causal = true});
  BOOST_TEST(tl.output(0, 0) == 0.0, boost::test_tools::tolerance(1e-14));
  BOOST_TEST(tl.output(1, 0) == 0.5, boost::test_tools::tolerance(1e-14));
  // bottom-right: query i sees keys 0..i+2 → means 1, 1.5
  const auto br = vl::attention<double>(q, k, v, {.causal = true, .alignment = vl::CausalAlignment::bottom_right});
  BOOST_TEST(br.output(0, 0) == 1.0, boost::test_tools::tolerance(1e-14));
  BOOST_TEST(br.output(1, 0) == 1.5, boost::test_tools::tolerance(1e-14));
  // Same lengths: the two alignments agree.
  const auto q4 = random_matrix(4, 3), k4 = random_matrix(4, 3);
  const auto a = vl::attention<double>(q4, k4, v, {.causal = true});
  const auto b = vl::attention<double>(q4, k4, v, {.causal = true, .alignment = vl::CausalAlignment::bottom_right});
  BOOST_TEST(max_abs_diff(a.output, b.output) == 0.0);
  // The first query sees only key 0.
  BOOST_TEST(a.output(0, 0) == 0.0);
}

BOOST_AUTO_TEST_CASE(bottom_right_with_more_queries_than_keys_gives_zero_rows) {
  // Sq = 3 > Sk = 2: query 0 sees j ≤ 0 + 2 − 3 = −1, i.e. nothing → a zero row, not NaN.
  const xt::xtensor<double, 2> q = xt::zeros<double>({3, 1});
  const xt::xtensor<double, 2> k = xt::zeros<double>({2, 1});
  const xt::xtensor<double, 2> v = {{5.0}, {7.0}};
  const auto r = vl::attention<double>(q, k, v, {.causal = true, .alignment = vl::CausalAlignment::bottom_right});
  BOOST_TEST(r.output(0, 0) == 0.0);
  BOOST_TEST(r.output(1, 0) == 5.0, boost::test_tools::tolerance(1e-14));
  BOOST_TEST(r.output(2, 0) == 6.0, boost::test_tools::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(fully_masked_row_gives_zeros) {
  const auto q = random_matrix(3, 2), k = random_matrix(4, 2), v = random_matrix(4, 2);
  xt::xarray<bool> allowed = xt::ones<bool>({3, 4});
  xt::row(allowed, 1) = false;
  const auto r = vl::attention<double>(q, k, v, {.allowed = allowed, .return_weights = true});
  BOOST_TEST(!xt::any(xt::isnan(r.output)));
  BOOST_TEST(xt::all(xt::equal(xt::row(r.output, 1), 0.0)));
  BOOST_TEST(xt::all(xt::equal(xt::row(r.weights, 1), 0.0)));
  BOOST_TEST(xt::sum(xt::row(r.weights, 0))() == 1.0, boost::test_tools::tolerance(1e-14));
  // The same with an additive mask of −∞.
  xt::xarray<double> bias = xt::zeros<double>({3, 4});
  xt::row(bias, 1) = -kInf;
  BOOST_TEST(max_abs_diff(vl::attention<double>(q, k, v, {.bias = bias}).output, r.output) == 0.0);
}

BOOST_AUTO_TEST_CASE(softcap_bounds_the_scores_before_the_mask) {
  // With softcap c, every score lies in (−c, c): a huge score difference gives weights of at
  // most e^{2c} : 1. And a −∞ mask entry still gets weight exactly 0.
  const xt::xtensor<double, 2> q = {{100.0}};
  const xt::xtensor<double, 2> k = {{100.0}, {-100.0}, {100.0}};
  const xt::xtensor<double, 2> v = {{1.0}, {0.0}, {1000.0}};
  const double c = 0.5;
  const xt::xarray<double> bias = {0.0, 0.0, -kInf};
  const auto r = vl::attention<double>(q, k, v, {.scale = 1.0, .bias = bias, .softcap = c, .return_weights = true});
  const double w0 = std::exp(c) / (std::exp(c) + std::exp(-c));  // tanh saturates at ±1
  BOOST_TEST(r.weights(0, 0) == w0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(r.weights(0, 2) == 0.0);
  BOOST_TEST(r.output(0, 0) == w0, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(grouped_query_heads_share_kv_heads) {
  // Hq = 4, Hkv = 2: query heads 0, 1 read kv head 0; heads 2, 3 read kv head 1.
  xt::xtensor<double, 4> q = xt::random::randn<double>({2, 4, 3, 5});
  xt::xtensor<double, 4> k = xt::random::randn<double>({2, 2, 6, 5});
  xt::xtensor<double, 4> v = xt::random::randn<double>({2, 2, 6, 4});
  const auto r = vl::attention<double>(q, k, v);
  BOOST_TEST(r.output.shape(1) == 4u);
  BOOST_TEST(r.output.shape(3) == 4u);
  for (std::size_t b = 0; b < 2; ++b) {
    for (std::size_t h = 0; h < 4; ++h) {
      const xt::xtensor<double, 2> qs = xt::view(q, b, h), ks = xt::view(k, b, h / 2), vs = xt::view(v, b, h / 2);
      const auto single = vl::attention<double>(qs, ks, vs);
      BOOST_TEST(max_abs_diff(xt::view(r.output, b, h), single.output) < 1e-14);
    }
  }
  BOOST_CHECK_THROW(vl::attention<double>(xt::xtensor<double, 4>(xt::zeros<double>({1, 3, 2, 5})), k, v),
                    std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(masks_broadcast_numpy_style) {
  // A (B, 1, Sq, Sk) mask applies to every head; a (Sq, Sk) mask to every batch and head.
  xt::xtensor<double, 4> q = xt::random::randn<double>({2, 3, 4, 2});
  xt::xtensor<double, 4> k = xt::random::randn<double>({2, 3, 5, 2});
  xt::xtensor<double, 4> v = xt::random::randn<double>({2, 3, 5, 2});
  xt::xarray<double> m2 = xt::random::randn<double>({4, 5});
  xt::xarray<double> m4 = xt::broadcast(m2, {2, 1, 4, 5});
  const auto a = vl::attention<double>(q, k, v, {.bias = m2});
  const auto b = vl::attention<double>(q, k, v, {.bias = m4});
  BOOST_TEST(max_abs_diff(a.output, b.output) == 0.0);
  const xt::xtensor<double, 2> ref = naive_attention(xt::view(q, 1, 2), xt::view(k, 1, 2), xt::view(v, 1, 2),
                                                     1 / std::sqrt(2.0), m2);
  BOOST_TEST(max_abs_diff(xt::view(a.output, 1, 2), ref) < 1e-13);
  BOOST_CHECK_THROW(vl::attention<double>(q, k, v, {.bias = xt::xarray<double>(xt::zeros<double>({3, 5}))}),
                    std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(float_agrees_with_double) {
  xt::xtensor<double, 4> q = xt::random::randn<double>({1, 2, 6, 8});
  xt::xtensor<double, 4> k = xt::random::randn<double>({1, 2, 7, 8});
  xt::xtensor<double, 4> v = xt::random::randn<double>({1, 2, 7, 3});
  const auto d = vl::attention<double>(q, k, v, {.causal = true, .softcap = 2.0});
  const xt::xtensor<float, 4> qf = xt::cast<float>(q), kf = xt::cast<float>(k), vf = xt::cast<float>(v);
  const auto f = vl::attention<float>(qf, kf, vf, {.causal = true, .softcap = 2.0f});
  const double err = max_abs_diff(f.output, d.output);
  BOOST_TEST_MESSAGE("float vs double max abs error " << err);
  BOOST_TEST(err < 1e-5);
  BOOST_TEST(err > 0.0);  // the float path really is computed in float
}

// ONNX's nonpad_kv_seqlen: a batch's key length may be any of 0 … Sk; Sk + 1 would read a key that
// is not there, so it is refused — exactly at the boundary, with Sk itself accepted.
BOOST_AUTO_TEST_CASE(a_key_length_beyond_the_keys_is_refused) {
  xt::xtensor<double, 4> q = xt::random::randn<double>({2, 1, 3, 4});
  xt::xtensor<double, 4> k = xt::random::randn<double>({2, 1, 5, 4});
  xt::xtensor<double, 4> v = xt::random::randn<double>({2, 1, 5, 2});
  BOOST_CHECK_NO_THROW(vl::attention<double>(q, k, v, {.kv_lengths = std::vector<std::size_t>{5, 0}}));
  BOOST_CHECK_THROW(vl::attention<double>(q, k, v, {.kv_lengths = std::vector<std::size_t>{5, 6}}), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // test_kernels_attention
