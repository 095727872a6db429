// np.random.default_rng(seed) in C++: SeedSequence -> PCG64 -> Generator (see numpy_random.hpp).
// Algorithms as in NumPy 1.24: numpy/random/bit_generator.pyx (SeedSequence),
// numpy/random/src/pcg64/pcg64.h (PCG64), numpy/random/src/distributions/distributions.c
// (random, standard_normal).
#include "numeric/numpy_random.hpp"

#include <array>
#include <cmath>

#include "core/errors.hpp"
#include "numeric/numpy_ziggurat_tables.hpp"

namespace vl::numpy {

namespace {

// SeedSequence's hashing constants (O'Neill's seed_seq_fe, as used by NumPy).
constexpr std::uint32_t kInitA = 0x43b0d7e5u;
constexpr std::uint32_t kMultA = 0x931e8875u;
constexpr std::uint32_t kInitB = 0x8b51f9ddu;
constexpr std::uint32_t kMultB = 0x58f38dedu;
constexpr std::uint32_t kMixMultL = 0xca01f9ddu;
constexpr std::uint32_t kMixMultR = 0x4973f715u;
constexpr unsigned kXShift = 16;  // half the bits of a uint32
constexpr std::size_t kPoolSize = 4;

// hashmix: value ^= k; k *= MULT_A; value *= k; value ^= value >> 16. The multiplier k
// evolves with every call, so one Hasher is threaded through the whole mixing pass.
struct Hasher {
  std::uint32_t k;
  std::uint32_t operator()(std::uint32_t value) {
    value ^= k;
    k *= kMultA;
    value *= k;
    value ^= value >> kXShift;
    return value;
  }
};

// mix(x, y) = (L*x - R*y) ^ ((L*x - R*y) >> 16), all modulo 2^32.
std::uint32_t mix(std::uint32_t x, std::uint32_t y) {
  std::uint32_t r = kMixMultL * x - kMixMultR * y;
  return r ^ (r >> kXShift);
}

// The seed's 32-bit words, least significant first; 0 is the single word [0]
// (NumPy's _int_to_uint32_array).
std::vector<std::uint32_t> to_words(uint128 v) {
  std::vector<std::uint32_t> words;
  do {
    words.push_back(static_cast<std::uint32_t>(v));
    v >>= 32;
  } while (v != 0);
  return words;
}

}  // namespace

uint128 parse_seed(const std::string& decimal, const std::string& what) {
  if (decimal.empty()) {
    throw InputError(what + ": empty; expected a non-negative decimal integer below 2^128");
  }
  const uint128 max = ~uint128{0};
  uint128 v = 0;
  for (char c : decimal) {
    if (c < '0' || c > '9') {
      throw InputError(what + ": '" + decimal +
                       "' is not a non-negative decimal integer (digits 0-9 only)");
    }
    const unsigned d = static_cast<unsigned>(c - '0');
    if (v > (max - d) / 10) {
      throw InputError(what + ": '" + decimal + "' is too large; seeds must be below 2^128");
    }
    v = v * 10 + d;
  }
  return v;
}

std::string to_decimal(uint128 v) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v != 0);
  return s;
}

// SeedSequence.mix_entropy: hash each entropy word (or 0) into the 4 pool slots, then let every
// slot absorb the hash of every other slot, then fold in entropy words beyond the fourth.
SeedSequence::SeedSequence(uint128 entropy) {
  const std::vector<std::uint32_t> words = to_words(entropy);
  Hasher hash{kInitA};
  for (std::size_t i = 0; i < kPoolSize; ++i) {
    pool_[i] = hash(i < words.size() ? words[i] : 0u);
  }
  for (std::size_t src = 0; src < kPoolSize; ++src) {
    for (std::size_t dst = 0; dst < kPoolSize; ++dst) {
      if (src != dst) pool_[dst] = mix(pool_[dst], hash(pool_[src]));
    }
  }
  for (std::size_t src = kPoolSize; src < words.size(); ++src) {
    for (std::size_t dst = 0; dst < kPoolSize; ++dst) {
      pool_[dst] = mix(pool_[dst], hash(words[src]));
    }
  }
}

