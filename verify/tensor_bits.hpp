#pragma once
// Helpers the backend tests share: bit-for-bit equality of two tensors, and a fixed uniform draw.
#include <array>
#include <cstring>
#include <random>

#include <xtensor/xtensor.hpp>

namespace vl::verify {

/// The same shape and the same bits (a NaN equals the same NaN; +0 and −0 differ).
template <class T, std::size_t N>
bool same_bits(const xt::xtensor<T, N>& a, const xt::xtensor<T, N>& b) {
  return a.shape() == b.shape() && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

/// Uniform in [−1, 1) from 53 bits of the generator per entry: a fixed stream per call site.
template <class T, std::size_t N>
xt::xtensor<T, N> draw(std::mt19937_64& gen, const std::array<std::size_t, N>& shape) {
  xt::xtensor<T, N> x = xt::xtensor<T, N>::from_shape(shape);
  for (auto& e : x) e = static_cast<T>(static_cast<double>(gen() >> 11) * 0x1p-53 * 2 - 1);
  return x;
}

}  // namespace vl::verify
