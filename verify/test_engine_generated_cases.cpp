// The generated cases' engine (src/engine/generated_cases.hpp) on properties whose smallest
// failing input is known by construction, so that the shrinker's answer can be checked exactly:
// anchors first (simplest, largest, the check's own, clamped into range), then the drawn cases,
// the same for the same seed and different for another; the first failure shrunk to the smallest
// case that still fails within the stated number of runs; a case the backend lacks an option for
// skipped, and all of them lacking rethrown (the claim is then not applicable).
#include <boost/test/unit_test.hpp>

#include <set>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/registry.hpp"
#include "engine/generated_cases.hpp"

#include <fmt/format.h>

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_engine_generated_cases).
BOOST_AUTO_TEST_SUITE(test_engine_generated_cases)

namespace generated_cases_test {

using namespace vl;

const std::vector<CaseTerm> kTerms = {{"x", 0, 20, 0, {}}, {"y", 1, 9, 1, {}}, {"kind", 0, 2, 0, {"none", "bool", "float"}}};

// A context whose claim fails when the measured value is above 0.5 (as `compare: <=` would).
CheckContext context(int cases, std::uint64_t seed) {
  static const auto plain = backends::plain();
  CheckContext ctx{*plain, {}, [](double v) { return !(v <= 0.5); }};
  ctx.cases = cases;
  ctx.seed = seed;
  return ctx;
}

// Every case measured, in order.
struct Recorder {
  std::vector<std::vector<int>> seen;
  Measurement operator()(const Case& c) {
    seen.push_back(c.values());
    return {0, "ok"};
  }
};

BOOST_AUTO_TEST_CASE(anchors_first_then_drawn_cases_the_same_for_a_seed) {
  Recorder a, b, other;
  const std::vector<std::vector<int>> anchors = {{5, 100, 1}};  // y = 100 is clamped to its largest, 9
  generated_cases(context(6, 7), kTerms, anchors, Worse::larger, std::ref(a));
  generated_cases(context(6, 7), kTerms, anchors, Worse::larger, std::ref(b));
  generated_cases(context(6, 8), kTerms, anchors, Worse::larger, std::ref(other));
  BOOST_TEST_REQUIRE(a.seen.size() == 9u);  // simplest, largest, 1 anchor, 6 drawn
  BOOST_TEST((a.seen[0] == std::vector<int>{0, 1, 0}));
  BOOST_TEST((a.seen[1] == std::vector<int>{20, 9, 2}));
  BOOST_TEST((a.seen[2] == std::vector<int>{5, 9, 1}));
  BOOST_TEST((a.seen == b.seen));
  BOOST_TEST((std::vector(a.seen.begin() + 3, a.seen.end()) != std::vector(other.seen.begin() + 3, other.seen.end())));
  for (const auto& v : a.seen) {
    BOOST_TEST((v[0] >= 0 && v[0] <= 20 && v[1] >= 1 && v[1] <= 9 && v[2] >= 0 && v[2] <= 2));
  }
}

BOOST_AUTO_TEST_CASE(drawn_values_cover_each_range) {
  Recorder r;
  generated_cases(context(300, 1), kTerms, {}, Worse::larger, std::ref(r));
  std::set<int> xs, kinds;
  for (const auto& v : r.seen) xs.insert(v[0]), kinds.insert(v[2]);
  BOOST_TEST(xs.size() == 21u);  // 0 … 20 all drawn in 300 cases
  BOOST_TEST(kinds.size() == 3u);
}

BOOST_AUTO_TEST_CASE(the_first_failure_shrinks_to_the_smallest_failing_case) {
  // Fails exactly when x ≥ 7 and y ≥ 4, whatever the kind: the smallest failing case is x = 7,
  // y = 4, kind none. The largest anchor (20, 9, float) fails first.
  int runs = 0;
  const Measurement m = generated_cases(context(10, 3), kTerms, {}, Worse::larger, [&](const Case& c) {
    ++runs;
    return Measurement{c["x"] >= 7 && c["y"] >= 4 ? 1.0 : 0.0, "measured"};
  });
  BOOST_TEST(m.value == 1.0);
  BOOST_TEST(m.detail.find("smallest case found: x=7 y=4 kind=none") != std::string::npos, m.detail);
  BOOST_TEST(m.detail.find("anchor case 2 of 2: x=20 y=9 kind=float") != std::string::npos, m.detail);
  BOOST_TEST(!m.unmet.empty());
  BOOST_TEST(runs <= 2 + kMaxShrinkRuns);  // it stops drawing at the failure
}

BOOST_AUTO_TEST_CASE(an_unmet_condition_fails_and_shrinks_too) {
  const Measurement m = generated_cases(context(10, 3), kTerms, {}, Worse::larger, [](const Case& c) {
    Measurement r{0, "measured"};
    return r.require(c["kind"] != 2, "a float mask");
  });
  BOOST_TEST(m.detail.find("smallest case found: x=0 y=1 kind=float") != std::string::npos, m.detail);
  BOOST_TEST(m.unmet.front() == "a float mask");
}

BOOST_AUTO_TEST_CASE(shrinking_stops_after_its_bound) {
  // Fails while every term is above 0: from the largest anchor (999, 999, 999) each term halves
  // toward 1, about 20 runs each, 60 in all: more than the bound, so shrinking stops at it, with
  // the case not yet the smallest (1, 1, 1).
  const std::vector<CaseTerm> wide = {{"x", 0, 999, 0, {}}, {"y", 0, 999, 0, {}}, {"z", 0, 999, 0, {}}};
  int runs = 0;
  const Measurement m = generated_cases(context(5, 3), wide, {}, Worse::larger, [&](const Case& c) {
    ++runs;
    return Measurement{c["x"] > 0 && c["y"] > 0 && c["z"] > 0 ? 1.0 : 0.0, "measured"};
  });
  BOOST_TEST(runs == 2 + kMaxShrinkRuns);  // the simplest anchor passes, the largest fails, then the bound
  BOOST_TEST(m.detail.find(fmt::format("shrunk in {} runs, at most {}", kMaxShrinkRuns, kMaxShrinkRuns)) != std::string::npos, m.detail);
  BOOST_TEST(m.detail.find("smallest case found: x=1 y=1 z=1") == std::string::npos, m.detail);
}

BOOST_AUTO_TEST_CASE(shrinking_tries_each_value_once) {
  // From x = 2 toward 0 the steps are 0, 1 (halfway) and 1 (one step): 1 is measured once.
  const std::vector<CaseTerm> small = {{"x", 0, 2, 0, {}}};
  std::vector<int> seen;
  generated_cases(context(0, 3), small, {}, Worse::larger, [&](const Case& c) {
    seen.push_back(c["x"]);
    return Measurement{c["x"] == 2 ? 1.0 : 0.0, "fails at 2 only"};
  });
  BOOST_TEST((seen == std::vector<int>{0, 2, 0, 1}));  // anchors 0 and 2, then 0 and 1 once each
}

BOOST_AUTO_TEST_CASE(a_case_the_backend_cannot_run_while_shrinking_is_no_smaller_failure) {
  // Fails when x ≥ 7; a case with kind = none cannot run (below x = 20): shrinking the kind from
  // float tries none (not run: no smaller failure there), then bool, which fails and is kept.
  const Measurement m = generated_cases(context(0, 3), kTerms, {}, Worse::larger, [](const Case& c) -> Measurement {
    if (c["kind"] == 0 && c["x"] < 20) throw backends::UnsupportedOption(backends::Op::attention, "unsupported: kind none");
    return {c["x"] >= 7 ? 1.0 : 0.0, "measured"};
  });
  BOOST_TEST(m.detail.find("smallest case found: x=7 y=1 kind=bool") != std::string::npos, m.detail);
}

BOOST_AUTO_TEST_CASE(terms_out_of_order_are_refused) {
  const std::vector<CaseTerm> bad = {{"x", 1, 3, 0, {}}};  // simplest below lo
  BOOST_CHECK_THROW(generated_cases(context(0, 3), bad, {}, Worse::larger, [](const Case&) { return Measurement{0, ""}; }),
                    std::logic_error);
}

// Seed 7's three drawn cases over kTerms, computed apart from this code with SplitMix64's published
// constants (Steele, Lea & Flood 2014) in Python: value = lo + mix(mix(seed ^ mix(i)) + t) mod span,
// for case numbers i = 2, 3, 4 (after the two anchors) and terms t = 0, 1, 2.
const std::vector<int> kSeed7[] = {{15, 4, 2}, {18, 7, 2}, {14, 8, 1}};

BOOST_AUTO_TEST_CASE(the_draws_are_pinned) {
  // SplitMix64 (no std:: distribution): the same values on every machine and standard library.
  // These are the drawn cases of seed 7 as this code draws them; a change of the draw breaks every
  // reported seed's replay, so it must be deliberate (and this list updated with it).
  Recorder r;
  generated_cases(context(3, 7), kTerms, {}, Worse::larger, std::ref(r));
  BOOST_TEST_REQUIRE(r.seen.size() == 5u);
  BOOST_TEST_MESSAGE("seed 7 draws: " << r.seen[2][0] << " " << r.seen[2][1] << " " << r.seen[2][2] << " | " << r.seen[3][0] << " "
                                      << r.seen[3][1] << " " << r.seen[3][2] << " | " << r.seen[4][0] << " " << r.seen[4][1] << " "
                                      << r.seen[4][2]);
  BOOST_TEST((r.seen[2] == kSeed7[0] && r.seen[3] == kSeed7[1] && r.seen[4] == kSeed7[2]));
}

BOOST_AUTO_TEST_CASE(the_worst_passing_case_is_reported) {
  const Measurement larger = generated_cases(context(0, 3), kTerms, {{4, 2, 0}}, Worse::larger,
                                             [](const Case& c) { return Measurement{c["x"] / 100.0, "x/100"}; });
  BOOST_TEST(larger.value == 0.2);  // x = 20, the largest anchor
  const Measurement smaller = generated_cases(context(0, 3), kTerms, {{4, 2, 0}}, Worse::smaller,
                                              [](const Case& c) { return Measurement{c["x"] / 100.0, "x/100"}; });
  BOOST_TEST(smaller.value == 0.0);
  BOOST_TEST(larger.detail.find("3 anchor and 0 drawn cases (seed 3) pass") != std::string::npos, larger.detail);
}

BOOST_AUTO_TEST_CASE(a_nan_fails) {
  const Measurement m = generated_cases(context(0, 3), kTerms, {}, Worse::larger, [](const Case& c) {
    return Measurement{c["x"] == 20 ? std::nan("") : 0.0, "NaN at the largest"};
  });
  BOOST_TEST(m.detail.find("FAILS") != std::string::npos, m.detail);
}

BOOST_AUTO_TEST_CASE(cases_the_backend_cannot_run_are_skipped_and_counted) {
  const auto lacks = [](const Case& c) -> Measurement {
    if (c["kind"] == 2) throw backends::UnsupportedOption(backends::Op::attention, "unsupported: a float mask");
    return {0, "ok"};
  };
  const Measurement m = generated_cases(context(20, 5), kTerms, {}, Worse::larger, lacks);
  BOOST_TEST(m.detail.find("of them not run: the backend lacks an option they use, e.g. unsupported: a float mask") != std::string::npos,
             m.detail);
  BOOST_CHECK_THROW(generated_cases(context(20, 5), kTerms, {}, Worse::larger,
                                    [](const Case&) -> Measurement { throw backends::UnsupportedOption(backends::Op::attention, "no"); }),
                    backends::Unsupported);
}

BOOST_AUTO_TEST_CASE(a_case_names_its_values_and_refuses_an_unknown_term) {
  const Case c(&kTerms, {3, 2, 1}, 99);
  BOOST_TEST(c.str() == "x=3 y=2 kind=bool (data seed 99)");
  BOOST_TEST(c["y"] == 2);
  BOOST_CHECK_THROW(c["z"], std::logic_error);
}

}  // namespace generated_cases_test

BOOST_AUTO_TEST_SUITE_END()
