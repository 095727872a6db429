// PyTorch CPU random streams (see torch_random.hpp for the list and the sources).
#include "numeric/torch_random.hpp"

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

#include "numeric/torch_avx_mathfun.hpp"

namespace vl::torch_rng {

void Generator::manual_seed(std::uint64_t seed) {
  seed_ = seed;
  engine_.seed(static_cast<std::uint32_t>(seed & 0xFFFFFFFFu));
  next_double_normal_sample.reset();
  next_float_normal_sample.reset();
}

std::uint64_t Generator::random64() {
  const std::uint64_t hi = random();
  const std::uint64_t lo = random();
  return (hi << 32) | lo;
}

// transformation::uniform_real (TransformationHelper.h): x = (bits & (2^digits - 1)) * 2^-digits
// in the accumulate type (double for double, float for float), then x * (to - from) + from.
// torch compiles the uniform kernel once per CPU capability; the AVX2 build it dispatches to
// here is compiled with -mfma and GCC's default -ffp-contract=fast, which fuses the last
// multiply-add into one FMA, so we round once too (std::fma). Checked: with a separate
// multiply and add, 2,532 of 4,000 float64 draws of uniform_(-b, b) differ from torch.
double uniform_double(Generator& gen, double from, double to) {
  const double x = static_cast<double>(gen.random64() & ((std::uint64_t{1} << 53) - 1)) *
                   (1.0 / static_cast<double>(std::uint64_t{1} << 53));
  return std::fma(x, to - from, from);
}

float uniform_float(Generator& gen, float from, float to) {
  const float x = static_cast<float>(gen.random() & ((std::uint32_t{1} << 24) - 1)) *
                  (1.0f / static_cast<float>(std::uint32_t{1} << 24));
  return std::fma(x, to - from, from);
}

// at::normal_distribution<double>::operator() (DistributionsHelper.h, torch 1.13), mean 0 and
// std 1: r = sqrt(-2 * log(1 - u2)), theta = 2 pi u1 (2 pi folded to one double constant).
double normal_scalar(Generator& gen) {
  if (gen.next_double_normal_sample) {
    const double cached = *gen.next_double_normal_sample;
    gen.next_double_normal_sample.reset();
    return cached;
  }
  const double u1 = uniform_double(gen, 0.0, 1.0);
  const double u2 = uniform_double(gen, 0.0, 1.0);
  const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
  const double theta = (2.0 * std::numbers::pi) * u1;
  gen.next_double_normal_sample = r * std::sin(theta);
  return r * std::cos(theta);
}

namespace {

// normal_fill_16 (native/cpu/DistributionTemplates.h), mean 0 and std 1, double: the 16 values
// hold uniforms; pair j with j + 8 for j < 8: u1 = 1 - data[j] (in (0, 1], safe for log),
// radius = sqrt(-2 log u1), theta = 2 pi data[j + 8]; data[j] = radius cos theta,
// data[j + 8] = radius sin theta. (torch writes radius*cos*std + mean; with std = 1 and
// mean = 0 that is radius*cos exactly, fused or not, except that -0 becomes +0.)
void normal_fill_16(double* data) {
  for (int j = 0; j < 8; ++j) {
    const double u1 = 1.0 - data[j];
    const double u2 = data[j + 8];
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double theta = (2.0 * std::numbers::pi) * u2;
    data[j] = radius * std::cos(theta) + 0.0;
    data[j + 8] = radius * std::sin(theta) + 0.0;
  }
}

// normal_fill_16_AVX2, one lane at a time: the same Box-Muller in float, with avx_mathfun's
// Cephes log and sincos, theta = float(2 pi) * u2, and the final fmadd(n, std, mean).
void normal_fill_16(float* data) {
  const float two_pi = static_cast<float>(2.0 * std::numbers::pi);
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - data[j];
    const float u2 = data[j + 8];
    const float radius = std::sqrt(-2.0f * avx_mathfun::log(u1));
    const float theta = two_pi * u2;
    const avx_mathfun::SinCos sc = avx_mathfun::sincos(theta);
    data[j] = std::fma(radius * sc.cos, 1.0f, 0.0f);
    data[j + 8] = std::fma(radius * sc.sin, 1.0f, 0.0f);
  }
}

template <class T>
T uniform01(Generator& gen) {
  if constexpr (std::is_same_v<T, double>) {
    return uniform_double(gen, 0.0, 1.0);
  } else {
    return uniform_float(gen, 0.0f, 1.0f);
  }
}

// normal_fill / normal_fill_AVX2: fill all n with uniforms, transform each full block of 16,
// and if n is not a multiple of 16, draw 16 fresh uniforms into the last 16 slots (overwriting
// some finished normals) and transform those.
template <class T>
void normal_fill(Generator& gen, T* data, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) data[i] = uniform01<T>(gen);
  for (std::size_t i = 0; i + 16 <= n; i += 16) normal_fill_16(data + i);
  if (n % 16 != 0) {
    T* tail = data + n - 16;
    for (std::size_t i = 0; i < 16; ++i) tail[i] = uniform01<T>(gen);
    normal_fill_16(tail);
  }
}

