// parked_threads.hpp's threads. Our own rather than a library's: the kernels need only "run this
// function on t threads and wait", and Debian's thread pools (Boost.Asio's thread_pool, TBB)
// would bring a dependency and a scheduler for that one call.
//
// Each parked thread has a slot with a round number; a call that wants it bumps the number and
// wakes that thread alone (std::atomic::wait / notify_one: a futex), so that parked threads a
// call does not use are never woken. The caller counts the helpers still running in `pending_`
// and waits for it to reach 0. The job, the caller's floating-point environment and the helpers'
// exceptions pass through members written before a slot's bump (release) and read after its
// wait (acquire), or before the last decrement of pending_ and after the caller sees it at 0.
#include "kernels/platform/parked_threads.hpp"

#include <atomic>
#include <cfenv>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

namespace vl {

namespace {

// Waits while waiting() holds, for at most 100 µs, yielding the core to anyone who wants it,
// before a thread sleeps on a futex: a sleeping thread takes tens of µs to wake. Measured on
// back-to-back fused forwards (two cores, Zen 4): n = 512 0.44 → 0.40 ms.
template <class Waiting>
void spin_while(Waiting waiting) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
  while (waiting() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
}

// Runs one job at a time on the caller and parked threads.
class ParkedThreads {
 public:
  /// job() on the caller and on `helpers` parked threads (fewer where no more can be started).
  /// False, having run nothing, where the threads are in use (by another thread, or by this
  /// one's job) or this process is a fork of the one that started them.
  bool run(std::size_t helpers, const ThreadJob& job) {
    if (busy_.exchange(true, std::memory_order_acquire)) return false;
    struct Release {
      std::atomic<bool>& busy;
      ~Release() { busy.store(false, std::memory_order_release); }
    } release{busy_};
    if (::getpid() != owner_) return false;
    while (slots_.size() < helpers && start_one()) {
    }
    const std::size_t used = std::min(helpers, slots_.size());
    job_ = &job;
    count_ = used + 1;
    std::fegetenv(&env_);
    error_ = nullptr;
    pending_.store(unsigned(used), std::memory_order_relaxed);
    for (std::size_t i = 0; i < used; ++i) {
      slots_[i]->round.fetch_add(1, std::memory_order_release);
      slots_[i]->round.notify_one();
    }
    std::exception_ptr error;
    try {
      job(0, count_);
    } catch (...) {
      error = std::current_exception();
    }
    spin_while([&] { return pending_.load(std::memory_order_acquire) != 0; });
    for (unsigned left; (left = pending_.load(std::memory_order_acquire)) != 0;) pending_.wait(left, std::memory_order_acquire);
    if (!error) error = error_;
    job_ = nullptr;
    error_ = nullptr;
    if (error) std::rethrow_exception(error);
    return true;
  }

  std::size_t started() const { return started_.load(); }

 private:
  struct Slot {
    explicit Slot(std::size_t i) : index(i) {}
    const std::size_t index;  // the job's thread index: 1, 2, … (the caller is 0)
    std::atomic<unsigned> round{0};
  };

  // One more parked thread; false where it cannot be started (no thread, no memory).
  bool start_one() {
    try {
      slots_.push_back(std::make_unique<Slot>(slots_.size() + 1));
    } catch (...) {
      return false;
    }
    try {
      std::thread(&ParkedThreads::park, this, std::ref(*slots_.back())).detach();
    } catch (...) {
      slots_.pop_back();
      return false;
    }
    ++started_;
    return true;
  }

  // A parked thread: waits for its slot's next round, runs the job in the caller's
  // floating-point environment, and waits again.
  void park(Slot& slot) {
    unsigned seen = 0;
    for (;;) {
      spin_while([&] { return slot.round.load(std::memory_order_relaxed) == seen; });
      slot.round.wait(seen, std::memory_order_acquire);
      seen = slot.round.load(std::memory_order_acquire);
      std::fesetenv(&env_);
      try {
        (*job_)(slot.index, count_);
      } catch (...) {
        std::lock_guard lock(error_lock_);
        if (!error_) error_ = std::current_exception();
      }
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
    }
  }

  const pid_t owner_ = ::getpid();
  std::atomic<bool> busy_{false};      // a call is running a job (the one that set it owns what follows)
  std::vector<std::unique_ptr<Slot>> slots_;
  std::atomic<std::size_t> started_{0};
  const ThreadJob* job_ = nullptr;
  std::size_t count_ = 0;  // the threads this round's job runs on
  std::fenv_t env_{};
  std::atomic<unsigned> pending_{0};  // helpers of this round still running
  std::mutex error_lock_;
  std::exception_ptr error_;          // the first a helper threw this round
};

// Never destroyed: its threads wait on it until the process ends.
ParkedThreads& parked() {
  static auto* threads = new ParkedThreads;
  return *threads;
}

// Threads of the call's own, joined before it returns. They wait to start until all that could
// be started are, so that every one is told the same count.
void run_on_own_threads(std::size_t helpers, const ThreadJob& job) {
  std::mutex guard;
  std::exception_ptr first;
  std::atomic<std::size_t> count{0};  // 0 until every thread that could start has
  auto guarded = [&](std::size_t index) {
    try {
      if (index > 0) count.wait(0, std::memory_order_acquire);
      job(index, count.load(std::memory_order_acquire));
    } catch (...) {
      std::lock_guard lock(guard);
      if (!first) first = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  try {
    pool.reserve(helpers);
    for (std::size_t t = 1; t <= helpers; ++t) pool.emplace_back(guarded, t);
  } catch (...) {
    // no more threads (or no memory for them): the job runs on those there are
  }
  count.store(pool.size() + 1, std::memory_order_release);
  count.notify_all();
  guarded(0);
  for (auto& t : pool) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace

void run_on_threads(std::size_t threads, const ThreadJob& job) {
  if (threads <= 1) return job(0, 1);
  if (!parked().run(threads - 1, job)) run_on_own_threads(threads - 1, job);
}

std::size_t parked_thread_count() { return parked().started(); }

}  // namespace vl
