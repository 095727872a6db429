// Every comparison rule at its boundary. For a tolerance t the rule is probed at t·(1 − 10⁻⁶)
// (passes), t·(1 + 10⁻⁶) (fails) and exactly t, whose verdict the spec's wording decides
// (specs/README.md, "the produced line passes when"):
//
//   abs A, rel R     "within A / R"   → an error exactly A (R) passes      (error ≤ t)
//   bound X          "below X"        → a number exactly X fails           (|number| < X)
//
// The probes put the error where it is exact in binary: a documented 0 makes the absolute error
// the produced number itself, so "5e-4" against "0" is an error of exactly the double 5e-4.
// Also: the rule hits the number (and lines) it names and no other, spacing, a number more or
// fewer, a sign change, NaN and inf, a line longer or shorter, and the claim tolerance's parse.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "engine/comparison_rule.hpp"
#include "engine/spec.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_engine_boundaries).
BOOST_AUTO_TEST_SUITE(test_engine_boundaries)

namespace {

using Rules = std::vector<std::string>;

bool passes(const std::string& documented, const std::string& produced, const Rules& rules = {}) {
  std::vector<vl::LineRule> parsed;
  for (const auto& r : rules) parsed.push_back(vl::parse_rule(r));
  const auto v = vl::compare_output({documented}, {produced}, parsed);
  BOOST_REQUIRE_EQUAL(v.size(), 1u);
  return v[0].passed;
}

// The shortest text that reads back as exactly x.
std::string num(double x) { return fmt::format("{}", x); }

const double below = 1 - 1e-6, above = 1 + 1e-6;

}  // namespace

BOOST_AUTO_TEST_CASE(exact_is_character_for_character) {
  BOOST_TEST(passes("mean 0.25 (n = 4)", "mean 0.25 (n = 4)"));
  BOOST_TEST(!passes("mean 0.25 (n = 4)", "mean  0.25 (n = 4)"));   // spacing
  BOOST_TEST(!passes("mean 0.25 (n = 4)", "mean 0.25 (n = 4) "));   // longer by a space
  BOOST_TEST(!passes("mean 0.25 (n = 4)", "mean 0.25 (n = 4"));     // shorter
  BOOST_TEST(!passes("mean 0.25 (n = 4)", "mean -0.25 (n = 4)"));   // a sign
  BOOST_TEST(!passes("mean 0.25 (n = 4)", "mean 0.250 (n = 4)"));   // the same value, other digits
  BOOST_TEST(!passes("mean 0.25 (n = 4)", "mean nan (n = 4)"));
  BOOST_TEST(passes("mean nan", "mean nan"));
  BOOST_TEST(passes("mean 0.25", "mean 0.25", {"line 2: ws — another line's rule"}));
  BOOST_TEST(!passes("mean  0.25", "mean 0.25", {"line 2: ws — another line's rule"}));  // only a rule on line 1 relaxes it
}

BOOST_AUTO_TEST_CASE(ws_counts_a_run_of_spaces_as_one_and_nothing_else) {
  const Rules ws = {"line 1: ws — collapsed"};
  BOOST_TEST(passes("Q: (6, 4) V: (6, 5)", "Q: (6, 4)     V: (6, 5)", ws));
  BOOST_TEST(!passes("Q: (6, 4) V: (6, 5)", "Q: (6, 4)V: (6, 5)", ws));   // a space is not nothing
  BOOST_TEST(!passes("Q: (6, 4) V: (6, 5)", "Q: (6, 4) V: (6, 5) ", ws));  // longer
  BOOST_TEST(!passes("Q: (6, 4) V: (6, 5)", "Q: (6, 4) V: (6, 5", ws));    // shorter
  BOOST_TEST(!passes("Q: (6, 4) V: (6, 5)", "Q: (6, 4) V: (6, 6)", ws));   // numbers stay exact
  BOOST_TEST(!passes("Q: (6, 4) V: (6, 5)", "Q: (6, 4) V: (6, -5)", ws));
  BOOST_TEST(!passes("Q: (6, 4) V: (6, 5)", "Q: (6, 4) V: (6, 5, 1)", ws));
}

