#include <boost/test/unit_test.hpp>

// CandidateProcess (backends/candidate_process.hpp), driven with small /bin/sh command lines
// (the process knows lines, not vl-candidate/1: verify/candidates/ and test_backends_candidate
// cover the protocol): one line out and one line back, in order, none lost; an exit or a signal
// reported as such; a hang ended at the timeout with its whole process group (a child it
// started included) killed; a reply line over 16 MiB cut; stdout closed without exiting; stderr
// in the log; and nothing of the group left running once the object is gone. The handshakes
// below have the shell say its pid ($$: its process group, as the child made itself a group) and
// its child's ($!), so that the test can look for them afterwards; no sleep aims at anything.
// The "hangs" are sleeps of 5 s, 50 times the timeouts: were a timeout ignored, the case would
// fail (an exit, not a timeout) in 5 s rather than hang ctest.
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/candidate_process.hpp"
#include "scratch_dir.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_backends_candidate_process).
BOOST_AUTO_TEST_SUITE(test_backends_candidate_process)

namespace vb = vl::backends;
using Outcome = vb::CandidateProcess::Outcome;
using std::chrono::milliseconds;
constexpr milliseconds kPatient{10'000};  // a guard for replies that come at once: never reached when they do

// Processes of the group that still run (zombies, which the sandbox's init may never reap, excluded).
std::vector<pid_t> live_in_group(pid_t group) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');  // "pid (comm) state ppid pgrp ..."; comm may hold spaces
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    long ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    if (pgrp == group && state != 'Z') out.push_back(pid_t(std::stol(name)));
  }
  return out;
}

bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// A folder of this test's for the log.
struct LogDir : ScratchDir {
  LogDir() : ScratchDir("vl-test-process-") {}
  std::filesystem::path log() const { return path / "stderr.log"; }
  std::string text() const {
    std::ifstream in(log());
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
};

BOOST_AUTO_TEST_CASE(one_line_out_one_line_back_in_order) {
  const LogDir d;
  pid_t group = 0;
  {
    vb::CandidateProcess p("read l; echo $$; read l; echo one; echo two; exec cat", d.log());
    BOOST_TEST(p.running());
    const auto hello = p.exchange("hello", kPatient);
    BOOST_REQUIRE((hello.outcome == Outcome::reply));
    group = pid_t(std::stol(hello.line));
    // Two lines for one request: the second is the next request's reply; cat then echoes.
    BOOST_TEST(p.exchange("a", kPatient).line == "one");
    BOOST_TEST(p.exchange("b", kPatient).line == "two");
    BOOST_TEST(p.exchange("c", kPatient).line == "b");
    BOOST_TEST(p.exchange("{\"id\": 1}", kPatient).line == "c");
    BOOST_TEST(!live_in_group(group).empty());
  }  // closing its stdin ends cat
  BOOST_TEST(live_in_group(group).empty());
}

BOOST_AUTO_TEST_CASE(an_exit_and_a_signal_are_reported) {
  const LogDir d;
  vb::CandidateProcess exits("read l; echo leaving >&2; exit 3", d.log());
  auto r = exits.exchange("x", kPatient);
  BOOST_TEST((r.outcome == Outcome::exited));
  BOOST_TEST(r.status == "exited with status 3");
  BOOST_TEST(!exits.running());
  r = exits.exchange("y", kPatient);  // nothing is sent to a process that has gone
  BOOST_TEST((r.outcome == Outcome::exited));
  BOOST_TEST(r.status == "is not running");
  BOOST_TEST(d.text().find("leaving") != std::string::npos, d.text());
  vb::CandidateProcess crashes("read l; kill -SEGV $$", d.log());
  r = crashes.exchange("x", kPatient);
  BOOST_TEST((r.outcome == Outcome::exited));
  BOOST_TEST(r.status == "killed by signal 11 (Segmentation fault)");
  // One that is gone before it reads anything: the same report, whether the send or the read sees it.
  vb::CandidateProcess gone("exit 5", d.log());
  r = gone.exchange("x", kPatient);
  BOOST_TEST((r.outcome == Outcome::exited));
  BOOST_TEST(r.status == "exited with status 5");
  vb::CandidateProcess missing("/nonexistent/candidate", d.log());
  r = missing.exchange("x", kPatient);
  BOOST_TEST(r.status == "exited with status 127");
  BOOST_TEST(d.text().find("/nonexistent/candidate") != std::string::npos, d.text());
}

// It answers the first line with its group and its child's pid, then never again.
BOOST_AUTO_TEST_CASE(a_hang_is_killed_at_the_timeout_with_its_group) {
  const LogDir d;
  vb::CandidateProcess p("read l; sleep 5 & echo $$ $!; read l; wait", d.log());
  const auto hello = p.exchange("hello", kPatient);
  BOOST_REQUIRE((hello.outcome == Outcome::reply));
  std::istringstream ids(hello.line);
  pid_t group = 0, child = 0;
  ids >> group >> child;
  BOOST_REQUIRE(alive(child));
  const auto r = p.exchange("go", milliseconds(100));
  BOOST_TEST((r.outcome == Outcome::timed_out));
  BOOST_TEST(r.status == "sent no reply within 0.1 s (its process group was killed)");
  BOOST_TEST(!p.running());
  BOOST_TEST(!alive(child));
  BOOST_TEST(live_in_group(group).empty());
  p.kill();  // again: nothing left to do
  BOOST_TEST(!p.running());
}

// A candidate that ignores the end of its input (here it became a sleep) is killed when the object goes.
BOOST_AUTO_TEST_CASE(the_destructor_kills_what_ignores_its_end_of_input) {
  const LogDir d;
  pid_t group = 0;
  {
    vb::CandidateProcess p("read l; echo $$; exec sleep 5", d.log());
    group = pid_t(std::stol(p.exchange("hello", kPatient).line));
    BOOST_REQUIRE(!live_in_group(group).empty());
  }
  BOOST_TEST(live_in_group(group).empty());
}

// Garbage without an end: a line past 16 MiB with no newline comes back as its first 200 bytes.
// (16 MiB + 1 bytes exactly, so that the writer is done when the cut comes and ends with its input.)
BOOST_AUTO_TEST_CASE(an_endless_line_is_cut) {
  const LogDir d;
  vb::CandidateProcess p("read l; head -c 16777217 /dev/zero | tr '\\000' x; read l", d.log());
  const auto r = p.exchange("x", kPatient);
  BOOST_TEST((r.outcome == Outcome::reply));
  BOOST_TEST(r.line == std::string(200, 'x'));
}

// Its stdout closed while it lives on: reported, and it is killed.
BOOST_AUTO_TEST_CASE(stdout_closed_without_exiting) {
  const LogDir d;
  vb::CandidateProcess p("read l; echo $$; read l; exec >&-; read l", d.log());
  const pid_t group = pid_t(std::stol(p.exchange("hello", kPatient).line));
  const auto r = p.exchange("close", kPatient);
  BOOST_TEST((r.outcome == Outcome::exited));
  BOOST_TEST(r.status == "closed its stdout without exiting (killed)");
  BOOST_TEST(!p.running());
  BOOST_TEST(live_in_group(group).empty());
}

BOOST_AUTO_TEST_SUITE_END()  // test_backends_candidate_process
