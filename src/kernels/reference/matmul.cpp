// The matrix products of kernels/reference/matmul.hpp, instantiated for float and double: the one
// translation unit of the kernels that includes xtensor-blas.
#include "kernels/reference/matmul.hpp"

#include <xtensor-blas/xlinalg.hpp>

namespace vl {

template <class T>
xt::xtensor<T, 2> matmul(const xt::xtensor<T, 2>& A, const xt::xtensor<T, 2>& B) {
  multiply_adds() += std::uint64_t(A.shape(0)) * B.shape(1) * A.shape(1);
  if (A.size() == 0 || B.size() == 0) return xt::zeros<T>({A.shape(0), B.shape(1)});
  return xt::linalg::dot(A, B);
}

template <class T>
xt::xtensor<T, 1> matvec(const xt::xtensor<T, 2>& A, const xt::xtensor<T, 1>& x) {
  multiply_adds() += std::uint64_t(A.shape(0)) * A.shape(1);
  if (A.size() == 0) return xt::zeros<T>({A.shape(0)});
  return xt::linalg::dot(A, x);
}

template xt::xtensor<float, 2> matmul<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&);
template xt::xtensor<double, 2> matmul<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&);
template xt::xtensor<float, 1> matvec<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 1>&);
template xt::xtensor<double, 1> matvec<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 1>&);

}  // namespace vl