// SeedSequence.generate_state(n, uint32): word i = hash of pool[i % 4] with a multiplier
// that starts at INIT_B and is multiplied by MULT_B before each use.
std::vector<std::uint32_t> SeedSequence::generate_state32(std::size_t n_words) const {
  std::vector<std::uint32_t> out(n_words);
  std::uint32_t k = kInitB;
  for (std::size_t i = 0; i < n_words; ++i) {
    std::uint32_t v = pool_[i % kPoolSize];
    v ^= k;
    k *= kMultB;
    v *= k;
    v ^= v >> kXShift;
    out[i] = v;
  }
  return out;
}

// generate_state(n, uint64): the uint32 stream of 2n words viewed as little-endian uint64s.
std::vector<std::uint64_t> SeedSequence::generate_state64(std::size_t n_words) const {
  const std::vector<std::uint32_t> w = generate_state32(2 * n_words);
  std::vector<std::uint64_t> out(n_words);
  for (std::size_t i = 0; i < n_words; ++i) {
    out[i] = static_cast<std::uint64_t>(w[2 * i]) | (static_cast<std::uint64_t>(w[2 * i + 1]) << 32);
  }
  return out;
}

// PCG's default 128-bit LCG multiplier 2549297995355413924 * 2^64 + 4865540595714422341.
uint128 PCG64::multiplier() {
  return (static_cast<uint128>(2549297995355413924ULL) << 64) | 4865540595714422341ULL;
}

// PCG64.__init__ + pcg64_set_seed + pcg_setseq_128_srandom_r (see the header).
PCG64::PCG64(const SeedSequence& seq) {
  const std::vector<std::uint64_t> w = seq.generate_state64(4);
  const uint128 initstate = (static_cast<uint128>(w[0]) << 64) | w[1];
  const uint128 initseq = (static_cast<uint128>(w[2]) << 64) | w[3];
  state_ = 0;
  inc_ = (initseq << 1) | 1u;
  step();
  state_ += initstate;
  step();
}

// Advance the LCG, then XSL-RR: xor the halves and rotate right by the top 6 bits.
std::uint64_t PCG64::next_uint64() {
  step();
  const auto hi = static_cast<std::uint64_t>(state_ >> 64);
  const auto lo = static_cast<std::uint64_t>(state_);
  const unsigned rot = static_cast<unsigned>(state_ >> 122);
  const std::uint64_t x = hi ^ lo;
  return (x >> rot) | (x << ((64u - rot) & 63u));
}

// Low half of a fresh 64-bit output now, its high half on the next call.
std::uint32_t PCG64::next_uint32() {
  if (has_uint32_) {
    has_uint32_ = false;
    return uinteger_;
  }
  const std::uint64_t next = next_uint64();
  has_uint32_ = true;
  uinteger_ = static_cast<std::uint32_t>(next >> 32);
  return static_cast<std::uint32_t>(next & 0xffffffffu);
}

Generator::Generator(const SeedSequence& seq) : bits_(seq) {}
Generator::Generator(std::uint64_t seed) : bits_(SeedSequence(seed)) {}
Generator::Generator(const std::string& decimal_seed)
    : bits_(SeedSequence(parse_seed(decimal_seed, "seed"))) {}

