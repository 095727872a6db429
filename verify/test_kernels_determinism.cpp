#include <boost/test/unit_test.hpp>

// The reference kernels are deterministic: the same inputs give bit-identical outputs on
// repeated runs, and with OpenBLAS on 1 or 2 threads (set through openblas_set_num_threads,
// looked up in the library opened on demand, kernels/platform/blas_library.hpp, which throws where
// OpenBLAS cannot be opened; a BLAS without those controls is skipped, saying so) —
// unless the BLAS itself is not reproducible across thread counts on this CPU (probed below),
// where the kernels built on its GEMM are compared within rounding instead.
// The sizes are large enough for OpenBLAS to split its GEMMs over threads.
#include "kernels/platform/blas_library.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <random>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "kernels/reference/attention.hpp"
#include "kernels/fused/blas_gemm.hpp"
#include "kernels/reference/feature_map.hpp"
#include "kernels/fused/fused_attention.hpp"
#include "kernels/fused/linear_attention_fast.hpp"
#include "kernels/reference/linear_attention.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_determinism).
BOOST_AUTO_TEST_SUITE(test_kernels_determinism)

namespace {

using SetThreads = void (*)(int);
using GetThreads = int (*)();

// OpenBLAS is opened on demand (kernels/platform/blas_library.hpp): asking opens it.
SetThreads set_threads() { return reinterpret_cast<SetThreads>(vl::blas::symbol("openblas_set_num_threads")); }
GetThreads get_threads() { return reinterpret_cast<GetThreads>(vl::blas::symbol("openblas_get_num_threads")); }

template <class T, std::size_t N>
xt::xtensor<T, N> uniform(std::mt19937_64& gen, const std::array<std::size_t, N>& shape) {
  xt::xtensor<T, N> x(shape);
  for (auto& e : x) e = static_cast<T>(static_cast<double>(gen() >> 11) * 0x1p-53 * 4 - 2);
  return x;
}

template <class T, std::size_t N>
std::vector<unsigned char> bytes(const xt::xtensor<T, N>& a) {
  std::vector<unsigned char> b(a.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), a.data(), b.size());
  return b;
}

template <class T>
const T* values(const std::vector<unsigned char>& b) {
  return reinterpret_cast<const T*>(b.data());
}

