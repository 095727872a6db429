#include <boost/test/unit_test.hpp>

// The platform pieces the fused kernels stand on: GCC's vector types (kernels/platform/
// vector_types.hpp: sizes, lane counts, lane-wise operations with the scalar's bits), the fused
// multiply-add of each vector path (kernels/platform/multiply_add.hpp: a·b + c rounded once, the
// same bits as std::fma in every lane; a path this CPU lacks is reported, not passed),
// OpenBLAS on one thread for the life of an object (kernels/platform/blas_threads.hpp), and
// whether a library is loaded, asked again only when the loader has changed what is
// (kernels/platform/library_presence.hpp), also in a forked child.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "forked_child.hpp"
#include "kernels/fused/blas_gemm.hpp"
#include "kernels/platform/blas_library.hpp"
#include "kernels/platform/blas_threads.hpp"
#include "kernels/platform/library_presence.hpp"
#include "kernels/platform/multiply_add.hpp"
#include "kernels/platform/vector_path.hpp"
#include "kernels/platform/vector_types.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_platform).
BOOST_AUTO_TEST_SUITE(test_kernels_platform)

namespace simd = vl::simd;

// Lanes of a GCC vector type.
template <class V>
constexpr std::size_t lanes_of = sizeof(V) / sizeof(std::declval<V>()[0]);

// vector_size in bytes and element types, as the kernels rely on them (exp_f32 bit-casts f32x16 to
// i32x16; 16 floats are one AVX-512 register): a wrong typedef fails to compile here.
static_assert(sizeof(simd::f32x16) == 64 && lanes_of<simd::f32x16> == 16);
static_assert(sizeof(simd::i32x16) == 64 && lanes_of<simd::i32x16> == 16);
static_assert(sizeof(simd::f32x8) == 32 && lanes_of<simd::f32x8> == 8);
static_assert(sizeof(simd::i32x8) == 32 && lanes_of<simd::i32x8> == 8);
static_assert(sizeof(simd::f32x4) == 16 && lanes_of<simd::f32x4> == 4);
static_assert(sizeof(simd::i32x4) == 16 && lanes_of<simd::i32x4> == 4);
static_assert(sizeof(simd::f64x8) == 64 && lanes_of<simd::f64x8> == 8);
static_assert(sizeof(simd::i64x8) == 64 && lanes_of<simd::i64x8> == 8);
static_assert(sizeof(simd::f64x4) == 32 && lanes_of<simd::f64x4> == 4);
static_assert(sizeof(simd::i64x4) == 32 && lanes_of<simd::i64x4> == 4);
static_assert(sizeof(simd::f64x2) == 16 && lanes_of<simd::f64x2> == 2);
static_assert(sizeof(simd::i64x2) == 16 && lanes_of<simd::i64x2> == 2);
static_assert(std::is_same_v<std::remove_cvref_t<decltype(std::declval<simd::f32x16>()[0])>, float>);
static_assert(std::is_same_v<std::remove_cvref_t<decltype(std::declval<simd::i32x16>()[0])>, std::int32_t>);
static_assert(std::is_same_v<std::remove_cvref_t<decltype(std::declval<simd::f64x8>()[0])>, double>);
static_assert(std::is_same_v<std::remove_cvref_t<decltype(std::declval<simd::i64x8>()[0])>, std::int64_t>);

template <class S>
bool same_bits(S a, S b) { return std::memcmp(&a, &b, sizeof(S)) == 0; }

// Each operation the kernels write on vectors acts lane by lane with the scalar's bits: products,
// differences, the select x > y ? x : y (NaN never selected by >), a comparison's mask (−1 / 0) and
// a bit cast to the integer vector and back.
template <class F, class I>
void lane_wise() {
  using S = std::remove_cvref_t<decltype(std::declval<F>()[0])>;
  constexpr std::size_t n = lanes_of<F>;
  std::mt19937_64 gen(n);
  F x, y;
  for (std::size_t i = 0; i < n; ++i) x[i] = S(double(gen() % 2001) / 7 - 140), y[i] = S(double(gen() % 2001) / 3 - 330);
  x[n - 1] = std::numeric_limits<S>::quiet_NaN();
  const F prod = x * y, diff = x - y, pick = x > y ? x : y;
  const I mask = x > y;
  const I bits = __builtin_bit_cast(I, x);
  const F back = __builtin_bit_cast(F, bits);
  for (std::size_t i = 0; i < n; ++i) {
    BOOST_TEST(same_bits<S>(prod[i], x[i] * y[i]), n << " lanes, lane " << i);
    BOOST_TEST(same_bits<S>(diff[i], x[i] - y[i]), n << " lanes, lane " << i);
    BOOST_TEST(same_bits<S>(pick[i], x[i] > y[i] ? x[i] : y[i]), n << " lanes, lane " << i);
    BOOST_TEST(mask[i] == (x[i] > y[i] ? -1 : 0), n << " lanes, lane " << i);
    BOOST_TEST(same_bits<S>(back[i], x[i]), n << " lanes, lane " << i);
  }
}

