#include <boost/test/unit_test.hpp>
// vl::numpy::Generator against np.random.default_rng (goldens written by
// reference_outputs/generators/numpy_goldens.py with NumPy 1.24): for every golden seed and stream
// (uniform float64/float32, standard normal float64/float32), the first 8 values bit for bit
// and the sha256 of the little-endian bytes of all 50,000 values; multi-call continuation;
// the lessons' Q, K, V draws; seed parsing.
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "numeric/numpy_random.hpp"
#include "numeric/sha256.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_numeric_numpy_random).
BOOST_AUTO_TEST_SUITE(test_numeric_numpy_random)

using vl::numpy::Generator;
using vl::numpy::parse_seed;
using vl::numpy::SeedSequence;

namespace {

static_assert(std::endian::native == std::endian::little, "goldens hash little-endian bytes");

const nlohmann::json& goldens() {
  static const nlohmann::json j = [] {
    std::ifstream in(VL_SOURCE_DIR "/reference_outputs/numpy/random_streams.json");
    if (!in) throw std::runtime_error("missing reference_outputs/numpy/random_streams.json");
    return nlohmann::json::parse(in);
  }();
  return j;
}

// Golden encodings: float64 as float.hex(), float32 as 8 hex digits of its bit pattern.
std::string encode(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}
std::string encode(float v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", std::bit_cast<std::uint32_t>(v));
  return buf;
}
double decode_f64(const std::string& hex) { return std::strtod(hex.c_str(), nullptr); }
float decode_f32(const std::string& bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(std::stoul(bits, nullptr, 16)));
}

// Compare a drawn value with a golden string, bit for bit.
bool same(double v, const std::string& golden) {
  return std::bit_cast<std::uint64_t>(v) == std::bit_cast<std::uint64_t>(decode_f64(golden));
}
bool same(float v, const std::string& golden) {
  return std::bit_cast<std::uint32_t>(v) == std::bit_cast<std::uint32_t>(decode_f32(golden));
}

// Draws `n` values of stream `kind` (one call, as the golden did) as raw values.
template <class T>
std::vector<T> draw_values(Generator& g, const std::string& kind, const std::vector<std::size_t>& shape) {
  xt::xarray<T> a;
  if constexpr (std::is_same_v<T, double>) {
    a = kind == "uniform_f64" ? g.random(shape) : g.standard_normal(shape);
  } else {
    a = kind == "uniform_f32" ? g.random_f32(shape) : g.standard_normal_f32(shape);
  }
  return std::vector<T>(a.begin(), a.end());
}

bool is_f32(const std::string& kind) { return kind.ends_with("_f32"); }

template <class T>
void check_stream(const std::string& seed, const std::string& kind, const nlohmann::json& golden,
                  std::size_t count) {
  Generator g(seed);
  const std::vector<T> v = draw_values<T>(g, kind, {count});
  const auto& first8 = golden.at("first8");
  for (std::size_t i = 0; i < first8.size(); ++i) {
    BOOST_TEST(same(v[i], first8[i].get<std::string>()), "value " << i << ": " << encode(v[i])
                                                                 << " vs numpy " << first8[i]);
  }
  BOOST_TEST(vl::sha256_hex(v.data(), v.size() * sizeof(T)) == golden.at("sha256").get<std::string>());
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_seed_every_stream_bit_for_bit) {
  const auto& j = goldens();
  const std::size_t count = j.at("count");
  BOOST_TEST(j.at("seeds").size() >= 20u);
  std::size_t compared = 0;
  for (const auto& entry : j.at("seeds")) {
    const std::string seed = entry.at("seed");
    for (const auto& [kind, golden] : entry.at("streams").items()) {
      BOOST_TEST_CONTEXT("seed " << seed << ", " << kind) {
        if (is_f32(kind)) {
          check_stream<float>(seed, kind, golden, count);
        } else {
          check_stream<double>(seed, kind, golden, count);
        }
      }
      compared += count;
    }
  }
  BOOST_TEST_MESSAGE("values compared through sha256: " << compared);
  BOOST_TEST(compared >= 4'000'000u);
}

BOOST_AUTO_TEST_CASE(successive_calls_continue_the_stream) {
  for (const auto& c : goldens().at("continuation")) {
    Generator g(c.at("seed").get<std::string>());
    for (const auto& call : c.at("calls")) {
      const std::string kind = call.at("kind");
      const auto shape = call.at("shape").get<std::vector<std::size_t>>();
      const auto& expected = call.at("values");
      BOOST_TEST_CONTEXT("seed " << c.at("seed") << ", " << kind) {
        if (is_f32(kind)) {
          const auto v = draw_values<float>(g, kind, shape);
          BOOST_REQUIRE_EQUAL(v.size(), expected.size());
          for (std::size_t i = 0; i < v.size(); ++i) BOOST_TEST(same(v[i], expected[i].get<std::string>()));
        } else {
          const auto v = draw_values<double>(g, kind, shape);
          BOOST_REQUIRE_EQUAL(v.size(), expected.size());
          for (std::size_t i = 0; i < v.size(); ++i) BOOST_TEST(same(v[i], expected[i].get<std::string>()));
        }
      }
    }
  }
}

