#pragma once
// Matrix products for the kernels, through BLAS (xtensor-blas), with a multiply-add counter.
//
// Every product a kernel does goes through `matmul`/`matvec`, which add m·n·k (resp. m·k) to the
// thread-local tally of work_counters.hpp. The complexity claims count work with it instead of timing it.
// Declared here for float and double and defined once in matmul.cpp, so that the kernels and
// lessons that multiply matrices do not each parse and instantiate xtensor-blas (xlinalg.hpp
// alone preprocesses to ~209k lines). An operand that is an xtensor expression (a view, a
// transpose) is evaluated into a matrix at the call, as the products always did.
#include <xtensor/xtensor.hpp>

#include "kernels/reference/work_counters.hpp"

namespace vl {

/// C = A B.   A: (m, k), B: (k, n) → C: (m, n); counts m·n·k multiply-adds.
template <class T>
xt::xtensor<T, 2> matmul(const xt::xtensor<T, 2>& A, const xt::xtensor<T, 2>& B);

/// y = A x.   A: (m, k), x: (k) → y: (m); counts m·k multiply-adds.
template <class T>
xt::xtensor<T, 1> matvec(const xt::xtensor<T, 2>& A, const xt::xtensor<T, 1>& x);

extern template xt::xtensor<float, 2> matmul<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&);
extern template xt::xtensor<double, 2> matmul<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&);
extern template xt::xtensor<float, 1> matvec<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 1>&);
extern template xt::xtensor<double, 1> matvec<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 1>&);

}  // namespace vl
