#include <boost/test/unit_test.hpp>

// The fused kernels' threads (src/kernels/fused/work_items.hpp): how many workers a call gets
// (asked for, the machine's, capped by the items and, when unset, by the call's work), and that
// run_work_items hands every item to exactly one worker, makes each worker's state once and
// finishes each once, whatever the number of threads.
#include <atomic>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/fused/work_items.hpp"

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

BOOST_AUTO_TEST_SUITE_END()
