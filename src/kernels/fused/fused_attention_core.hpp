#pragma once
// The fused kernel's body (see fused_attention.hpp), a template over its steps
// (fused_attention_steps.hpp). fused_attention.cpp instantiates it with FusedSteps; include
// this header only to instantiate it with other steps.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "kernels/reference/attention.hpp"
#include "kernels/fused/blas_gemm.hpp"
#include "kernels/fused/block_gemm.hpp"
#include "kernels/fused/fused_attention.hpp"
#include "kernels/reference/gqa.hpp"
#include "kernels/fused/online_softmax_block.hpp"
#include "kernels/fused/softmax_rows.hpp"
#include "kernels/fused/work_items.hpp"

namespace vl {

namespace detail {

// A mask broadcast NumPy-style to (B, Hq, Sq, Sk) without copying it: element strides, 0 on a
// broadcast dimension.
using Shape4 = std::array<std::size_t, 4>;

template <class M>
struct BroadcastView {
  const M* data = nullptr;
  std::array<std::size_t, 4> stride{};
  const M* row(std::size_t b, std::size_t h, std::size_t i) const { return data + b * stride[0] + h * stride[1] + i * stride[2]; }
  M at(const M* row, std::size_t j) const { return row[j * stride[3]]; }
};

template <class M>
BroadcastView<M> broadcast_view(const xt::xarray<M>& mask, const Shape4& target, const char* what) {
  const auto& s = mask.shape();
  check_mask_broadcasts(std::vector<std::size_t>(s.begin(), s.end()), target, what);
  BroadcastView<M> view;
  view.data = mask.data();
  // Row-major strides of the mask, aligned to the trailing dimensions.
  std::size_t stride = 1;
  for (std::size_t i = s.size(); i-- > 0;) {
    view.stride[4 - s.size() + i] = s[i] == 1 ? 0 : stride;
    stride *= s[i];
  }
  return view;
}

template <class T>
struct Problem {
  std::size_t B, Hq, Sq, D, Hkv, Sk, Dv;
  T scale, softcap;
  bool causal;
  bool bottom_right;                    // query i sits at position i + L_b − Sq (else i)
  std::optional<std::ptrdiff_t> first_query;  // if set: query i sits at first_query + i
  std::ptrdiff_t left, right;           // window: p − left ≤ j ≤ p + right (< 0: unbounded)
  const std::vector<std::size_t>* kv_lengths;  // L_b (keys j ≥ L_b hidden); null: L_b = Sk
  const T* q;
  const T* k;
  const T* v;
  T* out;
  T* lse;  // (B, Hq, Sq): each row's log-sum-exp of its scores, for the backward; null: not saved
  std::optional<BroadcastView<bool>> allowed;
  std::optional<BroadcastView<T>> bias;
  FusedConfig config;
  VectorPath path;  // block_gemm's
};

// The row stride of a block with bq columns (queries): bq rounded up to 16 values, plus 16. A
// stride of a power of two (bq = 128: 512 bytes) would put a column's values in a few cache sets.
inline std::size_t padded_ld(std::size_t bq) { return (bq + 15) / 16 * 16 + 16; }

// One thread's buffers: the score block Sᵀ (block_k × block_q, key-major), the accumulator
// (block_q × Dv), per query m, l and the block's sum and alpha, and Q_blkᵀ packed for block_gemm
// (D × block_q; none for the BLAS products).
// Sᵀ and Q_blkᵀ have rows of `ld` = padded_ld(block_q) values.
template <class T>
struct Workspace {
  std::size_t ld;
  std::vector<T> st, acc, m, l, sum, alpha, qt;
  Workspace(std::size_t bq, std::size_t bk, std::size_t dv, std::size_t d, bool pack_q)
      : ld(padded_ld(bq)), st(bk * ld), acc(bq * dv), m(bq), l(bq), sum(bq), alpha(bq), qt(pack_q ? d * ld : 0) {}
  std::size_t bytes() const {
    std::size_t n = 0;
    for (const auto* b : {&st, &acc, &m, &l, &sum, &alpha, &qt}) n += b->capacity();
    return n * sizeof(T);
  }
};

struct Counters {
  std::size_t computed = 0, skipped = 0;
};

// The block's scores after `scale`, before the softmax: the soft cap, the additive bias, the
// boolean mask, the causal frontier and the window / key length, each as −∞ or an added term,
// in the order vl::attention applies them. st as in query_block (cols × rows, key-major).
template <class T>
void mask_block(const Problem<T>& p, T* st, std::size_t ld, std::size_t b, std::size_t h, std::size_t i0, std::size_t rows, std::size_t j0,
                std::size_t cols, std::ptrdiff_t offset, std::ptrdiff_t L, bool causal_partial, bool banded) {
  constexpr T neg_inf = -std::numeric_limits<T>::infinity();
  if (p.softcap > 0)
    for (std::size_t j = 0; j < cols; ++j)
      for (std::size_t r = 0; r < rows; ++r) st[j * ld + r] = p.softcap * std::tanh(st[j * ld + r] / p.softcap);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t i = i0 + r;
    if (p.bias) {
      const T* brow = p.bias->row(b, h, i);
      for (std::size_t j = 0; j < cols; ++j) st[j * ld + r] += p.bias->at(brow, j0 + j);
    }
    if (p.allowed) {
      const bool* arow = p.allowed->row(b, h, i);
      for (std::size_t j = 0; j < cols; ++j)
        if (!p.allowed->at(arow, j0 + j)) st[j * ld + r] = neg_inf;
    }
    if (banded) {
      // visible: lo ≤ j ≤ hi with lo = p − left, hi = min(p + right, L − 1), p = i + offset
      const std::ptrdiff_t pos = std::ptrdiff_t(i) + offset;
      const std::ptrdiff_t lo = p.left >= 0 ? pos - p.left : std::numeric_limits<std::ptrdiff_t>::min() / 2;
      const std::ptrdiff_t hi = std::min(p.right >= 0 ? pos + p.right : std::numeric_limits<std::ptrdiff_t>::max() / 2, L - 1);
      for (std::size_t j = 0; j < cols; ++j) {
        const std::ptrdiff_t key = std::ptrdiff_t(j0 + j);
        if (key < lo || key > hi) st[j * ld + r] = neg_inf;
      }
    }
  }
  if (causal_partial) {
    // key j0 + j is hidden from query i when j0 + j > i + offset: for key j, queries
    // r < j0 + j − offset − i0 (a prefix of st's row j)
    for (std::size_t j = 0; j < cols; ++j) {
      const std::ptrdiff_t hidden = std::ptrdiff_t(j0 + j) - offset - std::ptrdiff_t(i0);
      std::fill(st + j * ld, st + j * ld + std::size_t(std::clamp<std::ptrdiff_t>(hidden, 0, std::ptrdiff_t(rows))), neg_inf);
    }
  }
}

// Batch b's queries and keys: query i sits at position i + offset; L valid keys (j < L); banded:
// keys outside [lo_i, hi_i] other than the causal frontier are hidden (a window or a key length).
struct Placement {
  std::ptrdiff_t L, offset;
  bool banded;
};
template <class T>
Placement placement(const Problem<T>& p, std::size_t b) {
  const std::ptrdiff_t L = p.kv_lengths ? std::ptrdiff_t((*p.kv_lengths)[b]) : std::ptrdiff_t(p.Sk);
  const std::ptrdiff_t offset = p.first_query ? *p.first_query : p.bottom_right ? L - std::ptrdiff_t(p.Sq) : 0;
  return {L, offset, p.left >= 0 || p.right >= 0 || L < std::ptrdiff_t(p.Sk)};
}

// scale·Q_blkᵀ (D × rows, leading dimension ld) from Q_blk's rows q (rows × D): packed once per
// query block, so that block_gemm's vectors run over the queries. The backward packs with this
// too, and so recomputes the forward's scores bit for bit.
template <class T>
void pack_scaled_queries(const Problem<T>& p, const T* q, std::size_t rows, T* qt, std::size_t ld) {
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t t = 0; t < p.D; ++t) qt[t * ld + r] = p.scale * q[r * p.D + t];
}

