#pragma once
// The fast chunked linear attention's body (see linear_attention_fast.hpp), a template over its
// steps (linear_attention_fast_steps.hpp). linear_attention_fast.cpp instantiates it with
// LinearChunkSteps; include this header only to instantiate it with other steps.
#include <algorithm>
#include <stdexcept>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "kernels/fused/block_gemm.hpp"
#include "kernels/platform/vector_path.hpp"

namespace vl {

template <class Steps, class T>
xt::xtensor<T, 2> linear_attention_chunked_fast_with(const xt::xtensor<T, 2>& pq, const xt::xtensor<T, 2>& pk,
                                                     const xt::xtensor<T, 2>& v, std::size_t chunk) {
  if (chunk == 0) throw std::invalid_argument("linear_attention_chunked_fast: chunk size must be >= 1");
  const std::size_t n = pq.shape(0), dk = pq.shape(1), dv = v.shape(1);
  if (pk.shape(0) != n || pk.shape(1) != dk || v.shape(0) != n)
    throw std::invalid_argument("linear_attention_chunked_fast: PQ (n, d_k), PK (n, d_k) and V (n, d_v) needed");
  xt::xtensor<T, 2> out = xt::xtensor<T, 2>::from_shape({n, dv});
  if (n == 0) return out;
  const std::size_t bmax = std::min(chunk, n);
  const VectorPath path = selected_vector_path();
  // S is kept transposed, Sᵀ (d_k × d_v), and each chunk's PK_c packed transposed (d_k × b), so
  // that every product is block_gemm's C = A·B or C += A·B with B row-major.
  std::vector<T> a(bmax * bmax), kt(dk * bmax), num(bmax * dv), den(bmax), st(dk * dv, T(0)), z(dk, T(0));
  for (std::size_t c = 0; c < n; c += chunk) {
    const std::size_t b = std::min(chunk, n - c);
    const T* q = pq.data() + c * dk;
    const T* k = pk.data() + c * dk;
    const T* vv = v.data() + c * dv;
    // A = tril(q kᵀ)
    for (std::size_t j = 0; j < b; ++j)
      for (std::size_t t = 0; t < dk; ++t) kt[t * b + j] = k[j * dk + t];
    block_gemm(path, false, false, b, b, dk, q, dk, kt.data(), b, a.data(), b);
    for (std::size_t i = 0; i < b; ++i) {
      T* row = a.data() + i * b;
      std::fill(row + std::min(Steps::first_hidden(i), b), row + b, T(0));
      // den_i = Σ_j A_ij + q_i · z   (the same two terms, in the same order, as the reference)
      T sum = 0;
      for (std::size_t j = 0; j < b; ++j) sum += row[j];
      T qz = 0;
      for (std::size_t t = 0; t < dk; ++t) qz += q[i * dk + t] * z[t];
      den[i] = sum + qz;
    }
    // num = A v ; num += q Sᵀ
    block_gemm(path, false, false, b, dv, b, a.data(), b, vv, dv, num.data(), dv);
    block_gemm(path, false, true, b, dv, dk, q, dk, st.data(), dv, num.data(), dv);
    T* o = out.data() + c * dv;
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t j = 0; j < dv; ++j) o[i * dv + j] = num[i * dv + j] / den[i];
    Steps::carry(path, st.data(), z.data(), vv, k, b, dv, dk);
  }
  return out;
}

}  // namespace vl
