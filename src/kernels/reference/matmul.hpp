#pragma once
// Matrix products for the kernels, through BLAS (xtensor-blas), with a multiply-add counter.
//
// Every product a kernel does goes through `matmul`/`matvec`, which add m·n·k (resp. m·k) to a
// thread-local tally. The complexity claims count work with it instead of timing it.
// Declared here for float and double and defined once in matmul.cpp, so that the kernels and
// lessons that multiply matrices do not each parse and instantiate xtensor-blas (xlinalg.hpp
// alone preprocesses to ~209k lines). An operand that is an xtensor expression (a view, a
// transpose) is evaluated into a matrix at the call, as the products always did.
#include <cstdint>

#include <xtensor/xtensor.hpp>

namespace vl {

/// Multiply-adds done by matmul/matvec on this thread since the last reset.
inline std::uint64_t& multiply_adds() {
  thread_local std::uint64_t count = 0;
  return count;
}

/// The multiply-adds `work()` does through matmul/matvec on this thread (the tally reset first).
template <class Work>
std::uint64_t count_multiply_adds(const Work& work) {
  multiply_adds() = 0;
  work();
  return multiply_adds();
}

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
