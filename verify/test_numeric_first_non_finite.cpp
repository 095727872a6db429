#include <boost/test/unit_test.hpp>

// first_non_finite (numeric/first_non_finite.hpp): the index of the first NaN or ±inf, in float32
// and float64, wherever it falls against its blocks of 1024 (first and last of a block, the last
// value, a short last block), with finite values at the edges of the range (the largest, the
// smallest subnormal, −0) never taken for one.
#include <cstddef>
#include <limits>
#include <vector>

#include "numeric/first_non_finite.hpp"

namespace {

template <class T>
void finds_each_position() {
  using L = std::numeric_limits<T>;
  const std::size_t n = 2 * 1024 + 5;
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = T(i % 7) - T(3);
  v[1] = L::max(), v[2] = -L::max(), v[3] = L::denorm_min(), v[4] = T(-0.0), v[5] = L::lowest(), v[6] = L::min();
  BOOST_TEST(vl::first_non_finite(v.data(), n) == n);
  BOOST_TEST(vl::first_non_finite(v.data(), std::size_t(0)) == 0u);
  for (const T bad : {L::quiet_NaN(), -L::quiet_NaN(), L::signaling_NaN(), L::infinity(), -L::infinity()}) {
    for (const std::size_t at : {std::size_t(0), std::size_t(1), std::size_t(1023), std::size_t(1024), std::size_t(1025), std::size_t(2047),
                                 std::size_t(2048), n - 1}) {
      std::vector<T> w = v;
      w[at] = bad;
      BOOST_TEST(vl::first_non_finite(w.data(), n) == at, "bad value at " << at);
      BOOST_TEST(vl::first_non_finite(w.data(), at) == at, "only before it");  // the range ends before it
      if (at + 3 < n) w[at + 3] = bad;                                          // a second one after it
      BOOST_TEST(vl::first_non_finite(w.data(), n) == at, "the first of two at " << at);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_numeric_first_non_finite)

BOOST_AUTO_TEST_CASE(first_non_finite_float32) { finds_each_position<float>(); }
BOOST_AUTO_TEST_CASE(first_non_finite_float64) { finds_each_position<double>(); }

BOOST_AUTO_TEST_SUITE_END()
