#include <boost/test/unit_test.hpp>

// exp_f64 (kernels/fused/exp_f64.hpp), the float64 exp of the fused kernel's softmax, through the very
// step the kernel runs (online_softmax_block with one key and a running maximum of 0, which
// leaves exp(x) in place) on every vector path this CPU runs: within 2 ulp of the reference on
// 2·10⁶ arguments in [−708, 0] (uniform by value, and uniform by binade down to 2⁻¹⁰⁷⁴), the
// same bits as the scalar exp_f64 on every path (vector lanes and the scalar tail alike), and
// its special values in lanes and in the tail. The reference: long double's expl (64-bit
// significand, error well under an ulp of double) rounded to double, so nearly correctly rounded.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/fused/exp_f64.hpp"
#include "kernels/fused/online_softmax_block.hpp"
#include "kernels/platform/vector_path.hpp"
#include "tensor_bits.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_exp_f64).
BOOST_AUTO_TEST_SUITE(test_kernels_exp_f64)

namespace {

using vl::verify::units_apart;  // both ≥ 0 here: one bit pattern per double, in order

std::vector<double> sample() {
  std::mt19937_64 gen(64);
  std::uniform_real_distribution<double> by_value(-708.0, 0.0);
  std::vector<double> xs;
  for (int i = 0; i < 1'000'000; ++i) xs.push_back(by_value(gen));
  for (int i = 0; i < 1'000'000; ++i) {  // |x| = 2⁻ᵉ · [1, 2) for e = 0 … 1074, and [1, 512)
    const int e = int(gen() % 1084) - 9;
    const double x = -std::ldexp(1.0 + double(gen() >> 11) * 0x1p-53, -e);
    if (x >= -708.0) xs.push_back(x);
  }
  // Special values at the front (vector lanes) and at the back (the scalar tail: 2·10⁶ + 3 is no
  // multiple of a vector's lanes).
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  xs.insert(xs.begin(), {0.0, -0.0, -inf, nan, -708.0, -708.5, -1e300, -5e-324});
  xs.insert(xs.end(), {-708.5, -inf, nan});
  return xs;
}

// exp of every x through the kernel's step on `path`.
std::vector<double> kernel_exp(vl::VectorPath path, const std::vector<double>& xs) {
  std::vector<double> y = xs, m(xs.size(), 0.0), sum(xs.size()), alpha(xs.size());
  vl::online_softmax_block(path, y.data(), 1, y.size(), y.size(), m.data(), sum.data(), alpha.data());
  return y;
}

}  // namespace

BOOST_AUTO_TEST_CASE(within_two_ulp_on_every_path) {
  const auto xs = sample();
  std::vector<double> ref(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) ref[i] = double(std::exp(static_cast<long double>(xs[i])));
  for (auto path : vl::all_vector_paths) {
    if (!vl::cpu_runs(path)) {
      BOOST_TEST_MESSAGE(vl::vector_path_name(path) << " path: not run, this CPU lacks it");
      continue;
    }
    const auto y = kernel_exp(path, xs);
    std::int64_t worst = 0;
    double worst_x = 0;
    std::size_t not_scalar = 0, specials_wrong = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      double scalar;
      vl::exp_f64<double, std::int64_t>(xs[i], scalar);
      not_scalar += std::memcmp(&scalar, &y[i], 8) != 0 && !(std::isnan(scalar) && std::isnan(y[i]));
      if (std::isnan(xs[i]) || xs[i] < -708.0) {  // NaN → NaN; below the floor (and −∞) → 0
        specials_wrong += std::isnan(xs[i]) ? !std::isnan(y[i]) : y[i] != 0.0;
        continue;
      }
      if (units_apart(y[i], ref[i]) > worst) worst = units_apart(y[i], ref[i]), worst_x = xs[i];
    }
    BOOST_TEST(not_scalar == 0u, vl::vector_path_name(path) << ": " << not_scalar << " results differ from the scalar exp_f64");
    BOOST_TEST(specials_wrong == 0u, vl::vector_path_name(path));
    BOOST_TEST_MESSAGE(vl::vector_path_name(path) << ": worst " << worst << " ulp at x = " << worst_x);
    BOOST_TEST(worst <= 2, vl::vector_path_name(path) << ": " << worst << " ulp at x = " << worst_x);
    // The ulp measure itself can fail: the same values 3 ulp up are caught.
    std::int64_t shifted = 0;
    for (std::size_t i = 100; i < 1100; ++i) {  // past the special values
      double z = y[i];
      for (int k = 0; k < 3; ++k) z = std::nextafter(z, 2.0);
      shifted = std::max(shifted, units_apart(z, ref[i]));
    }
    BOOST_TEST(shifted > 2);
  }
}

BOOST_AUTO_TEST_CASE(special_values) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  auto e = [](double x) {
    double y;
    vl::exp_f64<double, std::int64_t>(x, y);
    return y;
  };
  BOOST_TEST(e(0.0) == 1.0);
  BOOST_TEST(e(-0.0) == 1.0);
  BOOST_TEST(e(-inf) == 0.0);
  BOOST_TEST(std::isnan(e(nan)));
  BOOST_TEST(e(-708.5) == 0.0);  // below the domain's floor: 0 (there eˣ < 3.3·10⁻³⁰⁸)
  BOOST_TEST(e(-708.0) > 0.0);
  BOOST_TEST(std::isnormal(e(-708.0)));
}

BOOST_AUTO_TEST_SUITE_END()  // test_kernels_exp_f64
