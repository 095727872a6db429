#pragma once
// PyTorch's CPU random streams, bit for bit, as torch 1.13 (Debian's build, CPU capability
// AVX2) computes them; verified against that torch only (goldens in
// reference_outputs/torch/torch_streams.json). Under another CPU capability torch's float32
// randn with >= 16 elements uses a different kernel (libm instead of the AVX2 Cephes code) and
// differs in the last bit for about 40% of the values; float64 and the other ops do not depend
// on the capability except through the FMA in uniform (see torch_random.cpp).
//
//   Generator      at::CPUGeneratorImpl: an mt19937 plus the cached second Box-Muller value
//                  of the scalar normal path (torch.manual_seed(s) == Generator(s)).
//   randn<T>       torch.randn(shape, dtype=T): numel >= 16 -> normal_fill (Box-Muller on
//                  blocks of 16 uniforms; float32 through the AVX2 Cephes kernels), else the
//                  scalar at::normal_distribution<double>, which uses and refills the cache.
//   uniform_<T>    Tensor.uniform_(from, to) (and torch.rand = uniform_(0, 1)).
//   randperm       torch.randperm(n, generator=g) for n < 2^32 / 20.
//
// Sources: aten/src/ATen/CPUGeneratorImpl.{h,cpp}, core/MT19937RNGEngine.h,
// core/DistributionsHelper.h, core/TransformationHelper.h, native/cpu/DistributionTemplates.h,
// native/cpu/avx_mathfun.h, native/TensorFactories.cpp (randperm_cpu).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include <xtensor/xarray.hpp>

namespace vl::torch_rng {

/// Seed of a fresh torch.Generator() before manual_seed (c10::default_rng_seed_val).
inline constexpr std::uint64_t kDefaultSeed = 67280421310721ULL;

/// at::CPUGeneratorImpl. torch.manual_seed(s) / torch.Generator().manual_seed(s) both reset
/// the engine to mt19937(s) and forget the cached normals.
class Generator {
 public:
  explicit Generator(std::uint64_t seed = kDefaultSeed) { manual_seed(seed); }

  /// set_current_seed: at::mt19937(seed) seeds with the low 32 bits (init_genrand, the same
  /// recurrence as std::mt19937), and the cached normal samples are cleared.
  void manual_seed(std::uint64_t seed);
  std::uint64_t initial_seed() const { return seed_; }

  /// random(): one 32-bit mt19937 output.
  std::uint32_t random() { return static_cast<std::uint32_t>(engine_()); }
  /// random64(): two outputs, the first one in the high half (detail::make64BitsFrom32Bits).
  std::uint64_t random64();

  /// The second value of the last scalar Box-Muller pair (`normal_distribution<double>`),
  /// used by the next scalar draw. The float slot exists in torch too but no CPU op we
  /// reproduce fills it (the scalar path always uses `normal_distribution<double>`).
  std::optional<double> next_double_normal_sample;
  std::optional<float> next_float_normal_sample;

 private:
  std::mt19937 engine_;
  std::uint64_t seed_ = kDefaultSeed;
};

/// `at::uniform_real_distribution<double>(from, to)`: 53 low bits of random64() scaled by 2^-53,
/// then x * (to - from) + from (see uniform_real in torch_random.cpp for the rounding).
double uniform_double(Generator& gen, double from, double to);
/// `at::uniform_real_distribution<float>(from, to)`: 24 low bits of random() scaled by 2^-24.
float uniform_float(Generator& gen, float from, float to);

/// `at::normal_distribution<double>(0, 1)` on the CPU: returns the cached value if there is
/// one; otherwise draws u1, u2, returns r cos(theta) and caches r sin(theta), with
/// r = sqrt(-2 log(1 - u2)) and theta = 2 pi u1.
double normal_scalar(Generator& gen);

/// torch.randn(shape, dtype=T, generator=gen) for T = double or float, in C order.
template <class T>
xt::xarray<T> randn(Generator& gen, const std::vector<std::size_t>& shape);

/// Fills `data` (C order) as tensor.uniform_(from, to) does for a tensor of dtype T: from and
/// to are first rounded to T, then each element is `uniform_real_distribution<T>(from, to)`.
template <class T>
void uniform_fill(Generator& gen, T* data, std::size_t n, double from, double to);

/// torch.empty(shape, dtype=T).uniform_(from, to, generator=gen); (0, 1) is torch.rand.
template <class T>
xt::xarray<T> uniform(Generator& gen, const std::vector<std::size_t>& shape, double from = 0.0,
                      double to = 1.0);

/// torch.randperm(n, generator=gen) (int64). For n < 2^32/20 torch runs the Fisher-Yates
/// shuffle forward: for i = 0 .. n-2, swap r[i] with r[i + random() % (n - i)].
/// Throws std::invalid_argument for n outside [0, 2^32/20).
std::vector<std::int64_t> randperm(Generator& gen, std::int64_t n);

extern template xt::xarray<double> randn<double>(Generator&, const std::vector<std::size_t>&);
extern template xt::xarray<float> randn<float>(Generator&, const std::vector<std::size_t>&);
extern template void uniform_fill<double>(Generator&, double*, std::size_t, double, double);
extern template void uniform_fill<float>(Generator&, float*, std::size_t, double, double);
extern template xt::xarray<double> uniform<double>(Generator&, const std::vector<std::size_t>&,
                                                   double, double);
extern template xt::xarray<float> uniform<float>(Generator&, const std::vector<std::size_t>&,
                                                 double, double);

}  // namespace vl::torch_rng
