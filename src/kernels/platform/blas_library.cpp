// OpenBLAS opened on first use; see blas_library.hpp.
#include "kernels/platform/blas_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>

#ifndef VL_BLAS_SONAME
#define VL_BLAS_SONAME "libopenblas.so.0"
#endif

namespace vl::blas {

namespace {
std::atomic<bool> opened{false};
}  // namespace

const char* library_name() { return VL_BLAS_SONAME; }

void* library() {
  static void* const handle = [] {
    void* h = dlopen(VL_BLAS_SONAME, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
      const char* why = dlerror();
      throw std::runtime_error(std::string("BLAS: cannot open ") + VL_BLAS_SONAME + " (" + (why ? why : "no reason given") +
                               "); install OpenBLAS (scripts/install-deps.sh)");
    }
    opened = true;
    return h;
  }();
  return handle;
}

namespace {

// How many objects the dynamic loader has loaded and unloaded in this process so far (glibc's
// dl_iterate_phdr counters, asked without a system call), packed as LibraryPresence keeps them:
// 31 bits of each from bit 2 and bit 33 (they would wrap after 2³¹ loads).
std::uint64_t loader_counts() {
  std::uint64_t counts = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        *static_cast<std::uint64_t*>(out) = (std::uint64_t(info->dlpi_adds & 0x7fffffffu) << 2) | (std::uint64_t(info->dlpi_subs & 0x7fffffffu) << 33);
        return 1;  // the first object's copy of the counters is enough
      },
      &counts);
  return counts;
}

}  // namespace

bool LibraryPresence::operator()() {
  // dlopen(RTLD_NOLOAD) answers, but reads ld.so.cache and opens the library's file to do so (a
  // map and an unmap of the cache: the unmap interrupts every core the process runs on), ~0.03 ms
  // on each fused kernel's call (issue 40's note). Its answer changes only when an object is
  // loaded or unloaded, so it is asked again only then. One atomic word holds the answer with the
  // counts it was asked at (bit 0: asked, bit 1: loaded): no lock, which a forked child could
  // find held.
  const std::uint64_t now = loader_counts();
  const std::uint64_t kept = answer_.load(std::memory_order_acquire);
  if ((kept & 1) && (kept & ~std::uint64_t(3)) == now) return (kept & 2) != 0;
  bool loaded = false;
  if (void* h = dlopen(soname_, RTLD_LAZY | RTLD_NOLOAD)) {
    dlclose(h);
    loaded = true;
  }
  // Kept with the counts from before it was asked: an object loaded meanwhile changes them, and
  // the next call asks again.
  answer_.store(now | (loaded ? 2 : 0) | 1, std::memory_order_release);
  return loaded;
}

// Opened by us, or by someone else (a host program linked against it, or that dlopened it): its
// pool runs too.
bool loaded() {
  static LibraryPresence blas(VL_BLAS_SONAME);
  return opened || blas();
}

void* symbol(const char* name) { return dlsym(library(), name); }

}  // namespace vl::blas
