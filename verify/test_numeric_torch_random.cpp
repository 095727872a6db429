#include <boost/test/unit_test.hpp>
// vl::torch_rng against PyTorch 1.13 (Debian, CPU capability AVX2), bit for bit.
// Goldens: reference_outputs/torch/torch_streams.json, written by reference_outputs/generators/torch_goldens.py.
// Each case seeds a generator and runs its ops in order; every value must have the same bits.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "numeric/torch_mha_init.hpp"
#include "numeric/torch_random.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_numeric_torch_random).
BOOST_AUTO_TEST_SUITE(test_numeric_torch_random)

namespace tr = vl::torch_rng;
using nlohmann::json;

namespace {

const json& goldens() {
  static const json doc = [] {
    std::ifstream in(VL_SOURCE_DIR "/reference_outputs/torch/torch_streams.json");
    if (!in) throw std::runtime_error("cannot open reference_outputs/torch/torch_streams.json");
    return json::parse(in);
  }();
  return doc;
}

double from_hex(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

// A value as C's %a writes it, so that a one-ulp difference is visible in the message.
std::string hex(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

std::vector<std::size_t> shape_of(const json& op) { return op.at("shape").get<std::vector<std::size_t>>(); }

// Number of elements whose bits differ between ours (T) and the golden hex strings.
template <class T>
std::size_t count_mismatches(const T* ours, std::size_t n, const json& expected, const std::string& what) {
  if (expected.size() != n) {
    BOOST_ERROR(what << ": " << n << " values, golden has " << expected.size());
    return n;
  }
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const T want = static_cast<T>(from_hex(expected[i].get<std::string>()));
    if (std::bit_cast<std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>>(ours[i]) !=
        std::bit_cast<std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>>(want)) {
      if (bad < 3) BOOST_ERROR(what << " [" << i << "]: ours " << hex(ours[i]) << ", torch " << hex(want));
      ++bad;
    }
  }
  return bad;
}

template <class T>
std::size_t check_mha(tr::Generator& gen, const json& op, const json& out, const std::string& what) {
  const auto p = tr::mha_init<T>(gen, op.at("embed_dim").get<std::size_t>(), op.at("heads").get<std::size_t>());
  return count_mismatches(p.in_proj_weight.data(), p.in_proj_weight.size(), out.at("in_proj_weight"), what + " in_proj_weight") +
         count_mismatches(p.in_proj_bias.data(), p.in_proj_bias.size(), out.at("in_proj_bias"), what + " in_proj_bias") +
         count_mismatches(p.out_proj_weight.data(), p.out_proj_weight.size(), out.at("out_proj_weight"), what + " out_proj_weight") +
         count_mismatches(p.out_proj_bias.data(), p.out_proj_bias.size(), out.at("out_proj_bias"), what + " out_proj_bias");
}

struct Tally {
  std::size_t cases = 0, values = 0, mismatches = 0;
};

// Runs one golden case (ops in order on one generator) and adds its counts to `t`.
void run_case(const json& c, Tally& t) {
  const std::string name = c.at("name");
  tr::Generator gen(c.at("seed").get<std::uint64_t>());
  const json& ops = c.at("ops");
  const json& outs = c.at("out");
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const json& op = ops[k];
    const json& out = outs[k];
    const std::string kind = op.at("op");
    const std::string what = name + " op " + std::to_string(k) + " (" + kind + ")";
    const bool f64 = op.value("dtype", "float64") == "float64";
    if (kind == "randn" && f64) {
      const auto x = tr::randn<double>(gen, shape_of(op));
      t.mismatches += count_mismatches(x.data(), x.size(), out, what);
      t.values += x.size();
    } else if (kind == "randn") {
      const auto x = tr::randn<float>(gen, shape_of(op));
      t.mismatches += count_mismatches(x.data(), x.size(), out, what);
      t.values += x.size();
    } else if (kind == "uniform") {
      const double lo = from_hex(op.at("from")), hi = from_hex(op.at("to"));
      if (f64) {
        const auto x = tr::uniform<double>(gen, shape_of(op), lo, hi);
        t.mismatches += count_mismatches(x.data(), x.size(), out, what);
        t.values += x.size();
      } else {
        const auto x = tr::uniform<float>(gen, shape_of(op), lo, hi);
        t.mismatches += count_mismatches(x.data(), x.size(), out, what);
        t.values += x.size();
      }
    } else if (kind == "mha") {
      t.mismatches += f64 ? check_mha<double>(gen, op, out, what) : check_mha<float>(gen, op, out, what);
      const std::size_t d = op.at("embed_dim");
      t.values += 4 * d * d + 4 * d;
    } else if (kind == "randperm") {
      std::optional<tr::Generator> own;
      if (op.contains("seed")) own.emplace(op.at("seed").get<std::uint64_t>());
      const auto perm = tr::randperm(own ? *own : gen, op.at("n").get<std::int64_t>());
      const auto want = out.get<std::vector<std::int64_t>>();
      if (perm != want) {
        BOOST_ERROR(what << ": permutation differs");
        ++t.mismatches;
      }
      t.values += perm.size();
    } else {
      BOOST_FAIL("unknown op " << kind << " in " << name);
    }
  }
  ++t.cases;
}

// Runs every golden case whose name starts with `prefix`; fails if there is none.
Tally run_cases(const std::string& prefix) {
  Tally t;
  for (const json& c : goldens().at("cases")) {
    if (c.at("name").get<std::string>().rfind(prefix, 0) == 0) run_case(c, t);
  }
  BOOST_TEST_MESSAGE(prefix << ": " << t.cases << " cases, " << t.values << " values, " << t.mismatches << " mismatches");
  BOOST_TEST(t.cases > 0);
  BOOST_TEST(t.mismatches == 0u);
  return t;
}

}  // namespace