BOOST_AUTO_TEST_CASE(vector_types_act_lane_by_lane) {
  lane_wise<simd::f32x16, simd::i32x16>();
  lane_wise<simd::f32x8, simd::i32x8>();
  lane_wise<simd::f32x4, simd::i32x4>();
  lane_wise<simd::f64x8, simd::i64x8>();
  lane_wise<simd::f64x4, simd::i64x4>();
  lane_wise<simd::f64x2, simd::i64x2>();
}

// One rounding: with a = b = 1 + 2⁻ʰ (h = 12 for float, 27 for double) and c = −1, a·b + c =
// 2¹⁻ʰ + 2⁻²ʰ exactly, which the format holds; a product rounded first loses 2⁻²ʰ. That case sits
// in the first and last lanes; the other lanes, random, must be std::fma's bits.
template <class F, class Fma>
void fused_once(const char* what, Fma fma) {
  using S = std::remove_cvref_t<decltype(std::declval<F>()[0])>;
  constexpr std::size_t n = lanes_of<F>;
  const int h = sizeof(S) == 4 ? 12 : 27;
  const S x = S(1) + std::ldexp(S(1), -h), want = std::ldexp(S(1), 1 - h) + std::ldexp(S(1), -2 * h);
  std::mt19937_64 gen(3 * n + sizeof(S));
  auto draw = [&] { return static_cast<S>(static_cast<double>(gen() >> 11) * 0x1p-53 * 4 - 2); };
  F a, b, c, out;
  for (std::size_t i = 0; i < n; ++i) a[i] = draw(), b[i] = draw(), c[i] = draw();
  for (std::size_t i : {std::size_t(0), n - 1}) a[i] = x, b[i] = x, c[i] = S(-1);
  fma(a, b, c, out);
  BOOST_TEST(out[0] == want, what);
  BOOST_TEST(out[n - 1] == want, what);
  for (std::size_t i = 0; i < n; ++i) BOOST_TEST(same_bits<S>(out[i], std::fma(a[i], b[i], c[i])), what << ", lane " << i);
}

// A scalar seen as a one-lane "vector" for fused_once.
template <class S>
struct One {
  S v;
  S& operator[](std::size_t) { return v; }
  const S& operator[](std::size_t) const { return v; }
};
template <class S>
constexpr std::size_t lanes_of<One<S>> = 1;

template <class Path, class F>
void baseline_fma(const F& a, const F& b, const F& c, F& out) { Path::fma(a, b, c, out); }

BOOST_AUTO_TEST_CASE(baseline_multiply_add_rounds_once) {
  using B = simd::MultiplyAddBaseline;
  fused_once<One<float>>("baseline float", [](const One<float>& a, const One<float>& b, const One<float>& c, One<float>& o) { B::fma(a.v, b.v, c.v, o.v); });
  fused_once<One<double>>("baseline double", [](const One<double>& a, const One<double>& b, const One<double>& c, One<double>& o) { B::fma(a.v, b.v, c.v, o.v); });
  fused_once<simd::f32x4>("baseline f32x4", baseline_fma<B, simd::f32x4>);
  fused_once<simd::f32x16>("baseline f32x16", baseline_fma<B, simd::f32x16>);
  fused_once<simd::f64x2>("baseline f64x2", baseline_fma<B, simd::f64x2>);
  fused_once<simd::f64x8>("baseline f64x8", baseline_fma<B, simd::f64x8>);
}

