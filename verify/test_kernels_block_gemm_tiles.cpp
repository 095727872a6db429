#include <boost/test/unit_test.hpp>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>

// The tile bodies of block_gemm (kernels/fused/block_gemm_tiles.hpp) on their own, compiled here
// as block_gemm.cpp compiles them (the header included inside a namespace of ours) over two
// "vector" types: its ScalarLane with 4 lanes a tile (the baseline's shape) and a 3-wide vector
// written here, whose odd width gives every column split a tail (tiles of 2·3 columns, then one
// vector of 3, then single elements). The contract: C[i][j] = fma(A[i][t], B[t][j], ·) chained
// over t = 0 … k−1 in order, from 0 or from C[i][j]; A row-major or stored transposed; nothing
// outside the m × n block of C written, nothing outside A's and B's blocks read.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

namespace test_kernels_block_gemm_tiles_code {
#include "kernels/fused/block_gemm_tiles.hpp"

// A vector of 3 elements, lane-wise std::fma: the contract's operation on each lane.
template <class T>
struct Lanes3 {
  struct reg {
    T x[3];
  };
  static constexpr std::size_t width = 3;
  static inline reg load(const T* p) { return {{p[0], p[1], p[2]}}; }
  static inline void store(T* p, reg v) {
    for (int i = 0; i < 3; ++i) p[i] = v.x[i];
  }
  static inline reg broadcast(T x) { return {{x, x, x}}; }
  static inline reg zero() { return {{T(0), T(0), T(0)}}; }
  static inline reg fma(reg a, reg b, reg c) {
    reg r;
    for (int i = 0; i < 3; ++i) r.x[i] = std::fma(a.x[i], b.x[i], c.x[i]);
    return r;
  }
};
}  // namespace test_kernels_block_gemm_tiles_code

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_block_gemm_tiles).
BOOST_AUTO_TEST_SUITE(test_kernels_block_gemm_tiles)

namespace code = test_kernels_block_gemm_tiles_code;
using Types = std::tuple<float, double>;

// The two shapes of tile the tests run: (vector type, vector columns per tile).
enum class Shape { scalar_by_4, lanes3_by_2 };
const char* shape_name(Shape s) { return s == Shape::scalar_by_4 ? "ScalarLane × 4" : "3-wide × 2"; }

template <class T>
void tiles_gemm(Shape s, bool transpose_a, bool accumulate, std::size_t m, std::size_t n, std::size_t k, const T* a, std::size_t lda,
                const T* b, std::size_t ldb, T* c, std::size_t ldc) {
  if (s == Shape::scalar_by_4) code::gemm<code::ScalarLane<T>, 4>(transpose_a, accumulate, m, n, k, a, lda, b, ldb, c, ldc);
  else code::gemm<code::Lanes3<T>, 2>(transpose_a, accumulate, m, n, k, a, lda, b, ldb, c, ldc);
}

// Same bits, or NaN in both (which NaN is not the point).
template <class T>
bool same(T x, T y) {
  return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof(T)) == 0;
}

// A m × n × k product with padding around every block: A's and B's padding hold NaN (a read of
// it poisons a result), C's padding a sentinel that must come back bit for bit.
template <class T>
void check_against_the_chain(std::size_t m, std::size_t n, std::size_t k, std::mt19937_64& gen) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), sentinel = T(12345.5);
  auto uniform = [&] { return static_cast<T>(static_cast<double>(gen() >> 11) * 0x1p-53 * 2 - 1); };
  for (bool transpose_a : {false, true}) {
    const std::size_t a_rows = transpose_a ? k : m, a_cols = transpose_a ? m : k, lda = a_cols + 2, ldb = n + 3, ldc = n + 2;
    std::vector<T> a(a_rows * lda, nan), b(k * ldb, nan), c0(m * ldc, sentinel);
    for (std::size_t r = 0; r < a_rows; ++r)
      for (std::size_t s = 0; s < a_cols; ++s) a[r * lda + s] = uniform();
    for (std::size_t t = 0; t < k; ++t)
      for (std::size_t j = 0; j < n; ++j) b[t * ldb + j] = uniform();
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) c0[i * ldc + j] = uniform();
    auto a_at = [&](std::size_t i, std::size_t t) { return transpose_a ? a[t * lda + i] : a[i * lda + t]; };
    for (bool accumulate : {false, true}) {
      // The naive triple loop, each C[i][j] its chain of std::fma over t in order.
      std::vector<T> want = c0;
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          T acc = accumulate ? c0[i * ldc + j] : T(0);
          for (std::size_t t = 0; t < k; ++t) acc = std::fma(a_at(i, t), b[t * ldb + j], acc);
          want[i * ldc + j] = acc;
        }
      for (Shape s : {Shape::scalar_by_4, Shape::lanes3_by_2}) {
        std::vector<T> c = c0;
        tiles_gemm<T>(s, transpose_a, accumulate, m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
        std::size_t wrong = 0, first = 0;
        for (std::size_t e = c.size(); e-- > 0;)
          if (!same(c[e], want[e])) ++wrong, first = e;
        BOOST_TEST(wrong == 0u, shape_name(s) << ", " << (sizeof(T) == 4 ? "float" : "double") << ", m=" << m << " n=" << n << " k=" << k
                                              << " transpose_a=" << transpose_a << " accumulate=" << accumulate << ": " << wrong
                                              << " elements differ, the first at row " << first / ldc << " column " << first % ldc);
      }
    }
  }
}

