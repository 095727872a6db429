#include <boost/test/unit_test.hpp>

// φ = elu + 1 with the fused kernels' exp (src/kernels/fused/feature_map_fast.hpp) against the
// reference's (kernels/reference/feature_map.hpp, std::exp): float64 bit for bit; float32 exact for
// x > 0 and within 2 floats for x ≤ 0 (exp_f32's bound, which attention.exp-float32 verifies),
// std::exp's own subnormals below −87.3, 0 at −∞, NaN kept, any shape, in place or not.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include <xtensor/xtensor.hpp>

#include "kernels/fused/feature_map_fast.hpp"
#include "kernels/reference/feature_map.hpp"
#include "tensor_bits.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_feature_map_fast).
BOOST_AUTO_TEST_SUITE(test_kernels_feature_map_fast)

namespace {

using vl::verify::units_apart;

template <class T>
xt::xtensor<T, 2> spread(std::size_t rows, std::size_t cols) {
  // Normals of growing spread, then the edges: 0, −0, tiny, the exp floor's neighbours, large.
  std::mt19937_64 g(17);
  std::normal_distribution<double> nd;
  xt::xtensor<T, 2> x = xt::xtensor<T, 2>::from_shape({rows, cols});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = T(nd(g) * (1 + double(i % 97)));
  const T edges[] = {T(0), T(-0.0), T(1e-30), T(-1e-30), T(-87.2), T(-87.3), T(-87.4), T(-95), T(-103), T(-120), T(88), T(-1e30)};
  for (std::size_t i = 0; i < std::size(edges); ++i) x.data()[i] = edges[i];
  return x;
}

}  // namespace

BOOST_AUTO_TEST_CASE(float64_is_the_reference_bit_for_bit) {
  const auto x = spread<double>(37, 29);  // 1073 elements: not a multiple of any vector width
  const auto got = vl::elu_plus_one_fast<double, 2>(x), want = vl::elu_plus_one<double, 2>(x);
  for (std::size_t i = 0; i < x.size(); ++i) BOOST_TEST(got.data()[i] == want.data()[i], "x = " << x.data()[i]);
}

BOOST_AUTO_TEST_CASE(float32_within_two_floats_of_the_reference) {
  const auto x = spread<float>(41, 23);
  const auto got = vl::elu_plus_one_fast<float, 2>(x), want = vl::elu_plus_one<float, 2>(x);
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float xi = x.data()[i], g = got.data()[i], w = want.data()[i];
    if (xi > 0 || xi < -87.3f) BOOST_TEST(g == w, "x = " << xi);  // x + 1, or std::exp's own value
    else worst = std::max(worst, units_apart(g, w));
  }
  BOOST_TEST(worst <= 2);
  BOOST_TEST(got.data()[8] > 0.0f);  // exp(−103): a subnormal, not flushed
  // In place, a block (1024 values) at a time: the same values.
  xt::xtensor<float, 2> y = x;
  vl::elu_plus_one_fast_in_place(y);
  BOOST_TEST((y == got));
}

BOOST_AUTO_TEST_CASE(nan_and_infinities) {
  xt::xtensor<float, 1> x = {std::nanf(""), -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(), -0.0f};
  const auto y = vl::elu_plus_one_fast<float, 1>(x);
  BOOST_TEST(std::isnan(y(0)));
  BOOST_TEST(y(1) == 0.0f);
  BOOST_TEST(std::isinf(y(2)));
  BOOST_TEST(y(3) == 1.0f);
  const auto empty = vl::elu_plus_one_fast<float, 1>(xt::xtensor<float, 1>::from_shape({0}));
  BOOST_TEST(empty.size() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
