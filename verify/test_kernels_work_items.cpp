#include <boost/test/unit_test.hpp>

// The fused kernels' threads (src/kernels/fused/work_items.hpp): how many workers a call gets
// (asked for, the machine's, capped by the items and, when unset, by the call's work), and that
// run_work_items hands every item to exactly one worker, makes each worker's state once and
// finishes each once, whatever the number of threads. And the threads under them, kept between
// calls (src/kernels/platform/parked_threads.hpp): a job runs on as many threads as asked, all at
// once, one of them the caller's, every one distinct, in the caller's floating-point environment
// (a call that wants fewer than are parked runs on no more); the parked threads are reused, not
// started again; a call
// made while they are busy (from a job, from another thread at the same time, from a forked child)
// runs on threads of its own and completes; an exception on any thread reaches the caller after
// every thread has returned, and the threads serve the next call.
#include <algorithm>
#include <atomic>
#include <cfenv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <unistd.h>

#include "forked_child.hpp"
#include "kernels/fused/work_items.hpp"
#include "kernels/platform/parked_threads.hpp"

namespace {

// The threads a call of run_on_threads(threads, …) ran its job on, the index and count each was
// given (the caller's index apart), and whether they ran it at once: each waits (10 s at most)
// until all `threads` have arrived.
struct OneCall {
  std::vector<std::thread::id> ids;
  std::set<std::size_t> indices;
  std::set<std::size_t> counts;
  std::size_t callers_index = SIZE_MAX;
  bool at_once = true;
};
OneCall threads_of_one_call(std::size_t threads) {
  std::mutex m;
  OneCall call;
  std::atomic<std::size_t> arrived{0};
  const auto caller = std::this_thread::get_id();
  vl::run_on_threads(threads, [&](std::size_t index, std::size_t count) {
    ++arrived;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (arrived.load() < std::max<std::size_t>(threads, 1) && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    std::lock_guard lock(m);
    call.ids.push_back(std::this_thread::get_id());
    call.indices.insert(index);
    call.counts.insert(count);
    if (std::this_thread::get_id() == caller) call.callers_index = index;
    call.at_once = call.at_once && arrived.load() >= std::max<std::size_t>(threads, 1);
  });
  return call;
}

}  // namespace

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_work_items).
BOOST_AUTO_TEST_SUITE(test_kernels_work_items)

BOOST_AUTO_TEST_CASE(worker_count_follows_the_request_the_items_and_the_work) {
  const std::size_t machine = std::max(1u, std::thread::hardware_concurrency());
  BOOST_TEST(vl::worker_count(3, 10) == 3u);   // asked for
  BOOST_TEST(vl::worker_count(3, 2) == 2u);    // no more than the items
  BOOST_TEST(vl::worker_count(5, 0) == 1u);    // at least one
  BOOST_TEST(vl::worker_count(0, 1000) == std::min<std::size_t>(machine, 1000));  // the machine's
  // Unset, one thread per kMultiplyAddsPerThread of work (and one below it) ...
  BOOST_TEST(vl::worker_count(0, 1000, 0) == 1u);
  BOOST_TEST(vl::worker_count(0, 1000, vl::kMultiplyAddsPerThread - 1) == 1u);
  BOOST_TEST(vl::worker_count(0, 1000, vl::kMultiplyAddsPerThread) == std::min<std::size_t>(machine, 2));
  BOOST_TEST(vl::worker_count(0, 1000, 64 * vl::kMultiplyAddsPerThread) == std::min<std::size_t>(machine, 65));
  // ... but a count asked for is kept however small the work (the determinism tests ask for 2 and 3).
  BOOST_TEST(vl::worker_count(3, 10, 0) == 3u);
}

BOOST_AUTO_TEST_CASE(every_item_once_each_state_made_and_finished_once) {
  for (std::size_t threads : {1, 2, 3, 8})
    for (std::size_t items : {0, 1, 5, 100}) {
      std::vector<std::atomic<int>> seen(items);
      std::atomic<int> made{0};
      std::mutex m;
      int finished = 0;
      std::size_t total = 0;
      struct State {
        std::size_t count = 0;
      };
      vl::run_work_items(
          threads, items, false, [&] { ++made; return State{}; },
          [&](State& s, std::size_t item) { ++seen[item]; ++s.count; },
          [&](State& s) {
            std::lock_guard lock(m);  // finish runs one worker at a time; the lock only makes the test's own reads safe
            ++finished;
            total += s.count;
          });
      for (std::size_t i = 0; i < items; ++i) BOOST_TEST(seen[i].load() == 1, "item " << i << ", " << threads << " threads");
      BOOST_TEST(total == items);
      const int workers = items == 0 ? 0 : int(threads);  // no items: nothing started
      BOOST_TEST(made.load() == workers);
      BOOST_TEST(finished == workers);
    }
}

