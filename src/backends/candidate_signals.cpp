// SIGINT / SIGTERM during a candidate audit (candidate_signals.hpp): a self-pipe written by the
// handler, a watcher thread that kills the candidates' groups and, if the main thread does not
// end in time, removes the folders and exits.
#include "backends/candidate_signals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

namespace vl::backends::candidate_signals {

namespace {

constexpr auto kGrace = std::chrono::seconds(3);  // for the main thread to unwind by itself

int wake[2] = {-1, -1};  // the self-pipe: the handler writes, the watcher reads
std::atomic<int> arrived{0};  // the signal that arrived, 0 while none
std::mutex registry_mutex;
std::set<pid_t> groups;
std::set<std::filesystem::path> dirs;

void on_signal(int sig) {
  const int saved = errno;  // write(2) may change it under the interrupted code
  const unsigned char byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] const ssize_t n = write(wake[1], &byte, 1);
  errno = saved;
}

void watch() {
  unsigned char byte = 0;
  while (read(wake[0], &byte, 1) != 1)
    if (errno != EINTR) return;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    arrived = byte;
    for (pid_t g : groups) ::kill(-g, SIGKILL);
  }
  std::this_thread::sleep_for(kGrace);
  // Still here: the main thread has not reached a candidate request to unwind from.
  std::lock_guard<std::mutex> lock(registry_mutex);
  for (pid_t g : groups) ::kill(-g, SIGKILL);
  for (const auto& d : dirs) {
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
  }
  _exit(128 + byte);
}

}  // namespace

void install() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (pipe2(wake, O_CLOEXEC) != 0) return;  // without the pipe, the default actions stay
    std::thread(watch).detach();
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
  });
}

void throw_if_interrupted() {
  if (const int sig = arrived.load()) throw Interrupted{sig};
}

bool add_group(pid_t group) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  if (arrived.load()) return false;
  groups.insert(group);
  return true;
}

void remove_group(pid_t group) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  groups.erase(group);
}

void add_dir(const std::filesystem::path& dir) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  dirs.insert(dir);
}

void remove_dir(const std::filesystem::path& dir) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  dirs.erase(dir);
}

void die(int sig) {
  signal(sig, SIG_DFL);
  raise(sig);
  _exit(128 + sig);  // raise returned: the signal is blocked here
}

}  // namespace vl::backends::candidate_signals
