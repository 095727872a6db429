#include <boost/test/unit_test.hpp>

// The softmax's row loops of the fused kernel (kernels/fused/softmax_rows.hpp: row_max,
// row_exp_sum, row_scale, exp_of) and the float32 exp row on each vector path
// (kernels/fused/exp_rows.hpp: row_exp_sum_on), against their definitions: the largest score
// (−∞ for an empty or all −∞ row), exp(s − m) within the documented 2 floats of the correctly
// rounded value on [−87.3, 0] (exactly 1 at 0, exactly 0 below −87.3 and at −∞, NaN for NaN), the
// same bits on every path with the sum taken in the documented lane order, and the three loops
// together as softmax(x) = exp(x − max) / Σ within a bound derived below.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ios>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "kernels/fused/exp_rows.hpp"
#include "kernels/fused/softmax_rows.hpp"
#include "kernels/platform/vector_path.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_fused_rows).
BOOST_AUTO_TEST_SUITE(test_kernels_fused_rows)

using Types = std::tuple<float, double>;

template <class T>
constexpr T kInf = std::numeric_limits<T>::infinity();

std::vector<vl::VectorPath> rows_paths() {
  std::vector<vl::VectorPath> out;
  for (auto p : vl::all_vector_paths)
    if (vl::cpu_runs(p)) out.push_back(p);
    else BOOST_TEST_MESSAGE(vl::vector_path_name(p) << " path: not run, this CPU lacks it");
  return out;
}

