#include <boost/test/unit_test.hpp>

// block_gemm (kernels/fused/block_gemm.hpp) on every vector path this CPU runs: each C[i][j] is the
// chain fma(A[i][t], B[t][j], ·) over t in order, so every path must equal that chain written
// here with std::fma, bit for bit, for shapes with row and column tails; and the fused kernel
// must give the same bits on every path (baseline and AVX2 here, AVX-512 where the CPU has it:
// a path the CPU lacks is reported, not passed) and stay within rounding of its BLAS products.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "kernels/fused/block_gemm.hpp"
#include "kernels/fused/fused_attention.hpp"
#include "kernels/platform/vector_path.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_block_gemm).
BOOST_AUTO_TEST_SUITE(test_kernels_block_gemm)

namespace {

template <class T>
std::vector<T> uniform(std::mt19937_64& gen, std::size_t n) {
  std::vector<T> x(n);
  for (auto& e : x) e = static_cast<T>(static_cast<double>(gen() >> 11) * 0x1p-53 * 2 - 1);
  return x;
}

template <class T>
bool same_bits(const T* a, const T* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(T)) == 0; }

std::vector<vl::VectorPath> runnable_paths() {
  std::vector<vl::VectorPath> out;
  for (auto p : vl::all_vector_paths)
    if (vl::cpu_runs(p)) out.push_back(p);
    else BOOST_TEST_MESSAGE(vl::vector_path_name(p) << " path: not run, this CPU lacks it");
  return out;
}

template <class T>
void gemm_equals_the_fma_chain() {
  std::mt19937_64 gen(7);
  // m, n, k: full tiles, row tails (m mod 6; 7, 8, 13 and 128 end in 4 + 3 or 4 + 4 rows), column tails below one vector and one tile.
  for (auto [m, n, k] : {std::array<std::size_t, 3>{64, 64, 64}, {13, 37, 5}, {1, 1, 1}, {7, 100, 64}, {6, 17, 33}, {65, 9, 3}, {8, 24, 16}, {128, 40, 7}}) {
    const std::size_t ldb = n + 5, ldc = n + 2;
    // A row-major (m × k, leading dimension k + 3) or stored transposed (k × m, leading m + 3).
    for (bool transpose_a : {false, true}) {
      const std::size_t lda = transpose_a ? m + 3 : k + 3;
      const auto a = uniform<T>(gen, (transpose_a ? k : m) * lda), b = uniform<T>(gen, k * ldb), c0 = uniform<T>(gen, m * ldc);
      auto a_it = [&](std::size_t i, std::size_t t) { return transpose_a ? a[t * lda + i] : a[i * lda + t]; };
      for (bool accumulate : {false, true}) {
        std::vector<T> want = c0;
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t j = 0; j < n; ++j) {
            T acc = accumulate ? c0[i * ldc + j] : T(0);
            for (std::size_t t = 0; t < k; ++t) acc = std::fma(a_it(i, t), b[t * ldb + j], acc);
            want[i * ldc + j] = acc;
          }
        for (auto path : runnable_paths()) {
          std::vector<T> c = c0;
          vl::block_gemm(path, transpose_a, accumulate, m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
          BOOST_TEST(same_bits(c.data(), want.data(), c.size()), vl::vector_path_name(path)
                                                                     << " m=" << m << " n=" << n << " k=" << k << " transpose_a="
                                                                     << transpose_a << " accumulate=" << accumulate);
        }
      }
    }
  }
}

// Equal bits, NaN in the same places (a NaN's payload is not the point).
template <class T>
bool same_bits_or_both_nan(const T* a, const T* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (std::isnan(a[i]) ? !std::isnan(b[i]) : std::memcmp(a + i, b + i, sizeof(T)) != 0) return false;
  return true;
}

template <class T>
void fused_same_bits_on_every_path() {
  std::mt19937_64 gen(11);
  const std::size_t d = 64;
  // Causal top-left, Sq = Sk = 300; and bottom-right with Sq = 300 > Sk = 200, so that the first
  // 100 queries see no key (the step's m' = −∞ branch), with a NaN in one query that sees keys.
  for (bool second : {false, true}) {
    const std::size_t sq = 300, sk = second ? 200 : 300;
    xt::xtensor<T, 4> q = xt::xtensor<T, 4>::from_shape({1, 2, sq, d}), k = xt::xtensor<T, 4>::from_shape({1, 2, sk, d}), v = k;
    for (auto* x : {&q, &k, &v})
      for (auto& e : *x) e = static_cast<T>(static_cast<double>(gen() >> 11) * 0x1p-53 * 4 - 2);
    vl::AttentionOptions<T> o;
    o.causal = true;
    if (second) {
      o.alignment = vl::CausalAlignment::bottom_right;
      q(0, 1, 250, 3) = std::numeric_limits<T>::quiet_NaN();
    }
    vl::FusedConfig base{64, 100, 2};
    base.path = vl::VectorPath::baseline;
    const auto ref = vl::fused_attention<T>(q, k, v, o, base);
    if (second) {
      BOOST_TEST(ref(0, 0, 0, 0) == T(0));  // no visible key: zeros
      BOOST_TEST(std::isnan(ref(0, 1, 250, 0)));
      BOOST_TEST(!std::isnan(ref(0, 1, 249, 0)));
    }
    for (auto path : runnable_paths()) {
      for (std::size_t threads : {1, 2}) {
        vl::FusedConfig c{64, 100, threads};
        c.path = path;
        const auto out = vl::fused_attention<T>(q, k, v, o, c);
        BOOST_TEST(same_bits_or_both_nan(out.data(), ref.data(), out.size()),
                   vl::vector_path_name(path) << ", " << threads << " threads, case " << second);
      }
    }
    if (second) continue;
    // The BLAS products reassociate the same sums: equal within rounding, not in bits.
    vl::FusedConfig blas{64, 100, 2};
    blas.blas_products = true;
    const auto via_blas = vl::fused_attention<T>(q, k, v, o, blas);
    double worst = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::abs(double(ref.data()[i]) - double(via_blas.data()[i])));
    BOOST_TEST(worst < (sizeof(T) == 4 ? 1e-5 : 1e-13));
    BOOST_TEST(worst > 0.0);  // a different order of the same sums: were it 0, the switch would not switch
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(float32_gemm_equals_the_fma_chain) { gemm_equals_the_fma_chain<float>(); }
BOOST_AUTO_TEST_CASE(float64_gemm_equals_the_fma_chain) { gemm_equals_the_fma_chain<double>(); }
BOOST_AUTO_TEST_CASE(float32_fused_same_bits_on_every_path) { fused_same_bits_on_every_path<float>(); }
BOOST_AUTO_TEST_CASE(float64_fused_same_bits_on_every_path) { fused_same_bits_on_every_path<double>(); }

BOOST_AUTO_TEST_CASE(a_path_the_cpu_lacks_is_refused) {
  for (auto path : vl::all_vector_paths) {
    if (vl::cpu_runs(path)) continue;
    vl::FusedConfig c;
    c.path = path;
    xt::xtensor<float, 4> x = xt::zeros<float>({1, 1, 4, 4});
    BOOST_CHECK_THROW(vl::fused_attention<float>(x, x, x, {}, c), std::invalid_argument);
  }
}

BOOST_AUTO_TEST_SUITE_END()  // test_kernels_block_gemm
