#include <boost/test/unit_test.hpp>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>

// The fast chunked causal linear attention (kernels/fused/linear_attention_fast.hpp), its body
// (linear_attention_fast_core.hpp) and its steps (linear_attention_fast_steps.hpp), against the
// definition o_i = Σ_{j≤i} (φq_i·φk_j) v_j / Σ_{j≤i} φq_i·φk_j: by hand on small cases, and within
// a rounding bound derived below over a grid of lengths and chunk sizes; its input errors; NaN
// staying causal; and the body run with other steps (a state that is not carried, a chunk that
// sees all of itself), which must change exactly what those steps change.
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <stdexcept>
#include <tuple>

#include <xtensor/xtensor.hpp>

#include "kernels/fused/linear_attention_fast.hpp"
#include "kernels/platform/vector_path.hpp"
#include "kernels/fused/linear_attention_fast_core.hpp"
#include "kernels/fused/linear_attention_fast_steps.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_linear_attention_fast).
BOOST_AUTO_TEST_SUITE(test_kernels_linear_attention_fast)

using Types = std::tuple<float, double>;

template <class T>
using M2 = xt::xtensor<T, 2>;

// φq = (1, 1), φk = (1, 3), v = (2, 6), d_k = d_v = 1: o_0 = 1·2 / 1 = 2, o_1 = (1·2 + 3·6) / (1 + 3) = 5.
template <class T>
struct HandCase {
  M2<T> pq{{1}, {1}}, pk{{1}, {3}}, v{{2}, {6}};
};

BOOST_AUTO_TEST_CASE_TEMPLATE(two_tokens_by_hand, T, Types) {
  const HandCase<T> h;
  for (std::size_t chunk : {1, 2, 5}) {
    const M2<T> o = vl::linear_attention_chunked_fast<T>(h.pq, h.pk, h.v, chunk);
    BOOST_TEST(o.shape(0) == 2u);
    BOOST_TEST(o.shape(1) == 1u);
    BOOST_TEST(o(0, 0) == T(2), "chunk " << chunk << ": o_0 = " << o(0, 0));
    BOOST_TEST(o(1, 0) == T(5), "chunk " << chunk << ": o_1 = " << o(1, 0));
  }
}

// The definition in long double, and the bound. With φq, φk > 0 every product q_t·k_jt·v_j of
// o_i's numerator passes through at most d_k + n + 2 roundings (the d_k-term dot products of A and
// of q·Sᵀ, the running sums over rows and chunks of A v, S and z), so its error is at most
// (d_k + n + 2)·u·Σ_j a_ij |v_j|, and the denominator's (all terms positive) (d_k + n + 2)·u·den_i;
// the division adds u·|o_i|. Hence |o − o*| ≤ 1.01·(d_k + n + 4)·u·(Σ_j a_ij |v_j| / den_i + |o_i|),
// u = 2⁻²⁴ or 2⁻⁵³ (1.01: second-order terms).
template <class T>
void check_against_the_definition(std::size_t n, std::size_t dk, std::size_t dv, std::size_t chunk, std::mt19937_64& gen) {
  auto draw = [&](double lo, double hi) { return static_cast<T>(lo + (hi - lo) * static_cast<double>(gen() >> 11) * 0x1p-53); };
  M2<T> pq = M2<T>::from_shape({n, dk}), pk = M2<T>::from_shape({n, dk}), v = M2<T>::from_shape({n, dv});
  for (auto& x : pq) x = draw(0.5, 1.5);
  for (auto& x : pk) x = draw(0.5, 1.5);
  for (auto& x : v) x = draw(-1, 1);
  const M2<T> o = vl::linear_attention_chunked_fast<T>(pq, pk, v, chunk);
  BOOST_REQUIRE(o.shape(0) == n);
  BOOST_REQUIRE(o.shape(1) == dv);
  const long double u = sizeof(T) == 4 ? 0x1p-24L : 0x1p-53L;
  double worst = 0;  // error / bound
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t m = 0; m < dv; ++m) {
      long double num = 0, den = 0, mag = 0;
      for (std::size_t j = 0; j <= i; ++j) {
        long double a = 0;
        for (std::size_t t = 0; t < dk; ++t) a += static_cast<long double>(pq(i, t)) * pk(j, t);
        num += a * v(j, m), den += a, mag += a * std::abs(static_cast<long double>(v(j, m)));
      }
      const long double want = num / den, bound = 1.01L * (dk + n + 4) * u * (mag / den + std::abs(want));
      worst = std::max(worst, double(std::abs(o(i, m) - want) / bound));
    }
  BOOST_TEST(worst <= 1.0, (sizeof(T) == 4 ? "float" : "double") << " n=" << n << " d_k=" << dk << " d_v=" << dv << " chunk=" << chunk
                                                                   << ": error " << worst << " × the bound");
}

