// OpenBLAS opened on first use; see blas_library.hpp.
#include "kernels/platform/blas_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>

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
// dl_iterate_phdr counters): asked without a system call.
struct LoaderCounts {
  unsigned long long adds = 0, subs = 0;
  bool operator==(const LoaderCounts& o) const { return adds == o.adds && subs == o.subs; }
};
LoaderCounts loader_counts() {
  LoaderCounts counts;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        *static_cast<LoaderCounts*>(out) = {info->dlpi_adds, info->dlpi_subs};
        return 1;  // the first object's copy of the counters is enough
      },
      &counts);
  return counts;
}

}  // namespace

bool library_loaded(const char* soname) {
  // dlopen(RTLD_NOLOAD) answers, but reads ld.so.cache and opens the library's file to do so (a
  // map and an unmap of the cache: the unmap interrupts every core the process runs on), ~0.03 ms
  // on each fused kernel's call (issue 40's note). Its answer changes only when an object is
  // loaded or unloaded, so it is asked again only then.
  struct Answer {
    LoaderCounts asked_at;
    bool loaded;
  };
  static std::mutex lock;
  static std::map<std::string, Answer, std::less<>> answers;
  const std::lock_guard guard(lock);
  const LoaderCounts now = loader_counts();
  if (auto it = answers.find(std::string_view(soname)); it != answers.end() && it->second.asked_at == now) return it->second.loaded;
  bool loaded = false;
  if (void* h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) {
    dlclose(h);
    loaded = true;
  }
  answers.insert_or_assign(soname, Answer{now, loaded});  // an object loaded meanwhile changes the counts: asked again
  return loaded;
}

// Opened by us, or by someone else (a host program linked against it, or that dlopened it): its
// pool runs too.
bool loaded() { return opened || library_loaded(VL_BLAS_SONAME); }

void* symbol(const char* name) { return dlsym(library(), name); }

}  // namespace vl::blas
