#pragma once
// OpenBLAS on one thread, its idle pool shut down, for the life of the object (the fused
// kernel's workers each run their own BLAS calls). Not yet opened (blas_library.hpp), OpenBLAS has
// no pool: nothing is changed unless the guarded code will call BLAS, which opens it first (and
// throws, naming the library, where it cannot be opened).
//
// OpenBLAS's workers otherwise spin (sched_yield) for 2^28 TSC ticks (~0.1 s here) after the
// library loads or after each threaded call, on the same cores as ours — 25 ms of an 85 ms
// `lessons eval attention` at n = 4096 on 2 cores. OpenBLAS starts its pool again at its next
// threaded call; the thread count is restored on destruction. These are process-wide settings:
// no other thread of the process may be inside an OpenBLAS call meanwhile.
namespace vl::blas {

class SingleThreaded {
 public:
  /// will_call_blas: the code it guards calls BLAS, so OpenBLAS is opened first (blas_library.hpp)
  /// and set to one thread; otherwise, with OpenBLAS not yet opened, nothing is done.
  explicit SingleThreaded(bool will_call_blas = false);
  ~SingleThreaded();
  SingleThreaded(const SingleThreaded&) = delete;
  SingleThreaded& operator=(const SingleThreaded&) = delete;

 private:
  void (*set_)(int) = nullptr;
  int saved_ = 1;
};

}  // namespace vl::blas