BOOST_AUTO_TEST_CASE(goldens_come_from_an_avx2_torch) {
  // The float32 normal path depends on the CPU capability torch dispatched to.
  BOOST_TEST(goldens().at("cpu_capability").get<std::string>() == "AVX2");
}

BOOST_AUTO_TEST_CASE(mt19937_seeding_and_random64) {
  // mt19937 seeded with 0: first output 2357136044 (reference init_genrand); random64 puts the
  // first 32-bit draw in the high half. Seeds above 2^32 keep their low 32 bits.
  tr::Generator g(0);
  BOOST_TEST(g.random() == 2357136044u);
  tr::Generator h(0);
  const std::uint64_t r = h.random64();
  BOOST_TEST((r >> 32) == 2357136044u);
  tr::Generator a(7), b((std::uint64_t{1} << 32) + 7);
  BOOST_TEST(a.random() == b.random());
  BOOST_TEST(b.initial_seed() == (std::uint64_t{1} << 32) + 7);
}

BOOST_AUTO_TEST_CASE(manual_seed_clears_the_cached_normal) {
  tr::Generator g(3);
  const double first = tr::normal_scalar(g);
  BOOST_TEST(g.next_double_normal_sample.has_value());
  g.manual_seed(3);
  BOOST_TEST(!g.next_double_normal_sample.has_value());
  BOOST_TEST(std::bit_cast<std::uint64_t>(tr::normal_scalar(g)) == std::bit_cast<std::uint64_t>(first));
}

BOOST_AUTO_TEST_CASE(randn_float64_matches_torch) { run_cases("randn float64"); }
BOOST_AUTO_TEST_CASE(randn_float32_matches_torch) { run_cases("randn float32"); }
BOOST_AUTO_TEST_CASE(uniform_matches_torch) { run_cases("uniform"); }
BOOST_AUTO_TEST_CASE(mha_init_matches_torch) { run_cases("mha"); }
BOOST_AUTO_TEST_CASE(randperm_matches_torch) { run_cases("randperm"); }

BOOST_AUTO_TEST_CASE(lesson_listings_match_torch) {
  // shared/seeds/001 listings 3, 4, 5: manual_seed(0); MultiheadAttention(16, 4, float64);
  // randn(1, n, 16) for n = 6, 7, 8; randperm(7) on Generator().manual_seed(3); and listing 5's
  // second randn(1, 3, 16) continuing the stream.
  const Tally t = run_cases("lesson listing");
  BOOST_TEST(t.cases == 3u);
}

BOOST_AUTO_TEST_CASE(every_golden_case_is_covered) {
  std::size_t n = 0;
  for (const char* p : {"randn float64", "randn float32", "uniform", "mha", "randperm", "lesson listing"}) {
    for (const json& c : goldens().at("cases")) n += c.at("name").get<std::string>().rfind(p, 0) == 0;
  }
  BOOST_TEST(n == goldens().at("cases").size());
}

BOOST_AUTO_TEST_CASE(randperm_is_a_permutation_and_rejects_bad_n) {
  tr::Generator g(11);
  for (std::int64_t n = 0; n <= 60; ++n) {
    auto p = tr::randperm(g, n);
    std::sort(p.begin(), p.end());
    std::vector<std::int64_t> iota(static_cast<std::size_t>(n));
    std::iota(iota.begin(), iota.end(), 0);
    BOOST_TEST(p == iota);
  }
  BOOST_CHECK_THROW(tr::randperm(g, -1), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(mha_init_rejects_bad_dimensions) {
  tr::Generator g(0);
  BOOST_CHECK_THROW(tr::mha_init<double>(g, 16, 3), std::invalid_argument);
  BOOST_CHECK_THROW(tr::mha_init<double>(g, 0, 1), std::invalid_argument);
  BOOST_CHECK_THROW(tr::mha_init<float>(g, 8, 0), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()  // test_numeric_torch_random
