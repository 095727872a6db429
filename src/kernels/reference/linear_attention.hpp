#pragma once
// Causal linear attention three ways (Katharopoulos et al. 2020, §3.2–3.4; seed notebook 000).
//
// Inputs are already feature-mapped: PQ = φ(Q), PK = φ(K) of shape (n, d_k), V of shape (n, d_v).
// The output row t is a weighted mean of the values v_0..v_t with weights φ(q_t)·φ(k_j):
//
//   o_t = Σ_{j≤t} (φq_t·φk_j) v_j  /  Σ_{j≤t} φq_t·φk_j
//
// parallel:  the n×n table A = tril(PQ PKᵀ), O = (A V) ⊘ rowsum(A)          O(n²·d) work
// recurrent: a state S (d_v×d_k) and normaliser z (d_k), one rank-1 update per token  O(n·d²)
// chunked:   the parallel form inside chunks of B tokens, the state between chunks  O(n·B·d + n·d²)
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/matmul.hpp"

namespace vl {

/// tril(PQ PKᵀ, diagonal): affinities of query i with key j, kept where j ≤ i + diagonal, else 0.
/// PQ: (m, d_k), PK: (s, d_k) → (m, s).  diagonal = 0 is the causal table (a token sees itself
/// and its past); the chunked form uses it inside a chunk.
template <class T, class EQ, class EK>
xt::xtensor<T, 2> causal_affinities(const EQ& pq, const EK& pk, std::ptrdiff_t diagonal = 0) {
  xt::xtensor<T, 2> a = matmul<T>(pq, xt::transpose(pk));
  for (std::size_t i = 0; i < a.shape(0); ++i)
    for (std::size_t j = 0; j < a.shape(1); ++j)
      if (std::ptrdiff_t(j) > std::ptrdiff_t(i) + diagonal) a(i, j) = T(0);
  return a;
}

/// O[i, :] = num[i, :] / den[i].   num: (m, d_v), den: (m) → (m, d_v)
template <class T>
xt::xtensor<T, 2> divide_rows(const xt::xtensor<T, 2>& num, const xt::xtensor<T, 1>& den) {
  return num / xt::view(den, xt::all(), xt::newaxis());
}

/// Parallel (attention-like) form: O = (A V) ⊘ rowsum(A), A = tril(PQ PKᵀ).  → (n, d_v)
template <class T>
xt::xtensor<T, 2> linear_attention_parallel(const xt::xtensor<T, 2>& pq, const xt::xtensor<T, 2>& pk,
                                            const xt::xtensor<T, 2>& v) {
  const xt::xtensor<T, 2> a = causal_affinities<T>(pq, pk);
  return divide_rows<T>(matmul<T>(a, v), xt::sum(a, {1}));
}

/// The recurrent state: S = Σ_j v_j φk_jᵀ (d_v×d_k) and z = Σ_j φk_j (d_k), over the tokens
/// absorbed so far. Its size is d_v·d_k + d_k whatever the number of tokens.
template <class T>
class LinearAttentionState {
 public:
  LinearAttentionState(std::size_t d_k, std::size_t d_v) : s_(xt::zeros<T>({d_v, d_k})), z_(xt::zeros<T>({d_k})) {}

  /// Absorb a block of b tokens: S += Vᵀ PK, z += Σ_rows PK.   PK: (b, d_k), V: (b, d_v).
  /// With b = 1 this is the rank-1 update S += v φkᵀ of the recurrent form.
  template <class EK, class EV>
  void absorb(const EK& pk, const EV& v) {
    ++state_updates();
    s_ += matmul<T>(xt::transpose(v), pk);
    z_ += xt::sum(pk, {0});
  }

  /// Read the state with a block of queries: numerators PQ Sᵀ (b, d_v) and normalisers PQ z (b).
  template <class EQ>
  xt::xtensor<T, 2> numerators(const EQ& pq) const { return matmul<T>(pq, xt::transpose(s_)); }
  template <class EQ>
  xt::xtensor<T, 1> normalisers(const EQ& pq) const { return matvec<T>(pq, z_); }

