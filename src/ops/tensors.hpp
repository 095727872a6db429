#pragma once
// The tensor shapes the operations speak in, named once for the op headers, the backend
// interface and the lessons:
//   Tensor4<T>  (B, H, S, D)   attention's Q, K, V and outputs, in float or double
//   Tensor3     (B, S, E)      a batch of sequences of E-wide embeddings (layers, MHA, shifts)
//   Matrix      (rows, cols)   a table (positional encodings, one sequence of linear attention)
#include <xtensor/xtensor.hpp>

namespace vl::ops {

template <class T>
using Tensor4 = xt::xtensor<T, 4>;
using Tensor3 = xt::xtensor<double, 3>;
using Matrix = xt::xtensor<double, 2>;

}  // namespace vl::ops
