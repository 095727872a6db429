#pragma once
// Fused, blocked scaled dot-product attention: FlashAttention's online softmax on the CPU
// (Dao et al. 2022, Algorithm 1; Milakov & Gimelshein 2018, "Online normalizer calculation").
//
// Same semantics as vl::attention (kernels/reference/attention.hpp) — scale, causal masks in both
// alignments, sliding windows, per-batch key lengths, boolean and additive masks broadcast
// NumPy-style, softcap, grouped-query heads, a fully masked row gives zeros — but the Sq × Sk
// score matrix is never formed. So it has no intermediate to give: a call that asks for the
// weights, for a stage of the scores (return_scores) or for a storage rounding is refused
// (std::invalid_argument): a caller that needs them runs vl::attention instead. For each block
// of queries the kernel walks the keys block by block and keeps, per query row,
//
//   m  the largest score seen so far,
//   l  Σ exp(s_j − m) over the keys seen so far,
//   a  Σ exp(s_j − m) v_j (the unnormalised output),
//
// and when a key block raises the maximum from m to m', rescales l and a by exp(m − m') before
// adding the block's terms; at the end o = a / l. Its workspace is a few blocks per thread,
// whatever n is. The scores are kept key-major, S_blkᵀ = K_blk (scale·Q_blk)ᵀ (block_k × block_q), so
// that the softmax's step (online_softmax_block.hpp) runs its vectors over the queries, every
// lane one query's sequence of operations. The block products, S_blkᵀ and a += P_blk V_blk, run
// our register-blocked block_gemm (kernels/fused/block_gemm.hpp: the same bits on every vector path),
// or BLAS (cblas_sgemm / cblas_dgemm) when FusedConfig::blas_products asks. Key blocks that a
// causal mask hides entirely are skipped. Work items (batch, head, query block) are spread over std::threads; OpenBLAS is kept
// single-threaded, and its idle thread pool shut down, while they run (kernels/platform/blas_threads.hpp).
// Those are OpenBLAS's process-wide settings (restored afterwards): do not run the kernel while
// another thread of the same process is inside an OpenBLAS call. The body is a template over
// the steps that choose the key blocks and rescale the running softmax
// (fused_attention_steps.hpp, fused_attention_core.hpp).
#include <cstddef>
#include <optional>

#include <xtensor/xtensor.hpp>

#include "kernels/reference/attention.hpp"
#include "kernels/platform/vector_path.hpp"

namespace vl {

struct FusedConfig {
  /// Queries and keys per block. 128 queries × 64 keys: S_blkᵀ is 36 KiB in float32 (rows
  /// padded to 144) and the V block 16 KiB (d = 64), so that acc += P V reads its V rows from a
  /// core's L1 rather than its L2; bench/attention_bench's BM_attention_fused_blocks measures the
  /// others (issue 23's note: 128 × 64 is ~6% faster than 128 × 128 in float32 on a Zen 3 core,
  /// within noise in float64).
  std::size_t block_q = 128;  ///< queries per block (columns of S_blkᵀ)
  std::size_t block_k = 64;   ///< keys per block (rows of S_blkᵀ)
  std::size_t threads = 0;    ///< worker threads; 0 = std::thread::hardware_concurrency()
  /// The block products' code: our register-blocked block_gemm on this vector path (unset: the
  /// widest the CPU runs, kernels/platform/vector_path.hpp), or BLAS (blas_products: for comparison).
  std::optional<VectorPath> path{};
  bool blas_products = false;  ///< the forward only: the backward has block_gemm's products alone and refuses it
  /// The backward (fused_attention_backward.hpp): key blocks dealt round-robin to this many lanes,
  /// each a work item with its own dQ sums (a dQ-sized buffer for each lane after the first).
  /// It bounds the backward's threads at B·Hkv·lanes; with the block sizes it fixes the order of
  /// every sum, so that any number of threads gives the same bits.
  std::size_t lanes = 2;
};

/// What one call did; the kernel fills it when given a pointer.
struct FusedStats {
  std::size_t workspace_bytes = 0;  ///< bytes the kernel allocated besides its output (all threads)
  std::size_t output_bytes = 0;     ///< bytes of the output tensor
  std::size_t key_blocks_computed = 0;
  std::size_t key_blocks_skipped = 0;  ///< causal blocks never computed
  std::size_t threads = 0;
};

/// O = softmax(softcap(scale · Q Kᵀ) + M) V, without forming Q Kᵀ.  Shapes as vl::attention:
/// Q (B, Hq, Sq, D), K (B, Hkv, Sk, D), V (B, Hkv, Sk, Dv) → O (B, Hq, Sq, Dv).
/// options.return_weights and return_scores must be unset and options.round null (nothing is
/// formed to return or to round): std::invalid_argument.
/// Throws std::invalid_argument on the shapes and masks vl::attention refuses.
template <class T>
xt::xtensor<T, 4> fused_attention(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                  const AttentionOptions<T>& options = {}, const FusedConfig& config = {},
                                  FusedStats* stats = nullptr);

/// Single head: Q (Sq, D), K (Sk, D), V (Sk, Dv) → O (Sq, Dv).
template <class T>
xt::xtensor<T, 2> fused_attention(const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k, const xt::xtensor<T, 2>& v,
                                  const AttentionOptions<T>& options = {}, const FusedConfig& config = {},
                                  FusedStats* stats = nullptr);

/// The materialising computation of the attention lesson's listing 6, done the fast way but
/// with the same steps: S = scale · Q Kᵀ (one n × n buffer, BLAS), the stable softmax row by
/// row in place, O = S V (BLAS). Returns O and the weights (S after the softmax). No masks.
template <class T>
AttentionResult<T, 2> attention_materialized(const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k, const xt::xtensor<T, 2>& v);

}  // namespace vl