// The lessons' listing: rng = np.random.default_rng(0); Q, K: (6, 4); V: (6, 5).
BOOST_AUTO_TEST_CASE(lesson_qkv_seed0) {
  const auto& golden = goldens().at("lesson_qkv_seed0");
  Generator rng(0);
  const xt::xtensor<double, 2> q = rng.standard_normal(6, 4);
  const xt::xtensor<double, 2> k = rng.standard_normal(6, 4);
  const xt::xtensor<double, 2> v = rng.standard_normal(6, 5);
  BOOST_TEST(q.shape()[0] == 6u);
  BOOST_TEST(v.shape()[1] == 5u);
  auto check = [](const xt::xtensor<double, 2>& a, const nlohmann::json& g) {
    BOOST_REQUIRE_EQUAL(a.size(), g.size());
    std::size_t i = 0;
    for (double x : a) BOOST_TEST(same(x, g[i++].get<std::string>()));
  };
  check(q, golden.at("Q"));
  check(k, golden.at("K"));
  check(v, golden.at("V"));
  // Spot value, so that a broken golden file cannot pass silently: Q[0, 0] = 0.1257302210933933.
  BOOST_TEST(q(0, 0) == 0.1257302210933933);
}

BOOST_AUTO_TEST_CASE(seed_sequence_pool_matches_numpy) {
  // np.random.SeedSequence(0).pool and SeedSequence(2**128 - 1).pool
  const std::array<std::uint32_t, 4> pool0{4265667335u, 1328953910u, 1320288413u, 3365567143u};
  BOOST_TEST(SeedSequence(0).pool() == pool0);
  const std::array<std::uint32_t, 4> pool_max{2255693068u, 3514702640u, 2272257151u, 4208296080u};
  BOOST_TEST(SeedSequence(~vl::numpy::uint128{0}).pool() == pool_max);
  // np.random.PCG64(0).random_raw(2)
  vl::numpy::PCG64 bits{SeedSequence(0)};
  BOOST_TEST(bits.next_uint64() == 11749869230777074271ULL);
  BOOST_TEST(bits.next_uint64() == 4976686463289251617ULL);
}

BOOST_AUTO_TEST_CASE(uint32_draws_buffer_the_high_half) {
  vl::numpy::PCG64 a{SeedSequence(5)}, b{SeedSequence(5)};
  const std::uint64_t full = a.next_uint64();
  BOOST_TEST(b.next_uint32() == static_cast<std::uint32_t>(full));
  BOOST_TEST(b.next_uint32() == static_cast<std::uint32_t>(full >> 32));
  BOOST_TEST(b.next_uint64() == a.next_uint64());
}

BOOST_AUTO_TEST_CASE(seed_forms_agree) {
  Generator a(std::uint64_t{42}), b(std::string("42"));
  for (int i = 0; i < 100; ++i) BOOST_TEST(a.standard_normal() == b.standard_normal());
  Generator c(std::string("18446744073709551617"));  // 2^64 + 1: three 32-bit words
  Generator d(SeedSequence((vl::numpy::uint128{1} << 64) + 1));
  BOOST_TEST(c.random() == d.random());
  BOOST_TEST(Generator(std::uint64_t{1}).random() != Generator(std::uint64_t{2}).random());
}

BOOST_AUTO_TEST_CASE(seed_parsing) {
  BOOST_TEST(vl::numpy::to_decimal(parse_seed("340282366920938463463374607431768211455")) ==
             "340282366920938463463374607431768211455");
  BOOST_TEST(vl::numpy::to_decimal(parse_seed("0")) == "0");
  BOOST_CHECK_THROW(parse_seed("340282366920938463463374607431768211456"), vl::InputError);  // 2^128
  BOOST_CHECK_THROW(parse_seed("-1"), vl::InputError);
  BOOST_CHECK_THROW(parse_seed(""), vl::InputError);
  BOOST_CHECK_THROW(parse_seed("12a"), vl::InputError);
  BOOST_CHECK_THROW(parse_seed(" 1"), vl::InputError);
  try {
    parse_seed("x", "--seed");
    BOOST_FAIL("no throw");
  } catch (const vl::InputError& e) {
    BOOST_TEST(std::string(e.what()).find("--seed") != std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()  // test_numeric_numpy_random
