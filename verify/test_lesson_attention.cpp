// Verification program of lesson attention (specs/attention.md): every claim with its negative
// controls, the listings against their documented outputs, traceability; and direct cases of
// the kernels small enough to check by hand.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include <xtensor/xview.hpp>

#include "kernels/reference/attention.hpp"
#include "kernels/reference/attention_backward.hpp"
#include "lesson_tests.hpp"
#include "backends/registry.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/attention/attention_common.hpp"
#include "numeric/npy.hpp"
#include "numeric/numpy_pairwise_sum.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_lesson_attention).
BOOST_AUTO_TEST_SUITE(test_lesson_attention)

namespace {
struct Register {
  Register() { vl::verify::register_lesson(vl::lessons::attention::lesson()); }
} register_attention;
}  // namespace

using Matrix = xt::xtensor<double, 2>;

BOOST_AUTO_TEST_SUITE(kernels)

BOOST_AUTO_TEST_CASE(equal_keys_give_the_mean_of_the_values) {
  // Every key equal: every score of a row equal, every weight 1/3, output = mean of the values.
  const Matrix q = {{1.0, 2.0}, {-3.0, 0.5}}, k = {{1.0, 1.0}, {1.0, 1.0}, {1.0, 1.0}};
  const Matrix v = {{3.0, 0.0}, {6.0, 3.0}, {0.0, 9.0}};
  vl::AttentionOptions<double> o;
  o.return_weights = true;
  const auto r = vl::attention<double>(q, k, v, o);
  for (std::size_t i = 0; i < 2; ++i) {
    BOOST_TEST(r.output(i, 0) == 3.0);
    BOOST_TEST(r.output(i, 1) == 4.0);
  }
}

BOOST_AUTO_TEST_CASE(backward_of_one_key_is_zero_for_q_and_k) {
  // One key: P = [[1]] whatever the scores, so dS = 1·(dP − dP) = 0, dQ = dK = 0, dV = dO.
  const xt::xtensor<double, 4> q = {{{{0.3, -1.2}}}}, k = {{{{2.0, 0.7}}}}, v = {{{{5.0, -4.0, 1.0}}}};
  const xt::xtensor<double, 4> d_out = {{{{0.25, 0.5, -1.0}}}};
  const auto g = vl::attention_backward<double>(q, k, v, d_out);
  BOOST_TEST(xt::amax(xt::abs(g.dq))() == 0.0);
  BOOST_TEST(xt::amax(xt::abs(g.dk))() == 0.0);
  BOOST_TEST(g.dv(0, 0, 0, 0) == 0.25);
  BOOST_TEST(g.dv(0, 0, 0, 2) == -1.0);
}

BOOST_AUTO_TEST_CASE(softmax_backward_by_hand) {
  // p = [1/4, 3/4], dp = [1, 3]: rowsum(p ⊙ dp) = 1/4 + 9/4 = 5/2; dS = [1/4·(1 − 5/2), 3/4·(3 − 5/2)] = [−3/8, 3/8].
  const Matrix p = {{0.25, 0.75}}, dp = {{1.0, 3.0}};
  const Matrix ds = vl::softmax_rows_backward<double>(p, dp);
  BOOST_TEST(ds(0, 0) == -0.375);
  BOOST_TEST(ds(0, 1) == 0.375);
}

BOOST_AUTO_TEST_CASE(masked_key_gets_no_gradient) {
  // Causal, 2 positions: key 1 is hidden from query 0; dK[1] comes from query 1 only and
  // dV[1] = P[1,1]·dO[1] (query 0 gives it weight 0).
  const xt::xtensor<double, 4> q = {{{{1.0}, {2.0}}}}, k = {{{{0.5}, {-1.0}}}}, v = {{{{3.0}, {7.0}}}};
  const xt::xtensor<double, 4> d_out = {{{{100.0}, {0.0}}}};
  vl::AttentionOptions<double> o;
  o.causal = true;
  const auto g = vl::attention_backward<double>(q, k, v, d_out, o);
  BOOST_TEST(g.dv(0, 0, 1, 0) == 0.0);  // only query 0 has a gradient, and it cannot see key 1
  BOOST_TEST(g.dk(0, 0, 1, 0) == 0.0);
  BOOST_TEST(g.dv(0, 0, 0, 0) == 100.0);
}

