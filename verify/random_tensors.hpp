#pragma once
// What the kernel tests draw their inputs from: tensors of normals (4-D standard ones: normal4) from a seeded
// std::mt19937_64 (drawn in double, stored as T), the same numbers on every machine.
#include <array>
#include <cstddef>
#include <random>

#include <xtensor/xtensor.hpp>

namespace vl::verify {

/// N-dimensional normals of standard deviation `sd`, drawn in double, stored as T.
template <class T = double, std::size_t N>
xt::xtensor<T, N> normal(std::mt19937_64& g, std::array<std::size_t, N> shape, double sd = 1) {
  std::normal_distribution<double> nd(0, sd);
  xt::xtensor<T, N> x = xt::xtensor<T, N>::from_shape(shape);
  for (auto& e : x) e = T(nd(g));
  return x;
}

template <class T = double>
xt::xtensor<T, 4> normal4(std::mt19937_64& g, std::array<std::size_t, 4> shape) {
  return normal<T, 4>(g, shape);
}

}  // namespace vl::verify
