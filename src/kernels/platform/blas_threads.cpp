// OpenBLAS's thread controls, looked up at run time (see blas_threads.hpp).
#include "kernels/platform/blas_threads.hpp"

#include <dlfcn.h>

namespace vl::blas {

SingleThreaded::SingleThreaded() {
  // The program's own handle: dlsym on it searches the program and the libraries it loaded.
  static void* const program = dlopen(nullptr, RTLD_LAZY);
  static const auto get = reinterpret_cast<int (*)()>(dlsym(program, "openblas_get_num_threads"));
  static const auto set = reinterpret_cast<void (*)(int)>(dlsym(program, "openblas_set_num_threads"));
  static const auto shutdown = reinterpret_cast<int (*)()>(dlsym(program, "blas_thread_shutdown_"));
  if (!get || !set) return;
  set_ = set;
  saved_ = get();
  if (saved_ != 1) set_(1);
  if (shutdown) shutdown();
}

SingleThreaded::~SingleThreaded() {
  if (set_ && saved_ != 1) set_(saved_);
}

}  // namespace vl::blas
