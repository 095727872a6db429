#include <boost/test/unit_test.hpp>

// The position-wise feed-forward network (src/kernels/reference/feed_forward.hpp) on its own, in
// float and double: Linear's x Wᵀ + b on a hand-computed product (W transposed, b per output
// column, every position alike), its output shape over a grid (empty batches, sequences and widths
// included), ReLU and GELU at points where Φ is tabulated (GELU(1) = Φ(1)), NaN and huge inputs
// through both activations, and FFN = linear2(act(linear1(x))) by hand. The kernel is otherwise
// reached only through the encoder-decoder lesson's claims.
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <xtensor/xtensor.hpp>

#include "kernels/reference/feed_forward.hpp"
#include "kernel_types.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_feed_forward).
BOOST_AUTO_TEST_SUITE(test_kernels_feed_forward)

namespace {

namespace bdata = boost::unit_test::data;
using Types = vl::verify::FloatTypes;

using vl::verify::kEps;

// Φ, the standard normal CDF, from its tables (not from erf): Φ(0.5), Φ(1), Φ(2).
constexpr double kPhiHalf = 0.6914624612740131;
constexpr double kPhi1 = 0.8413447460685429;
constexpr double kPhi2 = 0.9772498680518208;

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(linear_by_hand, T, Types) {
  // y = x Wᵀ + b with W (out, in): y_j = Σ_c x_c W(j, c) + b_j, small integers (exact).
  //   W = [[1, 0, −1], [2, 1, 0], [0, 0, 3]], b = (10, 20, 30)
  //   x = (1, 2, 3) → (1 − 3 + 10, 2 + 2 + 20, 9 + 30) = (8, 24, 39)
  //   x = (4, 5, 6) → (4 − 6 + 10, 8 + 5 + 20, 18 + 30) = (8, 33, 48)
  // (x W without the transpose would give (5, 8, 8) for the first row.) The two rows sit in two
  // batches: each position is mapped alike.
  const xt::xtensor<T, 3> x = {{{T(1), T(2), T(3)}}, {{T(4), T(5), T(6)}}};
  const vl::LinearParameters<T> p{{{T(1), T(0), T(-1)}, {T(2), T(1), T(0)}, {T(0), T(0), T(3)}}, {T(10), T(20), T(30)}};
  const auto y = vl::linear<T>(x, p);
  const xt::xtensor<T, 3> want = {{{T(8), T(24), T(39)}}, {{T(8), T(33), T(48)}}};
  BOOST_TEST(y.shape() == want.shape(), boost::test_tools::per_element());
  BOOST_TEST(y == want, boost::test_tools::per_element());
  // A narrowing layer, out = 2 < in = 3: the first two rows of W and b; shape (B, S, 2).
  const xt::xtensor<T, 3> x2 = {{{T(1), T(2), T(3)}, {T(4), T(5), T(6)}}};
  const vl::LinearParameters<T> p2{{{T(1), T(0), T(-1)}, {T(2), T(1), T(0)}}, {T(10), T(20)}};
  const xt::xtensor<T, 3> want2 = {{{T(8), T(24)}, {T(8), T(33)}}};
  const auto y2 = vl::linear<T>(x2, p2);
  BOOST_TEST(y2.shape() == want2.shape(), boost::test_tools::per_element());
  BOOST_TEST(y2 == want2, boost::test_tools::per_element());
}

BOOST_DATA_TEST_CASE(linear_shape_and_values_over_a_grid,
                     bdata::make(std::vector<std::size_t>{0, 1, 2}) * bdata::make(std::vector<std::size_t>{0, 1, 3}) *
                         bdata::make(std::vector<std::size_t>{0, 1, 4}) * bdata::make(std::vector<std::size_t>{1, 3}),
                     B, S, in, out) {
  // (B, S, in) → (B, S, out). Small integer entries make every product and sum exact, so the
  // kernel must equal the definition's plain loop y(b, s, j) = Σ_c x(b, s, c) W(j, c) + b_j to the
  // bit; with in = 0 the sum is empty and y is b at every position.
  xt::xtensor<double, 3> x = xt::xtensor<double, 3>::from_shape({B, S, in});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t c = 0; c < in; ++c) x(b, s, c) = double(b) + 2.0 * double(s) - double(c);
  vl::LinearParameters<double> p{xt::xtensor<double, 2>::from_shape({out, in}), xt::xtensor<double, 1>::from_shape({out})};
  for (std::size_t j = 0; j < out; ++j) {
    p.bias(j) = 100.0 * double(j + 1);
    for (std::size_t c = 0; c < in; ++c) p.weight(j, c) = double(j) - 2.0 * double(c) + 1;
  }
  const auto y = vl::linear<double>(x, p);
  const std::array<std::size_t, 3> shape{B, S, out};
  BOOST_TEST(y.shape() == shape, boost::test_tools::per_element());
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t j = 0; j < out; ++j) {
        double want = p.bias(j);
        for (std::size_t c = 0; c < in; ++c) want += x(b, s, c) * p.weight(j, c);
        BOOST_TEST(y(b, s, j) == want);
      }
}

