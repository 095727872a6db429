// The candidate's process (candidate_process.hpp): fork/exec under /bin/sh in its own process
// group, a socket for its stdin (send(MSG_NOSIGNAL): a candidate that died does not kill us with
// SIGPIPE), a pipe for its stdout, read with poll(2) against a deadline.
#include "backends/candidate_process.hpp"

#include "backends/candidate_signals.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

namespace vl::backends {

namespace {
constexpr std::size_t kMaxLine = std::size_t(16) << 20;  // a reply line longer than 16 MiB is garbage

std::string status_text(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "ended";
}
}  // namespace

CandidateProcess::CandidateProcess(const std::string& command, const std::filesystem::path& log) {
  int in[2], out[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0 || pipe2(out, O_CLOEXEC) != 0)
    throw CandidateError(fmt::format("cannot make the pipes for the candidate: {}", strerror(errno)));
  const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (err < 0) throw CandidateError(fmt::format("cannot open the candidate's log {}: {}", log.string(), strerror(errno)));
  const pid_t pid = fork();
  if (pid < 0) throw CandidateError(fmt::format("cannot start the candidate: fork: {}", strerror(errno)));
  if (pid == 0) {  // the child: async-signal-safe calls only, then exec
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(in[1], 0);
    dup2(out[1], 1);
    dup2(err, 2);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so that the group exists before we ever signal it
  pid_ = pid;
  close(in[1]);
  close(out[1]);
  close(err);
  to_child_ = in[0];
  from_child_ = out[0];
  if (!candidate_signals::add_group(pid)) {  // a signal came while we started it
    kill();
    candidate_signals::throw_if_interrupted();
  }
}

CandidateProcess::~CandidateProcess() {
  if (pid_ <= 0) return;
  // Closing its stdin asks it to stop (the helper module exits at end of input); then the group
  // is killed whatever it did, so that nothing it started outlives the audit.
  close(to_child_);
  to_child_ = -1;
  for (int i = 0; i < 20 && waitpid(pid_, nullptr, WNOHANG) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  kill();
}

std::string CandidateProcess::reap_status() {
  // The candidate closed its stdout: give it a moment to exit by itself, then end it.
  int status = 0;
  for (int i = 0; i < 50; ++i) {
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      ::kill(-pid_, SIGKILL);  // whatever it left behind in its group
      candidate_signals::remove_group(pid_);
      pid_ = -1;
      kill();
      return status_text(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill();
  return "closed its stdout without exiting (killed)";
}

void CandidateProcess::kill() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    // The group's other members (python under sh, its children) are reaped by init, not us:
    // wait, briefly, until none is left, so that nothing of it outlives this call.
    for (int i = 0; i < 200 && ::kill(-pid_, 0) == 0; ++i) {
      ::kill(-pid_, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    candidate_signals::remove_group(pid_);
    pid_ = -1;
  }
  if (to_child_ >= 0) close(to_child_);
  if (from_child_ >= 0) close(from_child_);
  to_child_ = from_child_ = -1;
}

CandidateProcess::Reply CandidateProcess::exchange(const std::string& line, std::chrono::milliseconds timeout) {
  Reply reply;
  if (pid_ <= 0) {
    reply.outcome = Outcome::exited;
    reply.status = "is not running";
    return reply;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string message = line + "\n";
  for (std::size_t sent = 0; sent < message.size();) {
    const ssize_t n = send(to_child_, message.data() + sent, message.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {  // it no longer reads: it has died, or is about to
      reply.outcome = Outcome::exited;
      reply.status = reap_status();
      return reply;
    }
    sent += std::size_t(n);
  }
  for (;;) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      reply.line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return reply;
    }
    if (buffer_.size() > kMaxLine) {
      reply.line = buffer_.substr(0, 200);
      buffer_.clear();
      return reply;  // no newline in 16 MiB: the caller sees garbage
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{from_child_, POLLIN, 0};
    const int ready = left.count() > 0 ? poll(&p, 1, int(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      kill();
      reply.outcome = Outcome::timed_out;
      reply.status = fmt::format("sent no reply within {} s (its process group was killed)", double(timeout.count()) / 1000);
      return reply;
    }
    char chunk[65536];
    const ssize_t n = read(from_child_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      reply.outcome = Outcome::exited;
      reply.status = reap_status();
      return reply;
    }
    buffer_.append(chunk, std::size_t(n));
  }
}

}  // namespace vl::backends
