#pragma once
// The two steps of the fast chunked linear attention (linear_attention_fast.hpp) that make it
// causal and recurrent: which entries of a chunk's affinities a row keeps, and how a chunk is
// carried into the state the next chunks see. The kernel is a template over them
// (linear_attention_fast_core.hpp); LinearChunkSteps is the one it ships with, the only one
// compiled into the library. The lessons instantiate the kernel with their own steps to show
// that their checks catch a kernel that gets one of these wrong.
#include <cstddef>

#include "kernels/fused/block_gemm.hpp"
#include "kernels/platform/vector_path.hpp"

namespace vl {

struct LinearChunkSteps {
  /// Row i of A = PQ_c PK_cᵀ keeps columns j < first_hidden(i) = i + 1: a token sees itself
  /// and the tokens before it.
  static std::size_t first_hidden(std::size_t i) { return i + 1; }

  /// Sᵀ += PK_cᵀ V_c (Sᵀ: d_k × d_v, the state kept transposed),  z += Σ_rows PK_c (z: d_k), for a
  /// chunk of b rows; PK_c (b × d_k) read as the transpose of the product's A.
  template <class T>
  static void carry(VectorPath path, T* st, T* z, const T* v, const T* k, std::size_t b, std::size_t dv, std::size_t dk) {
    block_gemm(path, true, true, dk, dv, b, k, dk, v, dv, st, dv);
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t t = 0; t < dk; ++t) z[t] += k[i * dk + t];
  }
};

}  // namespace vl
