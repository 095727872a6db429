// A forked child's end, waited for with a deadline: a child that does not finish in time (a lock
// the fork left held, a thread it waits for that is not there) is killed and reported, rather
// than hanging the test program.
#pragma once

#include <chrono>
#include <csignal>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

/// Whether `child` exited with status 0 within `seconds`; a child still running then is killed.
/// `what` says what the child did, for the failure messages.
inline bool forked_child_succeeded(pid_t child, int seconds, const char* what) {
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  pid_t done = 0;
  while ((done = ::waitpid(child, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (done == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    BOOST_TEST_MESSAGE("the forked child (" << what << ") did not finish in " << seconds << " s");
    return false;
  }
  if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    BOOST_TEST_MESSAGE("the forked child (" << what << ") failed: status " << status);
    return false;
  }
  return true;
}
