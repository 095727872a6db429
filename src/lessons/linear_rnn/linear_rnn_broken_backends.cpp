// Lesson linear-rnn: broken backends, one bug each (linear_rnn_broken_backends.hpp).
#include "lessons/linear_rnn/linear_rnn_broken_backends.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "kernels/reference/linear_attention.hpp"

namespace vl::lessons::linear_rnn {

namespace {

template <class T>
using M = ops::MatrixOf<T>;
template <class T>
using State = LinearAttentionState<T>;

// A chunk's rows of the output from its φq, φk, v (b rows each) and the state of the chunks
// before it; the correct answer is chunk_output.
template <class T>
using ChunkAnswer = std::function<M<T>(const M<T>& q, const M<T>& k, const M<T>& v, const State<T>& before)>;

// linear_attention_chunked's loop with a chunk's answer given, and the state carried across
// chunks or not:  O[c : c+b] = answer(φQ_c, φK_c, V_c, state), then state += (φK_c, V_c).
template <class T>
M<T> chunk_by_chunk(const M<T>& pq, const M<T>& pk, const M<T>& v, std::size_t chunk, const ChunkAnswer<T>& answer, bool carry_state) {
  if (chunk == 0) throw std::invalid_argument("linear_chunked: chunk size must be >= 1");
  const std::size_t n = pq.shape(0);
  State<T> state(pk.shape(1), v.shape(1));
  M<T> out = xt::zeros<T>({n, v.shape(1)});
  for (std::size_t c = 0; c < n; c += chunk) {
    auto rows = xt::range(c, std::min(c + chunk, n));
    const M<T> q = xt::view(pq, rows, xt::all()), k = xt::view(pk, rows, xt::all()), vv = xt::view(v, rows, xt::all());
    xt::view(out, rows, xt::all()) = answer(q, k, vv, state);
    if (carry_state) state.absorb(k, vv);
  }
  return out;
}

template <class T>
M<T> correct_chunk(const M<T>& q, const M<T>& k, const M<T>& v, const State<T>& before) {
  return chunk_output<T>(q, k, v, before);
}

// How many tokens (0 … h − 1) a part of the recurrent state has absorbed when token t is
// answered; h(t) = t + 1 in the correct form.
using Horizon = std::function<std::size_t(std::size_t t)>;

// linear_attention_recurrent's loop with the numerator's S and the normaliser's z each
// absorbing tokens up to its own horizon before token t is answered:
//   o_t = S φq_t / (z · φq_t),   S = Σ_{j < h_S(t)} v_j φk_jᵀ,  z = Σ_{j < h_z(t)} φk_j
template <class T>
M<T> token_by_token(const M<T>& pq, const M<T>& pk, const M<T>& v, const Horizon& of_numerator, const Horizon& of_normaliser) {
  const std::size_t n = pq.shape(0);
  auto row = [](auto& m, std::size_t j) { return xt::view(m, xt::range(j, j + 1), xt::all()); };  // (1, ·)
  // Two states: the S of the first and the z of the second are read.
  State<T> for_numerator(pk.shape(1), v.shape(1)), for_normaliser(pk.shape(1), v.shape(1));
  std::size_t in_numerator = 0, in_normaliser = 0;
  auto absorb_until = [&](State<T>& state, std::size_t& absorbed, std::size_t horizon) {
    for (; absorbed < std::min(horizon, n); ++absorbed) state.absorb(row(pk, absorbed), row(v, absorbed));
  };
  M<T> out = xt::zeros<T>({n, v.shape(1)});
  for (std::size_t t = 0; t < n; ++t) {
    absorb_until(for_numerator, in_numerator, of_numerator(t));
    absorb_until(for_normaliser, in_normaliser, of_normaliser(t));
    const auto q = row(pq, t);
    row(out, t) = divide_rows<T>(for_numerator.numerators(q), for_normaliser.normalisers(q));
  }
  return out;
}

}  // namespace

// Each class's two overrides (linear_rnn_broken_backends.hpp) call its broken<T>.
#define VL_LINEAR_BREAK_FORM(Class, OP)                                                                              \
  backends::Matrix Class::OP(const backends::Matrix& pq, const backends::Matrix& pk, const backends::Matrix& v) const { \
    return broken<double>(pq, pk, v);                                                                                 \
  }                                                                                                                   \
  ops::MatrixOf<float> Class::OP(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk,                     \
                                 const ops::MatrixOf<float>& v) const {                                               \
    return broken<float>(pq, pk, v);                                                                                  \
  }
#define VL_LINEAR_BREAK_CHUNKED(Class)                                                                               \
  backends::Matrix Class::linear_chunked(const backends::Matrix& pq, const backends::Matrix& pk, const backends::Matrix& v, \
                                         std::size_t chunk) const {                                                   \
    return broken<double>(pq, pk, v, chunk);                                                                          \
  }                                                                                                                   \
  ops::MatrixOf<float> Class::linear_chunked(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk,         \
                                             const ops::MatrixOf<float>& v, std::size_t chunk) const {                \
    return broken<float>(pq, pk, v, chunk);                                                                           \
  }

template <class T>
M<T> ChunkedStateNotCarried::broken(const M<T>& pq, const M<T>& pk, const M<T>& v, std::size_t chunk) const {
  return chunk_by_chunk<T>(pq, pk, v, chunk, correct_chunk<T>, /*carry_state=*/false);
}
VL_LINEAR_BREAK_CHUNKED(ChunkedStateNotCarried)

template <class T>
M<T> ChunkedShortLastChunkSkipped::broken(const M<T>& pq, const M<T>& pk, const M<T>& v, std::size_t chunk) const {
  const ChunkAnswer<T> whole_chunks_only = [chunk](const M<T>& q, const M<T>& k, const M<T>& vv, const State<T>& before) -> M<T> {
    if (q.shape(0) < chunk) return xt::zeros<T>({q.shape(0), vv.shape(1)});
    return correct_chunk<T>(q, k, vv, before);
  };
  return chunk_by_chunk<T>(pq, pk, v, chunk, whole_chunks_only, /*carry_state=*/true);
}
VL_LINEAR_BREAK_CHUNKED(ChunkedShortLastChunkSkipped)

template <class T>
M<T> ChunkedOneFutureToken::broken(const M<T>& pq, const M<T>& pk, const M<T>& v, std::size_t chunk) const {
  // Inside a chunk, tril(q kᵀ, 1): token i also sees token i + 1 of its chunk.
  const ChunkAnswer<T> one_ahead = [](const M<T>& q, const M<T>& k, const M<T>& vv, const State<T>& before) -> M<T> {
    const M<T> a = causal_affinities<T>(q, k, 1);
    return divide_rows<T>(matmul<T>(a, vv) + before.numerators(q), xt::eval(xt::sum(a, {1}) + before.normalisers(q)));
  };
  return chunk_by_chunk<T>(pq, pk, v, chunk, one_ahead, /*carry_state=*/true);
}
VL_LINEAR_BREAK_CHUNKED(ChunkedOneFutureToken)

template <class T>
M<T> ChunkedNormaliserDropped::broken(const M<T>& pq, const M<T>& pk, const M<T>& v, std::size_t chunk) const {
  // O_c = tril(q kᵀ) v + q Sᵀ: a sum over the tokens seen, not a weighted mean.
  const ChunkAnswer<T> unnormalised = [](const M<T>& q, const M<T>& k, const M<T>& vv, const State<T>& before) -> M<T> {
    return matmul<T>(causal_affinities<T>(q, k), vv) + before.numerators(q);
  };
  return chunk_by_chunk<T>(pq, pk, v, chunk, unnormalised, /*carry_state=*/true);
}
VL_LINEAR_BREAK_CHUNKED(ChunkedNormaliserDropped)

template <class T>
M<T> ParallelNormaliserDropped::broken(const M<T>& pq, const M<T>& pk, const M<T>& v) const {
  return matmul<T>(causal_affinities<T>(pq, pk), v);
}
VL_LINEAR_BREAK_FORM(ParallelNormaliserDropped, linear_parallel)

template <class T>
M<T> ParallelOneFutureToken::broken(const M<T>& pq, const M<T>& pk, const M<T>& v) const {
  const M<T> a = causal_affinities<T>(pq, pk, 1);
  return divide_rows<T>(matmul<T>(a, v), xt::sum(a, {1}));
}
VL_LINEAR_BREAK_FORM(ParallelOneFutureToken, linear_parallel)

template <class T>
M<T> RecurrentReadsAhead::broken(const M<T>& pq, const M<T>& pk, const M<T>& v) const {
  const Horizon one_ahead = [](std::size_t t) { return t + 2; };
  return token_by_token<T>(pq, pk, v, one_ahead, one_ahead);
}
VL_LINEAR_BREAK_FORM(RecurrentReadsAhead, linear_recurrent)

template <class T>
M<T> RecurrentNormaliserNotUpdated::broken(const M<T>& pq, const M<T>& pk, const M<T>& v) const {
  const Horizon every_token = [](std::size_t t) { return t + 1; };
  const Horizon first_token_only = [](std::size_t) { return std::size_t(1); };
  return token_by_token<T>(pq, pk, v, every_token, first_token_only);
}
VL_LINEAR_BREAK_FORM(RecurrentNormaliserNotUpdated, linear_recurrent)

}  // namespace vl::lessons::linear_rnn
