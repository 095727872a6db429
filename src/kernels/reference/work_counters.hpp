#pragma once
// The kernels' work counters: multiply-adds and sequential state updates, tallied per thread.
//
// The cost claims count work with them instead of timing it. Every product through matmul/matvec
// (matmul.hpp) adds its m·n·k multiply-adds, and so do the hand-written loops of the kernels the
// cost claims count (linear_family.hpp), beside the loop they count; other kernels' own loops
// (a backward's row dot, a layer norm's variance) are not counted. Every update of a recurrent
// state (one token's, or one chunk's) adds one state update: each reads the state the previous
// one left, so they form a chain that cannot run in parallel (Vaswani et al. 2017, Table 1's
// "sequential operations").
#include <cstdint>

namespace vl {

/// Multiply-adds done on this thread since the last reset.
inline std::uint64_t& multiply_adds() {
  thread_local std::uint64_t count = 0;
  return count;
}

/// State updates done on this thread since the last reset.
inline std::uint64_t& state_updates() {
  thread_local std::uint64_t count = 0;
  return count;
}

/// The multiply-adds `work()` does on this thread (the tally reset first).
template <class Work>
std::uint64_t count_multiply_adds(const Work& work) {
  multiply_adds() = 0;
  work();
  return multiply_adds();
}

/// Both counts of one piece of work.
struct CountedWork {
  std::uint64_t multiply_adds = 0, state_updates = 0;
};

/// The multiply-adds and state updates `work()` does on this thread (both tallies reset first).
template <class Work>
CountedWork count_work(const Work& work) {
  state_updates() = 0;
  const std::uint64_t m = count_multiply_adds(work);
  return {m, state_updates()};
}

}  // namespace vl
