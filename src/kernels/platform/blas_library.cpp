// OpenBLAS opened on first use; see blas_library.hpp.
#include "kernels/platform/blas_library.hpp"
#include "kernels/platform/library_presence.hpp"

#include <dlfcn.h>

#include <atomic>
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

// Opened by us, or by someone else (a host program linked against it, or that dlopened it): its
// pool runs too.
bool loaded() {
  static LibraryPresence blas(VL_BLAS_SONAME);
  return opened || blas();
}

void* symbol(const char* name) { return dlsym(library(), name); }

}  // namespace vl::blas
