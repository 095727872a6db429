#pragma once
// The fused kernels' threads: work items 0 … items−1 handed out one at a time, in order, to
// `threads` workers (the calling thread is one of them), each with state of its own made once.
// Which worker takes an item, or when, changes nothing in a result as long as an item writes
// only its own part of the output: the kernels' results are the same bits on any thread count.
// OpenBLAS is kept single-threaded meanwhile (kernels/platform/blas_threads.hpp): its own pool
// would spin on the same cores; `calls_blas`: the items call BLAS (it is opened first).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

#include "kernels/platform/blas_threads.hpp"
#include "kernels/platform/parked_threads.hpp"

namespace vl {

/// The multiply-adds below which a further thread costs more than it saves: starting one (its
/// stack mapped and first touched, its join) takes ~50 µs, in which a core does ~10⁶ of them. A
/// multi-head `lessons eval mha` at S = 16 spent more CPU time on its second thread than on its
/// products. Measured when every call started its threads; now a process's first call still
/// starts them, and later calls wake parked ones (tens of µs where they sleep), so the bound errs
/// toward one thread.
inline constexpr std::size_t kMultiplyAddsPerThread = std::size_t(1) << 20;

/// The machine's hardware threads, asked once per process: std::thread::hardware_concurrency
/// reads /sys/devices/system/cpu/online on every call (glibc's get_nprocs).
inline std::size_t machine_threads() {
  static const std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
  return threads;
}

/// Threads for `items` items: `requested` (0: the machine's, and no more than one per
/// kMultiplyAddsPerThread of the call's `work`), at least 1, at most items.
inline std::size_t worker_count(std::size_t requested, std::size_t items, std::size_t work = SIZE_MAX) {
  std::size_t t = requested;
  if (!t) t = std::min<std::size_t>(machine_threads(), 1 + work / kMultiplyAddsPerThread);
  return std::max<std::size_t>(1, std::min(t, items));
}

/// For each worker: state = make_state(); body(state, item) for the items it takes; then
/// finish(state), one worker at a time (to add up its counters). Returns when all are done.
/// The workers are the calling thread and parked ones (kernels/platform/parked_threads.hpp).
template <class MakeState, class Body, class Finish>
void run_work_items(std::size_t threads, std::size_t items, bool calls_blas, MakeState make_state, Body body, Finish finish) {
  if (items == 0) return;
  std::atomic<std::size_t> next{0};
  std::mutex finishing;
  blas::SingleThreaded single(calls_blas);
  run_on_threads(threads, [&](std::size_t, std::size_t) {
    auto state = make_state();
    for (std::size_t item = next++; item < items; item = next++) body(state, item);
    std::lock_guard lock(finishing);
    finish(state);
  });
}

}  // namespace vl
