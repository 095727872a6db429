#pragma once
// The candidate's process: one command line run under /bin/sh in a process group of its own,
// spoken to one line at a time (vl-candidate/1, docs/candidates.md): a request line on its stdin,
// one reply line read back from its stdout within a deadline; its stderr goes to a log file the
// error messages quote.
//
// Written by hand over fork/exec, pipes and poll(2) because no Debian library we use spawns a
// process with a per-read timeout and a process group to kill (Boost.Process is not among our
// dependencies and would add one for ~150 lines). The child is its own process group so that a
// timeout or the end of the audit kills the whole command (the shell, python, its workers), and
// it gets SIGKILL if we die (PR_SET_PDEATHSIG); closing its stdin also tells it to stop.
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <sys/types.h>

namespace vl::backends {

/// The candidate failed in a way that is not "unsupported": it crashed, hung, lied, or wrote a
/// wrong output. The audit reports the claim as ERROR with this message.
class CandidateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CandidateProcess {
 public:
  /// Starts `command` (a shell command line); stderr is appended to `log`.
  CandidateProcess(const std::string& command, const std::filesystem::path& log);
  ~CandidateProcess();  // kills the process group and reaps it
  CandidateProcess(const CandidateProcess&) = delete;
  CandidateProcess& operator=(const CandidateProcess&) = delete;

  enum class Outcome { reply, exited, timed_out };
  struct Reply {
    Outcome outcome = Outcome::reply;
    std::string line;    // the reply line (without '\n') when outcome == reply
    std::string status;  // how it ended otherwise: "exited with status 3", "killed by signal 11"
  };
  /// Writes `line` + '\n' to the candidate and waits up to `timeout` for one line back.
  /// On a timeout the process group is killed before this returns.
  Reply exchange(const std::string& line, std::chrono::milliseconds timeout);

  /// Kills the process group (SIGKILL) and reaps the child; idempotent.
  void kill();
  bool running() const { return pid_ > 0; }

 private:
  std::string reap_status();  // waits for the child; "exited with status N" / "killed by signal N"
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string buffer_;  // bytes read past the last reply line
};

}  // namespace vl::backends
