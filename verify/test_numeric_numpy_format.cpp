#include <boost/test/unit_test.hpp>
// vl::numpy printing against NumPy 1.24 / Python 3 (goldens from reference_outputs/generators/numpy_goldens.py):
// str(ndarray) for > 1000 random float64 arrays and 300 float32 arrays, repr(float),
// np.round, and Python format specs as fmt renders them.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>

#include "numeric/numpy_format.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_numeric_numpy_format).
BOOST_AUTO_TEST_SUITE(test_numeric_numpy_format)

namespace np = vl::numpy;

namespace {

nlohmann::json load(const std::string& name) {
  std::ifstream in(std::string(VL_SOURCE_DIR "/reference_outputs/numpy/") + name);
  if (!in) throw std::runtime_error("missing golden reference_outputs/numpy/" + name);
  return nlohmann::json::parse(in);
}

double f64(const nlohmann::json& hex) { return std::strtod(hex.get<std::string>().c_str(), nullptr); }
float f32(const nlohmann::json& bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(std::stoul(bits.get<std::string>(), nullptr, 16)));
}

template <class T>
xt::xarray<T> array_of(const nlohmann::json& c) {
  std::vector<T> values;
  for (const auto& v : c.at("values")) {
    if constexpr (std::is_same_v<T, float>) {
      values.push_back(f32(v));
    } else {
      values.push_back(f64(v));
    }
  }
  const auto shape = c.at("shape").get<std::vector<std::size_t>>();
  xt::xarray<T> a = xt::adapt(values, shape);
  return a;
}

}  // namespace

BOOST_AUTO_TEST_CASE(array_str_matches_numpy) {
  const auto golden = load("array_str.json");
  std::size_t n64 = 0, n32 = 0, failures = 0;
  for (const auto& c : golden.at("cases")) {
    const std::string expected = c.at("str");
    const bool is32 = c.at("dtype") == "float32";
    const std::string got = is32 ? np::format_float32_array(array_of<float>(c))
                                 : np::format_array(array_of<double>(c));
    (is32 ? n32 : n64) += 1;
    if (got != expected && ++failures <= 20) {
      BOOST_ERROR("str() differs for shape " << c.at("shape") << " " << c.at("dtype") << ":\nnumpy:\n"
                                             << expected << "\nours:\n" << got);
    }
  }
  BOOST_TEST(failures == 0u);
  BOOST_TEST(n64 >= 1000u);
  BOOST_TEST(n32 >= 300u);
}

