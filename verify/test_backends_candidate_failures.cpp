#include <boost/test/unit_test.hpp>

// CandidateBackend (backends/candidate_backend.hpp) when its candidate fails, as the header lists
// it: a crash (verify/candidates/misbehaving.py crash: exit status 3) is an error naming the
// request, the candidate restarted once; a second crash ends it and nothing more is sent; a
// request left unanswered is killed at the timeout (the existing timeout, 0.3 s here, no sleep
// aimed at anything) and nothing more is sent; silence at the hello (misbehaving.py no-hello) is
// an error at construction. The candidate that answers its hello and then never a request is a
// one-line /bin/sh program (misbehaving.py's hang needs NumPy's start-up inside the timeout, which
// a loaded machine may not give a short one). Every case ends with no process of its candidates
// running and no temporary folder left (candidate_tests.hpp).
#include <chrono>
#include <string>

#include <xtensor/xtensor.hpp>

#include "backends/candidate_backend.hpp"
#include "candidate_tests.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_backends_candidate_failures).
BOOST_AUTO_TEST_SUITE(test_backends_candidate_failures)

using std::chrono::milliseconds;
using vl::verify::error_of;
using vl::verify::has;
using vl::verify::IsolatedCandidates;
using vl::verify::start_candidate;

// A crash (exit status 3) restarts the candidate once; the restarted one crashes at its first
// request too: the second crash ends it, and nothing more is sent.
BOOST_AUTO_TEST_CASE(a_crash_restarts_once_then_nothing_more_is_sent) {
  const IsolatedCandidates isolated;
  auto candidate = start_candidate(vl::verify::misbehaving("crash 1"));
  const xt::xtensor<double, 4> x = xt::ones<double>({1, 1, 2, 2});
  std::string e = error_of([&] { candidate->attention(x, x, x, {}); });
  BOOST_TEST(has(e, "candidate 'misbehaving crash', request 1 (attention): the candidate exited with status 3 (restarted it)"), e);
  BOOST_TEST(has(e, "its stderr ends: misbehaving: crashing on purpose"), e);
  e = error_of([&] { candidate->attention(x, x, x, {}); });
  BOOST_TEST(has(e, "request 2 (attention): the candidate exited with status 3, for the second time: not restarted"), e);
  e = error_of([&] { candidate->attention(x, x, x, {}); });
  BOOST_TEST(has(e, "request 3 (attention): not sent: the candidate crashed twice (last at request 2, attention); nothing more is sent"), e);
}

// Hello answered, the first request never (a 5 s sleep: were the timeout ignored, the case would
// fail in 5 s, not hang): killed at the timeout (0.3 s), nothing more sent.
BOOST_AUTO_TEST_CASE(a_hang_is_killed_at_the_timeout) {
  const IsolatedCandidates isolated;
  auto candidate = start_candidate("read l; echo '{\"id\": 0, \"ok\": true, \"name\": \"hangs\", \"ops\": [\"attention\"]}'; read l; exec sleep 5",
                         milliseconds(300));
  const xt::xtensor<double, 4> x = xt::ones<double>({1, 1, 2, 2});
  std::string e = error_of([&] { candidate->attention(x, x, x, {}); });
  BOOST_TEST(has(e, "candidate 'hangs', request 1 (attention): the candidate sent no reply within 0.3 s (its process group was killed)"), e);
  BOOST_TEST(isolated.processes_with_token().empty());  // killed at once, not when the backend goes
  e = error_of([&] { candidate->attention(x, x, x, {}); });
  BOOST_TEST(has(e, "request 2 (attention): not sent: the candidate timed out at request 1 (attention) and was killed"), e);
}

// Silent at the hello: the constructor throws at the timeout, its folder removed, nothing running.
BOOST_AUTO_TEST_CASE(silence_at_the_hello_is_an_error_at_construction) {
  const IsolatedCandidates isolated;
  const std::string command = "exec " + vl::verify::misbehaving("no-hello");
  const std::string e = error_of([&] { start_candidate(command, milliseconds(200)); });
  BOOST_TEST(has(e, "candidate '" + command + "': no reply to the hello: it sent no reply within 0.2 s (its process group was killed)"), e);
}

BOOST_AUTO_TEST_SUITE_END()  // test_backends_candidate_failures