BOOST_AUTO_TEST_CASE(softcap_backward_is_refused) {
  const xt::xtensor<double, 4> x = xt::ones<double>({1, 1, 2, 2});
  vl::AttentionOptions<double> o;
  o.softcap = 5;
  BOOST_CHECK_THROW(vl::attention_backward<double>(x, x, x, x, o), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(numpy_sums)

BOOST_AUTO_TEST_CASE(pairwise_sum_by_hand) {
  // 9 terms: r[j] = a[j] for j < 8, combined ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then + a[8].
  // With 1e16 and ones, the order shows: left to right would lose every 1.
  std::vector<double> a = {1e16, 1.0, 1.0, 1.0, -1e16, 1.0, 1.0, 1.0, 1.0};
  // ((1e16+1)+(1+1)) + ((−1e16+1)+(1+1)) + 1 = (1e16+2) + (−1e16+2) + 1 = 4 + 1 = 5 (1e16+1 rounds to 1e16)
  BOOST_TEST(vl::numpy::pairwise_sum(a.data(), a.size()) == 5.0);
  double naive = 0;
  for (double x : a) naive += x;
  BOOST_TEST(naive != 5.0);
}

BOOST_AUTO_TEST_CASE(sums_of_the_scale_table_match_numpy) {
  // The full-precision table of listing 2, computed by NumPy. The standard deviations and the
  // mean largest weights come out bit for bit (the sums are in NumPy's order); the Jacobian
  // norms may differ in the last bits, because NumPy 1.24's float64 np.exp on an AVX-512 CPU
  // is its own SIMD routine, not libm's correctly rounded exp (it differs from glibc in the
  // last bit for about a fifth of the 64000 softmax entries at d_k = 64). 1e-15 relative is a
  // few ulps; the printed digits (3 or 4 decimals) are compared exactly by the listing's test.
  const std::filesystem::path goldens = std::filesystem::path(VL_SOURCE_DIR) / "reference_outputs";
  const auto out = vl::lessons::attention::listing_scale({goldens});
  const auto golden = vl::lessons::attention::load_golden(goldens, "scale.table.npy");
  const auto& ours = out.arrays.at("table");
  BOOST_REQUIRE(ours.shape() == golden.shape());
  for (std::size_t i = 0; i < golden.size(); ++i) {
    BOOST_TEST(std::fabs(ours.flat(i) - golden.flat(i)) <= 1e-15 * std::fabs(golden.flat(i)), "entry " << i);
    if (i % 5 == 0) BOOST_TEST(ours.flat(i) == golden.flat(i), "std(q.k) of row " << i / 5 << " (no exp involved)");
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(seed_002)

BOOST_AUTO_TEST_CASE(fixture_values) {
  const auto f = vl::lessons::attention::seed_fixture();
  BOOST_TEST(f.q(0, 0) == 0.1f);
  BOOST_TEST(f.k(0, 0) == 0.25f);                 // (0/4 + 1)/4 − 0/3
  BOOST_TEST(f.k(0, 1) == 0.25f - 1.0f / 3.0f);   // x = 1: (0 + 1)/4 − 1/3
  BOOST_TEST(f.k(2, 3) == 0.75f - 1.0f / 3.0f);   // x = 11: (2 + 1)/4 − 1/3
  BOOST_TEST(f.v(2, 3) == 1.2f);
}

BOOST_AUTO_TEST_CASE(forward_basic_case) {
  const auto f = vl::lessons::attention::seed_fixture();
  const auto r = vl::lessons::attention::heads_forward_on<float>(*vl::backends::plain(), f.q, f.k, f.v, {4, 2, 0.0f, false});
  BOOST_TEST(std::fabs(r.weights(0, 0, 0) + r.weights(0, 0, 1) + r.weights(0, 0, 2) - 1.0f) < 1e-6f);
  BOOST_TEST(r.output(0, 0) > 0.1f);
  BOOST_TEST(r.output(0, 0) < 0.9f);
}

BOOST_AUTO_TEST_CASE(bad_configuration_is_refused) {
  const auto f = vl::lessons::attention::seed_fixture();
  const auto& plain = *vl::backends::plain();
  BOOST_CHECK_THROW(vl::lessons::attention::heads_forward_on<float>(plain, f.q, f.k, f.v, {4, 3, 0.0f, false}), std::invalid_argument);
  BOOST_CHECK_THROW(vl::lessons::attention::heads_forward_on<float>(plain, f.q, f.k, f.v, {4, 2, 1.0f, false}), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // test_lesson_attention
