#pragma once
// Helpers the backend and kernel tests share: bit-for-bit equality of two tensors, the distance in
// units of the last place between two numbers, and a fixed uniform draw.
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <random>

#include <xtensor/xtensor.hpp>

namespace vl::verify {

/// The same shape and the same bits (a NaN equals the same NaN; +0 and −0 differ).
template <class T, std::size_t N>
bool same_bits(const xt::xtensor<T, N>& a, const xt::xtensor<T, N>& b) {
  return a.shape() == b.shape() && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

/// How many representable numbers apart two finite float or double values of the same sign are
/// (their bit patterns, read as integers, are in the same order as the values).
template <class T>
std::int64_t units_apart(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  Bits x, y;
  std::memcpy(&x, &a, sizeof(T));
  std::memcpy(&y, &b, sizeof(T));
  return x > y ? std::int64_t(x) - std::int64_t(y) : std::int64_t(y) - std::int64_t(x);
}

/// Uniform in [−1, 1) from 53 bits of the generator per entry: a fixed stream per call site.
template <class T, std::size_t N>
xt::xtensor<T, N> draw(std::mt19937_64& gen, const std::array<std::size_t, N>& shape) {
  xt::xtensor<T, N> x = xt::xtensor<T, N>::from_shape(shape);
  for (auto& e : x) e = static_cast<T>(static_cast<double>(gen() >> 11) * 0x1p-53 * 2 - 1);
  return x;
}

}  // namespace vl::verify