std::size_t numel(const std::vector<std::size_t>& shape) {
  std::size_t n = 1;
  for (std::size_t s : shape) n *= s;
  return n;
}

}  // namespace

// normal_kernel (native/cpu/DistributionTemplates.h): contiguous with numel >= 16 -> normal_fill
// (AVX2 variant for float), else one normal_distribution<double> draw per element, rounded to T.
template <class T>
xt::xarray<T> randn(Generator& gen, const std::vector<std::size_t>& shape) {
  xt::xarray<T> out = xt::xarray<T>::from_shape(shape);
  const std::size_t n = numel(shape);
  if (n >= 16) {
    normal_fill(gen, out.data(), n);
  } else {
    for (std::size_t i = 0; i < n; ++i) out.data()[i] = static_cast<T>(normal_scalar(gen));
  }
  return out;
}

// uniform_kernel (native/cpu/DistributionTemplates.h): from/to cast to the tensor's type, one
// uniform_real_distribution<T> draw per element in C order.
template <class T>
void uniform_fill(Generator& gen, T* data, std::size_t n, double from, double to) {
  const T lo = static_cast<T>(from);
  const T hi = static_cast<T>(to);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, double>) {
      data[i] = uniform_double(gen, lo, hi);
    } else {
      data[i] = uniform_float(gen, lo, hi);
    }
  }
}

template <class T>
xt::xarray<T> uniform(Generator& gen, const std::vector<std::size_t>& shape, double from,
                      double to) {
  xt::xarray<T> out = xt::xarray<T>::from_shape(shape);
  uniform_fill<T>(gen, out.data(), numel(shape), from, to);
  return out;
}

// randperm_cpu (native/TensorFactories.cpp), small-n branch: r = 0..n-1, then for each i from
// 0 to n-2 swap r[i] with r[i + z], z = random() % (n - i).
std::vector<std::int64_t> randperm(Generator& gen, std::int64_t n) {
  constexpr std::int64_t kSmallLimit = std::numeric_limits<std::uint32_t>::max() / 20;
  if (n < 0 || n >= kSmallLimit) {
    throw std::invalid_argument("randperm: n = " + std::to_string(n) + " outside [0, " +
                                std::to_string(kSmallLimit) + ")");
  }
  std::vector<std::int64_t> r(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] = i;
  for (std::int64_t i = 0; i + 1 < n; ++i) {
    const std::int64_t z = static_cast<std::int64_t>(gen.random() % static_cast<std::uint64_t>(n - i));
    std::swap(r[static_cast<std::size_t>(i)], r[static_cast<std::size_t>(i + z)]);
  }
  return r;
}

template xt::xarray<double> randn<double>(Generator&, const std::vector<std::size_t>&);
template xt::xarray<float> randn<float>(Generator&, const std::vector<std::size_t>&);
template void uniform_fill<double>(Generator&, double*, std::size_t, double, double);
template void uniform_fill<float>(Generator&, float*, std::size_t, double, double);
template xt::xarray<double> uniform<double>(Generator&, const std::vector<std::size_t>&, double,
                                            double);
template xt::xarray<float> uniform<float>(Generator&, const std::vector<std::size_t>&, double,
                                          double);

}  // namespace vl::torch_rng
