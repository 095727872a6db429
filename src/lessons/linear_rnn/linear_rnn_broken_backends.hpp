#pragma once
// Lesson linear-rnn: the broken backends its claims about the computation must reject. Each is
// one plausible bug in one linear_* operation, built from our kernels' own pieces
// (kernels/reference/linear_attention.hpp), in float64 and float32 alike (the bug is written once,
// as a template over the precision; both of the operation's overrides call it); every other
// operation is the base backend's.
#include "backends/backend.hpp"

/// The two overrides of one linear_* operation, each calling the class's `broken<T>`.
#define VL_LINEAR_BREAK(OP, ...)                                                                                          \
 public:                                                                                                                  \
  using Decorator::Decorator;                                                                                             \
  backends::Matrix OP(const backends::Matrix& pq, const backends::Matrix& pk, const backends::Matrix& v __VA_ARGS__)      \
      const override;                                                                                                     \
  ops::MatrixOf<float> OP(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk,                                  \
                          const ops::MatrixOf<float>& v __VA_ARGS__) const override;                                        \
                                                                                                                          \
 private:                                                                                                                 \
  template <class T>                                                                                                      \
  ops::MatrixOf<T> broken(const ops::MatrixOf<T>& pq, const ops::MatrixOf<T>& pk, const ops::MatrixOf<T>& v __VA_ARGS__) const;

namespace vl::lessons::linear_rnn {

/// linear_chunked with a fresh state in every chunk: each chunk forgets the chunks before it.
class ChunkedStateNotCarried : public backends::Decorator {
  VL_LINEAR_BREAK(linear_chunked, , std::size_t chunk)
};

/// linear_chunked that only runs whole chunks: the short last chunk's rows are left at zero.
class ChunkedShortLastChunkSkipped : public backends::Decorator {
  VL_LINEAR_BREAK(linear_chunked, , std::size_t chunk)
};

/// linear_chunked whose table inside a chunk lets one future token through: tril(φQ_c φK_cᵀ, 1).
class ChunkedOneFutureToken : public backends::Decorator {
  VL_LINEAR_BREAK(linear_chunked, , std::size_t chunk)
};

/// linear_chunked without the division by the normalisers: a sum, not a weighted mean.
class ChunkedNormaliserDropped : public backends::Decorator {
  VL_LINEAR_BREAK(linear_chunked, , std::size_t chunk)
};

/// linear_parallel without the division by the row sums: O = A V, a sum, not a weighted mean.
class ParallelNormaliserDropped : public backends::Decorator {
  VL_LINEAR_BREAK(linear_parallel)
};

/// linear_parallel whose mask lets one future token through: A = tril(φQ φKᵀ, 1).
class ParallelOneFutureToken : public backends::Decorator {
  VL_LINEAR_BREAK(linear_parallel)
};

/// linear_recurrent that absorbs token t + 1 before it answers token t.
class RecurrentReadsAhead : public backends::Decorator {
  VL_LINEAR_BREAK(linear_recurrent)
};

/// linear_recurrent whose normaliser z is not updated after the first token, while S is:
/// o_t = S_t φq_t / (φk_0 · φq_t), weights that sum to more than 1.
class RecurrentNormaliserNotUpdated : public backends::Decorator {
  VL_LINEAR_BREAK(linear_recurrent)
};

}  // namespace vl::lessons::linear_rnn

#undef VL_LINEAR_BREAK
