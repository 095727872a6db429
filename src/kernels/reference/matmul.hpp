#pragma once
// Matrix products for the kernels, through BLAS (xtensor-blas), with a multiply-add counter.
//
// Every product a kernel does goes through `matmul`/`add_outer`, which add m·n·k (resp. m·n)
// to a thread-local tally. The complexity claims count work with it instead of timing it.
#include <cstdint>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xtensor.hpp>

namespace vl {

/// Multiply-adds done by matmul/add_outer on this thread since the last reset.
inline std::uint64_t& multiply_adds() {
  thread_local std::uint64_t count = 0;
  return count;
}

/// C = A B.   A: (m, k), B: (k, n) → C: (m, n); counts m·n·k multiply-adds.
template <class T, class EA, class EB>
xt::xtensor<T, 2> matmul(const EA& a, const EB& b) {
  const xt::xtensor<T, 2> A = a;
  const xt::xtensor<T, 2> B = b;
  multiply_adds() += std::uint64_t(A.shape(0)) * B.shape(1) * A.shape(1);
  if (A.size() == 0 || B.size() == 0) return xt::zeros<T>({A.shape(0), B.shape(1)});
  return xt::linalg::dot(A, B);
}

/// y = A x.   A: (m, k), x: (k) → y: (m); counts m·k multiply-adds.
template <class T, class EA, class EX>
xt::xtensor<T, 1> matvec(const EA& a, const EX& x) {
  const xt::xtensor<T, 2> A = a;
  const xt::xtensor<T, 1> X = x;
  multiply_adds() += std::uint64_t(A.shape(0)) * A.shape(1);
  if (A.size() == 0) return xt::zeros<T>({A.shape(0)});
  return xt::linalg::dot(A, X);
}

}  // namespace vl
