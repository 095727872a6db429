#pragma once
// The family of linear recurrences, chunked form (kernels/reference/linear_family.hpp's
// family_chunked: the same equations), on raw buffers with our block products (block_gemm.hpp)
// and the chunks' state-free work spread over threads. Per key/value head and chunk of m ≤ c
// tokens [a, a + m), with the head's cumulative log-decay G_t = Σ_{a≤r≤t} g_r (0 for the
// ungated rules), D_ts = exp(G_t − G_s) for s ≤ t and the scale s:
//
//   pass 1, every chunk at once (nothing depends on the state):
//     A_j = s · tril(Q_j Kᵀ ⊙ D)                                (m × m, for each query head j)
//     T   = (I + tril(diag β (K Kᵀ ⊙ D), −1))⁻¹ diag β          (m × m: the UT transform, delta rules)
//     W   = T (K ⊙ e^G),   U₀ = T V     (delta rules; else U₀ = V)   (m × d_k), (m × d_v)
//   pass 2, chunk after chunk, each key/value head at once (the state S, d_k × d_v):
//     S_c = S,   U = U₀ − W S
//     S  ← e^{G_last} S + K̃ᵀ U,   K̃ = K ⊙ e^{G_last − G}
//   pass 3, every chunk at once:
//     O_j = (s · Q_j ⊙ e^G) S_c + A_j U                          (m × d_v)
//
// Only the two products of pass 2 wait for the chunk before; the other six (and the UT
// substitution) run on every thread. (The reference tallies the same eight products per chunk and
// the substitution: bench/linear_family_bench.cpp rates this kernel by the reference's count.) Every sum has a fixed order (block_gemm's chains; the
// substitution's rows in order), so any number of threads gives the same bits. Chunks are taken
// a window of 8 at a time and pipelined (one step: pass 1 of a window, pass 2 of the one before,
// pass 3 of the one before that), so A, W, U and S_c are kept for three windows only, 24 chunks
// per key/value head, beside G_t and e^{G_t} (n each). The decay must be one number per head and
// token (g of shape (B, Hkv, n, 1)) and at most 0, so that every exponent is ≤ 0, the range the
// vector exp is checked on; a per-key-dimension decay or a g above 0 is refused (the reference
// computes them).
//
// Shapes as ONNX LinearAttention's (kernels/reference/linear_family_heads.hpp): q (B, Hq, n, d_k),
// k (B, Hkv, n, d_k), v (B, Hkv, n, d_v), g (B, Hkv, n, 1), beta (B, Hkv, n), past (B, Hkv, d_k, d_v)
// → o (B, Hq, n, d_v), state (B, Hkv, d_k, d_v).
#include <cstddef>
#include <optional>
#include <string>

#include "ops/linear_family.hpp"

namespace vl {

/// Why the fast kernel does not take this call, or nothing when it does: a form other than
/// chunked, a decay per key dimension, a log-decay above 0 or NaN (shapes are check_family_inputs').
/// The kernel refuses with it; a caller routes on it (the fused backend: the reference's otherwise).
template <class T>
std::optional<std::string> linear_family_fast_declines(const FamilyInputs<T>& in, const FamilyOptions& o);

/// See the file comment. `threads` 0: the machine's, no more than the work warrants
/// (work_items.hpp). Throws std::invalid_argument on a form other than chunked, a per-key-dimension
/// decay, a log-decay above 0 or NaN, and what the reference refuses (shapes, chunk 0).
template <class T>
FamilyResult<T> linear_family_chunked_fast(const FamilyInputs<T>& in, const FamilyOptions& o, std::size_t threads = 0);

}  // namespace vl
