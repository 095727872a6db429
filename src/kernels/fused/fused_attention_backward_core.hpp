#pragma once
// The fused backward's body (see fused_attention_backward.hpp), a template over the kernel's
// steps (fused_attention_steps.hpp). fused_attention_backward.cpp instantiates it with
// FusedSteps; include this header only to instantiate it with other steps.
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "kernels/fused/fused_attention_backward.hpp"
#include "kernels/fused/fused_attention_core.hpp"

namespace vl {

namespace detail {

// One thread's buffers: Sᵀ, then Pᵀ (bk × ld); dPᵀ, then dSᵀ (bk × ld); scale·Q_blkᵀ (D × ld) and
// dO_blkᵀ (Dv × ld) packed for block_gemm; the rows' lse, copied because the softmax step
// writes its maximum back, and that step's sums and alphas (not used); the accumulators
// dK_blk (bk × D) and dV_blk (bk × Dv). ld as the forward's.
template <class T>
struct BackwardWorkspace {
  std::size_t ld;
  std::vector<T> st, dst, qt, dot, m, sum, alpha, acc_k, acc_v;
  BackwardWorkspace(std::size_t bq, std::size_t bk, std::size_t d, std::size_t dv)
      : ld(padded_ld(bq)),
        st(bk * ld),
        dst(bk * ld),
        qt(d * ld),
        dot(dv * ld),
        m(bq),
        sum(bq),
        alpha(bq),
        acc_k(bk * d),
        acc_v(bk * dv) {}
  std::size_t bytes() const {
    std::size_t n = 0;
    for (const auto* b : {&st, &dst, &qt, &dot, &m, &sum, &alpha, &acc_k, &acc_v}) n += b->capacity();
    return n * sizeof(T);
  }
};

// What the backward reads besides Q, K, V: dO (B, Hq, Sq, Dv), and per row lse and Δ = rowsum(dO ⊙ O).
template <class T>
struct BackwardInputs {
  const T* d_out;
  const T* lse;
  const T* delta;
};

// Query rows [i0, i0 + nq) of head (b, h): scale·Q_blkᵀ and dO_blkᵀ packed (vectors run over the queries).
template <class T>
void pack_query_block(const Problem<T>& p, const BackwardInputs<T>& in, BackwardWorkspace<T>& w, std::size_t b, std::size_t h,
                      std::size_t i0, std::size_t nq) {
  const std::size_t row0 = (b * p.Hq + h) * p.Sq + i0, ld = w.ld;
  pack_scaled_queries(p, p.q + row0 * p.D, nq, w.qt.data(), ld);
  const T* d_out = in.d_out + row0 * p.Dv;
  for (std::size_t r = 0; r < nq; ++r)
    for (std::size_t t = 0; t < p.Dv; ++t) w.dot[t * ld + r] = d_out[r * p.Dv + t];
}

// One block pair, queries [i0, i0 + nq) of head (b, h) against keys [j0, j0 + nk), with the
// query block packed: Pᵀ into w.st and dSᵀ into w.dst (both bk × ld, key-major).
//   Sᵀ = K_blk (scale·Q_blk)ᵀ, masked;  Pᵀ = exp(Sᵀ − lse);  dPᵀ = V_blk dO_blkᵀ;  dSᵀ = Pᵀ ⊙ (dPᵀ − Δ)
template <class T>
void block_pair(const Problem<T>& p, const BackwardInputs<T>& in, BackwardWorkspace<T>& w, std::size_t b, std::size_t h,
                std::size_t i0, std::size_t nq, std::size_t j0, std::size_t nk, const Placement& place) {
  const std::size_t hkv = kv_head_of(h, p.Hq, p.Hkv), ld = w.ld, row0 = (b * p.Hq + h) * p.Sq + i0;
  const T* k = p.k + ((b * p.Hkv + hkv) * p.Sk + j0) * p.D;
  const T* v = p.v + ((b * p.Hkv + hkv) * p.Sk + j0) * p.Dv;
  T* st = w.st.data();
  T* dst = w.dst.data();
  block_gemm(p.path, false, false, nk, nq, p.D, k, p.D, w.qt.data(), ld, st, ld);
  mask_scores(p, st, ld, b, h, i0, nq, j0, nk, place);
  // With m = lse (≥ every score of its row) the softmax step's maximum stays lse, so it writes
  // p = exp(s − lse); a row with lse = −∞ (no visible key) gets p = 0, a NaN lse NaN.
  std::copy(in.lse + row0, in.lse + row0 + nq, w.m.begin());
  online_softmax_block(p.path, st, nk, nq, ld, w.m.data(), w.sum.data(), w.alpha.data());
  block_gemm(p.path, false, false, nk, nq, p.Dv, v, p.Dv, w.dot.data(), ld, dst, ld);
  const T* delta = in.delta + row0;
  for (std::size_t j = 0; j < nk; ++j)
    for (std::size_t r = 0; r < nq; ++r) dst[j * ld + r] = st[j * ld + r] * (dst[j * ld + r] - delta[r]);
}

// One work item: the key blocks kb ≡ lane (mod lanes) of key/value head (b, hkv), in order. For
// each, dK_blk and dV_blk sum the group's query heads in order and, for each head, its query
// blocks in order; each pair's dS K_blk is added to the lane's own dQ (dq_lane, (B, Hq, Sq, D)),
// which no other item writes.
template <class Steps, class T>
void lane_gradients(const Problem<T>& p, const BackwardInputs<T>& in, BackwardWorkspace<T>& w, std::size_t b, std::size_t hkv,
                    std::size_t lane, std::size_t lanes, T* dk, T* dv, T* dq_lane, Counters& counters) {
  const std::size_t D = p.D, Dv = p.Dv, bq = p.config.block_q, bk = p.config.block_k, group = p.Hq / p.Hkv;
  const Placement place = placement(p, b);
  for (std::size_t j0 = lane * bk; j0 < p.Sk; j0 += lanes * bk) {
    const std::size_t nk = std::min(bk, p.Sk - j0);
    const T* k = p.k + ((b * p.Hkv + hkv) * p.Sk + j0) * D;
    std::fill(w.acc_k.begin(), w.acc_k.begin() + nk * D, T(0));
    std::fill(w.acc_v.begin(), w.acc_v.begin() + nk * Dv, T(0));
    for (std::size_t g = 0; g < Steps::heads_summed(group); ++g) {
      const std::size_t h = hkv * group + g;
      for (std::size_t i0 = 0; i0 < p.Sq; i0 += bq) {
        const std::size_t nq = std::min(bq, p.Sq - i0);
        if (p.causal && Steps::backward_block_hidden(std::ptrdiff_t(j0), std::ptrdiff_t(i0 + nq) - 1 + place.offset, bk)) {
          ++counters.skipped;
          continue;
        }
        ++counters.computed;
        pack_query_block(p, in, w, b, h, i0, nq);
        block_pair(p, in, w, b, h, i0, nq, j0, nk, place);
        const std::size_t row0 = (b * p.Hq + h) * p.Sq + i0;
        block_gemm(p.path, false, true, nk, Dv, nq, w.st.data(), w.ld, in.d_out + row0 * Dv, Dv, w.acc_v.data(), Dv);  // dV += Pᵀ dO
        block_gemm(p.path, false, true, nk, D, nq, w.dst.data(), w.ld, p.q + row0 * D, D, w.acc_k.data(), D);          // dK += dSᵀ Q
        block_gemm(p.path, true, true, nq, D, nk, w.dst.data(), w.ld, k, D, dq_lane + row0 * D, D);                     // dQ += dS K
      }
    }
    const std::size_t at = (b * p.Hkv + hkv) * p.Sk + j0;
    for (std::size_t x = 0; x < nk * D; ++x) dk[at * D + x] = p.scale * w.acc_k[x];
    std::copy(w.acc_v.begin(), w.acc_v.begin() + nk * Dv, dv + at * Dv);
  }
}

}  // namespace detail

/// What the backward refuses, checked before any work (the forward included): its options, the
/// inputs as vl::attention checks them, and dO's shape, the output's (B, Hq, Sq, Dv).
template <class T>
void check_backward_inputs(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v, const xt::xtensor<T, 4>& d_out,
                           const AttentionOptions<T>& options, const FusedConfig& config) {
  if (options.softcap > 0) throw std::invalid_argument("fused_attention_backward: softcap is not supported (its tanh is not differentiated)");
  if (options.round) throw std::invalid_argument("fused_attention_backward: no storage rounding (use vl::attention_backward)");
  if (config.blas_products) throw std::invalid_argument("fused_attention_backward: its block products are block_gemm's only");
  if (config.block_q == 0 || config.block_k == 0) throw std::invalid_argument("fused_attention_backward: block sizes must be >= 1");
  check_attention_inputs(q.shape(), k.shape(), v.shape(), options.kv_lengths);
  if (d_out.shape() != std::array<std::size_t, 4>{q.shape(0), q.shape(1), q.shape(2), v.shape(3)})
    throw std::invalid_argument(fmt::format("fused_attention_backward: dO has shape ({}), the output ({}, {}, {}, {})",
                                            fmt::join(d_out.shape(), ", "), q.shape(0), q.shape(1), q.shape(2), v.shape(3)));
}

/// fused_attention_saved with the given steps.
template <class Steps, class T>
FusedSaved<T> fused_attention_saved_with(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                         const AttentionOptions<T>& options, const FusedConfig& config) {
  FusedSaved<T> s;
  s.output = xt::xtensor<T, 4>::from_shape({q.shape(0), q.shape(1), q.shape(2), v.shape(3)});
  s.lse = xt::xtensor<T, 3>::from_shape({q.shape(0), q.shape(1), q.shape(2)});
  detail::fused_core<Steps, T>(q.shape(), k.shape(), v.shape(), q.data(), k.data(), v.data(), s.output.data(), s.lse.data(), options, config,
                               nullptr);
  return s;
}

/// fused_attention_backward (from the saved forward) with the given steps.
template <class Steps, class T>
AttentionGradients<T, 4> fused_attention_backward_with(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                                       const FusedSaved<T>& saved, const xt::xtensor<T, 4>& d_out,
                                                       const AttentionOptions<T>& options, const FusedConfig& config, FusedStats* stats) {
  check_backward_inputs(q, k, v, d_out, options, config);
  detail::Problem<T> p = detail::make_problem<T>(q.shape(), k.shape(), v.shape(), options, config);
  const std::size_t B = p.B, Hq = p.Hq, Sq = p.Sq, D = p.D, Hkv = p.Hkv, Sk = p.Sk, Dv = p.Dv;
  if (saved.output.shape() != d_out.shape() || saved.lse.shape() != std::array<std::size_t, 3>{B, Hq, Sq})
    throw std::invalid_argument(fmt::format("fused_attention_backward: the saved O ({}) and lse ({}) must be shaped ({}, {}, {}, {}) and ({}, {}, {})",
                                            fmt::join(saved.output.shape(), ", "), fmt::join(saved.lse.shape(), ", "), B, Hq, Sq, Dv, B,
                                            Hq, Sq));
  p.q = q.data(), p.k = k.data(), p.v = v.data();

  // Δ_i = rowsum(dO_i ⊙ O_i) = rowsum(P_i ⊙ dP_i)
  std::vector<T> delta(B * Hq * Sq);
  for (std::size_t row = 0; row < delta.size(); ++row) {
    T s = 0;
    for (std::size_t t = 0; t < Dv; ++t) s += d_out.data()[row * Dv + t] * saved.output.data()[row * Dv + t];
    delta[row] = s;
  }
  const detail::BackwardInputs<T> in{d_out.data(), saved.lse.data(), delta.data()};

  AttentionGradients<T, 4> g{xt::xtensor<T, 4>::from_shape(q.shape()), xt::xtensor<T, 4>::from_shape(k.shape()),
                             xt::xtensor<T, 4>::from_shape(v.shape())};
  const std::size_t bq = std::min(config.block_q, Sq), bk = std::min(config.block_k, Sk);
  const std::size_t k_blocks = (Sk + config.block_k - 1) / config.block_k;
  std::size_t workspace_bytes = delta.size() * sizeof(T);
  detail::Counters total;
  struct State {
    detail::BackwardWorkspace<T> w;
    detail::Counters counters;
  };
  const auto make_state = [&] { return State{detail::BackwardWorkspace<T>(bq, bk, D, Dv), {}}; };
  const auto finish = [&](State& s) {
    workspace_bytes += s.w.bytes();
    total.computed += s.counters.computed;
    total.skipped += s.counters.skipped;
  };
  // dQ in lanes: lane 0 in g.dq, lane l > 0 in its own buffer; summed in lane order at the end.
  const std::size_t lanes = std::max<std::size_t>(1, std::min(config.lanes, k_blocks));
  std::fill(g.dq.begin(), g.dq.end(), T(0));
  std::vector<T> more_lanes((lanes - 1) * g.dq.size(), T(0));
  workspace_bytes += more_lanes.size() * sizeof(T);
  const std::size_t items = B * Hkv * lanes;
  // Its work: five products per block pair, Sᵀ and dK over D, dPᵀ and dV over Dv, dQ over D.
  const std::size_t threads = worker_count(config.threads, items, p.B * p.Hq * p.Sq * p.Sk * (3 * p.D + 2 * p.Dv));
  run_work_items(
      threads, items, /*calls_blas=*/false, make_state,
      [&](State& s, std::size_t item) {
        const std::size_t lane = item % lanes, bh = item / lanes;
        T* dq_lane = lane == 0 ? g.dq.data() : more_lanes.data() + (lane - 1) * g.dq.size();
        detail::lane_gradients<Steps>(p, in, s.w, bh / Hkv, bh % Hkv, lane, lanes, g.dk.data(), g.dv.data(), dq_lane, s.counters);
      },
      finish);
  // dQ = scale · (lane 0 + lane 1 + …)
  T* dq = g.dq.data();
  for (std::size_t x = 0; x < g.dq.size(); ++x) {
    T sum = dq[x];
    for (std::size_t l = 1; l < lanes; ++l) sum += more_lanes[(l - 1) * g.dq.size() + x];
    dq[x] = p.scale * sum;
  }
  if (stats) {
    stats->workspace_bytes = workspace_bytes;
    stats->output_bytes = (g.dq.size() + g.dk.size() + g.dv.size()) * sizeof(T);
    stats->key_blocks_computed = total.computed;
    stats->key_blocks_skipped = total.skipped;
    stats->threads = items > 0 ? threads : 0;
  }
  return g;
}

}  // namespace vl
