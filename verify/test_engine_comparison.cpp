// Comparison rules of documented outputs: each rule passes what it should and reports, on a
// mismatch, documented vs produced and (for numbers) the abs/rel error.
#include <boost/test/unit_test.hpp>

#include "engine/comparison_rule.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_engine_comparison).
BOOST_AUTO_TEST_SUITE(test_engine_comparison)

using vl::compare_output;
using vl::parse_rule;

namespace {
vl::LineVerdict one(const std::string& documented, const std::string& produced, const std::vector<std::string>& rules = {}) {
  std::vector<vl::LineRule> parsed;
  for (const auto& r : rules) parsed.push_back(parse_rule(r));
  const auto v = compare_output({documented}, {produced}, parsed);
  BOOST_REQUIRE_EQUAL(v.size(), 1u);
  return v[0];
}
}  // namespace

BOOST_AUTO_TEST_CASE(exact_is_the_default_and_catches_one_digit) {
  BOOST_TEST(one("pesi: [0.367 0.063]", "pesi: [0.367 0.063]").passed);
  const auto v = one("pesi: [0.367 0.063]", "pesi: [0.367 0.064]");
  BOOST_TEST(!v.passed);
  BOOST_TEST(v.rule == "exact");
  BOOST_TEST(v.detail.find("column 18") != std::string::npos, v.detail);
}

BOOST_AUTO_TEST_CASE(ws_folds_runs_of_spaces_only) {
  BOOST_TEST(one("Q, K: (6, 4) V: (6, 5)", "Q, K: (6, 4)  V: (6, 5)", {"line 1: ws — why"}).passed);
  BOOST_TEST(!one("Q, K: (6, 4) V: (6, 5)", "Q, K: (6, 4)  V: (6, 6)", {"line 1: ws — why"}).passed);
  BOOST_TEST(!one("Q, K: (6, 4) V: (6, 5)", "Q,K: (6, 4) V: (6, 5)", {"line 1: ws — why"}).passed);
}

BOOST_AUTO_TEST_CASE(bound_checks_the_produced_number_below_the_bound) {
  const std::vector<std::string> rule = {"line 1: bound 1e-12 — residue"};
  BOOST_TEST(one("differenza massima con torch: 3.33e-16", "differenza massima con torch: 2.22e-16", rule).passed);
  const auto v = one("differenza massima con torch: 3.33e-16", "differenza massima con torch: 4.00e-09", rule);
  BOOST_TEST(!v.passed);
  BOOST_TEST(v.detail.find("not below the bound 1e-12") != std::string::npos, v.detail);
  BOOST_TEST(!one("differenza massima con torch: 3.33e-16", "difference with torch: 2.22e-16", rule).passed);
}

BOOST_AUTO_TEST_CASE(numeric_reports_abs_and_rel_error) {
  const std::vector<std::string> rule = {"line 1 number 2: abs 1e-3 — why"};
  BOOST_TEST(one("d_k 4 std 1.986", "d_k 4 std 1.9865", rule).passed);
  const auto v = one("d_k 4 std 1.986", "d_k 4 std 1.996", rule);
  BOOST_TEST(!v.passed);
  BOOST_REQUIRE(v.abs_error.has_value());
  BOOST_TEST(*v.abs_error == 0.01, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(*v.rel_error == 0.01 / 1.986, boost::test_tools::tolerance(1e-9));
  // Number 1 (the 4) is still exact under a rule for number 2.
  BOOST_TEST(!one("d_k 4 std 1.986", "d_k 5 std 1.986", rule).passed);
  BOOST_TEST(one("x 100", "x 100.5", {"line 1: rel 1e-2 — why"}).passed);
}

BOOST_AUTO_TEST_CASE(machine_checks_form_only) {
  const std::vector<std::string> rule = {"line 1 number 4: machine — a timing"};
  BOOST_TEST(one("  4096     16777216           64.0            0.068", "  4096     16777216           64.0            0.412", rule).passed);
  BOOST_TEST(!one("  4096     16777216           64.0            0.068", "  4096     16777216           64.0            0.4", rule).passed);
  BOOST_TEST(!one("  4096     16777216           64.0            0.068", "  4096     16777217           64.0            0.068", rule).passed);
}

BOOST_AUTO_TEST_CASE(missing_and_extra_lines_fail) {
  auto v = compare_output({"a", "b"}, {"a"}, {});
  BOOST_TEST(!v[1].passed);
  BOOST_TEST(v[1].detail.find("missing line") != std::string::npos);
  v = compare_output({"a"}, {"a", "b"}, {});
  BOOST_TEST(v.size() == 2u);
  BOOST_TEST(!v[1].passed);
}

BOOST_AUTO_TEST_CASE(rule_syntax_errors_say_what_is_wrong) {
  BOOST_CHECK_THROW(parse_rule("line 1 bound 1e-12"), std::invalid_argument);
  BOOST_CHECK_THROW(parse_rule("row 1: exact"), std::invalid_argument);
  BOOST_CHECK_THROW(parse_rule("line 0: exact"), std::invalid_argument);
  BOOST_CHECK_THROW(parse_rule("line 1: bound -1"), std::invalid_argument);
  BOOST_CHECK_THROW(parse_rule("line 1: abs"), std::invalid_argument);
  BOOST_CHECK_THROW(parse_rule("line 1 number 2: ws"), std::invalid_argument);
  const auto r = parse_rule("lines 2-6 number 4: machine — timings");
  BOOST_TEST(r.first_line == 2);
  BOOST_TEST(r.last_line == 6);
  BOOST_TEST(*r.number == 4);
  BOOST_TEST(r.reason == "timings");
}

BOOST_AUTO_TEST_SUITE_END()  // test_engine_comparison