BOOST_AUTO_TEST_CASE(abs_passes_an_error_of_exactly_A) {
  for (const double a : {5e-4, 1e-12, 0.02, 3.0}) {
    const Rules rule = {fmt::format("line 1: abs {} — why", num(a))};
    BOOST_TEST(passes("err 0", "err " + num(a * below), rule), a);
    BOOST_TEST(passes("err 0", "err " + num(a), rule), a);  // within: ≤
    BOOST_TEST(!passes("err 0", "err " + num(a * above), rule), a);
    BOOST_TEST(passes("err 0", "err " + num(-a * below), rule), a);  // the error's size, either side
    BOOST_TEST(!passes("err 0", "err " + num(-a * above), rule), a);
  }
  // A sign change is an error of twice the value.
  BOOST_TEST(passes("x 0.0002", "x -0.0002", {"line 1: abs 5e-4 — why"}));
  BOOST_TEST(!passes("x 0.0003", "x -0.0003", {"line 1: abs 5e-4 — why"}));
  BOOST_TEST(!passes("x 0", "x 1e-300", {"line 1: abs 0 — zero is exact"}));
  BOOST_TEST(passes("x 0", "x 0.0", {"line 1: abs 0 — zero is exact"}));
}

BOOST_AUTO_TEST_CASE(rel_passes_an_error_of_exactly_R) {
  for (const double r : {1e-6, 1e-3, 0.25}) {
    const Rules rule = {fmt::format("line 1: rel {} — why", num(r))};
    BOOST_TEST(passes("y 2", "y " + num(2 * (1 + r * below)), rule), r);
    BOOST_TEST(!passes("y 2", "y " + num(2 * (1 + r * above)), rule), r);
    BOOST_TEST(passes("y 2", "y " + num(2 * (1 - r * below)), rule), r);
    BOOST_TEST(!passes("y 2", "y " + num(2 * (1 - r * above)), rule), r);
  }
  BOOST_TEST(passes("y 4", "y 5", {"line 1: rel 0.25 — why"}));  // 1/4 is exact: within
  BOOST_TEST(passes("y 4", "y 3", {"line 1: rel 0.25 — why"}));
  BOOST_TEST(!passes("y 4", "y -4", {"line 1: rel 1 — why"}));  // a sign change is 200%
  // Relative to the documented number: against 0 only 0 is within any R.
  BOOST_TEST(!passes("y 0", "y 1e-300", {"line 1: rel 1 — why"}));
  BOOST_TEST(passes("y 0", "y 0", {"line 1: rel 1e-9 — why"}));
}

BOOST_AUTO_TEST_CASE(abs_rel_passes_when_either_holds) {
  const Rules rule = {"line 1: abs 1e-3 rel 1e-6 — why"};
  BOOST_TEST(passes("z 1000", "z 1000.000999", rule));           // abs holds (and rel: 1e-9)
  BOOST_TEST(passes("z 5000", "z 5000.004999", rule));           // rel holds, abs does not
  BOOST_TEST(!passes("z 5000", "z " + num(5000 * (1 + 1e-6 * above)), rule));  // neither
  BOOST_TEST(passes("z 0", "z " + num(1e-3 * below), rule));     // at 0 only abs can hold
  BOOST_TEST(passes("z 0", "z " + num(1e-3), rule));
  BOOST_TEST(!passes("z 0", "z " + num(1e-3 * above), rule));
  // Written the other way round, the same rule.
  BOOST_TEST(!passes("z 0", "z " + num(1e-3 * above), {"line 1: rel 1e-6 abs 1e-3 — why"}));
  BOOST_TEST(passes("z 0", "z " + num(1e-3 * below), {"line 1: rel 1e-6 abs 1e-3 — why"}));
}