// The masks of the block of queries [i0, i0 + rows) against keys [j0, j0 + cols) (mask_block),
// where any applies: the causal frontier cuts the block when its last key lies beyond the
// first row's position (query i0 sees keys ≤ i0 + offset).
template <class T>
void mask_scores(const Problem<T>& p, T* st, std::size_t ld, std::size_t b, std::size_t h, std::size_t i0, std::size_t rows, std::size_t j0,
                 std::size_t cols, const Placement& place) {
  const bool causal_partial = p.causal && std::ptrdiff_t(j0 + cols) - 1 > std::ptrdiff_t(i0) + place.offset;
  if (p.softcap > 0 || p.bias || p.allowed || causal_partial || place.banded)
    mask_block(p, st, ld, b, h, i0, rows, j0, cols, place.offset, place.L, causal_partial, place.banded);
}

// One work item: batch b, query head h, query rows [i0, i1).
template <class Steps, class T>
void query_block(const Problem<T>& p, Workspace<T>& w, std::size_t b, std::size_t h, std::size_t i0, std::size_t i1,
                 Counters& counters) {
  constexpr T neg_inf = -std::numeric_limits<T>::infinity();
  const FusedConfig& c = p.config;
  const std::size_t rows = i1 - i0, hkv = kv_head_of(h, p.Hq, p.Hkv), D = p.D, Dv = p.Dv, Sk = p.Sk;
  const T* q = p.q + ((b * p.Hq + h) * p.Sq + i0) * D;
  const T* k = p.k + (b * p.Hkv + hkv) * Sk * D;
  const T* v = p.v + (b * p.Hkv + hkv) * Sk * Dv;
  T* acc = w.acc.data();
  std::fill(acc, acc + rows * Dv, T(0));
  std::fill(w.m.begin(), w.m.begin() + rows, neg_inf);
  std::fill(w.l.begin(), w.l.begin() + rows, T(0));

  const std::size_t ld = w.ld;  // of Sᵀ and Q_blkᵀ
  if (!c.blas_products) pack_scaled_queries(p, q, rows, w.qt.data(), ld);  // once for all key blocks

  const std::size_t bk = c.block_k;
  const std::size_t n_blocks = Steps::key_blocks(Sk, bk);
  const Placement place = placement(p, b);
  // The last key any row of this block may see (causal): (i1 − 1) + offset.
  const std::ptrdiff_t last_visible = std::ptrdiff_t(i1) - 1 + place.offset;
  for (std::size_t kb = 0; kb < n_blocks; ++kb) {
    const std::size_t j0 = kb * bk, j1 = std::min(j0 + bk, Sk), cols = j1 - j0;
    if (p.causal && Steps::causal_block_hidden(std::ptrdiff_t(j0), last_visible, bk)) {  // and every later one
      counters.skipped += n_blocks - kb;
      break;
    }
    ++counters.computed;
    // Sᵀ_blk = K_blk (scale·Q_blk)ᵀ (cols × rows, leading dimension ld): st[j][r] is query
    // i0 + r's scaled score against key j0 + j (BLAS: the scale is its product's alpha; ours: in
    // the packed Q_blkᵀ). The masks act on the scaled scores.
    T* st = w.st.data();
    if (c.blas_products) blas::gemm(false, true, cols, rows, D, p.scale, k + j0 * D, D, q, D, T(0), st, ld);
    else block_gemm(p.path, false, false, cols, rows, D, k + j0 * D, D, w.qt.data(), ld, st, ld);
    mask_scores(p, st, ld, b, h, i0, rows, j0, cols, place);
    // The online softmax over this block: m, the block's sums and alpha for every query; then
    // each row's l and accumulator are rescaled (Steps::rescale).
    online_softmax_block(p.path, st, cols, rows, ld, w.m.data(), w.sum.data(), w.alpha.data());
    for (std::size_t r = 0; r < rows; ++r) Steps::rescale(w.l[r], acc + r * Dv, Dv, w.alpha[r], w.sum[r]);
    // acc += P_blk V_blk   (rows × Dv; P_blk = (Sᵀ_blk)ᵀ)
    if (c.blas_products) blas::gemm(true, false, rows, Dv, cols, T(1), st, ld, v + j0 * Dv, Dv, T(1), acc, Dv);
    else block_gemm(p.path, true, true, rows, Dv, cols, st, ld, v + j0 * Dv, Dv, acc, Dv);
  }
  T* out = p.out + ((b * p.Hq + h) * p.Sq + i0) * Dv;
  if (p.lse)
    for (std::size_t r = 0; r < rows; ++r) p.lse[(b * p.Hq + h) * p.Sq + i0 + r] = Steps::row_lse(w.m[r], w.l[r]);
  for (std::size_t r = 0; r < rows; ++r) {
    const T l = w.l[r];
    if (l > T(0)) {
      const T inv = T(1) / l;
      for (std::size_t j = 0; j < Dv; ++j) out[r * Dv + j] = acc[r * Dv + j] * inv;
    } else if (std::isnan(l)) {  // NaN or overflowing scores (inf − inf): NaN, as vl::attention, never a silent zero
      std::fill(out + r * Dv, out + (r + 1) * Dv, std::numeric_limits<T>::quiet_NaN());
    } else {  // no visible key: zeros, as vl::attention
      std::fill(out + r * Dv, out + (r + 1) * Dv, T(0));
    }
  }
}