// max |a − b| / max |a| over two outputs of the same size.
template <class T>
double relative_difference(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size() / sizeof(T); ++i) {
    diff = std::max(diff, std::fabs(double(values<T>(a)[i]) - double(values<T>(b)[i])));
    scale = std::max(scale, std::fabs(double(values<T>(a)[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

// Whether the BLAS itself gives the same bits on 1 and 2 threads for a product of this test's
// sizes ((192 × 64)·(64 × 256)). OpenBLAS 0.3.21's float32 Haswell kernels (which it also runs on
// AMD Zen 1–3) do not: measured here, 1268 of the 49152 products differ in their last bits, as
// the threads' partition moves rows between the full and the edge micro-kernels. Its float64
// kernels, and its SkylakeX kernels (AVX-512), do.
template <class T>
bool blas_reproducible_across_threads() {
  std::mt19937_64 gen(3);
  const auto a = uniform<T, 2>(gen, {192, 64}), b = uniform<T, 2>(gen, {256, 64});
  auto product = [&](int threads) {
    set_threads()(threads);
    xt::xtensor<T, 2> c = xt::zeros<T>({192, 256});
    vl::blas::gemm(false, true, 192, 256, 64, T(1), a.data(), 64, b.data(), 64, T(0), c.data(), 256);
    return bytes(c);
  };
  return product(1) == product(2);
}

// Every output of the kernels under test, as bytes, for one thread count.
template <class T>
std::vector<std::vector<unsigned char>> run_all(int threads) {
  if (auto set = set_threads()) set(threads);
  std::mt19937_64 gen(7);
  const auto q = uniform<T, 4>(gen, {2, 2, 192, 64});
  const auto k = uniform<T, 4>(gen, {2, 2, 256, 64});
  const auto v = uniform<T, 4>(gen, {2, 2, 256, 48});
  std::vector<std::vector<unsigned char>> out;
  vl::AttentionOptions<T> opt;
  opt.return_weights = true;
  auto r = vl::attention<T>(q, k, v, opt);
  out.push_back(bytes(r.output));
  out.push_back(bytes(r.weights));
  opt.causal = true;
  opt.alignment = vl::CausalAlignment::bottom_right;
  r = vl::attention<T>(q, k, v, opt);
  out.push_back(bytes(r.output));

  // The fused kernel splits work over its own threads by (batch, head, query block): each row's
  // online softmax runs on one thread in a fixed key order, so the thread count changes no bit.
  opt.return_weights = false;
  vl::FusedConfig config;
  config.threads = std::size_t(threads);
  config.block_k = 96;  // 256 keys: two whole blocks and a short one
  out.push_back(bytes(vl::fused_attention<T>(q, k, v, opt, config)));
  opt.causal = false;
  out.push_back(bytes(vl::fused_attention<T>(q, k, v, opt, config)));

  const auto lq = uniform<T, 2>(gen, {384, 64}), lk = uniform<T, 2>(gen, {384, 64}), lv = uniform<T, 2>(gen, {384, 96});
  const auto pq = vl::elu_plus_one<T, 2>(lq), pk = vl::elu_plus_one<T, 2>(lk);
  out.push_back(bytes(vl::linear_attention_parallel<T>(pq, pk, lv)));
  out.push_back(bytes(vl::linear_attention_recurrent<T>(pq, pk, lv)));
  out.push_back(bytes(vl::linear_attention_chunked<T>(pq, pk, lv, 64)));
  out.push_back(bytes(vl::linear_attention_chunked<T>(pq, pk, lv, 7)));
  out.push_back(bytes(vl::linear_attention_chunked_fast<T>(pq, pk, lv, 64)));
  return out;
}

const char* const kNames[] = {"attention output", "attention weights", "causal attention output",
                              "fused attention, causal bottom-right", "fused attention",
                              "linear attention (parallel)", "linear attention (recurrent)",
                              "linear attention (chunked, 64)", "linear attention (chunked, 7)",
                              "linear attention (fast chunked, 64)"};

// The outputs that do not depend on the BLAS's thread count whatever the BLAS: the fused
// kernel keeps OpenBLAS on one thread while its own threads run.
bool uses_threaded_blas(const std::string& name) { return name.rfind("fused attention", 0) != 0; }

template <class T>
void check_deterministic() {
  const int before = get_threads() ? get_threads()() : 1;
  const bool blas_reproducible = !set_threads() || blas_reproducible_across_threads<T>();
  const auto one = run_all<T>(1);
  const auto again = run_all<T>(1);
  const auto two = run_all<T>(2);
  const auto two_again = run_all<T>(2);
  if (auto set = set_threads()) set(before);
  if (!blas_reproducible)
    BOOST_TEST_MESSAGE("this BLAS's " << (sizeof(T) == 4 ? "float32" : "float64")
                                      << " GEMM differs between 1 and 2 threads: the kernels built on it are compared within rounding");
  // Within rounding: each output is a dot product or a ratio of sums of at most 384 terms of
  // magnitude ≤ 4, so two summation orders differ by at most γ_384 ≈ 384·u relative to the
  // largest output (u = 2⁻²⁴ in float32).
  const double rounding = 384 * std::numeric_limits<T>::epsilon() / 2;
  for (std::size_t i = 0; i < one.size(); ++i) {
    BOOST_TEST_CONTEXT(kNames[i]) {
      BOOST_TEST((one[i] == again[i]), "repeated run on 1 thread differs");
      BOOST_TEST((two[i] == two_again[i]), "repeated run on 2 threads differs");
      if (blas_reproducible || !uses_threaded_blas(kNames[i])) {
        BOOST_TEST((one[i] == two[i]), "1 thread and 2 threads differ");
      } else {
        const double d = relative_difference<T>(one[i], two[i]);
        BOOST_TEST(d <= rounding, "1 thread and 2 threads differ by " << d << " relative, beyond rounding (" << rounding << ")");
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(openblas_thread_control_is_found) {
  // Without it the 1-vs-2-threads comparison below compares a run with itself.
  if (!set_threads()) {
    BOOST_TEST_MESSAGE("openblas_set_num_threads not found: not OpenBLAS; thread counts not compared");
    return;
  }
  set_threads()(2);
  BOOST_TEST(get_threads()() == 2);
}

BOOST_AUTO_TEST_CASE(bit_identical_double) { check_deterministic<double>(); }
BOOST_AUTO_TEST_CASE(bit_identical_float) { check_deterministic<float>(); }

// The fused kernel keeps OpenBLAS on one thread and shuts its idle pool down while its own
// threads run; afterwards OpenBLAS has the thread count it had, and a threaded product (which
// starts the pool again) still gives the plain kernel's bits.
BOOST_AUTO_TEST_CASE(fused_kernel_gives_openblas_back_as_it_found_it) {
  if (!set_threads()) {
    BOOST_TEST_MESSAGE("openblas_set_num_threads not found: not OpenBLAS; nothing to check");
    return;
  }
  std::mt19937_64 gen(11);
  const auto q = uniform<double, 4>(gen, {1, 2, 256, 64}), k = uniform<double, 4>(gen, {1, 2, 256, 64});
  const auto v = uniform<double, 4>(gen, {1, 2, 256, 64});
  set_threads()(2);
  const auto before = bytes(vl::attention<double>(q, k, v).output);
  (void)vl::fused_attention<double>(q, k, v);
  BOOST_TEST(get_threads()() == 2);
  BOOST_TEST((bytes(vl::attention<double>(q, k, v).output) == before), "the plain kernel after the fused one differs");
}

BOOST_AUTO_TEST_SUITE_END()  // test_kernels_determinism
