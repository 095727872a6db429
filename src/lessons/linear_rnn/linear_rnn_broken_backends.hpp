#pragma once
// Lesson linear-rnn: the broken backends its claims about the computation must reject. Each is
// one plausible bug in one linear_* operation, built from our kernels' own pieces
// (kernels/reference/linear_attention.hpp); every other operation is the base backend's.
#include "backends/backend.hpp"

namespace vl::lessons::linear_rnn {

/// linear_chunked with a fresh state in every chunk: each chunk forgets the chunks before it.
class ChunkedStateNotCarried : public backends::Decorator {
 public:
  using Decorator::Decorator;
  backends::Matrix linear_chunked(const backends::Matrix& pq, const backends::Matrix& pk, const backends::Matrix& v,
                                  std::size_t chunk) const override;
};

/// linear_chunked that only runs whole chunks: the short last chunk's rows are left at zero.
class ChunkedShortLastChunkSkipped : public backends::Decorator {
 public:
  using Decorator::Decorator;
  backends::Matrix linear_chunked(const backends::Matrix& pq, const backends::Matrix& pk, const backends::Matrix& v,
                                  std::size_t chunk) const override;
};

/// linear_chunked whose table inside a chunk lets one future token through: tril(φQ_c φK_cᵀ, 1).
class ChunkedOneFutureToken : public backends::Decorator {
 public:
  using Decorator::Decorator;
  backends::Matrix linear_chunked(const backends::Matrix& pq, const backends::Matrix& pk, const backends::Matrix& v,
                                  std::size_t chunk) const override;
};

/// linear_chunked without the division by the normalisers: a sum, not a weighted mean.
class ChunkedNormaliserDropped : public backends::Decorator {
 public:
  using Decorator::Decorator;
  backends::Matrix linear_chunked(const backends::Matrix& pq, const backends::Matrix& pk, const backends::Matrix& v,
                                  std::size_t chunk) const override;
};

/// linear_parallel without the division by the row sums: O = A V, a sum, not a weighted mean.
class ParallelNormaliserDropped : public backends::Decorator {
 public:
  using Decorator::Decorator;
  backends::Matrix linear_parallel(const backends::Matrix& pq, const backends::Matrix& pk, const backends::Matrix& v) const override;
};

/// linear_parallel whose mask lets one future token through: A = tril(φQ φKᵀ, 1).
class ParallelOneFutureToken : public backends::Decorator {
 public:
  using Decorator::Decorator;
  backends::Matrix linear_parallel(const backends::Matrix& pq, const backends::Matrix& pk, const backends::Matrix& v) const override;
};

/// linear_recurrent that absorbs token t + 1 before it answers token t.
class RecurrentReadsAhead : public backends::Decorator {
 public:
  using Decorator::Decorator;
  backends::Matrix linear_recurrent(const backends::Matrix& pq, const backends::Matrix& pk, const backends::Matrix& v) const override;
};

/// linear_recurrent whose normaliser z is not updated after the first token, while S is:
/// o_t = S_t φq_t / (φk_0 · φq_t), weights that sum to more than 1.
class RecurrentNormaliserNotUpdated : public backends::Decorator {
 public:
  using Decorator::Decorator;
  backends::Matrix linear_recurrent(const backends::Matrix& pq, const backends::Matrix& pk, const backends::Matrix& v) const override;
};

}  // namespace vl::lessons::linear_rnn
