// Verification program of lesson linear-rnn (specs/linear_rnn.md): every claim with its
// negative controls, the listing against its documented output, traceability; and direct
// cases of the kernels small enough to check by hand.
#define BOOST_TEST_MODULE lesson linear-rnn
#include <boost/test/unit_test.hpp>

#include <xtensor/xview.hpp>

#include "kernels/feature_map.hpp"
#include "kernels/linear_attention.hpp"
#include "lesson_tests.hpp"
#include "lessons/linear_rnn.hpp"

namespace {
struct Register {
  Register() { vl::verify::register_lesson(vl::lessons::linear_rnn::lesson()); }
} register_linear_rnn;
}  // namespace

using Matrix = xt::xtensor<double, 2>;

BOOST_AUTO_TEST_SUITE(kernels)

BOOST_AUTO_TEST_CASE(first_token_sees_only_itself) {
  // o_0 = (φq_0·φk_0) v_0 / (φq_0·φk_0) = v_0 exactly, in every form.
  const Matrix pq = {{1.5, 0.25}, {2.0, 1.0}}, pk = {{0.5, 3.0}, {1.0, 1.0}}, v = {{1.0, -2.0, 4.0}, {8.0, 16.0, 32.0}};
  for (const Matrix& o : {vl::linear_attention_parallel<double>(pq, pk, v), vl::linear_attention_recurrent<double>(pq, pk, v),
                          vl::linear_attention_chunked<double>(pq, pk, v, 2)}) {
    BOOST_TEST(o(0, 0) == 1.0);
    BOOST_TEST(o(0, 1) == -2.0);
    BOOST_TEST(o(0, 2) == 4.0);
  }
}

BOOST_AUTO_TEST_CASE(equal_keys_give_the_running_mean) {
  // With every φk equal, every weight of row t is the same: o_t = mean(v_0..v_t).
  const Matrix pq = {{1.0, 2.0}, {0.5, 0.5}, {3.0, 1.0}, {1.0, 1.0}};
  const Matrix pk = {{1.0, 1.0}, {1.0, 1.0}, {1.0, 1.0}, {1.0, 1.0}};
  const Matrix v = {{2.0}, {4.0}, {9.0}, {1.0}};
  const Matrix expected = {{2.0}, {3.0}, {5.0}, {4.0}};
  for (std::size_t b : {1, 2, 3, 4, 7}) {
    const Matrix o = vl::linear_attention_chunked<double>(pq, pk, v, b);
    for (std::size_t t = 0; t < 4; ++t) BOOST_TEST(o(t, 0) == expected(t, 0), "B=" << b << " t=" << t);
  }
  const Matrix o = vl::linear_attention_parallel<double>(pq, pk, v);
  for (std::size_t t = 0; t < 4; ++t) BOOST_TEST(o(t, 0) == expected(t, 0));
}

BOOST_AUTO_TEST_CASE(feature_map_values) {
  const xt::xtensor<double, 1> x = {-1.0, 0.0, 2.0};
  const auto phi = vl::elu_plus_one<double, 1>(x);
  BOOST_TEST(phi(0) == std::exp(-1.0));
  BOOST_TEST(phi(1) == 1.0);
  BOOST_TEST(phi(2) == 3.0);
}

BOOST_AUTO_TEST_CASE(float_forms_agree_within_float32_rounding) {
  // The same kernels in float: agreement to a few float32 ulps (2^-23 ≈ 1.2e-7) times n.
  const auto in = vl::lessons::linear_rnn::draw_inputs(32, 6, 5, 11, vl::lessons::linear_rnn::reference_forms());
  const xt::xtensor<float, 2> pq = xt::cast<float>(in.pq), pk = xt::cast<float>(in.pk), v = xt::cast<float>(in.v);
  const auto par = vl::linear_attention_parallel<float>(pq, pk, v);
  const auto rec = vl::linear_attention_recurrent<float>(pq, pk, v);
  const auto blk = vl::linear_attention_chunked<float>(pq, pk, v, 5);
  BOOST_TEST(xt::amax(xt::abs(par - rec))() < 32 * 1.2e-7 * 8);
  BOOST_TEST(xt::amax(xt::abs(blk - rec))() < 32 * 1.2e-7 * 8);
}

BOOST_AUTO_TEST_CASE(chunk_size_zero_is_refused) {
  const Matrix m = xt::ones<double>({2, 2});
  BOOST_CHECK_THROW(vl::linear_attention_chunked<double>(m, m, m, 0), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