BOOST_AUTO_TEST_CASE(a_job_runs_once_on_each_thread_at_once_the_caller_among_them) {
  // 5 then 2: a call that wants fewer threads than are parked runs on no more than it wants.
  for (std::size_t threads : {0, 1, 2, 3, 5, 2, 1, 4}) {
    const auto call = threads_of_one_call(threads);
    const auto& ids = call.ids;
    const std::set<std::thread::id> distinct(ids.begin(), ids.end());
    BOOST_TEST(ids.size() == std::max<std::size_t>(threads, 1), threads << " threads");
    BOOST_TEST(distinct.size() == ids.size(), threads << " threads: a thread ran it twice");
    BOOST_TEST(distinct.count(std::this_thread::get_id()) == 1u);
    // Indices 0 … count − 1, each once, the caller's 0; every thread told the same count.
    BOOST_TEST(call.indices.size() == ids.size());
    BOOST_TEST((!call.indices.empty() && *call.indices.begin() == 0 && *call.indices.rbegin() == ids.size() - 1));
    BOOST_TEST(call.callers_index == 0u);
    BOOST_TEST((call.counts == std::set<std::size_t>{ids.size()}), threads << " threads: a thread was told another count");
    BOOST_TEST(call.at_once, threads << " threads: not all ran the job at the same time");
  }
}

BOOST_AUTO_TEST_CASE(the_parked_threads_are_reused) {
  threads_of_one_call(4);
  const std::size_t parked = vl::parked_thread_count();
  BOOST_TEST(parked >= 3u);
  std::set<std::thread::id> seen;
  for (int call = 0; call < 50; ++call)
    for (auto id : threads_of_one_call(4).ids) seen.insert(id);
  BOOST_TEST(vl::parked_thread_count() == parked);  // none started again
  BOOST_TEST(seen.size() <= parked + 1);            // the caller's and the parked ones, no others
}

BOOST_AUTO_TEST_CASE(the_job_runs_in_the_callers_floating_point_environment) {
  threads_of_one_call(3);  // parked threads started in the default environment
  for (int mode : {FE_DOWNWARD, FE_UPWARD, FE_TONEAREST}) {
    BOOST_REQUIRE(std::fesetround(mode) == 0);
    std::mutex m;
    std::vector<int> modes;
    vl::run_on_threads(3, [&](std::size_t, std::size_t) {
      std::lock_guard lock(m);
      modes.push_back(std::fegetround());
    });
    BOOST_TEST(modes.size() == 3u);
    for (int got : modes) BOOST_TEST(got == mode);
  }
}

BOOST_AUTO_TEST_CASE(a_call_from_a_job_runs_on_threads_of_its_own) {
  std::atomic<int> inner{0};
  // The inner calls run on threads of their own: each of its threads is told its index and the count 3.
  std::mutex m;
  std::multiset<std::size_t> inner_indices;
  vl::run_on_threads(2, [&](std::size_t, std::size_t) {
    vl::run_on_threads(3, [&](std::size_t index, std::size_t count) {
      ++inner;
      std::lock_guard lock(m);
      inner_indices.insert(count == 3 ? index : SIZE_MAX);
    });
  });
  BOOST_TEST((inner_indices == std::multiset<std::size_t>{0, 0, 1, 1, 2, 2}));
  BOOST_TEST(inner.load() == 2 * 3);
}

BOOST_AUTO_TEST_CASE(calls_from_two_threads_at_once_both_complete) {
  std::atomic<int> runs{0};
  auto caller = [&] {
    for (int call = 0; call < 200; ++call) vl::run_on_threads(2, [&](std::size_t, std::size_t) { ++runs; });
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  BOOST_TEST(runs.load() == 2 * 200 * 2);
}

BOOST_AUTO_TEST_CASE(an_exception_reaches_the_caller_after_every_thread_returned) {
  for (bool on_the_caller : {false, true}) {
    const auto caller = std::this_thread::get_id();
    std::atomic<int> returned{0};
    auto job = [&](std::size_t, std::size_t) {
      const bool mine = std::this_thread::get_id() == caller;
      if (mine == on_the_caller) throw std::runtime_error("the job failed");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ++returned;
    };
    BOOST_CHECK_THROW(vl::run_on_threads(2, job), std::runtime_error);
    BOOST_TEST(returned.load() == 1, (on_the_caller ? "the caller threw" : "a parked thread threw"));
    // The threads serve the next call.
    std::atomic<int> runs{0};
    vl::run_on_threads(3, [&](std::size_t, std::size_t) { ++runs; });
    BOOST_TEST(runs.load() == 3);
  }
}

BOOST_AUTO_TEST_CASE(a_forked_child_runs_on_threads_of_its_own) {
  threads_of_one_call(2);  // the parent has parked threads, which its child does not inherit
  const pid_t child = ::fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    std::atomic<int> runs{0};
    vl::run_on_threads(2, [&](std::size_t, std::size_t) { ++runs; });  // would wait forever for a parked thread that is not there
    ::_exit(runs.load() == 2 ? 0 : 1);
  }
  BOOST_TEST(forked_child_succeeded(child, 20, "run_on_threads on 2 threads"));
}

BOOST_AUTO_TEST_SUITE_END()
