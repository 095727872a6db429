// Lesson linear-rnn: broken backends, one bug each (linear_rnn_broken_backends.hpp).
#include "lessons/linear_rnn/linear_rnn_broken_backends.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "kernels/reference/linear_attention.hpp"

namespace vl::lessons::linear_rnn {

using backends::Matrix;
using State = LinearAttentionState<double>;

namespace {

// A chunk's rows of the output from its φq, φk, v (b rows each) and the state of the chunks
// before it; the correct answer is chunk_output.
using ChunkAnswer = std::function<Matrix(const Matrix& q, const Matrix& k, const Matrix& v, const State& before)>;

// linear_attention_chunked's loop with a chunk's answer given, and the state carried across
// chunks or not:  O[c : c+b] = answer(φQ_c, φK_c, V_c, state), then state += (φK_c, V_c).
Matrix chunk_by_chunk(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk, const ChunkAnswer& answer,
                      bool carry_state) {
  if (chunk == 0) throw std::invalid_argument("linear_chunked: chunk size must be >= 1");
  const std::size_t n = pq.shape(0);
  State state(pk.shape(1), v.shape(1));
  Matrix out = xt::zeros<double>({n, v.shape(1)});
  for (std::size_t c = 0; c < n; c += chunk) {
    auto rows = xt::range(c, std::min(c + chunk, n));
    const Matrix q = xt::view(pq, rows, xt::all()), k = xt::view(pk, rows, xt::all()), vv = xt::view(v, rows, xt::all());
    xt::view(out, rows, xt::all()) = answer(q, k, vv, state);
    if (carry_state) state.absorb(k, vv);
  }
  return out;
}

Matrix correct_chunk(const Matrix& q, const Matrix& k, const Matrix& v, const State& before) {
  return chunk_output<double>(q, k, v, before);
}

// How many tokens (0 … h − 1) a part of the recurrent state has absorbed when token t is
// answered; h(t) = t + 1 in the correct form.
using Horizon = std::function<std::size_t(std::size_t t)>;

// linear_attention_recurrent's loop with the numerator's S and the normaliser's z each
// absorbing tokens up to its own horizon before token t is answered:
//   o_t = S φq_t / (z · φq_t),   S = Σ_{j < h_S(t)} v_j φk_jᵀ,  z = Σ_{j < h_z(t)} φk_j
Matrix token_by_token(const Matrix& pq, const Matrix& pk, const Matrix& v, const Horizon& of_numerator,
                      const Horizon& of_normaliser) {
  const std::size_t n = pq.shape(0);
  auto row = [](auto& m, std::size_t j) { return xt::view(m, xt::range(j, j + 1), xt::all()); };  // (1, ·)
  // Two states: the S of the first and the z of the second are read.
  State for_numerator(pk.shape(1), v.shape(1)), for_normaliser(pk.shape(1), v.shape(1));
  std::size_t in_numerator = 0, in_normaliser = 0;
  auto absorb_until = [&](State& state, std::size_t& absorbed, std::size_t horizon) {
    for (; absorbed < std::min(horizon, n); ++absorbed) state.absorb(row(pk, absorbed), row(v, absorbed));
  };
  Matrix out = xt::zeros<double>({n, v.shape(1)});
  for (std::size_t t = 0; t < n; ++t) {
    absorb_until(for_numerator, in_numerator, of_numerator(t));
    absorb_until(for_normaliser, in_normaliser, of_normaliser(t));
    const auto q = row(pq, t);
    row(out, t) = divide_rows<double>(for_numerator.numerators(q), for_normaliser.normalisers(q));
  }
  return out;
}

}  // namespace

Matrix ChunkedStateNotCarried::linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const {
  return chunk_by_chunk(pq, pk, v, chunk, correct_chunk, /*carry_state=*/false);
}

Matrix ChunkedShortLastChunkSkipped::linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const {
  const ChunkAnswer whole_chunks_only = [chunk](const Matrix& q, const Matrix& k, const Matrix& vv, const State& before) -> Matrix {
    if (q.shape(0) < chunk) return xt::zeros<double>({q.shape(0), vv.shape(1)});
    return correct_chunk(q, k, vv, before);
  };
  return chunk_by_chunk(pq, pk, v, chunk, whole_chunks_only, /*carry_state=*/true);
}

Matrix ChunkedOneFutureToken::linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const {
  // Inside a chunk, tril(q kᵀ, 1): token i also sees token i + 1 of its chunk.
  const ChunkAnswer one_ahead = [](const Matrix& q, const Matrix& k, const Matrix& vv, const State& before) -> Matrix {
    const Matrix a = causal_affinities<double>(q, k, 1);
    return divide_rows<double>(matmul<double>(a, vv) + before.numerators(q), xt::eval(xt::sum(a, {1}) + before.normalisers(q)));
  };
  return chunk_by_chunk(pq, pk, v, chunk, one_ahead, /*carry_state=*/true);
}

Matrix ChunkedNormaliserDropped::linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const {
  // O_c = tril(q kᵀ) v + q Sᵀ: a sum over the tokens seen, not a weighted mean.
  const ChunkAnswer unnormalised = [](const Matrix& q, const Matrix& k, const Matrix& vv, const State& before) -> Matrix {
    return matmul<double>(causal_affinities<double>(q, k), vv) + before.numerators(q);
  };
  return chunk_by_chunk(pq, pk, v, chunk, unnormalised, /*carry_state=*/true);
}

Matrix ParallelNormaliserDropped::linear_parallel(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  return matmul<double>(causal_affinities<double>(pq, pk), v);
}

Matrix ParallelOneFutureToken::linear_parallel(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  const Matrix a = causal_affinities<double>(pq, pk, 1);
  return divide_rows<double>(matmul<double>(a, v), xt::sum(a, {1}));
}

Matrix RecurrentReadsAhead::linear_recurrent(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  const Horizon one_ahead = [](std::size_t t) { return t + 2; };
  return token_by_token(pq, pk, v, one_ahead, one_ahead);
}

Matrix RecurrentNormaliserNotUpdated::linear_recurrent(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  const Horizon every_token = [](std::size_t t) { return t + 1; };
  const Horizon first_token_only = [](std::size_t) { return std::size_t(1); };
  return token_by_token(pq, pk, v, every_token, first_token_only);
}

}  // namespace vl::lessons::linear_rnn
