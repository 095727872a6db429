#pragma once
// What the kernel tests draw their inputs from: 4-D tensors of standard normals from a seeded
// std::mt19937_64 (drawn in double, stored as T), the same numbers on every machine.
#include <array>
#include <cstddef>
#include <random>

#include <xtensor/xtensor.hpp>

namespace vl::verify {

template <class T = double>
xt::xtensor<T, 4> normal4(std::mt19937_64& g, std::array<std::size_t, 4> shape) {
  std::normal_distribution<double> nd;
  xt::xtensor<T, 4> x = xt::xtensor<T, 4>::from_shape(shape);
  for (auto& e : x) e = T(nd(g));
  return x;
}

}  // namespace vl::verify