// The distance in floats between two non-negative floats (one bit pattern per float, in order).
std::int64_t float_steps(float a, float b) {
  std::int32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x > y ? std::int64_t(x) - y : std::int64_t(y) - x;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

// row_max: every length from 0 to 40 (no, one and two 16-lane steps, and tails), the largest
// value at every position; empty and all −∞ rows give −∞; ±10⁴ and ±10³⁰ are ordinary values.
BOOST_AUTO_TEST_CASE_TEMPLATE(row_max_is_the_largest_score, T, Types) {
  BOOST_TEST(vl::row_max<T>(nullptr, 0) == -kInf<T>);
  for (std::size_t n = 1; n <= 40; ++n) {
    std::vector<T> s(n);
    for (std::size_t j = 0; j < n; ++j) s[j] = T(-1) - T(j % 7);  // all < 0, so that 0.5 is the largest
    for (std::size_t at = 0; at < n; ++at) {
      std::vector<T> r = s;
      r[at] = T(0.5);
      BOOST_TEST(vl::row_max<T>(r.data(), n) == T(0.5), "n=" << n << " at " << at);
    }
    std::vector<T> masked(n, -kInf<T>);
    BOOST_TEST(vl::row_max<T>(masked.data(), n) == -kInf<T>, "n=" << n);
    masked[n - 1] = T(-1e30);
    BOOST_TEST(vl::row_max<T>(masked.data(), n) == T(-1e30), "n=" << n);
  }
  const std::vector<T> big{T(-1e4), T(1e4), T(0), T(1e30), T(-1e30)};
  BOOST_TEST(vl::row_max<T>(big.data(), 3) == T(1e4));
  BOOST_TEST(vl::row_max<T>(big.data(), 5) == T(1e30));
}

// Scores at ±10⁴ (and ±10³⁰): shifted by the row's maximum, the largest is exp(0) = 1 exactly and
// the rest underflow to exactly 0 (float: below −87.3; double: exp(−10⁴) < 2⁻¹⁰⁷⁵, rounds to 0),
// so the sum is exactly 1, never ∞ or NaN. Masked scores (−∞) get exactly 0.
BOOST_AUTO_TEST_CASE_TEMPLATE(huge_and_masked_scores, T, Types) {
  for (T big : {T(1e4), T(1e30)})
    for (std::size_t n : {3, 19}) {  // within one 16-lane step's tail; across a step and a tail
      std::vector<T> s(n, -big);
      s[n / 2] = big;
      s[0] = -kInf<T>;
      const T m = vl::row_max<T>(s.data(), n);
      BOOST_TEST(m == big);
      const T sum = vl::row_exp_sum<T>(s.data(), n, m);
      BOOST_TEST(sum == T(1), "big=" << big << " n=" << n);
      for (std::size_t j = 0; j < n; ++j) BOOST_TEST(s[j] == (j == n / 2 ? T(1) : T(0)), "j=" << j);
    }
  // All masked: the row's maximum is −∞ (the header's contract; what the caller does with such a
  // row, the fused kernel's zero output, is the kernel's: test_kernels_fused_attention).
  std::vector<T> masked(20, -kInf<T>);
  BOOST_TEST(vl::row_max<T>(masked.data(), masked.size()) == -kInf<T>);
}

// A NaN score is not hidden: its p is NaN and so is the row's sum, whether it sits in a 16-lane
// step or in the tail; the other p stay what they were.
BOOST_AUTO_TEST_CASE_TEMPLATE(a_nan_score_makes_the_sum_nan, T, Types) {
  for (std::size_t at : {0, 5, 16, 18}) {
    std::vector<T> s(19, T(-1));
    s[3] = T(0);
    s[at] = std::numeric_limits<T>::quiet_NaN();
    const T sum = vl::row_exp_sum<T>(s.data(), s.size(), T(0));
    BOOST_TEST(std::isnan(sum), "NaN at " << at);
    BOOST_TEST(std::isnan(s[at]));
    for (std::size_t j = 0; j < s.size(); ++j)
      if (j != at) BOOST_TEST(!std::isnan(s[j]), "NaN at " << at << ", j=" << j);
  }
}

// row_scale: a_j · f, one rounding each, in lanes and tail; n = 0 touches nothing.
BOOST_AUTO_TEST_CASE_TEMPLATE(row_scale_multiplies, T, Types) {
  std::vector<T> a(37);
  for (std::size_t j = 0; j < a.size(); ++j) a[j] = T(1) / T(j + 3);
  std::vector<T> want = a;
  for (T& x : want) x = x * T(0.3);
  std::vector<T> got = a;
  vl::row_scale<T>(got.data(), got.size(), T(0.3));
  for (std::size_t j = 0; j < a.size(); ++j) BOOST_TEST(got[j] == want[j], "j=" << j);
  T untouched = T(5);
  vl::row_scale<T>(&untouched, 0, T(2));
  BOOST_TEST(untouched == T(5));
}

// softmax(x)_j = exp(x_j − max) / Σ exp(x − max), as the fused kernel composes the loops (max,
// exp-sum, scale by 1/sum), against long double. Scores are multiples of 2⁻⁶ in [−8, 8], so
// x − max is exact and the reference sees the same differences.
// Bound, relative, per weight: p_j = exp(d_j)(1 + ε), |ε| ≤ E (float: 2 floats from the correctly
// rounded value plus its half float, 2.5·2⁻²³; double: glibc's exp, < 1 ulp = 2⁻⁵²); the sum of n
// such p in any order adds (n − 1)·u (u = 2⁻²⁴, 2⁻⁵³) relative to itself, and E through its
// terms; 1/sum and the product one rounding each: 2E + (n + 1)·u, to first order (× 1.01).
// The long double reference's own error (~2⁻⁶⁴) is far below it.
BOOST_AUTO_TEST_CASE_TEMPLATE(the_three_loops_compute_the_softmax, T, Types) {
  constexpr bool is_float = sizeof(T) == 4;
  const long double u = is_float ? 0x1p-24L : 0x1p-53L, E = is_float ? 2.5L * 0x1p-23L : 0x1p-52L;
  std::mt19937_64 gen(5);
  for (std::size_t n : {1, 2, 15, 16, 17, 33, 100}) {
    std::vector<T> s(n);
    for (T& x : s) x = T(int(gen() % 1025) - 512) / T(64);
    std::vector<T> w = s;
    const T m = vl::row_max<T>(w.data(), n);
    const T sum = vl::row_exp_sum<T>(w.data(), n, m);
    vl::row_scale<T>(w.data(), n, T(1) / sum);
    long double exact_max = s[0], exact_sum = 0;
    for (T x : s) exact_max = std::max<long double>(exact_max, x);
    for (T x : s) exact_sum += std::exp(static_cast<long double>(x) - exact_max);
    const long double bound = 1.01L * (2 * E + (n + 1) * u);
    long double worst = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const long double want = std::exp(static_cast<long double>(s[j]) - exact_max) / exact_sum;
      worst = std::max(worst, std::abs(w[j] - want) / want);
    }
    BOOST_TEST(worst <= bound, "n=" << n << ": relative error " << double(worst) << " > " << double(bound));
  }
  // One score: weight exactly 1 (exp(0) = 1, 1/1 = 1).
  T one = T(-3.25);
  const T m = vl::row_max<T>(&one, 1);
  vl::row_scale<T>(&one, 1, T(1) / vl::row_exp_sum<T>(&one, 1, m));
  BOOST_TEST(one == T(1));
}