  const xt::xtensor<T, 2>& S() const { return s_; }
  const xt::xtensor<T, 1>& z() const { return z_; }
  std::size_t size() const { return s_.size() + z_.size(); }

 private:
  xt::xtensor<T, 2> s_;
  xt::xtensor<T, 1> z_;
};

/// Recurrent (RNN) form: for t = 0..n−1, absorb token t, then o_t = S φq_t / (z·φq_t).  → (n, d_v)
template <class T>
xt::xtensor<T, 2> linear_attention_recurrent(const xt::xtensor<T, 2>& pq, const xt::xtensor<T, 2>& pk,
                                             const xt::xtensor<T, 2>& v) {
  const std::size_t n = pq.shape(0);
  LinearAttentionState<T> state(pk.shape(1), v.shape(1));
  xt::xtensor<T, 2> out = xt::zeros<T>({n, v.shape(1)});
  for (std::size_t t = 0; t < n; ++t) {
    auto rows = xt::range(t, t + 1);
    state.absorb(xt::view(pk, rows, xt::all()), xt::view(v, rows, xt::all()));
    const auto q = xt::view(pq, rows, xt::all());
    xt::view(out, rows, xt::all()) = divide_rows<T>(state.numerators(q), state.normalisers(q));
  }
  return out;
}

/// One chunk of the chunked form, rows [c, c+b): the b×b causal table inside the chunk plus the
/// state of the chunks before it:  O_c = (tril(q kᵀ) v + q Sᵀ) ⊘ (rowsum(tril(q kᵀ)) + q z).
template <class T, class EQ, class EK, class EV>
xt::xtensor<T, 2> chunk_output(const EQ& q, const EK& k, const EV& v, const LinearAttentionState<T>& before) {
  const xt::xtensor<T, 2> a = causal_affinities<T>(q, k);
  return divide_rows<T>(matmul<T>(a, v) + before.numerators(q),
                        xt::eval(xt::sum(a, {1}) + before.normalisers(q)));
}

/// Chunked form with chunk size B ≥ 1: parallel inside each chunk, recurrent between chunks;
/// the last chunk is shorter when B does not divide n.  → (n, d_v)
template <class T>
xt::xtensor<T, 2> linear_attention_chunked(const xt::xtensor<T, 2>& pq, const xt::xtensor<T, 2>& pk,
                                           const xt::xtensor<T, 2>& v, std::size_t chunk) {
  if (chunk == 0) throw std::invalid_argument("linear_attention_chunked: chunk size must be >= 1");
  const std::size_t n = pq.shape(0);
  LinearAttentionState<T> state(pk.shape(1), v.shape(1));
  xt::xtensor<T, 2> out = xt::zeros<T>({n, v.shape(1)});
  for (std::size_t c = 0; c < n; c += chunk) {
    auto rows = xt::range(c, std::min(c + chunk, n));
    const auto q = xt::view(pq, rows, xt::all());
    const auto k = xt::view(pk, rows, xt::all());
    const auto vv = xt::view(v, rows, xt::all());
    xt::view(out, rows, xt::all()) = chunk_output<T>(q, k, vv, state);
    state.absorb(k, vv);
  }
  return out;
}

// Instantiated once, for float and double, in linear_attention.cpp: a file that calls them compiles none of
// their bodies.
extern template xt::xtensor<float, 2> linear_attention_parallel<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&);
extern template xt::xtensor<float, 2> linear_attention_recurrent<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&);
extern template xt::xtensor<float, 2> linear_attention_chunked<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, std::size_t);
extern template xt::xtensor<double, 2> linear_attention_parallel<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&);
extern template xt::xtensor<double, 2> linear_attention_recurrent<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&);
extern template xt::xtensor<double, 2> linear_attention_chunked<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, std::size_t);

}  // namespace vl
