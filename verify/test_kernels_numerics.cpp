#include <boost/test/unit_test.hpp>

// Numerics at the edges of the softmax (src/kernels/reference/softmax.hpp) and attention
// (src/kernels/reference/attention.hpp) kernels, in float and double: scores at ±1e4 (exp would overflow
// without the max shift), rows that are all −∞ (zero weights, never NaN), subnormal inputs,
// and how closely the float32 kernel agrees with the float64 one (a bound derived below).
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include <xtensor/xtensor.hpp>

#include "kernels/reference/attention.hpp"
#include "kernels/reference/softmax.hpp"
#include "kernel_types.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_numerics).
BOOST_AUTO_TEST_SUITE(test_kernels_numerics)

namespace {

using Types = vl::verify::FloatTypes;

template <class T>
constexpr T kInf = std::numeric_limits<T>::infinity();

template <class T, std::size_t N>
bool all_finite(const xt::xtensor<T, N>& a) {
  for (T x : a)
    if (!std::isfinite(x)) return false;
  return true;
}

// Deterministic normal draws (std::normal_distribution is not portable; Box-Muller on
// mt19937_64 is, up to libm's last bits, and the tests only need "random-looking" data).
struct Normal {
  std::mt19937_64 gen;
  explicit Normal(std::uint64_t seed) : gen(seed) {}
  double operator()() {
    const double u1 = (static_cast<double>(gen() >> 11) + 0.5) * 0x1p-53;
    const double u2 = static_cast<double>(gen() >> 11) * 0x1p-53;
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

// A (B, H, S, D) tensor of normal draws rounded to float (so that the float and double kernels
// see exactly the same inputs) and returned in T.
template <class T>
xt::xtensor<T, 4> float_normal(Normal& rng, std::size_t b, std::size_t h, std::size_t s, std::size_t d) {
  xt::xtensor<T, 4> x({b, h, s, d});
  for (auto& e : x) e = static_cast<T>(static_cast<float>(rng()));
  return x;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(softmax_edges)

BOOST_AUTO_TEST_CASE_TEMPLATE(scores_at_plus_minus_1e4_do_not_overflow, T, Types) {
  // exp(1e4) is +inf in both types (float overflows above 88.7, double above 709.8); the
  // max-shifted softmax computes exp(s − max) ≤ 1 and stays exact here.
  const xt::xtensor<T, 2> s = {{T(1e4), T(1e4), T(-1e4)}, {T(-1e4), T(-1e4), T(-1e4)}, {T(1e4), T(0), T(-1e4)}};
  const auto w = vl::softmax_rows<T>(s);
  BOOST_TEST(all_finite(w));
  BOOST_TEST(w(0, 0) == T(0.5));
  BOOST_TEST(w(0, 1) == T(0.5));
  BOOST_TEST(w(0, 2) == T(0));  // exp(−2e4) underflows to 0: correct to the last bit
  for (std::size_t j = 0; j < 3; ++j) BOOST_TEST(w(1, j) == T(1) / T(3));
  BOOST_TEST(w(2, 0) == T(1));
  BOOST_TEST(w(2, 1) == T(0));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(rows_all_minus_infinity_get_zero_weights, T, Types) {
  const xt::xtensor<T, 2> s = {{-kInf<T>, -kInf<T>, -kInf<T>}, {T(1), -kInf<T>, T(1)}};
  const auto w = vl::softmax_rows<T>(s);
  for (std::size_t j = 0; j < 3; ++j) BOOST_TEST(w(0, j) == T(0));  // zero, not NaN
  BOOST_TEST(w(1, 0) == T(0.5));
  BOOST_TEST(w(1, 1) == T(0));
  BOOST_TEST(w(1, 2) == T(0.5));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(subnormal_scores, T, Types) {
  // Differences of subnormals are exact (Sterbenz); exp of a subnormal is 1: uniform weights.
  const T tiny = std::numeric_limits<T>::denorm_min();
  const T sub = std::numeric_limits<T>::min() / T(4);  // a subnormal
  BOOST_REQUIRE(std::fpclassify(sub) == FP_SUBNORMAL);
  const xt::xtensor<T, 2> s = {{tiny, sub, T(0), -sub}};
  const auto w = vl::softmax_rows<T>(s);
  BOOST_TEST(all_finite(w));
  for (std::size_t j = 0; j < 4; ++j) BOOST_TEST(w(0, j) == T(0.25));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(nan_scores_propagate, T, Types) {
  // NaN is a bug upstream, not a mask: it must show, not be silently zeroed. (`lessons eval`
  // refuses NaN inputs before they get here; see verify/cli/test_bad_inputs.py.)
  const xt::xtensor<T, 2> s = {{T(0), std::numeric_limits<T>::quiet_NaN()}, {T(0), T(0)},
                               {-kInf<T>, std::numeric_limits<T>::quiet_NaN()}};
  const auto w = vl::softmax_rows<T>(s);
  BOOST_TEST(std::isnan(w(0, 0)));
  BOOST_TEST(w(1, 0) == T(0.5));
  // A NaN among masked scores: the row's largest score is −∞, yet it is not a fully masked row.
  BOOST_TEST(std::isnan(w(2, 0)));
  BOOST_TEST(std::isnan(w(2, 1)));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(attention_edges)

BOOST_AUTO_TEST_CASE_TEMPLATE(huge_scores_give_the_argmax_value, T, Types) {
  // Q Kᵀ · scale reaches ±1e4: each query picks exactly the value of its best key.
  const xt::xtensor<T, 2> q = {{T(100), T(0)}, {T(0), T(-100)}};
  const xt::xtensor<T, 2> k = {{T(1), T(0)}, {T(0), T(1)}, {T(-1), T(0)}};
  const xt::xtensor<T, 2> v = {{T(1), T(2)}, {T(3), T(4)}, {T(5), T(6)}};
  vl::AttentionOptions<T> opt;
  opt.scale = T(100);  // scores 1e4, 0, −1e4 / 0, −1e4, 0
  opt.return_weights = true;
  const auto r = vl::attention<T>(q, k, v, opt);
  BOOST_TEST(all_finite(r.output));
  BOOST_TEST(r.output(0, 0) == T(1));
  BOOST_TEST(r.output(0, 1) == T(2));
  // second query: keys 0 and 2 tie at 0, key 1 is at −1e4
  BOOST_TEST(r.weights(1, 1) == T(0));
  BOOST_TEST(r.output(1, 0) == T(3));
  BOOST_TEST(r.output(1, 1) == T(4));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(fully_masked_rows_give_zero_output, T, Types) {
  // A boolean mask that hides every key of query 0, and an additive −∞ mask that hides every
  // key of query 1: zero weights and zero output, no NaN; query 2 is unaffected.
  const xt::xtensor<T, 2> q = {{T(1), T(2)}, {T(3), T(4)}, {T(0.5), T(-1)}};
  const xt::xtensor<T, 2> k = {{T(1), T(0)}, {T(0), T(1)}};
  const xt::xtensor<T, 2> v = {{T(1), T(2)}, {T(3), T(4)}};
  vl::AttentionOptions<T> opt;
  opt.allowed = xt::xarray<bool>{{false, false}, {true, true}, {true, true}};
  opt.bias = xt::xarray<T>{{T(0), T(0)}, {-kInf<T>, -kInf<T>}, {T(0), T(0)}};
  opt.return_weights = true;
  const auto r = vl::attention<T>(q, k, v, opt);
  BOOST_TEST(all_finite(r.output));
  BOOST_TEST(all_finite(r.weights));
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 2; ++j) {
      BOOST_TEST(r.weights(i, j) == T(0));
      BOOST_TEST(r.output(i, j) == T(0));
    }
  BOOST_TEST(std::abs(r.weights(2, 0) + r.weights(2, 1) - T(1)) <= 4 * std::numeric_limits<T>::epsilon());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(causal_bottom_right_with_more_queries_than_keys, T, Types) {
  // Sq = 3 > Sk = 1, bottom-right: query 0 and 1 see no key at all (j ≤ i + Sk − Sq < 0).
  const xt::xtensor<T, 2> q = {{T(1)}, {T(2)}, {T(3)}};
  const xt::xtensor<T, 2> k = {{T(1)}};
  const xt::xtensor<T, 2> v = {{T(7)}};
  vl::AttentionOptions<T> opt;
  opt.causal = true;
  opt.alignment = vl::CausalAlignment::bottom_right;
  const auto r = vl::attention<T>(q, k, v, opt);
  BOOST_TEST(r.output(0, 0) == T(0));
  BOOST_TEST(r.output(1, 0) == T(0));
  BOOST_TEST(r.output(2, 0) == T(7));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(subnormal_inputs, T, Types) {
  // Q and K of subnormals: the scores underflow to (about) 0, the weights are uniform, and
  // the output is the mean of V. Subnormal V passes through the weighted sum as well.
  const T sub = std::numeric_limits<T>::min() / T(8);
  BOOST_REQUIRE(std::fpclassify(sub) == FP_SUBNORMAL);
  const xt::xtensor<T, 2> q = {{sub, -sub}, {sub, sub}};
  const xt::xtensor<T, 2> k = {{sub, sub}, {-sub, sub}};
  const xt::xtensor<T, 2> v = {{T(2), sub}, {T(4), sub}};
  const auto r = vl::attention<T>(q, k, v);
  BOOST_TEST(all_finite(r.output));
  for (std::size_t i = 0; i < 2; ++i) {
    BOOST_TEST(r.output(i, 0) == T(3));
    BOOST_TEST(r.output(i, 1) == sub);  // (w·sub + w·sub) with w = 1/2: exact
  }
}

BOOST_AUTO_TEST_CASE(float32_agrees_with_float64_within_the_derived_bound) {
  // The float32 kernel against the float64 one on the same inputs (normal draws rounded to
  // float, so input rounding is not part of the difference). u = 2^-24 (float32 unit
  // roundoff), γ_n = n·u / (1 − n·u) (Higham, Accuracy and Stability, §3.1).
  //
  //  scores   s_ij = scale · Σ_d q_id k_jd over D terms, any summation order (BLAS, FMA):
  //           |δs_ij| ≤ γ_D · scale · Σ_d |q_id k_jd|  + u·|s_ij| (the product by scale)
  //           =: Δ_i  (the largest over j)
  //  weights  w_ij = exp(s_ij − m_i) / Z_i. A perturbation δs changes w_ij by the factor
  //           exp(δs_ij − Σ_k w_ik δs_ik) ∈ [e^{−2Δ}, e^{2Δ}], i.e. relatively by ≲ 2Δ_i; the
  //           float32 exp (≤ 1 ulp: 2u), the Sk-term sum Z (γ_Sk) and the division (u) add
  //           (Sk + 3)·u.   |δw_ij| ≤ w_ij · (2Δ_i + (Sk + 3)·u)  (to first order)
  //  output   o_ie = Σ_j w_ij v_je over Sk terms:
  //           |δo_ie| ≤ Σ_j |δw_ij||v_je| + γ_Sk Σ_j w_ij |v_je|
  //                   ≤ (2Δ_i + (2·Sk + 3)·u) · max_j |v_je|          (Σ_j w_ij = 1)
  //           plus the float64 kernel's own error (~1e-16, negligible) and the float32
  //           rounding of o itself (u·|o_ie| ≤ u·max|v|). With D = 64, scale = 1/8 and normal
  //           data, Δ ~ 64·u·8 ≈ 3e-5, so the bound is a few 1e-4 · max|v| and the measured
  //           error is typically 1e-7..1e-6 (round-off errors do not all add up in one
  //           direction); the test asserts the bound, which holds for every summation order.
  constexpr double u = 0x1p-24;
  auto gamma = [](double n) { return n * u / (1 - n * u); };
  Normal rng(20240611);
  const std::size_t B = 2, H = 3, Sq = 16, Sk = 24, D = 64, Dv = 32;
  const auto qd = float_normal<double>(rng, B, H, Sq, D);
  const auto kd = float_normal<double>(rng, B, H, Sk, D);
  const auto vd = float_normal<double>(rng, B, H, Sk, Dv);
  const xt::xtensor<float, 4> qf = xt::cast<float>(qd), kf = xt::cast<float>(kd), vf = xt::cast<float>(vd);
  for (const bool causal : {false, true}) {
    vl::AttentionOptions<double> od;
    vl::AttentionOptions<float> of;
    od.causal = of.causal = causal;
    const auto rd = vl::attention<double>(qd, kd, vd, od);
    const auto rf = vl::attention<float>(qf, kf, vf, of);
    const double scale = 1.0 / std::sqrt(double(D));
    double worst_ratio = 0, worst_err = 0;
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < Sq; ++i) {
          double delta = 0;  // Δ_i
          for (std::size_t j = 0; j < Sk; ++j) {
            double abs_dot = 0, dot = 0;
            for (std::size_t d = 0; d < D; ++d) {
              abs_dot += std::abs(qd(b, h, i, d) * kd(b, h, j, d));
              dot += qd(b, h, i, d) * kd(b, h, j, d);
            }
            delta = std::max(delta, gamma(D) * scale * abs_dot + u * std::abs(scale * dot));
          }
          for (std::size_t e = 0; e < Dv; ++e) {
            double vmax = 0;
            for (std::size_t j = 0; j < Sk; ++j) vmax = std::max(vmax, std::abs(vd(b, h, j, e)));
            const double bound = (2 * delta + (2.0 * Sk + 4) * u) * vmax;
            const double err = std::abs(double(rf.output(b, h, i, e)) - rd.output(b, h, i, e));
            worst_err = std::max(worst_err, err);
            worst_ratio = std::max(worst_ratio, err / bound);
          }
        }
    BOOST_TEST_MESSAGE("causal " << causal << ": max |o32 − o64| = " << worst_err
                                 << ", at most " << worst_ratio << " of the derived bound");
    BOOST_TEST(worst_ratio <= 1.0);
    BOOST_TEST(worst_err > 0.0);  // the float32 path really computes in float32
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // test_kernels_numerics