#if defined(__GNUC__) && defined(__x86_64__)
// Called from functions built for the path, as the kernels call them.
__attribute__((target("avx2,fma"))) void avx2_f(const One<float>& a, const One<float>& b, const One<float>& c, One<float>& o) {
  simd::MultiplyAddAvx2::fma(a.v, b.v, c.v, o.v);
}
__attribute__((target("avx2,fma"))) void avx2_d(const One<double>& a, const One<double>& b, const One<double>& c, One<double>& o) {
  simd::MultiplyAddAvx2::fma(a.v, b.v, c.v, o.v);
}
__attribute__((target("avx2,fma"))) void avx2_f8(const simd::f32x8& a, const simd::f32x8& b, const simd::f32x8& c, simd::f32x8& o) {
  simd::MultiplyAddAvx2::fma(a, b, c, o);
}
__attribute__((target("avx2,fma"))) void avx2_d4(const simd::f64x4& a, const simd::f64x4& b, const simd::f64x4& c, simd::f64x4& o) {
  simd::MultiplyAddAvx2::fma(a, b, c, o);
}
__attribute__((target("avx2,fma"))) void avx2_f16(const simd::f32x16& a, const simd::f32x16& b, const simd::f32x16& c, simd::f32x16& o) {
  simd::MultiplyAddAvx2::fma(a, b, c, o);
}
__attribute__((target("avx512f,fma"))) void avx512_f(const One<float>& a, const One<float>& b, const One<float>& c, One<float>& o) {
  simd::MultiplyAddAvx512::fma(a.v, b.v, c.v, o.v);
}
__attribute__((target("avx512f,fma"))) void avx512_d(const One<double>& a, const One<double>& b, const One<double>& c, One<double>& o) {
  simd::MultiplyAddAvx512::fma(a.v, b.v, c.v, o.v);
}
__attribute__((target("avx512f,fma"))) void avx512_f16(const simd::f32x16& a, const simd::f32x16& b, const simd::f32x16& c, simd::f32x16& o) {
  simd::MultiplyAddAvx512::fma(a, b, c, o);
}
__attribute__((target("avx512f,fma"))) void avx512_d8(const simd::f64x8& a, const simd::f64x8& b, const simd::f64x8& c, simd::f64x8& o) {
  simd::MultiplyAddAvx512::fma(a, b, c, o);
}

BOOST_AUTO_TEST_CASE(avx2_multiply_add_rounds_once) {
  if (!vl::cpu_runs(vl::VectorPath::avx2)) {
    BOOST_TEST_MESSAGE("AVX2 path: not run, this CPU lacks it");
    return;
  }
  fused_once<One<float>>("AVX2 float", avx2_f);
  fused_once<One<double>>("AVX2 double", avx2_d);
  fused_once<simd::f32x8>("AVX2 f32x8", avx2_f8);
  fused_once<simd::f64x4>("AVX2 f64x4", avx2_d4);
  fused_once<simd::f32x16>("AVX2 f32x16 (two halves)", avx2_f16);
}

BOOST_AUTO_TEST_CASE(avx512_multiply_add_rounds_once) {
  if (!vl::cpu_runs(vl::VectorPath::avx512)) {
    BOOST_TEST_MESSAGE("AVX-512 path: not run, this CPU lacks it");
    return;
  }
  fused_once<One<float>>("AVX-512 float", avx512_f);
  fused_once<One<double>>("AVX-512 double", avx512_d);
  fused_once<simd::f32x16>("AVX-512 f32x16", avx512_f16);
  fused_once<simd::f64x8>("AVX-512 f64x8", avx512_d8);
}
#endif

// The library opened on demand: once opened, its routines and OpenBLAS's own functions are found;
// a name it lacks is null, not an error. (That a process which never calls BLAS never loads it is
// verify/cli/test_eval_cli.py's OpenBlasOnDemand: a test program here has opened it already.)
BOOST_AUTO_TEST_CASE(blas_library_opened_on_demand) {
  BOOST_TEST(vl::blas::library() != nullptr);
  BOOST_TEST(vl::blas::loaded());
  BOOST_TEST(vl::blas::symbol("cblas_dgemm") != nullptr);
  BOOST_TEST(vl::blas::symbol("openblas_get_corename") != nullptr);
  BOOST_TEST(vl::blas::symbol("vl_no_such_routine") == nullptr);
  BOOST_TEST(std::string(vl::blas::library_name()).find("openblas") != std::string::npos);
}

// LibraryPresence (kernels/platform/library_presence.hpp) keeps its answer until the dynamic
// loader loads or unloads an object: a library someone else opens later, or closes, is seen at
// once. libBrokenLocale.so.1 (glibc's, in Debian's libc6) is a library nothing here loads.
constexpr const char* kUnusedLibrary = "libBrokenLocale.so.1";

