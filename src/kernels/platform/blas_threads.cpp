// OpenBLAS's thread controls, looked up in the library (see blas_threads.hpp).
#include "kernels/platform/blas_threads.hpp"

#include "kernels/platform/blas_library.hpp"

namespace vl::blas {

SingleThreaded::SingleThreaded(bool will_call_blas) {
  // Not opened and not about to be: no pool runs, nothing to stop (and nothing to open).
  if (!will_call_blas && !loaded()) return;
  static const auto get = reinterpret_cast<int (*)()>(symbol("openblas_get_num_threads"));
  static const auto set = reinterpret_cast<void (*)(int)>(symbol("openblas_set_num_threads"));
  static const auto shutdown = reinterpret_cast<int (*)()>(symbol("blas_thread_shutdown_"));
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