// Lines as the lessons print them.
BOOST_AUTO_TEST_CASE(summarised_above_1000_elements_not_at_1000) {
  // NumPy's print threshold (np.get_printoptions()["threshold"] = 1000): an array of more than
  // 1000 elements prints with "...", one of exactly 1000 in full.
  const xt::xarray<double> full = xt::ones<double>({std::size_t(1000)});
  const xt::xarray<double> more = xt::ones<double>({std::size_t(1001)});
  BOOST_TEST(np::format_array(full).find("...") == std::string::npos);
  BOOST_TEST(np::format_array(more).find("...") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(lesson_lines) {
  BOOST_TEST(np::format_array(xt::xarray<double>{0.367, 0.063, 0.113, 0.115, 0.342}) ==
             "[0.367 0.063 0.113 0.115 0.342]");
  BOOST_TEST(np::format_array(xt::xarray<double>{1.0, 1.0, 1.0, 1.0, 1.0}) == "[1. 1. 1. 1. 1.]");
  BOOST_TEST(np::format_array(xt::xarray<double>{{1.0, -2.5}, {3.25, 4.0}}) ==
             "[[ 1.   -2.5 ]\n [ 3.25  4.  ]]");
  BOOST_TEST(np::format_array(xt::xarray<double>{1e-5, 1.0}) == "[1.e-05 1.e+00]");
  BOOST_TEST(np::format_array(xt::xarray<double>{std::nan(""), -INFINITY, 1.5}) == "[ nan -inf  1.5]");
  BOOST_TEST(np::format_array(xt::xarray<double>(2.5)) == "2.5");
}

BOOST_AUTO_TEST_CASE(shape_bool_text) {
  BOOST_TEST(np::format_shape({6, 4}) == "(6, 4)");
  BOOST_TEST(np::format_shape({5}) == "(5,)");
  BOOST_TEST(np::format_shape({}) == "()");
  BOOST_TEST(np::format_shape({2, 3, 4}) == "(2, 3, 4)");
  BOOST_TEST(np::python_bool(true) == "True");
  BOOST_TEST(np::python_bool(false) == "False");
}

BOOST_AUTO_TEST_CASE(float_repr_matches_python) {
  const auto golden = load("scalars.json");
  std::size_t n = 0;
  for (const auto& c : golden.at("repr")) {
    const double x = f64(c.at("x"));
    BOOST_TEST(np::python_float_repr(x) == c.at("repr").get<std::string>(), "x = " << c.at("x"));
    ++n;
  }
  BOOST_TEST(n >= 300u);
  BOOST_TEST(np::python_float_repr(0.1) == "0.1");
  BOOST_TEST(np::python_float_repr(1e-05) == "1e-05");
  BOOST_TEST(np::python_float_repr(1.0) == "1.0");
  BOOST_TEST(np::python_float_repr(INFINITY) == "inf");
}

BOOST_AUTO_TEST_CASE(round_matches_np_round) {
  const auto golden = load("scalars.json");
  std::size_t n = 0;
  for (const auto& c : golden.at("round")) {
    const double x = f64(c.at("x"));
    const int d = c.at("decimals");
    const double y = np::round_half_even(x, d);
    BOOST_TEST(std::bit_cast<std::uint64_t>(y) == std::bit_cast<std::uint64_t>(f64(c.at("y"))),
               "np.round(" << c.at("x") << ", " << d << ")");
    ++n;
  }
  BOOST_TEST(n >= 5000u);
  BOOST_TEST(np::round_half_even(2.5, 0) == 2.0);
  BOOST_TEST(np::round_half_even(0.125, 2) == 0.12);
  BOOST_TEST(np::round_half_even(-0.5, 0) == 0.0);
  BOOST_TEST(std::signbit(np::round_half_even(-0.5, 0)));
}

// Python's format specs as fmt renders them: the lessons write {:>9.3f}, {:.2e}, {:.1e}, ...
// in Python and fmt::format(spec, x) in C++; ties (0.125 -> "0.12") round half to even on the
// exact binary value in both. Plain fmt must match for every finite value; python_format
// must match for every value (it right-aligns inf/nan, which fmt 9 left-aligns).
BOOST_AUTO_TEST_CASE(fmt_matches_python_format_specs) {
  const auto golden = load("scalars.json");
  std::size_t n = 0, ties = 0;
  for (const auto& c : golden.at("format")) {
    const std::string spec = c.at("spec");
    const double x = f64(c.at("x"));
    const std::string expected = c.at("out");
    if (std::isfinite(x)) {
      BOOST_TEST(fmt::format(fmt::runtime(spec), x) == expected, spec << " of " << c.at("x"));
    }
    BOOST_TEST(np::python_format(spec, x) == expected, spec << " of " << c.at("x"));
    ++n;
    if (x == 0.125 || x == 2.5 || x == 0.375) ++ties;
  }
  BOOST_TEST(n >= 3000u);
  BOOST_TEST(ties > 0u);
  BOOST_TEST(fmt::format("{:.2f}", 0.125) == "0.12");
  BOOST_TEST(fmt::format("{:.2f}", 0.375) == "0.38");
  BOOST_TEST(fmt::format("{:>9.3f}", -1.5) == "   -1.500");
  BOOST_TEST(fmt::format("{:.2e}", 12345.0) == "1.23e+04");
  // The difference python_format exists for: "{:8.4f}".format(inf) == "     inf".
  BOOST_TEST(fmt::format("{:8.4f}", INFINITY) != "     inf");
  BOOST_TEST(np::python_format("{:8.4f}", INFINITY) == "     inf");
  BOOST_TEST(np::python_format("{:<8.4f}", -INFINITY) == "-inf    ");
}

BOOST_AUTO_TEST_SUITE_END()  // test_numeric_numpy_format