BOOST_AUTO_TEST_CASE(library_presence_sees_later_opens_and_closes) {
  vl::LibraryPresence present(kUnusedLibrary);
  BOOST_TEST(!present());
  BOOST_TEST(!present());
  void* h = dlopen(kUnusedLibrary, RTLD_LAZY | RTLD_LOCAL);
  BOOST_TEST_REQUIRE(h != nullptr, kUnusedLibrary << " cannot be opened: " << dlerror());
  BOOST_TEST(present());
  BOOST_TEST(present());
  BOOST_TEST(dlclose(h) == 0);
  BOOST_TEST(!present());
  vl::LibraryPresence blas(vl::blas::library_name());
  BOOST_TEST(blas() == vl::blas::loaded());
}

// A child forked while another thread of its parent is inside dl_iterate_phdr (whose lock glibc
// does not reset at fork) still gets its answers: it asks dlopen, and never waits on that lock.
BOOST_AUTO_TEST_CASE(library_presence_in_a_child_forked_during_dl_iterate_phdr) {
  vl::LibraryPresence present(kUnusedLibrary);
  BOOST_TEST(!present());  // made, and asked, in the parent
  struct Hold {
    std::mutex m;
    std::condition_variable cv;
    bool inside = false, release = false;
  } hold;
  std::thread holder([&] {
    dl_iterate_phdr(
        [](dl_phdr_info*, std::size_t, void* arg) {
          auto& h = *static_cast<Hold*>(arg);
          std::unique_lock lock(h.m);
          h.inside = true;
          h.cv.notify_all();
          h.cv.wait(lock, [&] { return h.release; });
          return 1;
        },
        &hold);
  });
  {
    std::unique_lock lock(hold.m);
    hold.cv.wait(lock, [&] { return hold.inside; });
  }
  const pid_t child = ::fork();
  if (child == 0) {
    // (Opening a library here would wait on that lock too: glibc takes it to add the library.)
    ::_exit(!present() && !present() ? 0 : 1);
  }
  const bool forked = child > 0;
  const bool succeeded = forked && forked_child_succeeded(child, 20, "LibraryPresence asked in a forked child");
  {
    std::lock_guard lock(hold.m);
    hold.release = true;
  }
  hold.cv.notify_all();
  holder.join();
  BOOST_TEST_REQUIRE(forked);
  BOOST_TEST(succeeded);
}

// SingleThreaded: OpenBLAS on one thread while it lives, the earlier count back afterwards (also
// when that count was 1), and BLAS products still right inside it and after it, when OpenBLAS
// starts its pool again. Integer matrices with small entries: every product and sum exact, so
// the result must equal the triple loop exactly, whatever order BLAS adds in.
BOOST_AUTO_TEST_CASE(single_threaded_blas_for_its_lifetime) {
  static_assert(!std::is_copy_constructible_v<vl::blas::SingleThreaded> && !std::is_copy_assignable_v<vl::blas::SingleThreaded>);
  // OpenBLAS is opened on demand (kernels/platform/blas_library.hpp): opened here, as the kernels would.
  const auto get = reinterpret_cast<int (*)()>(vl::blas::symbol("openblas_get_num_threads"));
  const auto set = reinterpret_cast<void (*)(int)>(vl::blas::symbol("openblas_set_num_threads"));
  if (!get || !set) {
    BOOST_TEST_MESSAGE("SingleThreaded: not run, OpenBLAS's thread controls are not in this process");
    return;
  }
  const int original = get();
  set(2);
  if (get() != 2) {
    BOOST_TEST_MESSAGE("SingleThreaded: not run, this OpenBLAS runs one thread only");
    set(original);
    return;
  }
  const std::size_t n = 256;
  std::vector<double> a(n * n), b(n * n), want(n * n, 0.0);
  for (std::size_t i = 0; i < n * n; ++i) a[i] = double(int(i * 7 % 5) - 2), b[i] = double(int(i * 11 % 5) - 2);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t t = 0; t < n; ++t)
      for (std::size_t j = 0; j < n; ++j) want[i * n + j] += a[i * n + t] * b[t * n + j];
  auto product_is_right = [&] {
    std::vector<double> c(n * n, 99.0);
    vl::blas::gemm(false, false, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
    return c == want;
  };
  BOOST_TEST(product_is_right());  // the pool running
  {
    vl::blas::SingleThreaded one;
    BOOST_TEST(get() == 1);
    BOOST_TEST(product_is_right());
  }
  BOOST_TEST(get() == 2);
  BOOST_TEST(product_is_right());  // the pool started again
  set(1);
  {
    vl::blas::SingleThreaded one;
    BOOST_TEST(get() == 1);
  }
  BOOST_TEST(get() == 1);
  set(original);
}

BOOST_AUTO_TEST_SUITE_END()  // test_kernels_platform
