#include <boost/test/unit_test.hpp>

// Layer normalisation (src/kernels/reference/layer_norm.hpp) on its own, in float and double: rows
// whose normalised values are known in closed form ([1, 2, 3] → ∓√1.5, 0), γ and β per column, ε
// inside the square root, the biased variance, each row normalised on its own, the output shape
// for empty and one-element rows, NaN, and what happens to values whose squares overflow. The
// kernel is otherwise reached only through the encoder-decoder lesson's claims.
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <xtensor/xtensor.hpp>

#include "kernels/reference/layer_norm.hpp"
#include "kernel_types.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_layer_norm).
BOOST_AUTO_TEST_SUITE(test_kernels_layer_norm)

namespace {

namespace bdata = boost::unit_test::data;
using Types = vl::verify::FloatTypes;

using vl::verify::kEps;

// γ = 1, β = 0 of width d (torch's initial LayerNorm).
template <class T>
vl::LayerNormParameters<T> plain_norm(std::size_t d) {
  return {xt::ones<T>({d}), xt::zeros<T>({d})};
}

// One row x: (1, 1, d).
template <class T>
xt::xtensor<T, 3> one_row(const std::vector<T>& x) {
  xt::xtensor<T, 3> r = xt::xtensor<T, 3>::from_shape({1, 1, x.size()});
  for (std::size_t c = 0; c < x.size(); ++c) r(0, 0, c) = x[c];
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(one_two_three_by_hand, T, Types) {
  // μ = 2, deviations (−1, 0, 1), σ² = 2/3 (biased): y = (−1, 0, 1) / √(2/3 + ε).
  // With ε = 0 that is ∓√1.5 = ∓1.2247448713915890. Rounding: σ² (÷3), + ε, √, 1/· are one
  // rounding each (u = eps/2), the rest is exact; √ halves its argument's error: ≤ 3u = 1.5 eps
  // relative. Tolerance 2 eps.
  const auto x = one_row<T>({T(1), T(2), T(3)});
  for (const double eps : {0.0, 1e-5}) {
    const auto y = vl::layer_norm<T>(x, plain_norm<T>(3), eps);
    const double a = 1 / std::sqrt(2.0 / 3 + double(T(eps)));
    BOOST_TEST(y.shape(2) == 3u);
    BOOST_TEST(std::abs(y(0, 0, 0) + a) <= 2 * kEps<T> * a);
    BOOST_TEST(y(0, 0, 1) == T(0));
    BOOST_TEST(std::abs(y(0, 0, 2) - a) <= 2 * kEps<T> * a);
  }
  // The default ε is torch's 1e-5: the same as asking for it.
  const auto d = vl::layer_norm<T>(x, plain_norm<T>(3));
  BOOST_TEST(std::abs(d(0, 0, 2) - 1 / std::sqrt(2.0 / 3 + 1e-5)) <= 2 * kEps<T> * 1.23);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(weight_and_bias_apply_per_column, T, Types) {
  // x̂ = (−a, 0, a), a = √1.5 (ε = 0); γ = (2, −1, 0.5), β = (10, 20, 30):
  // y = (10 − 2a, 20, 30 + a/2) = (7.5505102572168, 20, 30.6123724356958).
  // Error: a within 1.5 eps relative (above), times |γ| ≤ 2 → ≤ 3.7 eps; the final + β rounds
  // once at |y| ≤ 31 → ≤ 15.5 eps. Tolerance 32 eps absolute.
  const auto x = one_row<T>({T(1), T(2), T(3)});
  const vl::LayerNormParameters<T> p{{T(2), T(-1), T(0.5)}, {T(10), T(20), T(30)}};
  const auto y = vl::layer_norm<T>(x, p, 0.0);
  const double a = std::sqrt(1.5);
  BOOST_TEST(std::abs(y(0, 0, 0) - (10 - 2 * a)) <= 32 * kEps<T>);
  BOOST_TEST(y(0, 0, 1) == T(20));  // x̂ = 0 exactly: γ·0 + β
  BOOST_TEST(std::abs(y(0, 0, 2) - (30 + a / 2)) <= 32 * kEps<T>);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(eps_sits_inside_the_square_root_of_the_biased_variance, T, Types) {
  // x = (−1, 1): μ = 0, σ² = (1 + 1)/2 = 1 (biased; the unbiased one would be 2), ε = 3:
  // 1/√(σ² + ε) = 1/√4 = 1/2, so y = (−0.5, 0.5), every step exact.
  // ε outside the root would give 1/(√1 + 3) = 1/4; the unbiased variance 1/√5.
  const auto y = vl::layer_norm<T>(one_row<T>({T(-1), T(1)}), plain_norm<T>(2), 3.0);
  BOOST_TEST(y(0, 0, 0) == T(-0.5));
  BOOST_TEST(y(0, 0, 1) == T(0.5));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(each_row_is_normalised_on_its_own, T, Types) {
  // x is (2, 3, 4); row r = 2^r · (−3, −1, 1, 3) + 10 r: μ = 10 r, σ² = 4^r · (9 + 1 + 1 + 9)/4 =
  // 5 · 4^r, all exact (small integers). With ε = 0 every row normalises to (−3, −1, 1, 3)/√5.
  // Rounding: √ (exact argument), 1/·, the product: ≤ 3u = 1.5 eps relative, plus ≤ 1 eps for
  // the expected value computed in double. Tolerance 4 eps relative.
  xt::xtensor<T, 3> x = xt::xtensor<T, 3>::from_shape({2, 3, 4});
  const double pattern[4] = {-3, -1, 1, 3};
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t s = 0; s < 3; ++s) {
      const std::size_t r = b * 3 + s;
      for (std::size_t c = 0; c < 4; ++c) x(b, s, c) = T(std::ldexp(pattern[c], int(r)) + 10.0 * double(r));
    }
  const auto y = vl::layer_norm<T>(x, plain_norm<T>(4), 0.0);
  BOOST_TEST(y.shape() == x.shape(), boost::test_tools::per_element());
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t s = 0; s < 3; ++s)
      for (std::size_t c = 0; c < 4; ++c) {
        const double want = pattern[c] / std::sqrt(5.0);
        BOOST_TEST(std::abs(y(b, s, c) - want) <= 4 * kEps<T> * std::abs(want), "row (" << b << ", " << s << ") column " << c);
      }
}

BOOST_DATA_TEST_CASE(output_shape_and_moments_over_a_grid,
                     bdata::make(std::vector<std::size_t>{0, 1, 3}) * bdata::make(std::vector<std::size_t>{0, 1, 2}) *
                         bdata::make(std::vector<std::size_t>{0, 1, 2, 5}),
                     B, S, d) {
  // The output has the input's shape, empty batches, sequences and widths included. Each row of
  // a non-constant x normalised with γ = 1, β = 0, ε = 0 has mean 0 and biased variance 1, up to
  // ~d roundings of each sum (values ≤ 2 in magnitude): tolerance 16 d eps.
  xt::xtensor<double, 3> x = xt::xtensor<double, 3>::from_shape({B, S, d});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t c = 0; c < d; ++c) x(b, s, c) = double(b + 1) * double(c * c) - double(s);
  const auto y = vl::layer_norm<double>(x, plain_norm<double>(d), 0.0);
  BOOST_TEST(y.shape() == x.shape(), boost::test_tools::per_element());
  if (d < 2) return;  // one column is constant: see one_element_rows
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s) {
      double mean = 0, var = 0;
      for (std::size_t c = 0; c < d; ++c) mean += y(b, s, c);
      for (std::size_t c = 0; c < d; ++c) var += y(b, s, c) * y(b, s, c);
      BOOST_TEST(std::abs(mean / double(d)) <= 16 * double(d) * kEps<double>);
      BOOST_TEST(std::abs(var / double(d) - 1) <= 16 * double(d) * kEps<double>);
    }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(one_element_rows_and_constant_rows_give_beta, T, Types) {
  // d = 1, or a constant row: x − μ = 0 exactly, so y = 0 · (1/√ε) · γ + β = β (ε > 0 keeps the
  // factor finite).
  const vl::LayerNormParameters<T> p1{{T(3)}, {T(-0.25)}};
  BOOST_TEST(vl::layer_norm<T>(one_row<T>({T(7)}), p1)(0, 0, 0) == T(-0.25));
  const vl::LayerNormParameters<T> p3{{T(2), T(2), T(2)}, {T(1), T(2), T(3)}};
  const auto y = vl::layer_norm<T>(one_row<T>({T(5), T(5), T(5)}), p3);
  for (std::size_t c = 0; c < 3; ++c) BOOST_TEST(y(0, 0, c) == T(c + 1));
  // With ε = 0 the factor is 1/√0 = +∞ and 0 · ∞ is NaN: a constant row then has no normal form.
  BOOST_TEST(std::isnan(vl::layer_norm<T>(one_row<T>({T(7)}), p1, 0.0)(0, 0, 0)));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(nan_and_infinity_spoil_their_row_only, T, Types) {
  // A NaN makes μ NaN, hence every value of its row; ∞ makes μ = ∞ and ∞ − ∞ = NaN. The other
  // row of the tensor is untouched: (1, 2, 3) → (−a, 0, a) as above.
  xt::xtensor<T, 3> x = {{{T(1), std::numeric_limits<T>::quiet_NaN(), T(3)}, {T(1), T(2), T(3)}},
                         {{std::numeric_limits<T>::infinity(), T(1), T(2)}, {T(1), T(2), T(3)}}};
  const auto y = vl::layer_norm<T>(x, plain_norm<T>(3), 0.0);
  const double a = std::sqrt(1.5);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t c = 0; c < 3; ++c) BOOST_TEST(std::isnan(y(b, 0, c)));
  for (std::size_t b = 0; b < 2; ++b) {
    BOOST_TEST(std::abs(y(b, 1, 0) + a) <= 2 * kEps<T> * a);
    BOOST_TEST(y(b, 1, 1) == T(0));
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(large_values_scale_out_until_their_squares_overflow, T, Types) {
  // LayerNorm is scale-invariant: x · 2^k normalises to what x does, bit for bit with ε = 0
  // (powers of two commute with rounding). The kernel squares the deviations as they are (no
  // pre-scaling), so this holds while (x − μ)² is finite: 2^60 in float (deviation² 2^120 <
  // 2^128), 2^500 in double.
  const int k = std::is_same_v<T, float> ? 60 : 500;
  const auto y = vl::layer_norm<T>(one_row<T>({T(1), T(2), T(3)}), plain_norm<T>(3), 0.0);
  const auto big = vl::layer_norm<T>(one_row<T>({std::ldexp(T(1), k), std::ldexp(T(2), k), std::ldexp(T(3), k)}), plain_norm<T>(3), 0.0);
  for (std::size_t c = 0; c < 3; ++c) BOOST_TEST(big(0, 0, c) == y(0, 0, c));
  // Beyond that (1e30 in float, 1e300 in double) σ² overflows to +∞, 1/√∞ = 0 and every x̂ is
  // ±0: the output collapses to β, finite but not the normalised row.
  const T h = std::is_same_v<T, float> ? T(1e30) : T(1e300);
  const vl::LayerNormParameters<T> p{{T(1), T(1), T(1)}, {T(1), T(2), T(3)}};
  const auto collapsed = vl::layer_norm<T>(one_row<T>({h, 2 * h, 3 * h}), p);
  for (std::size_t c = 0; c < 3; ++c) BOOST_TEST(collapsed(0, 0, c) == T(c + 1));
}

BOOST_AUTO_TEST_CASE(parameters_of_another_width_are_refused) {
  const auto x = one_row<double>({1, 2, 3});
  BOOST_CHECK_THROW(vl::layer_norm<double>(x, plain_norm<double>(2)), std::invalid_argument);
  const vl::LayerNormParameters<double> bias_short{xt::ones<double>({3}), xt::zeros<double>({2})};
  BOOST_CHECK_THROW(vl::layer_norm<double>(x, bias_short), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