// The problem's shapes, options and masks, checked as vl::attention checks them; the buffers
// are left for the caller to set.
template <class T>
Problem<T> make_problem(const std::array<std::size_t, 4>& qs, const std::array<std::size_t, 4>& ks, const std::array<std::size_t, 4>& vs,
                        const AttentionOptions<T>& options, const FusedConfig& config) {
  const std::size_t B = qs[0], Hq = qs[1], Sq = qs[2], D = qs[3];
  const std::size_t Hkv = ks[1], Sk = ks[2], Dv = vs[3];
  check_attention_inputs(qs, ks, vs, options.kv_lengths);  // the rules vl::attention checks (kernels/reference/attention.hpp)
  if (config.block_q == 0 || config.block_k == 0) throw std::invalid_argument("fused_attention: block sizes must be >= 1");

  Problem<T> p{};
  p.B = B, p.Hq = Hq, p.Sq = Sq, p.D = D, p.Hkv = Hkv, p.Sk = Sk, p.Dv = Dv;
  p.scale = options.scale.value_or(T(1) / std::sqrt(static_cast<T>(D)));
  p.softcap = options.softcap;
  p.causal = options.causal;
  p.bottom_right = options.alignment == CausalAlignment::bottom_right;
  p.left = options.left_window, p.right = options.right_window;
  p.first_query = options.first_query;
  p.kv_lengths = options.kv_lengths ? &*options.kv_lengths : nullptr;
  p.config = config;
  p.path = config.path.value_or(selected_vector_path());
  if (!cpu_runs(p.path)) throw std::invalid_argument(fmt::format("fused_attention: this CPU cannot run the {} path", vector_path_name(p.path)));
  const Shape4 target{B, Hq, Sq, Sk};
  if (options.allowed) p.allowed = broadcast_view(*options.allowed, target, "boolean");
  if (options.bias) p.bias = broadcast_view(*options.bias, target, "additive");
  return p;
}

