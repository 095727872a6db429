#pragma once
// How far attention's backward computed in a working precision of unit round-off u may be from
// the exact gradients of the same (already rounded) q, k, v and upstream gradient dO: the bound
// attention.backward-matches-torch judges a float32 implementation by (specs/attention.md,
// "The backward in float32"). First order in u, worst case, γ_n = n·u / (1 − n·u); G query heads
// share a key/value head (G = Hq / Hkv); m_x = max|x|; F the forward's attention_error_factor, which
// bounds each weight's relative error and the sum of a row's weight errors alike; its scores' error widened by 2u·(L + ln Sk) for a kernel that
// recomputes P = exp(s − lse) from a saved log-sum-exp (FlashAttention's backward):
//
//   |ΔP_ij| ≤ F·P_ij                                   the weights, as the forward's
//   dV = Pᵀ dO       ≤ (γ_{G·Sq} + F)·G·Sq·m_dO           a column of P sums to at most G·Sq
//   dP = dO Vᵀ       e_dP = γ_{Dv}·M,  M = Dv·m_dO·m_v     |dP| ≤ M
//   D = rowsum(dO ⊙ O) or rowsum(P ⊙ dP)
//                    e_D = (γ_{max(Dv, Sk)} + F)·M + e_dP
//   dS = P ⊙ (dP − D)  Σ_j |ΔdS_ij| ≤ e_S = 2F·M + e_dP + e_D + 4u·M;  Σ_j |dS_ij| ≤ 2M
//   dQ = scale·dS K  ≤ scale·m_k·(γ_{Sk+1}·2M + e_S)
//   dK = scale·dSᵀ Q ≤ scale·m_q·G·Sq·(γ_{G·Sq+1}·2M + e_S)
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <xtensor/xsort.hpp>

#include "lessons/attention_error_bound.hpp"

namespace vl::lessons {

struct BackwardErrorBound {
  double dq, dk, dv;  ///< on every element of each gradient
};

inline BackwardErrorBound attention_backward_error_bound(const xt::xtensor<double, 4>& q, const xt::xtensor<double, 4>& k,
                                                         const xt::xtensor<double, 4>& v, const xt::xtensor<double, 4>& d_out,
                                                         const AttentionOptions<double>& o, double u) {
  if (o.softcap > 0)  // dS would carry tanh's derivative: not derived here
    throw std::invalid_argument("attention_backward_error_bound: no bound derived for a softcap (its tanh' factor in dS)");
  const double Sq = double(q.shape(2)), Sk = double(k.shape(2)), D = double(q.shape(3)), Dv = double(v.shape(3));
  const double G = double(q.shape(1) / k.shape(1));
  const double scale = std::fabs(o.scale.value_or(1 / std::sqrt(D)));
  auto largest = [](const xt::xtensor<double, 4>& x) { return double(xt::amax(xt::abs(x))()); };
  const double mq = largest(q), mk = largest(k), mv = largest(v), mo = largest(d_out);
  double mbias = 0;
  if (o.bias)
    for (double b : *o.bias)
      if (std::isfinite(b)) mbias = std::max(mbias, std::fabs(b));
  const double L = scale * D * mq * mk + mbias;  // the largest score magnitude, and so of the lse less ln Sk
  const double F = attention_error_factor(q, k, o, u, 2 * u * (L + std::log(Sk)));
  const double M = Dv * mo * mv;
  const double e_dP = gamma(Dv, u) * M;
  const double e_D = (gamma(std::max(Dv, Sk), u) + F) * M + e_dP;
  const double e_S = 2 * F * M + e_dP + e_D + 4 * u * M;
  return {scale * mk * (gamma(Sk + 1, u) * 2 * M + e_S),
          scale * mq * G * Sq * (gamma(G * Sq + 1, u) * 2 * M + e_S),
          (gamma(G * Sq, u) + F) * G * Sq * mo};
}

}  // namespace vl::lessons
