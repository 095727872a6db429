#pragma once
// The fused kernel's backward: FlashAttention-2's algorithm on the CPU (Dao 2023, Algorithm 2),
// the gradients of O = fused_attention(Q, K, V) for an upstream gradient dO without forming the
// Sq × Sk weights. The forward saves each row's log-sum-exp, lse_i = m_i + ln l_i
// (fused_attention_core.hpp), and the output O; then for each pair of blocks the backward
// recomputes, key-major as the forward keeps its scores (keys × queries),
//
//   Sᵀ  = K_blk (scale·Q_blk)ᵀ, masked as the forward masks it      (bk × bq)
//   Pᵀ  = exp(Sᵀ − lse)                                              (bk × bq)
//   dPᵀ = V_blk dO_blkᵀ                                              (bk × bq)
//   dSᵀ = Pᵀ ⊙ (dPᵀ − Δ),  Δ_i = rowsum(dO_i ⊙ O_i)                  (bk × bq)
//
// and adds the block's terms
//
//   dV_blk += Pᵀ dO_blk         (bk × Dv)
//   dK_blk += scale · dSᵀ Q_blk  (bk × D)
//   dQ_blk += scale · dS K_blk   (bq × D)
//
// (kernels/reference/attention_backward.hpp: the same equations on the materialised P). A hidden
// key has P = 0 and so dS = 0; a causal key block after a query block's last visible key is
// skipped, as in the forward; a row with no visible key (lse = −∞) has P = 0 and gradient 0.
//
// One pass over the key blocks, as FlashAttention-2's: a work item owns key blocks of one
// (batch, key/value head) and writes their dK_blk, dV_blk, summed over the group's query heads
// in order and, for each head, its query blocks in order. dQ_blk gathers terms from every key
// block; FlashAttention-2 adds them atomically, in whatever order the threads arrive. Here the
// key blocks are dealt round-robin to FusedConfig::lanes lanes (2 unless set), each lane one work
// item with a dQ of its own, summed over its key blocks in order; at the end dQ = scale · (lane 0
// + lane 1 + …). So the order of every sum is fixed by the shapes, blocks and lanes, never by
// the threads: 1 and 2 threads give the same bits. Threads: at most B·Hkv·lanes.
// Workspace: a few blocks per thread, and a dQ-sized buffer for each lane after the first
// (FlashAttention-2 keeps one too, its float32 dQ accumulator). The block products are
// block_gemm's (kernels/fused/block_gemm.hpp), five per block pair; the exponentials the
// forward's online softmax step.
//
// Options: those of fused_attention except the soft cap (its tanh is not differentiated, as in
// vl::attention_backward) and a storage rounding: std::invalid_argument. return_weights and
// return_scores ask the forward for what the backward does not return: ignored.
#include <cstddef>

#include <xtensor/xtensor.hpp>

#include "kernels/fused/fused_attention.hpp"
#include "ops/attention_backward.hpp"

namespace vl {

/// What the forward keeps for the backward: O (B, Hq, Sq, Dv) and each row's lse (B, Hq, Sq).
template <class T>
struct FusedSaved {
  xt::xtensor<T, 4> output;
  xt::xtensor<T, 3> lse;
};

/// The fused forward, keeping what its backward needs.
template <class T>
FusedSaved<T> fused_attention_saved(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                    const AttentionOptions<T>& options = {}, const FusedConfig& config = {});

/// dQ, dK, dV from the forward's saved O and lse: the backward alone (what FlashAttention-2 times).
/// Shapes: Q (B, Hq, Sq, D), K (B, Hkv, Sk, D), V (B, Hkv, Sk, Dv), dO (B, Hq, Sq, Dv).
template <class T>
AttentionGradients<T, 4> fused_attention_backward(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                                  const FusedSaved<T>& saved, const xt::xtensor<T, 4>& d_out,
                                                  const AttentionOptions<T>& options = {}, const FusedConfig& config = {},
                                                  FusedStats* stats = nullptr);

/// The forward (fused_attention_saved), then the backward.
template <class T>
AttentionGradients<T, 4> fused_attention_backward(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                                  const xt::xtensor<T, 4>& d_out, const AttentionOptions<T>& options = {},
                                                  const FusedConfig& config = {}, FusedStats* stats = nullptr);

}  // namespace vl