// n: one token, two, a few, and lengths the chunks do and do not divide; chunk 1 (the recurrent
// form), 2, 3, 8, and one longer than every n (the parallel form).
BOOST_DATA_TEST_CASE(within_rounding_of_the_definition,
                     boost::unit_test::data::make({1, 2, 5, 16, 33}) * boost::unit_test::data::make({1, 2, 3, 8, 64}), n, chunk) {
  std::mt19937_64 gen(100 * n + chunk);
  for (auto [dk, dv] : {std::pair<std::size_t, std::size_t>{1, 1}, {3, 2}, {8, 5}}) {
    check_against_the_definition<float>(n, dk, dv, chunk, gen);
    check_against_the_definition<double>(n, dk, dv, chunk, gen);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(empty_input_and_input_errors, T, Types) {
  const M2<T> none = M2<T>::from_shape({0, 3}), none_v = M2<T>::from_shape({0, 2});
  const M2<T> o = vl::linear_attention_chunked_fast<T>(none, none, none_v, 4);
  BOOST_TEST(o.shape(0) == 0u);
  BOOST_TEST(o.shape(1) == 2u);
  const HandCase<T> h;
  BOOST_CHECK_THROW(vl::linear_attention_chunked_fast<T>(h.pq, h.pk, h.v, 0), std::invalid_argument);
  const M2<T> three_rows{{1}, {1}, {1}}, two_cols{{1, 1}, {1, 1}};
  BOOST_CHECK_THROW(vl::linear_attention_chunked_fast<T>(h.pq, three_rows, h.v, 1), std::invalid_argument);  // PK rows ≠ n
  BOOST_CHECK_THROW(vl::linear_attention_chunked_fast<T>(h.pq, two_cols, h.v, 1), std::invalid_argument);    // PK width ≠ d_k
  BOOST_CHECK_THROW(vl::linear_attention_chunked_fast<T>(h.pq, h.pk, three_rows, 1), std::invalid_argument); // V rows ≠ n
}

// A NaN in φq_i reaches row i alone; one in φk_j reaches rows j and later (in its chunk and,
// through the state, every later chunk), never an earlier row. Values of 10³⁰ scale the output by
// 10³⁰ (linear in V) without overflowing float: |num| ≤ n · max a · 10³⁰ ≈ 10³², far below 3.4·10³⁸.
BOOST_AUTO_TEST_CASE_TEMPLATE(nan_stays_causal_and_huge_values_scale, T, Types) {
  const std::size_t n = 7, dk = 2, dv = 2;
  M2<T> pq = M2<T>::from_shape({n, dk}), pk = M2<T>::from_shape({n, dk}), v = M2<T>::from_shape({n, dv});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t t = 0; t < dk; ++t) pq(i, t) = T(1 + 0.125 * double(i + t)), pk(i, t) = T(1 + 0.25 * double((i * 3 + t) % 5));
  for (std::size_t i = 0; i < n; ++i) v(i, 0) = T(double(i) - 3), v(i, 1) = T(0.5);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (std::size_t chunk : {1, 3, 7}) {
    M2<T> q2 = pq;
    q2(4, 1) = nan;
    const M2<T> oq = vl::linear_attention_chunked_fast<T>(q2, pk, v, chunk);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t m = 0; m < dv; ++m) BOOST_TEST(std::isnan(oq(i, m)) == (i == 4), "chunk " << chunk << " row " << i);
    M2<T> k2 = pk;
    k2(4, 0) = nan;  // in the second chunk of 3, the last row of a chunk of 7
    const M2<T> ok = vl::linear_attention_chunked_fast<T>(pq, k2, v, chunk);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t m = 0; m < dv; ++m) BOOST_TEST(std::isnan(ok(i, m)) == (i >= 4), "chunk " << chunk << " row " << i);
    const M2<T> o = vl::linear_attention_chunked_fast<T>(pq, pk, v, chunk);
    const M2<T> huge = vl::linear_attention_chunked_fast<T>(pq, pk, M2<T>(v * T(1e30)), chunk);
    // Both runs are within the bound above of their exact values, 1.01·K·u·(max|v| + |o|) with
    // K = d_k + n + 4 and max|v| = 3 (scaled by 10³⁰ for the second); 10³⁰ rounded in T moves each
    // scaled v by u relative (u·max|v| on the exact output), and the division back by 10³⁰ is one
    // more rounding: |huge / 10³⁰ − o| ≤ (2.02·K + 1)·u·(3 + |o|).
    const T u = std::numeric_limits<T>::epsilon() / 2, K = T(dk + n + 4);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t m = 0; m < dv; ++m) {
        BOOST_TEST(std::isfinite(huge(i, m)));
        BOOST_TEST(std::abs(huge(i, m) / T(1e30) - o(i, m)) <= (T(2.02) * K + 1) * u * (T(3) + std::abs(o(i, m))),
                   "chunk " << chunk << " row " << i);
      }
  }
}