// m: none, one, the 1 … 5 rows after no strip, one 6-row strip, 7 and 8 (4 + 3, 4 + 4), 13 and
// 14 (6 + 4 + 3, 6 + 4 + 4), 19. n: none, below one 3-wide vector, one vector, one vector and a
// tail, one tile (6), a tile and a vector and a tail (13), and 4 and 8 for ScalarLane's tile of 4.
BOOST_DATA_TEST_CASE(equals_the_naive_fma_chain, boost::unit_test::data::make({0, 1, 2, 3, 5, 6, 7, 8, 13, 14, 19}) *
                                                     boost::unit_test::data::make({0, 1, 2, 3, 4, 5, 6, 8, 13}),
                     m, n) {
  std::mt19937_64 gen(1000 * m + n);
  for (std::size_t k : {0, 1, 4}) {
    check_against_the_chain<float>(m, n, k, gen);
    check_against_the_chain<double>(m, n, k, gen);
  }
}

// [1 2; 3 4] · [5 6; 7 8] = [19 22; 43 50] (by hand); from C = 1 everywhere, 1 more.
BOOST_AUTO_TEST_CASE_TEMPLATE(a_two_by_two_product_by_hand, T, Types) {
  const std::array<T, 4> a{1, 2, 3, 4}, a_transposed{1, 3, 2, 4}, b{5, 6, 7, 8};
  for (Shape s : {Shape::scalar_by_4, Shape::lanes3_by_2})
    for (bool transpose_a : {false, true})
      for (bool accumulate : {false, true}) {
        std::array<T, 4> c{1, 1, 1, 1};
        tiles_gemm<T>(s, transpose_a, accumulate, 2, 2, 2, transpose_a ? a_transposed.data() : a.data(), 2, b.data(), 2, c.data(), 2);
        const T d = accumulate ? 1 : 0;
        BOOST_TEST(c[0] == 19 + d);
        BOOST_TEST(c[1] == 22 + d);
        BOOST_TEST(c[2] == 43 + d);
        BOOST_TEST(c[3] == 50 + d);
      }
}

// Each step is one fused multiply-add, rounded once: with a = b = 1 + 2⁻ʰ (h = 12 for float, 27
// for double) and C = −1, a·b − 1 = 2¹⁻ʰ + 2⁻²ʰ exactly, which fits the format; a product rounded
// first would lose 2⁻²ʰ (half an ulp of 1 or less). In every lane of a 3-wide vector and in the
// scalar tail (n = 4 = one vector + one element).
BOOST_AUTO_TEST_CASE_TEMPLATE(each_step_is_one_fused_multiply_add, T, Types) {
  const int h = sizeof(T) == 4 ? 12 : 27;
  const T x = T(1) + std::ldexp(T(1), -h), want = std::ldexp(T(1), 1 - h) + std::ldexp(T(1), -2 * h);
  for (Shape s : {Shape::scalar_by_4, Shape::lanes3_by_2}) {
    const std::array<T, 1> a{x};
    const std::array<T, 4> b{x, x, x, x};
    std::array<T, 4> c{-1, -1, -1, -1};
    tiles_gemm<T>(s, false, true, 1, 4, 1, a.data(), 1, b.data(), 4, c.data(), 4);
    for (T e : c) BOOST_TEST(e == want, shape_name(s));
  }
}

// The chain runs t = 0 … k−1 in order. A row of ones times the column (2ᵈ, 1, −2ᵈ), d the
// format's significand bits (24, 53): in order 2ᵈ, then 2ᵈ + 1 rounds to 2ᵈ (a tie, to even),
// then 0; backwards it would be −2ᵈ, −2ᵈ + 1 (exact), 1.
BOOST_AUTO_TEST_CASE_TEMPLATE(the_chain_runs_over_t_in_order, T, Types) {
  const T big = std::ldexp(T(1), std::numeric_limits<T>::digits);
  for (Shape s : {Shape::scalar_by_4, Shape::lanes3_by_2})
    for (bool transpose_a : {false, true}) {
      const std::array<T, 3> a{1, 1, 1};  // 1 × 3, or its transpose 3 × 1: the same memory
      std::array<T, 12> b{};              // 3 × 4: every column (2ᵈ, 1, −2ᵈ)
      for (std::size_t j = 0; j < 4; ++j) b[j] = big, b[4 + j] = 1, b[8 + j] = -big;
      std::array<T, 4> c{7, 7, 7, 7};
      tiles_gemm<T>(s, transpose_a, false, 1, 4, 3, a.data(), transpose_a ? 1 : 3, b.data(), 4, c.data(), 4);
      for (T e : c) BOOST_TEST(e == T(0), shape_name(s) << " transpose_a=" << transpose_a);
    }
}