// random_standard_normal (float64 ziggurat). One uint64 r: bits 0-7 pick the layer, bit 8 the
// sign, bits 9-60 a 52-bit magnitude. Inside the layer's rectangle -> done (99.3%); layer 0 ->
// Marsaglia's tail beyond r using two uniforms and log1p; else the wedge test against
// exp(-x^2/2). Rejections start over with a fresh uint64.
// (The a*b+c of the wedge test must not be contracted to an FMA: CMakeLists.txt compiles with
// -ffp-contract=off, so a -march=native build gives NumPy's bits too.)
double Generator::standard_normal() {
  using namespace detail;
  for (;;) {
    std::uint64_t r = bits_.next_uint64();
    const unsigned idx = static_cast<unsigned>(r & 0xffu);
    r >>= 8;
    const bool negative = (r & 1u) != 0;
    const std::uint64_t rabs = (r >> 1) & 0x000fffffffffffffULL;
    double x = static_cast<double>(rabs) * wi_double[idx];
    if (negative) x = -x;
    if (rabs < ki_double[idx]) return x;
    if (idx == 0) {
      for (;;) {
        const double xx = -ziggurat_nor_inv_r * std::log1p(-bits_.next_double());
        const double yy = -std::log1p(-bits_.next_double());
        if (yy + yy > xx * xx) {
          return ((rabs >> 8) & 1u) ? -(ziggurat_nor_r + xx) : ziggurat_nor_r + xx;
        }
      }
    }
    const double f = (fi_double[idx - 1] - fi_double[idx]) * bits_.next_double() + fi_double[idx];
    if (f < std::exp(-0.5 * x * x)) return x;
  }
}

// random_standard_normal_f (float32 ziggurat). One uint32 r: bits 0-7 layer, bit 8 sign,
// bits 9-31 a 23-bit magnitude; tail with float uniforms and log1pf; wedge test in float,
// compared with the double exp(-0.5 * x * x) exactly as NumPy's C does.
float Generator::standard_normal_f32() {
  using namespace detail;
  for (;;) {
    const std::uint32_t r = bits_.next_uint32();
    const unsigned idx = r & 0xffu;
    const bool negative = ((r >> 8) & 1u) != 0;
    const std::uint32_t rabs = (r >> 9) & 0x007fffffu;
    float x = static_cast<float>(rabs) * wi_float[idx];
    if (negative) x = -x;
    if (rabs < ki_float[idx]) return x;
    if (idx == 0) {
      for (;;) {
        const float xx = -ziggurat_nor_inv_r_f * std::log1p(-bits_.next_float());
        const float yy = -std::log1p(-bits_.next_float());
        if (yy + yy > xx * xx) {
          return ((rabs >> 8) & 1u) ? -(ziggurat_nor_r_f + xx) : ziggurat_nor_r_f + xx;
        }
      }
    }
    const float f = (fi_float[idx - 1] - fi_float[idx]) * bits_.next_float() + fi_float[idx];
    if (static_cast<double>(f) < std::exp(-0.5 * static_cast<double>(x) * static_cast<double>(x))) {
      return x;
    }
  }
}

namespace {
// An array of `shape` filled in C order by successive draws, as NumPy's *_fill loops do.
template <class Array, class Shape, class Draw>
Array filled(const Shape& shape, Draw draw) {
  Array out = Array::from_shape(shape);
  for (auto& v : out) v = draw();
  return out;
}
}  // namespace

xt::xtensor<double, 2> Generator::standard_normal(std::size_t rows, std::size_t cols) {
  return filled<xt::xtensor<double, 2>>(std::array<std::size_t, 2>{rows, cols}, [this] { return standard_normal(); });
}

xt::xarray<double> Generator::standard_normal(const std::vector<std::size_t>& shape) {
  return filled<xt::xarray<double>>(shape, [this] { return standard_normal(); });
}

xt::xarray<float> Generator::standard_normal_f32(const std::vector<std::size_t>& shape) {
  return filled<xt::xarray<float>>(shape, [this] { return standard_normal_f32(); });
}

xt::xarray<double> Generator::random(const std::vector<std::size_t>& shape) {
  return filled<xt::xarray<double>>(shape, [this] { return random(); });
}

xt::xarray<float> Generator::random_f32(const std::vector<std::size_t>& shape) {
  return filled<xt::xarray<float>>(shape, [this] { return random_f32(); });
}

}  // namespace vl::numpy