BOOST_AUTO_TEST_CASE(bound_fails_a_number_of_exactly_X) {
  for (const double x : {1e-12, 1e-6, 0.5}) {
    const Rules rule = {fmt::format("line 1: bound {} — a residue", num(x))};
    BOOST_TEST(passes("residue 3.33e-16", "residue " + num(x * below), rule), x);
    BOOST_TEST(!passes("residue 3.33e-16", "residue " + num(x), rule), x);  // below: <
    BOOST_TEST(!passes("residue 3.33e-16", "residue " + num(x * above), rule), x);
    BOOST_TEST(passes("residue 3.33e-16", "residue " + num(-x * below), rule), x);  // its size
    BOOST_TEST(!passes("residue 3.33e-16", "residue " + num(-x * above), rule), x);
  }
  BOOST_TEST(!passes("residue 3.33e-16", "residue 1e-12", {"line 1: bound 0 — nothing is below 0"}));
  BOOST_TEST(!passes("residue 3.33e-16", "residue 0", {"line 1: bound 0 — nothing is below 0"}));
}

// bound derived: the same boundary, at the bound the listing derived for the line; a line with
// none, or with one that is no bound (0, NaN, ∞), fails.
BOOST_AUTO_TEST_CASE(bound_derived_judges_by_the_listing_bound) {
  const std::vector<vl::LineRule> rule = {vl::parse_rule("line 1: bound derived — a residue")};
  BOOST_TEST(rule[0].derived);
  auto judged = [&](const std::string& produced, const std::map<int, double>& derived) {
    const auto v = vl::compare_output({"residue 3.33e-16"}, {produced}, rule, derived);
    return v.at(0);
  };
  const double x = 3.7e-14;
  BOOST_TEST(judged("residue " + num(x * below), {{1, x}}).passed);
  BOOST_TEST(judged("residue " + num(x * below), {{1, x}}).bound.value_or(0) == x);
  BOOST_TEST(!judged("residue " + num(x), {{1, x}}).passed);  // below: <
  BOOST_TEST(!judged("residue " + num(x * above), {{1, x}}).passed);
  BOOST_TEST(!judged("residue " + num(x * below), {{2, x}}).passed);  // a bound for another line only
  BOOST_TEST(judged("residue " + num(x * below), {{2, x}}).detail.find("derives no bound for line 1") != std::string::npos);
  BOOST_TEST(!judged("residue 1e-16", {}).passed);
  for (const double no_bound : {0.0, std::nan(""), double(INFINITY), -1.0})
    BOOST_TEST(!judged("residue 1e-16", {{1, no_bound}}).passed, no_bound);
  BOOST_CHECK_THROW(vl::parse_rule("line 1: bound derived 2 — too many words"), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(machine_judges_decimals_and_exponent_only) {
  const Rules rule = {"line 1: machine — a timing"};
  BOOST_TEST(passes("took 0.068 ms", "took 12.412 ms", rule));
  BOOST_TEST(!passes("took 0.068 ms", "took 0.0680 ms", rule));   // one decimal more
  BOOST_TEST(!passes("took 0.068 ms", "took 0.07 ms", rule));     // one fewer
  BOOST_TEST(!passes("took 0.068 ms", "took 6.8e-02 ms", rule));  // exponent style
  BOOST_TEST(!passes("took 6.8e-02 ms", "took 0.068 ms", rule));
  BOOST_TEST(passes("took 6.8e-02 ms", "took 1.2e+05 ms", rule));
  BOOST_TEST(!passes("took 0.1 ms", "took 6.8e-02 ms", rule));    // one decimal each: the exponent tells them apart
  BOOST_TEST(!passes("took 6.8e-02 ms", "took 0.1 ms", rule));
  BOOST_TEST(!passes("took 68 ms", "took 68.0 ms", rule));
  BOOST_TEST(!passes("took 0.068 ms", "took 0.068 s", rule));     // the text stays exact
  // The sign is not part of the form (decimals, exponent): written down, not an accident.
  BOOST_TEST(passes("took 0.068 ms", "took -0.068 ms", rule));
}

BOOST_AUTO_TEST_CASE(a_sign_glued_to_a_word_is_text_and_the_digits_after_it_a_number) {
  // "n-1" is the text "n-" and the number 1 (not the identifier-like "n" followed by -1, nor a
  // line without it): the rule's "number 2" is the 4 after it.
  const Rules second = {"line 1 number 2: abs 1 — why"};
  BOOST_TEST(passes("rows n-1 = 4", "rows n-1 = 4.5", second));
  BOOST_TEST(!passes("rows n-1 = 4", "rows n-1 = 5.5", second));
  BOOST_TEST(passes("rows n+1 = 4", "rows n+1 = 4.5", second));
  BOOST_TEST(!passes("rows n-1 = 4", "rows n-2 = 4", second));  // number 1 stays exact
}

BOOST_AUTO_TEST_CASE(a_rule_hits_the_number_it_names_and_no_other) {
  const Rules second = {"line 1 number 2: abs 0.1 — why"};
  const std::string doc = "n 4 err 0.5 of 7";
  BOOST_TEST(passes(doc, "n 4 err 0.59 of 7", second));
  BOOST_TEST(!passes(doc, "n 4 err 0.61 of 7", second));
  BOOST_TEST(!passes(doc, "n 4.01 err 0.5 of 7", second));  // number 1 stays exact
  BOOST_TEST(!passes(doc, "n 4 err 0.5 of 7.01", second));  // number 3 stays exact
  BOOST_TEST(!passes(doc, "n 4 err 0.5 of 7.0", second));   // exact means the digits
  // Without 'number', every number of the line.
  const Rules all = {"line 1: abs 0.1 — why"};
  BOOST_TEST(passes(doc, "n 4.09 err 0.59 of 6.91", all));
  BOOST_TEST(!passes(doc, "n 4.09 err 0.59 of 6.89", all));
  // Two rules on one line, each on its number.
  const Rules two = {"line 1 number 1: bound 5 — why", "line 1 number 3: rel 0.5 — why"};
  BOOST_TEST(passes(doc, "n 4.9 err 0.5 of 10", two));
  BOOST_TEST(!passes(doc, "n 5 err 0.5 of 10", two));
  BOOST_TEST(!passes(doc, "n 4.9 err 0.51 of 10", two));
  BOOST_TEST(!passes(doc, "n 4.9 err 0.5 of 11", two));
  // The lines a rule names, and no other.
  const std::vector<vl::LineRule> lines = {vl::parse_rule("lines 2-3: abs 0.1 — why")};
  const auto v = vl::compare_output({"x 1", "x 1", "x 1", "x 1"}, {"x 1.05", "x 1.05", "x 1.05", "x 1.05"}, lines);
  BOOST_REQUIRE_EQUAL(v.size(), 4u);
  BOOST_TEST(!v[0].passed);
  BOOST_TEST(v[1].passed);
  BOOST_TEST(v[2].passed);
  BOOST_TEST(!v[3].passed);
}

BOOST_AUTO_TEST_CASE(one_number_more_or_fewer_fails_under_every_rule) {
  for (const std::string rule : {"abs 10", "rel 10", "bound 10", "machine", "ws"}) {
    const Rules r = {"line 1: " + rule + " — why"};
    BOOST_TEST(!passes("v 1 2", "v 1 2 3", r), rule);
    BOOST_TEST(!passes("v 1 2", "v 1", r), rule);
    BOOST_TEST(!passes("v 1 2", "v 1 nan", r), rule);  // NaN is not a number the rule can judge
    BOOST_TEST(!passes("v 1 2", "v 1 inf", r), rule);
    BOOST_TEST(!passes("v 1 2", "v 1 2 extra", r), rule);  // longer
    BOOST_TEST(!passes("v 1 2", "v 1 ", r), rule);         // shorter
  }
}

BOOST_AUTO_TEST_CASE(numbers_beyond_a_double_are_judged_not_thrown) {
  // "1e999" overflows a double, "1e-400" underflows: a verdict, never an exception.
  BOOST_TEST(!passes("v 1", "v 1e999", {"line 1: abs 1e300 — why"}));
  BOOST_TEST(!passes("v 1", "v 1e999", {"line 1: bound 1e300 — why"}));
  BOOST_TEST(!passes("v 1e999", "v 1", {"line 1: rel 1 — why"}));
  BOOST_TEST(passes("v 1e999", "v 1e999", {"line 1: abs 0 — why"}));  // the same digits
  BOOST_TEST(passes("v 0", "v 1e-400", {"line 1: abs 1e-300 — why"}));
  BOOST_TEST(passes("v 0", "v 1e-400", {"line 1: bound 1e-300 — why"}));
}

BOOST_AUTO_TEST_CASE(lines_more_or_fewer_fail_one_verdict_each) {
  const std::vector<vl::LineRule> ws = {vl::parse_rule("lines 1-3: ws — why")};
  auto v = vl::compare_output({"a", "b"}, {"a", "b", ""}, ws);
  BOOST_REQUIRE_EQUAL(v.size(), 3u);
  BOOST_TEST(v[0].passed);
  BOOST_TEST(v[1].passed);
  BOOST_TEST(!v[2].passed);  // even an empty extra line
  v = vl::compare_output({"a", "b", ""}, {"a", "b"}, ws);
  BOOST_REQUIRE_EQUAL(v.size(), 3u);
  BOOST_TEST(!v[2].passed);
  v = vl::compare_output({}, {}, {});
  BOOST_TEST(v.empty());
}

BOOST_AUTO_TEST_CASE(rule_values_are_finite_and_non_negative) {
  for (const std::string bad : {"abs -1e-3", "rel nan", "bound inf", "abs 1e999", "abs 1e-3x", "bound", "abs 1 rel", "abs 1 abs 2 x"})
    BOOST_CHECK_THROW(vl::parse_rule("line 1: " + bad + " — why"), std::invalid_argument);
  BOOST_TEST(vl::parse_rule("line 1: abs 5e-4 — why").abs_tol == 5e-4);
  BOOST_TEST(vl::parse_rule("line 1: bound 1e-12 — why").bound == 1e-12);
  BOOST_TEST(vl::parse_rule("line 1: rel 1e-6 — why").rel_tol == 1e-6);
}

namespace {

struct TempSpec {
  std::filesystem::path file;
  explicit TempSpec(const std::string& tolerance) {
    file = std::filesystem::temp_directory_path() / fmt::format("vl_boundaries_{}.md", ::getpid());
    std::ofstream(file) << "---\nlesson: tol\ntitle: T\nsources:\n  - s\n---\n\n```claim\nid: tol.one\nkind: bound\n"
                        << "tolerance: " << tolerance << (tolerance == "none" ? "" : "\ncompare: <=")
                        << "\nstatement: s.\nsource: s\n```\n";
  }
  ~TempSpec() { std::filesystem::remove(file); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(claim_tolerance_is_the_number_written_and_none_is_none) {
  {
    const TempSpec s("1e-12");
    const auto spec = vl::parse_spec(s.file);
    BOOST_REQUIRE(spec.claims.at(0).tolerance.has_value());
    BOOST_TEST(*spec.claims[0].tolerance == 1e-12);  // not 1e-11, not 1e-13
  }
  {
    const TempSpec s("0");
    const auto spec = vl::parse_spec(s.file);
    BOOST_REQUIRE(spec.claims.at(0).tolerance.has_value());
    BOOST_TEST(*spec.claims[0].tolerance == 0.0);  // bit-identical: only a measured 0 is within
  }
  {
    const TempSpec s("none");
    const auto spec = vl::parse_spec(s.file);
    BOOST_TEST(!spec.claims.at(0).tolerance.has_value());
    BOOST_TEST(spec.claims[0].tolerance_text == "none");
  }
  for (const std::string bad : {"-1e-12", "nan", "inf", "1e999", "1e-12 abs", "None", "", "0.1.2"}) {
    const TempSpec s(bad);
    BOOST_CHECK_THROW(vl::parse_spec(s.file), vl::InputError);
  }
}

BOOST_AUTO_TEST_SUITE_END()  // test_engine_boundaries