// The shipped steps, by hand: a row keeps columns j < i + 1; the carry adds PKᵀ V to Sᵀ (the state
// kept transposed, d_k × d_v) and PK's column sums to z, on every vector path this CPU runs.
// V = [1 2; 3 4], PK = [1 0 2; 0 1 1]: PKᵀ V = [1 2; 3 4; 5 8], sums (1, 1, 3).
BOOST_AUTO_TEST_CASE_TEMPLATE(the_shipped_steps_by_hand, T, Types) {
  BOOST_TEST(vl::LinearChunkSteps::first_hidden(0) == 1u);
  BOOST_TEST(vl::LinearChunkSteps::first_hidden(5) == 6u);
  for (vl::VectorPath path : vl::all_vector_paths) {
    if (!vl::cpu_runs(path)) {
      BOOST_TEST_MESSAGE("carry on the " << vl::vector_path_name(path) << " path: not run, this CPU lacks it");
      continue;
    }
    const T v[] = {1, 2, 3, 4}, k[] = {1, 0, 2, 0, 1, 1};
    T st[] = {0, 10, 0, 10, 0, 10}, z[] = {0.5, 0.5, 0.5};
    vl::LinearChunkSteps::carry(path, st, z, v, k, 2, 2, 3);
    const T want_st[] = {1, 12, 3, 14, 5, 18}, want_z[] = {1.5, 1.5, 3.5};
    for (int i = 0; i < 6; ++i) BOOST_TEST(st[i] == want_st[i], vl::vector_path_name(path) << ": Sᵀ element " << i);
    for (int i = 0; i < 3; ++i) BOOST_TEST(z[i] == want_z[i], vl::vector_path_name(path) << ": z element " << i);
  }
}

// The body with other steps: state never carried (each chunk alone: with chunks of 1, o_1 =
// 3·6 / 3 = 6), and a chunk that keeps every column (first_hidden past the chunk, clamped to it:
// with one chunk of 2, both rows (1·2 + 3·6) / 4 = 5).
struct ForgetfulSteps {
  static std::size_t first_hidden(std::size_t i) { return i + 1; }
  template <class T>
  static void carry(vl::VectorPath, T*, T*, const T*, const T*, std::size_t, std::size_t, std::size_t) {}
};
struct WholeChunkSteps {
  static std::size_t first_hidden(std::size_t) { return std::numeric_limits<std::size_t>::max(); }
  template <class T>
  static void carry(vl::VectorPath path, T* s, T* z, const T* v, const T* k, std::size_t b, std::size_t dv, std::size_t dk) {
    vl::LinearChunkSteps::carry(path, s, z, v, k, b, dv, dk);
  }
};
BOOST_AUTO_TEST_CASE_TEMPLATE(the_body_follows_its_steps, T, Types) {
  const HandCase<T> h;
  const M2<T> forgetful = vl::linear_attention_chunked_fast_with<ForgetfulSteps, T>(h.pq, h.pk, h.v, 1);
  BOOST_TEST(forgetful(0, 0) == T(2));
  BOOST_TEST(forgetful(1, 0) == T(6));
  const M2<T> whole = vl::linear_attention_chunked_fast_with<WholeChunkSteps, T>(h.pq, h.pk, h.v, 2);
  BOOST_TEST(whole(0, 0) == T(5));
  BOOST_TEST(whole(1, 0) == T(5));
  // and the shipped steps through the body are the kernel itself
  const M2<T> shipped = vl::linear_attention_chunked_fast_with<vl::LinearChunkSteps, T>(h.pq, h.pk, h.v, 1);
  BOOST_TEST(shipped(1, 0) == T(5));
}

BOOST_AUTO_TEST_SUITE_END()  // test_kernels_linear_attention_fast
