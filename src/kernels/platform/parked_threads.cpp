// parked_threads.hpp's threads. Our own rather than a library's: the kernels need only "run this
// function on t threads and wait", and Debian's thread pools (Boost.Asio's thread_pool, TBB)
// would bring a dependency and a scheduler for that one call.
#include "kernels/platform/parked_threads.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <unistd.h>

namespace vl {

namespace {

// Waits while waiting() holds, for at most 100 µs, yielding the core to anyone who wants it,
// before a thread sleeps on a condition variable: a sleeping thread takes tens of µs to wake.
// Measured on back-to-back fused forwards (two cores, Zen 4): n = 512 0.44 → 0.40 ms.
template <class Waiting>
void spin_while(Waiting waiting) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
  while (waiting() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
}

// Runs one job at a time on the caller and up to `helpers` parked threads.
class ParkedThreads {
 public:
  /// job() on the caller and on `helpers` parked threads (fewer where no more can be started).
  /// False, having run nothing, where the threads are in use or this process is a fork.
  bool run(std::size_t helpers, const std::function<void()>& job) {
    std::unique_lock in_use(use_, std::try_to_lock);  // never waits: a busy pool means threads of one's own
    if (!in_use || ::getpid() != owner_) return false;
    while (started_ < helpers) {
      try {
        std::thread(&ParkedThreads::park, this, started_, generation_.load()).detach();  // generation_ changes only here, under use_
      } catch (const std::system_error&) {
        break;  // no more threads: the job runs on those there are
      }
      ++started_;
    }
    {
      std::lock_guard lock(state_);
      job_ = &job;
      wanted_ = std::min(helpers, started_);
      pending_ = wanted_;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    std::exception_ptr error;
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
    spin_while([&] { return pending_.load(std::memory_order_relaxed) != 0; });
    std::unique_lock lock(state_);
    done_.wait(lock, [&] { return pending_ == 0; });
    if (!error) error = error_;
    job_ = nullptr, error_ = nullptr;
    lock.unlock();
    if (error) std::rethrow_exception(error);
    return true;
  }

  std::size_t started() {
    std::lock_guard in_use(use_);
    return started_;
  }

 private:
  // Thread `index`, started when the last job was number `seen`: waits for a later job, runs it
  // if the job wants this many helpers, and waits again.
  void park(std::size_t index, std::size_t seen) {
    for (;;) {
      spin_while([&] { return generation_.load(std::memory_order_relaxed) == seen; });
      std::unique_lock lock(state_);
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (index >= wanted_) continue;
      const std::function<void()>* job = job_;
      lock.unlock();
      std::exception_ptr error;
      try {
        (*job)();
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error && !error_) error_ = error;
      if (--pending_ == 0) done_.notify_one();
    }
  }

  const pid_t owner_ = ::getpid();
  std::mutex use_;    // held by the call that runs a job; guards started_
  std::size_t started_ = 0;
  std::mutex state_;  // guards what follows
  std::condition_variable wake_, done_;
  const std::function<void()>* job_ = nullptr;
  std::atomic<std::size_t> generation_{0};
  std::size_t wanted_ = 0;
  std::atomic<std::size_t> pending_{0};
  std::exception_ptr error_;
};

// Never destroyed: its threads wait on it until the process ends.
ParkedThreads& parked() {
  static auto* threads = new ParkedThreads;
  return *threads;
}

// Threads of the call's own, joined before it returns.
void run_on_own_threads(std::size_t helpers, const std::function<void()>& job) {
  std::mutex guard;
  std::exception_ptr first;
  auto guarded = [&] {
    try {
      job();
    } catch (...) {
      std::lock_guard lock(guard);
      if (!first) first = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(helpers);
  for (std::size_t t = 0; t < helpers; ++t) {
    try {
      pool.emplace_back(guarded);
    } catch (const std::system_error&) {
      break;
    }
  }
  guarded();
  for (auto& t : pool) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace

void run_on_threads(std::size_t threads, const std::function<void()>& job) {
  if (threads <= 1) return job();
  if (!parked().run(threads - 1, job)) run_on_own_threads(threads - 1, job);
}

std::size_t parked_thread_count() { return parked().started(); }

}  // namespace vl