// k = 0: C = 0 (even where it held NaN), or C unchanged when accumulating. m = 0 or n = 0: C untouched.
BOOST_AUTO_TEST_CASE_TEMPLATE(empty_products, T, Types) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> none(64, nan);  // never read; large enough that every row pointer formed lies inside it
  for (Shape s : {Shape::scalar_by_4, Shape::lanes3_by_2}) {
    std::vector<T> c(7 * 5, nan);
    tiles_gemm<T>(s, false, false, 7, 5, 0, none.data(), 1, none.data(), 5, c.data(), 5);
    for (T e : c) BOOST_TEST(e == T(0), shape_name(s));
    std::vector<T> d(7 * 5, T(2.5));
    tiles_gemm<T>(s, true, true, 7, 5, 0, none.data(), 7, none.data(), 5, d.data(), 5);
    for (T e : d) BOOST_TEST(e == T(2.5), shape_name(s));
    for (bool accumulate : {false, true}) {
      std::vector<T> u(4, T(3));
      tiles_gemm<T>(s, false, accumulate, 0, 4, 2, none.data(), 2, u.data(), 4, u.data(), 4);
      tiles_gemm<T>(s, false, accumulate, 4, 0, 2, u.data(), 1, none.data(), 1, u.data(), 1);
      for (T e : u) BOOST_TEST(e == T(3), shape_name(s));
    }
  }
}

// A NaN in A[i][t] makes row i NaN and nothing else; a NaN in B[t][j] column j. Values of 10³⁰:
// 10³⁰ · 10³⁰ overflows float to +∞ (10⁶⁰, rounded, in double); a second step −10³⁰ · 10³⁰ then
// leaves +∞ in float (the exact −10⁶⁰ plus +∞: an fma's product never overflows on its own, so no
// ∞ − ∞) and in double the product's rounding error, −(10³⁰·10³⁰ − fl(10³⁰·10³⁰)), tiny but not 0.
BOOST_AUTO_TEST_CASE_TEMPLATE(nan_and_huge_values, T, Types) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const std::size_t m = 7, n = 7, k = 3;
  for (Shape s : {Shape::scalar_by_4, Shape::lanes3_by_2}) {
    std::vector<T> a(m * k, T(0.5)), b(k * n, T(0.25)), c(m * n);
    a[2 * k + 1] = nan;
    b[1 * n + 4] = nan;
    tiles_gemm<T>(s, false, false, m, n, k, a.data(), k, b.data(), n, c.data(), n);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        if (i == 2 || j == 4) BOOST_TEST(std::isnan(c[i * n + j]), shape_name(s) << " " << i << "," << j);
        else BOOST_TEST(c[i * n + j] == T(0.375), shape_name(s) << " " << i << "," << j);  // 3 · 0.5 · 0.25, exact
      }
    // 1 × 4 × 2: A = (10³⁰, −10³⁰), every column of B (10³⁰, 10³⁰).
    const std::array<T, 2> a2{T(1e30), T(-1e30)};
    std::array<T, 8> b2{};
    for (std::size_t j = 0; j < 8; ++j) b2[j] = T(1e30);
    std::array<T, 4> hc{};
    tiles_gemm<T>(s, false, false, 1, 4, 1, a2.data(), 2, b2.data(), 4, hc.data(), 4);  // the first step alone
    for (T e : hc) {
      if (sizeof(T) == 4) BOOST_TEST(e == inf, shape_name(s));
      else BOOST_TEST((e > T(0.99e60) && e < T(1.01e60)), shape_name(s));
    }
    tiles_gemm<T>(s, false, false, 1, 4, 2, a2.data(), 2, b2.data(), 4, hc.data(), 4);
    const T first = T(1e30) * T(1e30), residual = std::fma(T(-1e30), T(1e30), first);  // the definition's two steps
    for (T e : hc) {
      if (sizeof(T) == 4) BOOST_TEST(e == inf, shape_name(s));
      else BOOST_TEST((e == residual && e != T(0) && std::abs(e) <= T(1e60) * std::numeric_limits<T>::epsilon()), shape_name(s) << " " << e);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()  // test_kernels_block_gemm_tiles
