#pragma once
// Bit-exact reproduction of NumPy's default generator, np.random.default_rng(seed) (NumPy 1.24):
//   SeedSequence(seed) --generate_state(4, uint64)--> PCG64 (XSL-RR 128/64) --> Generator
// with Generator.random() (float64 / float32) and Generator.standard_normal() (float64 /
// float32 ziggurat). Every value, and the order in which the stream is consumed, matches NumPy:
// a sequence of calls on one vl::numpy::Generator gives the same numbers as the same calls on
// one numpy.random.Generator. Checked against NumPy in verify/test_numeric_numpy_random.cpp.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

namespace vl::numpy {

using uint128 = unsigned __int128;

/// Parses a seed: a non-negative decimal integer below 2^128 (digits only, no sign, no spaces).
/// Throws vl::InputError naming `what` (e.g. "--seed") when the text is not such a number.
uint128 parse_seed(const std::string& decimal, const std::string& what = "seed");

/// Decimal text of a 128-bit unsigned integer.
std::string to_decimal(uint128 v);

/// NumPy's SeedSequence (numpy/random/bit_generator.pyx), restricted to an integer entropy,
/// no spawn key and the default pool of 4 words. It hashes the entropy words into the pool
/// (hashmix/mix, O'Neill's seed_seq design) and expands the pool into any number of words.
class SeedSequence {
 public:
  /// Entropy = the seed's 32-bit words, least significant first (0 -> the single word 0).
  explicit SeedSequence(uint128 entropy);

  /// generate_state(n, uint32): n output words, each a hash of the pool words taken cyclically.
  std::vector<std::uint32_t> generate_state32(std::size_t n_words) const;
  /// generate_state(n, uint64): 2n uint32 words paired little-endian (low word first).
  std::vector<std::uint64_t> generate_state64(std::size_t n_words) const;

  const std::array<std::uint32_t, 4>& pool() const { return pool_; }

 private:
  std::array<std::uint32_t, 4> pool_{};
};

/// NumPy's PCG64 bit generator: a 128-bit LCG (state = state * M + inc) whose output is the
/// XSL-RR permutation rotr64(hi ^ lo, state >> 122) of the *new* state. next_uint32 returns
/// the low half of a 64-bit output and buffers the high half for the following call, exactly
/// as numpy/random/src/pcg64/pcg64.h does; next_uint64 does not touch that buffer.
class PCG64 {
 public:
  /// Seeded as PCG64(SeedSequence(seed)): 4 uint64 words w from generate_state(4, uint64);
  /// initstate = w0:w1, initseq = w2:w3 (high:low); inc = initseq*2+1; state = 0, step,
  /// state += initstate, step (pcg_setseq_128_srandom_r).
  explicit PCG64(const SeedSequence& seq);

  std::uint64_t next_uint64();
  std::uint32_t next_uint32();
  /// 53-bit double in [0, 1): (next_uint64 >> 11) * 2^-53.
  double next_double() { return static_cast<double>(next_uint64() >> 11) * (1.0 / 9007199254740992.0); }
  /// 24-bit float in [0, 1): (next_uint32 >> 8) * 2^-24.
  float next_float() { return static_cast<float>(next_uint32() >> 8) * (1.0f / 16777216.0f); }

  uint128 state() const { return state_; }
  uint128 increment() const { return inc_; }

 private:
  void step() { state_ = state_ * multiplier() + inc_; }
  static uint128 multiplier();

  uint128 state_ = 0;
  uint128 inc_ = 0;
  bool has_uint32_ = false;
  std::uint32_t uinteger_ = 0;
};

/// np.random.default_rng(seed): the draws the lessons use, continuing one stream.
class Generator {
 public:
  explicit Generator(const std::string& decimal_seed);
  explicit Generator(std::uint64_t seed);
  /// default_rng(SeedSequence(seed)) for any seed below 2^128.
  explicit Generator(const SeedSequence& seq);

  /// rng.random(): float64 uniform in [0, 1).
  double random() { return bits_.next_double(); }
  /// rng.random(dtype=np.float32): float32 uniform in [0, 1).
  float random_f32() { return bits_.next_float(); }
  /// rng.standard_normal(): one float64 N(0, 1) draw (256-layer ziggurat).
  double standard_normal();
  /// rng.standard_normal(dtype=np.float32): one float32 N(0, 1) draw (float32 ziggurat).
  float standard_normal_f32();

  /// rng.standard_normal((rows, cols)): row-major fill.
  xt::xtensor<double, 2> standard_normal(std::size_t rows, std::size_t cols);
  /// rng.standard_normal(shape) / rng.random(shape), any number of dimensions, row-major.
  xt::xarray<double> standard_normal(const std::vector<std::size_t>& shape);
  xt::xarray<float> standard_normal_f32(const std::vector<std::size_t>& shape);
  xt::xarray<double> random(const std::vector<std::size_t>& shape);
  xt::xarray<float> random_f32(const std::vector<std::size_t>& shape);

  PCG64& bit_generator() { return bits_; }

 private:
  PCG64 bits_;
};

}  // namespace vl::numpy