// The kernel on contiguous row-major buffers (no copy of the inputs): q (B, Hq, Sq, D),
// k (B, Hkv, Sk, D), v (B, Hkv, Sk, Dv) → out (B, Hq, Sq, Dv), already allocated; and, where
// lse is not null, each row's log-sum-exp into lse (B, Hq, Sq).
template <class Steps, class T>
void fused_core(const std::array<std::size_t, 4>& qs, const std::array<std::size_t, 4>& ks, const std::array<std::size_t, 4>& vs,
                const T* qd, const T* kd, const T* vd, T* outd, T* lse, const AttentionOptions<T>& options, const FusedConfig& config,
                FusedStats* stats) {
  if (options.return_weights) throw std::invalid_argument("fused_attention: the weights are never formed (use vl::attention)");
  if (options.return_scores)
    throw std::invalid_argument("fused_attention: the score intermediates are never formed (use vl::attention)");
  if (options.round) throw std::invalid_argument("fused_attention: no storage rounding (use vl::attention)");
  Problem<T> p = make_problem<T>(qs, ks, vs, options, config);
  p.q = qd, p.k = kd, p.v = vd, p.out = outd, p.lse = lse;
  const std::size_t B = p.B, Hq = p.Hq, Sq = p.Sq, D = p.D, Sk = p.Sk, Dv = p.Dv;

  const std::size_t q_blocks = (Sq + config.block_q - 1) / config.block_q;
  const std::size_t items = B * Hq * q_blocks;
  // Its work: Q Kᵀ and P V, B·Hq·Sq·Sk·(D + Dv) multiply-adds (all of it, causal or not).
  const std::size_t threads = worker_count(config.threads, items, B * Hq * Sq * Sk * (D + Dv));
  const std::size_t bq = std::min(config.block_q, Sq), bk = std::min(config.block_k, Sk);

  std::size_t workspace_bytes = 0;
  Counters total;
  struct State {
    Workspace<T> w;
    Counters counters;
  };
  run_work_items(
      threads, items, config.blas_products, [&] { return State{Workspace<T>(bq, bk, Dv, D, !config.blas_products), {}}; },
      [&](State& s, std::size_t item) {
        // Causal: the last query blocks see the most keys; taken first, so that no thread is left
        // with a long one while the others have finished (each item's result does not depend on
        // which thread computes it, or when).
        const std::size_t qb = p.causal ? q_blocks - 1 - item % q_blocks : item % q_blocks, bh = item / q_blocks;
        const std::size_t i0 = qb * config.block_q, i1 = std::min(i0 + config.block_q, Sq);
        detail::query_block<Steps>(p, s.w, bh / Hq, bh % Hq, i0, i1, s.counters);
      },
      [&](State& s) {
        workspace_bytes += s.w.bytes();
        total.computed += s.counters.computed;
        total.skipped += s.counters.skipped;
      });
  if (stats) {
    stats->workspace_bytes = workspace_bytes;
    stats->output_bytes = B * Hq * Sq * Dv * sizeof(T);
    stats->key_blocks_computed = total.computed;
    stats->key_blocks_skipped = total.skipped;
    stats->threads = items > 0 ? threads : 0;
  }
}


}  // namespace detail

/// fused_attention (4-D) with the given steps.
template <class Steps, class T>
xt::xtensor<T, 4> fused_attention_with(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                       const AttentionOptions<T>& options, const FusedConfig& config, FusedStats* stats = nullptr) {
  xt::xtensor<T, 4> out = xt::xtensor<T, 4>::from_shape({q.shape(0), q.shape(1), q.shape(2), v.shape(3)});
  detail::fused_core<Steps, T>(q.shape(), k.shape(), v.shape(), q.data(), k.data(), v.data(), out.data(), nullptr, options, config, stats);
  return out;
}

}  // namespace vl
