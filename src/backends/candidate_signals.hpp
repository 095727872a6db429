#pragma once
// SIGINT / SIGTERM during a candidate audit: no candidate left running, no /tmp/vl-candidate-*
// folder left behind.
//
// The signal handler does one async-signal-safe thing: write(2) the signal's number to a
// self-pipe. Everything else happens in ordinary code, in a watcher thread that reads that pipe:
// it marks the audit interrupted, SIGKILLs the process group of every running candidate (so a
// request waiting for a reply returns at once), and gives the main thread a moment to unwind:
// the candidate backend's next step throws Interrupted, the destructors stop the candidate and
// remove its folder, and the command ends by the signal's default action (die()). If the main
// thread is busy elsewhere (our own code runs the negative controls) and has not ended within
// that moment, the watcher removes the folders itself and exits with 128 + the signal.
// A self-pipe rather than cleaning up in the handler: removing a folder tree needs opendir and
// readdir, which are not async-signal-safe, and the main thread may be writing into it.
#include <filesystem>

#include <sys/types.h>

namespace vl::backends::candidate_signals {

/// Thrown where an interrupted audit must stop. Deliberately not a std::exception, so that no
/// check's or control's catch takes it for the candidate's failure and goes on.
struct Interrupted {
  int signal;
};

/// Installs the SIGINT and SIGTERM handlers and the watcher thread (once; later calls do nothing).
void install();
/// Throws Interrupted once a signal has arrived.
void throw_if_interrupted();

/// A running candidate's process group, killed on a signal. add_group() refuses (returns false)
/// once a signal has arrived: the caller then kills the group it just started itself.
bool add_group(pid_t group);
void remove_group(pid_t group);
/// A temporary folder of ours, removed on a signal if the main thread has not removed it.
void add_dir(const std::filesystem::path& dir);
void remove_dir(const std::filesystem::path& dir);

/// After Interrupted has unwound the audit: the signal's default action (the exit status of a
/// process killed by it), with the handler removed.
[[noreturn]] void die(int signal);

}  // namespace vl::backends::candidate_signals
