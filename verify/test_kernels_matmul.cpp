#include <boost/test/unit_test.hpp>

// The kernels' matrix products (src/kernels/reference/matmul.hpp, matmul.cpp) and the work
// counters they tally (work_counters.hpp), in float and double: a 2×3 · 3×2 product and a
// matrix-vector product by hand, every shape of a grid (empty ones included) against the
// definition's triple loop with its m·n·k multiply-adds counted exactly, expression operands
// (a transpose), NaN and overflow, and the counters' reset, accumulation and per-thread tallies.
// The cost claims of the lessons count work with these; nothing tested them on their own.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <thread>
#include <type_traits>
#include <vector>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/matmul.hpp"
#include "kernels/reference/work_counters.hpp"
#include "kernel_types.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_matmul).
BOOST_AUTO_TEST_SUITE(test_kernels_matmul)

namespace {

namespace bdata = boost::unit_test::data;
using Types = vl::verify::FloatTypes;

// A (rows, cols) matrix of small integers, r·3 − c·2 + offset: every product and sum of the
// grid's sizes is an exact integer in float and double.
template <class T>
xt::xtensor<T, 2> small_integers(std::size_t rows, std::size_t cols, int offset) {
  xt::xtensor<T, 2> a = xt::xtensor<T, 2>::from_shape({rows, cols});
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) a(r, c) = T(int(r) * 3 - int(c) * 2 + offset);
  return a;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(products)

BOOST_AUTO_TEST_CASE_TEMPLATE(two_by_three_times_three_by_two, T, Types) {
  // [[1, 2, 3], [4, 5, 6]] · [[7, 8], [9, 10], [11, 12]]:
  //   (1·7 + 2·9 + 3·11, 1·8 + 2·10 + 3·12) = (58, 64);  (4·7 + 5·9 + 6·11, 4·8 + 5·10 + 6·12) = (139, 154).
  const xt::xtensor<T, 2> a = {{T(1), T(2), T(3)}, {T(4), T(5), T(6)}};
  const xt::xtensor<T, 2> b = {{T(7), T(8)}, {T(9), T(10)}, {T(11), T(12)}};
  const xt::xtensor<T, 2> want = {{T(58), T(64)}, {T(139), T(154)}};
  const auto c = vl::matmul<T>(a, b);
  BOOST_TEST(c.shape() == want.shape(), boost::test_tools::per_element());
  BOOST_TEST(c == want, boost::test_tools::per_element());
  // The same product with B given as the transpose of its transpose (an expression operand).
  const xt::xtensor<T, 2> bt = {{T(7), T(9), T(11)}, {T(8), T(10), T(12)}};
  BOOST_TEST(vl::matmul<T>(a, xt::transpose(bt)) == want, boost::test_tools::per_element());
  // B A is 3×3: row 0 = 7·(1, 2, 3) + 8·(4, 5, 6) = (39, 54, 69).
  const auto ba = vl::matmul<T>(b, a);
  BOOST_TEST(ba.shape(0) == 3u);
  BOOST_TEST(ba(0, 0) == T(39));
  BOOST_TEST(ba(0, 1) == T(54));
  BOOST_TEST(ba(0, 2) == T(69));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(matvec_by_hand, T, Types) {
  // [[1, 2, 3], [4, 5, 6]] · (1, −1, 2) = (1 − 2 + 6, 4 − 5 + 12) = (5, 11).
  const xt::xtensor<T, 2> a = {{T(1), T(2), T(3)}, {T(4), T(5), T(6)}};
  const xt::xtensor<T, 1> x = {T(1), T(-1), T(2)};
  const auto y = vl::matvec<T>(a, x);
  BOOST_TEST(y.size() == 2u);
  BOOST_TEST(y(0) == T(5));
  BOOST_TEST(y(1) == T(11));
}

BOOST_DATA_TEST_CASE(every_shape_of_a_grid_against_the_triple_loop,
                     bdata::make(std::vector<std::size_t>{0, 1, 3}) * bdata::make(std::vector<std::size_t>{0, 1, 4}) *
                         bdata::make(std::vector<std::size_t>{0, 1, 2, 5}),
                     m, k, n) {
  // C = A B: (m, k)·(k, n) → (m, n), C(i, j) = Σ_l A(i, l) B(l, j) (exact: small integers), an
  // empty k giving zeros; m·n·k multiply-adds counted. y = A x: (m), m·k counted.
  const auto a = small_integers<double>(m, k, 1);
  const auto b = small_integers<double>(k, n, -2);
  const std::uint64_t counted = vl::count_multiply_adds([&] {
    const auto c = vl::matmul<double>(a, b);
    const std::array<std::size_t, 2> shape{m, n};
    BOOST_TEST(c.shape() == shape, boost::test_tools::per_element());
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double want = 0;
        for (std::size_t l = 0; l < k; ++l) want += a(i, l) * b(l, j);
        BOOST_TEST(c(i, j) == want);
      }
  });
  BOOST_TEST(counted == std::uint64_t(m * n * k));
  const xt::xtensor<double, 1> x = xt::view(small_integers<double>(1, k, 5), 0);
  const std::uint64_t counted_mv = vl::count_multiply_adds([&] {
    const auto y = vl::matvec<double>(a, x);
    BOOST_TEST(y.size() == m);
    for (std::size_t i = 0; i < m; ++i) {
      double want = 0;
      for (std::size_t l = 0; l < k; ++l) want += a(i, l) * x(l);
      BOOST_TEST(y(i) == want);
    }
  });
  BOOST_TEST(counted_mv == std::uint64_t(m * k));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(nan_reaches_its_row_only, T, Types) {
  // A(0, 0) = NaN enters every C(0, j) (NaN · B(0, j), even where B(0, j) = 0) and no other row:
  // row 1 is (139, 154) as above. The same for matvec.
  const xt::xtensor<T, 2> a = {{std::numeric_limits<T>::quiet_NaN(), T(2), T(3)}, {T(4), T(5), T(6)}};
  const xt::xtensor<T, 2> b = {{T(0), T(8)}, {T(9), T(10)}, {T(11), T(12)}};
  const auto c = vl::matmul<T>(a, b);
  BOOST_TEST(std::isnan(c(0, 0)));
  BOOST_TEST(std::isnan(c(0, 1)));
  BOOST_TEST(c(1, 0) == T(4 * 0 + 5 * 9 + 6 * 11));
  BOOST_TEST(c(1, 1) == T(154));
  const auto y = vl::matvec<T>(a, xt::xtensor<T, 1>{T(0), T(1), T(1)});
  BOOST_TEST(std::isnan(y(0)));
  BOOST_TEST(y(1) == T(11));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(products_beyond_the_range_overflow_to_infinity, T, Types) {
  // Plain BLAS, no scaling: h · h overflows to +∞ (1e30² in float, 1e300² in double); h · 1
  // stays h exactly. h · h + h · (−h) is not finite, but which non-finite value depends on the
  // BLAS: ∞ − ∞ = NaN with each product rounded first, while a fused multiply-add keeps the
  // second product exact, fma(h, −h, ∞) = ∞ (OpenBLAS's kernels here give +∞; -ffp-contract=off
  // does not reach into the BLAS). Only "not finite" is asserted there.
  const T h = std::is_same_v<T, float> ? T(1e30) : T(1e300);
  const xt::xtensor<T, 2> a = {{h, h}, {h, T(0)}};
  const xt::xtensor<T, 2> b = {{h, T(1)}, {-h, T(0)}};
  const auto c = vl::matmul<T>(a, b);
  BOOST_TEST(!std::isfinite(c(0, 0)), "c(0, 0) = " << c(0, 0));  // h·h + h·(−h)
  BOOST_TEST(c(0, 1) == h);
  BOOST_TEST(c(1, 0) == std::numeric_limits<T>::infinity());
  BOOST_TEST(c(1, 1) == h);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(work_counters)

BOOST_AUTO_TEST_CASE(products_add_their_multiply_adds) {
  // (2×3)(3×4): 2·4·3 = 24; (4×2)(2×1): 8; (5×2)·(2): 10. Running total 24, 32, 42.
  vl::multiply_adds() = 0;
  vl::matmul<double>(xt::ones<double>({2, 3}), xt::ones<double>({3, 4}));
  BOOST_TEST(vl::multiply_adds() == 24u);
  vl::matmul<float>(xt::ones<float>({4, 2}), xt::ones<float>({2, 1}));
  BOOST_TEST(vl::multiply_adds() == 32u);
  vl::matvec<double>(xt::ones<double>({5, 2}), xt::ones<double>({2}));
  BOOST_TEST(vl::multiply_adds() == 42u);
}

BOOST_AUTO_TEST_CASE(count_multiply_adds_resets_first_and_leaves_the_count) {
  vl::multiply_adds() = 1000;
  const auto n = vl::count_multiply_adds([] { vl::matmul<double>(xt::ones<double>({2, 3}), xt::ones<double>({3, 2})); });
  BOOST_TEST(n == 12u);  // 2·2·3, not 1012
  BOOST_TEST(vl::multiply_adds() == 12u);
  BOOST_TEST(vl::count_multiply_adds([] {}) == 0u);
}

BOOST_AUTO_TEST_CASE(count_work_counts_both_tallies_from_zero) {
  vl::multiply_adds() = 7;
  vl::state_updates() = 5;
  const vl::CountedWork w = vl::count_work([] {
    vl::matvec<double>(xt::ones<double>({3, 4}), xt::ones<double>({4}));  // 12
    ++vl::state_updates();
    ++vl::state_updates();
  });
  BOOST_TEST(w.multiply_adds == 12u);
  BOOST_TEST(w.state_updates == 2u);
}

BOOST_AUTO_TEST_CASE(tallies_are_per_thread) {
  // Work on another thread adds to that thread's tallies, not to this one's.
  vl::multiply_adds() = 0;
  vl::state_updates() = 0;
  std::uint64_t theirs = 0, their_updates = 0;
  std::thread t([&] {
    theirs = vl::count_multiply_adds([] { vl::matmul<double>(xt::ones<double>({3, 3}), xt::ones<double>({3, 3})); });
    ++vl::state_updates();
    their_updates = vl::state_updates();
  });
  t.join();
  BOOST_TEST(theirs == 27u);
  BOOST_TEST(their_updates == 1u);
  BOOST_TEST(vl::multiply_adds() == 0u);
  BOOST_TEST(vl::state_updates() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()
