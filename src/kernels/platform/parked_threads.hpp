#pragma once
// Threads kept between the fused kernels' calls. Starting a thread for each call and joining it
// after (its stack, its first allocations, its join) cost 0.07 ms of a 1.55 ms fused forward at
// n = 1024 on two cores (issue 40's note); threads that wait between calls are woken instead.
//
// run_on_threads(t, job) runs job(index, count) on t threads at once: the calling thread (index
// 0) and t − 1 parked threads (1 … t − 1), started the first time they are needed and kept for
// the rest of the process (as many as the largest call asked for; a call wakes only those it
// uses). The job is the same function on every thread (the kernels' jobs take work items from a
// shared counter until none is left, so that their results do not depend on how many ran or
// when; the linear family's threads meet at a barrier of `count`), and runs in the caller's
// floating-point environment (rounding mode, flush-to-zero) on every thread. Where the parked
// threads are busy — another thread of the process is using them, or a job itself calls
// run_on_threads — or the process is a fork of the one that started them, the call starts
// threads of its own, as before. A thread that cannot be started is done without: the job runs
// on the threads there are, and `count` says how many. An exception from a job is rethrown to the caller once every thread
// has returned: the caller's own, else the first a parked thread threw.
#include <cstddef>
#include <functional>

namespace vl {

/// What a thread runs: its index among the threads of the call (the caller's is 0) and their count.
using ThreadJob = std::function<void(std::size_t index, std::size_t count)>;

/// job on `threads` threads at once (the caller's and threads − 1 others, fewer where no more can
/// be started; threads ≤ 1: the caller's alone); returns when all have returned.
void run_on_threads(std::size_t threads, const ThreadJob& job);

/// How many threads are parked (started and kept) now: for the tests.
std::size_t parked_thread_count();

}  // namespace vl