// The float32 exp row on every path (m = 0: the row holds exp(s_j)): within 2 floats of the
// correctly rounded exp on [−87.3, 0], 2·10⁵ arguments uniform by value and by binade down to
// 2⁻¹²⁶. Reference: long double's expl (64-bit significand) rounded to float: correctly rounded
// unless exp(x) lies within ~2⁻⁶³ of a midpoint between floats (chance ~10⁻⁷ over this sample).
BOOST_AUTO_TEST_CASE(exp_row_within_two_floats_on_every_path) {
  std::mt19937_64 gen(32);
  std::uniform_real_distribution<double> by_value(-87.3, 0.0);
  std::vector<float> xs;
  for (int i = 0; i < 100'000; ++i) xs.push_back(static_cast<float>(by_value(gen)));
  for (int i = 0; i < 100'000; ++i) xs.push_back(-std::ldexp(1.0f + float(gen() >> 40) * 0x1p-24f, -int(gen() % 133) + 6));
  std::erase_if(xs, [](float x) { return x < -87.3f; });
  xs.push_back(-87.3f);
  for (auto path : rows_paths()) {
    std::vector<float> y = xs;
    vl::row_exp_sum_on(path, y.data(), y.size(), 0.0f);
    std::int64_t worst = 0;
    float worst_x = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const float ref = static_cast<float>(std::exp(static_cast<long double>(xs[i])));
      if (float_steps(y[i], ref) > worst) worst = float_steps(y[i], ref), worst_x = xs[i];
    }
    BOOST_TEST_MESSAGE(vl::vector_path_name(path) << ": worst " << worst << " floats at x = " << worst_x);
    BOOST_TEST(worst <= 2, vl::vector_path_name(path) << ": " << worst << " floats from exp at x = " << worst_x);
  }
}

// Every path gives the scalar exp_of's bits in every lane and in the tail, and its sum is the
// documented order: lane t adds elements j ≡ t (mod 16) of the 16-lane steps in order; lane 0
// then takes the tail elements in order; lanes 1 … 15 are added to it in lane order. Special
// values, in a lane and in the tail: exactly 1 at x = m, exactly 0 below −87.3 and at −∞, NaN for NaN.
BOOST_AUTO_TEST_CASE(exp_row_same_bits_and_sum_order_on_every_path) {
  std::mt19937_64 gen(9);
  const float m = 1.5f, nan = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t n : {1, 15, 16, 37, 64}) {
    std::vector<float> s(n);
    for (float& x : s) x = m - float(gen() >> 40) * 0x1p-24f * 20.0f;
    for (auto path : rows_paths()) {
      std::vector<float> y = s;
      const float sum = vl::row_exp_sum_on(path, y.data(), n, m);
      std::size_t not_scalar = 0;
      for (std::size_t j = 0; j < n; ++j) not_scalar += !same_bits(y[j], vl::exp_of(s[j] - m));
      BOOST_TEST(not_scalar == 0u, vl::vector_path_name(path) << " n=" << n);
      float part[16] = {};
      const std::size_t full = n / 16 * 16;
      for (std::size_t j = 0; j < full; ++j) part[j % 16] += y[j];
      float want = part[0];
      for (std::size_t j = full; j < n; ++j) want += y[j];
      for (int t = 1; t < 16; ++t) want += part[t];
      BOOST_TEST(same_bits(sum, want), vl::vector_path_name(path) << " n=" << n << ": sum " << std::hexfloat << sum << ", in the documented order "
                                                                  << want << std::defaultfloat);
    }
  }
  std::vector<float> special(36, -1.0f);  // positions 0 … 31: two 16-lane steps; 32 … 35: the tail
  for (std::size_t base : {0, 32}) {
    special[base + 0] = m;
    special[base + 1] = m - 87.4f;
    special[base + 2] = -kInf<float>;
    special[base + 3] = nan;
  }
  for (auto path : rows_paths()) {
    std::vector<float> y = special;
    const float sum = vl::row_exp_sum_on(path, y.data(), y.size(), m);
    for (std::size_t base : {0, 32}) {
      BOOST_TEST(y[base] == 1.0f, vl::vector_path_name(path) << " at " << base);
      BOOST_TEST(same_bits(y[base + 1], 0.0f), vl::vector_path_name(path) << " at " << base + 1);
      BOOST_TEST(same_bits(y[base + 2], 0.0f), vl::vector_path_name(path) << " at " << base + 2);
      BOOST_TEST(std::isnan(y[base + 3]), vl::vector_path_name(path) << " at " << base + 3);
    }
    BOOST_TEST(std::isnan(sum), vl::vector_path_name(path));
  }
}

// The constants are a template argument (the exp claim's controls swap one): with the polynomial
// zero, eʳ ≈ 1 + r, and x = −0.25 (n = round(−0.25 / ln 2) = 0, r = −0.25) gives 0.75 exactly, on
// every path, in a lane and in the tail.
struct NoPolynomial {
  static constexpr float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
  static constexpr float p0 = 0, p1 = 0, p2 = 0, p3 = 0, p4 = 0, p5 = 0;
};
BOOST_AUTO_TEST_CASE(exp_row_uses_the_constants_it_is_given) {
  for (auto path : rows_paths()) {
    std::vector<float> y(17, -0.25f);
    const float sum = vl::row_exp_sum_on<NoPolynomial>(path, y.data(), y.size(), 0.0f);
    for (float e : y) BOOST_TEST(e == 0.75f, vl::vector_path_name(path));
    BOOST_TEST(sum == 12.75f, vl::vector_path_name(path));  // 17 · 0.75: every partial sum a multiple of 0.25 below 2²², exact
  }
}

BOOST_AUTO_TEST_SUITE_END()  // test_kernels_fused_rows
