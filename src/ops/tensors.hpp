#pragma once
// The tensor shapes the operations speak in, named once for the op headers, the backend
// interface and the lessons:
//   Tensor4<T>  (B, H, S, D)   attention's Q, K, V and outputs, in float or double
//   Tensor3     (B, S, E)      a batch of sequences of E-wide embeddings (layers, MHA, shifts);
//               Tensor3Of<T> in float or double
//   Matrix      (rows, cols)   a table (positional encodings, one sequence of linear attention);
//               MatrixOf<T> in float or double
#include <xtensor/xtensor.hpp>

namespace vl::ops {

template <class T>
using Tensor4 = xt::xtensor<T, 4>;
template <class T>
using Tensor3Of = xt::xtensor<T, 3>;
template <class T>
using MatrixOf = xt::xtensor<T, 2>;
using Tensor3 = Tensor3Of<double>;
using Matrix = MatrixOf<double>;

}  // namespace vl::ops