BOOST_AUTO_TEST_CASE(linear_refuses_parameters_that_do_not_fit) {
  const xt::xtensor<double, 3> x = xt::zeros<double>({1, 2, 3});
  const vl::LinearParameters<double> wrong_in{xt::zeros<double>({2, 4}), xt::zeros<double>({2})};
  const vl::LinearParameters<double> wrong_bias{xt::zeros<double>({2, 3}), xt::zeros<double>({3})};
  BOOST_CHECK_THROW(vl::linear<double>(x, wrong_in), std::invalid_argument);
  BOOST_CHECK_THROW(vl::linear<double>(x, wrong_bias), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(relu_by_hand, T, Types) {
  // max(0, z), exact; NaN propagates as torch.relu's does (a ReLU that maps NaN to 0 hides the
  // bug upstream); ±huge and ±∞ pass or clamp without arithmetic.
  using vl::Activation;
  BOOST_TEST(vl::activate(T(3), Activation::relu) == T(3));
  BOOST_TEST(vl::activate(T(-2), Activation::relu) == T(0));
  BOOST_TEST(vl::activate(T(0), Activation::relu) == T(0));
  BOOST_TEST(vl::activate(std::numeric_limits<T>::denorm_min(), Activation::relu) == std::numeric_limits<T>::denorm_min());
  BOOST_TEST(vl::activate(std::numeric_limits<T>::max(), Activation::relu) == std::numeric_limits<T>::max());
  BOOST_TEST(vl::activate(-std::numeric_limits<T>::infinity(), Activation::relu) == T(0));
  BOOST_TEST(std::isnan(vl::activate(std::numeric_limits<T>::quiet_NaN(), Activation::relu)));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(gelu_by_hand, T, Types) {
  // GELU(z) = z Φ(z) (torch's exact form), at points where Φ is tabulated:
  //   GELU(0) = 0, GELU(0.5) = Φ(0.5)/2, GELU(1) = Φ(1), GELU(−1) = −(1 − Φ(1)), GELU(2) = 2 Φ(2).
  // Error: the argument z·(1/√2) rounds once (u = eps/2; erf's relative sensitivity there is
  // x erf'(x)/erf(x) ≤ 0.6), erf is within ~1 ulp, 1 + erf and the products round once each; at
  // z = −1, 1 + erf = 0.317 cancels and magnifies erf's error ~2×: ≤ ~7u = 3.5 eps relative.
  // Tolerance 8 eps relative.
  using vl::Activation;
  const std::vector<std::pair<double, double>> cases = {
      {0.5, kPhiHalf / 2}, {1.0, kPhi1}, {-1.0, -(1 - kPhi1)}, {2.0, 2 * kPhi2}};
  BOOST_TEST(vl::activate(T(0), Activation::gelu) == T(0));
  for (const auto& [z, want] : cases)
    BOOST_TEST(std::abs(vl::activate(T(z), Activation::gelu) - want) <= 8 * kEps<T> * std::abs(want), "GELU(" << z << ")");
  // Far left GELU(−10) = −10 Φ(−10) = −7.62e-23: 1 + erf(−7.07) cancels to 0 in both types, an
  // absolute error of 7.6e-23 (the form loses the tail, not the value's magnitude).
  BOOST_TEST(std::abs(vl::activate(T(-10), Activation::gelu)) <= T(1e-22));
  // Huge: erf saturates at ±1, so GELU(h) = h/2 · 2 = h exactly and GELU(−h) = −h/2 · 0 = −0;
  // z/√2 does not overflow. NaN propagates through erf.
  const T h = std::is_same_v<T, float> ? T(1e30) : T(1e300);
  BOOST_TEST(vl::activate(h, Activation::gelu) == h);
  BOOST_TEST(vl::activate(-h, Activation::gelu) == T(0));
  BOOST_TEST(vl::activate(std::numeric_limits<T>::max(), Activation::gelu) == std::numeric_limits<T>::max());
  BOOST_TEST(std::isnan(vl::activate(std::numeric_limits<T>::quiet_NaN(), Activation::gelu)));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(relu_network_by_hand, T, Types) {
  // d = 2, d_ff = 3, d' = 2, every value exact:
  //   W₁ = [[1, 0], [0, 1], [1, 1]], b₁ = (0, 1, 0.5);  W₂ = [[1, 2, 3], [4, 5, 6]], b₂ = (0.25, −0.25)
  //   x = (1, −2): z = (1, −1, −0.5) → ReLU (1, 0, 0) → (1 + 0.25, 4 − 0.25) = (1.25, 3.75)
  //   x = (2, 1):  z = (2, 2, 3.5)   → ReLU (2, 2, 3.5) → (2 + 4 + 10.5 + 0.25, 8 + 10 + 21 − 0.25) = (16.75, 38.75)
  // (Without the activation the first row would be (−2.25, −4.25).)
  const xt::xtensor<T, 3> x = {{{T(1), T(-2)}, {T(2), T(1)}}};
  const vl::LinearParameters<T> l1{{{T(1), T(0)}, {T(0), T(1)}, {T(1), T(1)}}, {T(0), T(1), T(0.5)}};
  const vl::LinearParameters<T> l2{{{T(1), T(2), T(3)}, {T(4), T(5), T(6)}}, {T(0.25), T(-0.25)}};
  const auto y = vl::feed_forward<T>(x, l1, l2, vl::Activation::relu);
  const xt::xtensor<T, 3> want = {{{T(1.25), T(3.75)}, {T(16.75), T(38.75)}}};
  BOOST_TEST(y.shape() == want.shape(), boost::test_tools::per_element());
  BOOST_TEST(y == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(gelu_network_by_hand, T, Types) {
  // x = (1, 0), W₁ = [[1, 0], [−1, 0], [0, 1]], b₁ = 0: z = (1, −1, 0); GELU → (Φ(1), Φ(1) − 1, 0);
  // W₂ = [[1, 1, 1]], b₂ = 0 sums them: 2 Φ(1) − 1 = P(|Z| < 1) = 0.6826894921370859, an output of
  // width d' = 1 ≠ d. Error: the two GELU values within 3.5 eps relative (above) of 0.84 and
  // 0.16, and two sums: ≤ ~4 eps absolute. Tolerance 8 eps.
  const xt::xtensor<T, 3> x = {{{T(1), T(0)}}};
  const vl::LinearParameters<T> l1{{{T(1), T(0)}, {T(-1), T(0)}, {T(0), T(1)}}, {T(0), T(0), T(0)}};
  const vl::LinearParameters<T> l2{{{T(1), T(1), T(1)}}, {T(0)}};
  const auto y = vl::feed_forward<T>(x, l1, l2, vl::Activation::gelu);
  BOOST_TEST(y.shape(2) == 1u);
  BOOST_TEST(std::abs(y(0, 0, 0) - (2 * kPhi1 - 1)) <= 8 * kEps<T>);
}

BOOST_DATA_TEST_CASE(network_shape_over_a_grid,
                     bdata::make(std::vector<std::size_t>{0, 2}) * bdata::make(std::vector<std::size_t>{0, 1, 3}) *
                         bdata::make(std::vector<std::size_t>{0, 3}) * bdata::make(std::vector<std::size_t>{1, 2}),
                     B, S, d_ff, d_out) {
  // (B, S, d) → (B, S, d') for d = 2, with empty batches, sequences and hidden layers; with
  // d_ff = 0 the hidden layer is empty and FFN(x) = b₂ at every position.
  const std::size_t d = 2;
  const xt::xtensor<double, 3> x = xt::ones<double>({B, S, d});
  const vl::LinearParameters<double> l1{xt::ones<double>({d_ff, d}), xt::zeros<double>({d_ff})};
  vl::LinearParameters<double> l2{xt::ones<double>({d_out, d_ff}), xt::zeros<double>({d_out})};
  for (std::size_t j = 0; j < d_out; ++j) l2.bias(j) = double(j) + 0.5;
  const auto y = vl::feed_forward<double>(x, l1, l2, vl::Activation::relu);
  const std::array<std::size_t, 3> shape{B, S, d_out};
  BOOST_TEST(y.shape() == shape, boost::test_tools::per_element());
  // Every hidden value is 1 + 1 = 2, every output 2 d_ff + b₂.
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t j = 0; j < d_out; ++j) BOOST_TEST(y(b, s, j) == 2.0 * double(d_ff) + double(j) + 0.5);
}

BOOST_AUTO_TEST_CASE(network_names_the_layer_that_does_not_fit) {
  const xt::xtensor<double, 3> x = xt::zeros<double>({1, 1, 2});
  const vl::LinearParameters<double> good1{xt::zeros<double>({3, 2}), xt::zeros<double>({3})};
  const vl::LinearParameters<double> bad1{xt::zeros<double>({3, 5}), xt::zeros<double>({3})};
  const vl::LinearParameters<double> good2{xt::zeros<double>({2, 3}), xt::zeros<double>({2})};
  const vl::LinearParameters<double> bad2{xt::zeros<double>({2, 4}), xt::zeros<double>({2})};
  auto message = [&](const vl::LinearParameters<double>& a, const vl::LinearParameters<double>& b) {
    try {
      vl::feed_forward<double>(x, a, b, vl::Activation::relu);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  BOOST_TEST(message(bad1, good2).rfind("linear1:", 0) == 0u);
  BOOST_TEST(message(good1, bad2).rfind("linear2:", 0) == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
