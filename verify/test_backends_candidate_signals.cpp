#include <boost/test/unit_test.hpp>

// candidate_signals (backends/candidate_signals.hpp): after SIGTERM, the running candidates'
// process groups are killed (so a request waiting for its reply returns at once), no new group is
// registered, the code unwinds through Interrupted (which no catch of std::exception takes), and
// die() ends the process by the signal itself. A signal's arrival cannot be undone, so that runs in
// a forked child of this test, which raises SIGTERM itself (no timing to aim) and reports over a
// pipe; the child's own request has a 10 s guard, which a watcher that does kill never lets it reach.
// (The watcher's last resort, removing the folders and exiting when the main thread does not
// unwind within its 3 s grace, is not run here: it would cost those 3 s.)
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <type_traits>

#include "backends/candidate_process.hpp"
#include "backends/candidate_signals.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_backends_candidate_signals).
BOOST_AUTO_TEST_SUITE(test_backends_candidate_signals)

namespace vb = vl::backends;
namespace cs = vl::backends::candidate_signals;

static_assert(!std::is_base_of_v<std::exception, cs::Interrupted>, "Interrupted must get past every catch (const std::exception&)");

bool group_alive(pid_t group) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 && pgrp == group && state != 'Z') return true;
  }
  return false;
}

// Before any signal: nothing is interrupted and groups register (this process installs no handler).
BOOST_AUTO_TEST_CASE(nothing_interrupted_before_a_signal) {
  BOOST_CHECK_NO_THROW(cs::throw_if_interrupted());
  BOOST_TEST(cs::add_group(999'999));
  cs::remove_group(999'999);
}

// What the child reports, one line: "<candidate's group> <outcome> <steps passed>", then it dies.
// The candidate never answers and never ends on its own (sleep 1000): the request can only end
// with it "exited" if the watcher killed its group; were the watcher broken, the request would end
// "timed-out" at its 10 s guard instead. No duration is asserted.
BOOST_AUTO_TEST_CASE(sigterm_kills_the_candidates_and_unwinds) {
  int report[2];
  BOOST_REQUIRE(pipe(report) == 0);
  std::string dir_pattern = (std::filesystem::temp_directory_path() / "vl-test-signals-XXXXXX").string();
  BOOST_REQUIRE(mkdtemp(dir_pattern.data()) != nullptr);
  const std::filesystem::path dir = dir_pattern;
  const pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {  // the child: no Boost.Test here; everything it finds goes into the report
    close(report[0]);
    std::string out;
    int steps = 0;
    cs::install();
    cs::add_dir(dir);
    {
      vb::CandidateProcess p("read l; echo $$; read l; exec sleep 1000", dir / "stderr.log");
      const auto hello = p.exchange("hello", std::chrono::milliseconds(10'000));
      out = hello.line;
      raise(SIGTERM);  // handled: the watcher thread now kills the registered groups
      const auto r = p.exchange("request", std::chrono::milliseconds(10'000));
      out += r.outcome == vb::CandidateProcess::Outcome::exited ? " exited" : r.outcome == vb::CandidateProcess::Outcome::timed_out ? " timed-out" : " replied";
      try {
        cs::throw_if_interrupted();
      } catch (const cs::Interrupted& i) {
        steps += i.signal == SIGTERM;
      }
      steps += !cs::add_group(12345);  // refused once a signal has arrived
    }
    std::filesystem::remove_all(dir);
    cs::remove_dir(dir);
    out += " " + std::to_string(steps) + "\n";
    [[maybe_unused]] const ssize_t n = write(report[1], out.data(), out.size());
    close(report[1]);
    cs::die(SIGTERM);
  }
  close(report[1]);
  std::string got;
  char buf[256];
  for (ssize_t n; (n = read(report[0], buf, sizeof buf)) > 0;) got.append(buf, std::size_t(n));
  close(report[0]);
  int status = 0;
  BOOST_REQUIRE(waitpid(child, &status, 0) == child);
  BOOST_TEST((WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM), "the child ended with status " << status << " after: " << got);
  long group = 0;
  char outcome[16] = {};
  int steps = 0;
  BOOST_REQUIRE(std::sscanf(got.c_str(), "%ld %15s %d", &group, outcome, &steps) == 3);
  BOOST_TEST(std::string(outcome) == "exited", "the request waiting for its reply (killed by the watcher, not timed out): " << outcome);
  BOOST_TEST(steps == 2, "Interrupted{SIGTERM} thrown and add_group refused: " << steps << " of 2");
  BOOST_TEST(!group_alive(pid_t(group)));
  BOOST_TEST(!std::filesystem::exists(dir));
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

BOOST_AUTO_TEST_SUITE_END()  // test_backends_candidate_signals
