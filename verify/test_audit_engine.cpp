// The audit catches what would let a wrong suite pass: a claim whose check was deleted, a
// vacuous check (its broken variant passes), a check naming no claim, a check without negative
// control, a listing whose spec and code disagree. Each case breaks the real linear-rnn
// registration in one place and expects the audit to fail naming the cause.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>

#include "backends/registry.hpp"
#include "core/errors.hpp"
#include "engine/audit.hpp"
#include "engine/report.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/linear_rnn/linear_rnn.hpp"

#include <sstream>

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_audit_engine).
BOOST_AUTO_TEST_SUITE(test_audit_engine)

namespace {

vl::AuditReport audit(const vl::Lesson& lesson, std::vector<std::string> select = {}) {
  vl::AuditOptions options;
  options.root = VL_SOURCE_DIR;
  options.select = std::move(select);
  return vl::run_audit({lesson}, options);
}

const vl::ClaimResult& claim(const vl::AuditReport& report, const std::string& id) {
  for (const auto& c : report.lessons.at(0).claims)
    if (c.claim.id == id) return c;
  throw std::runtime_error("claim not in report: " + id);
}

bool mentions(const std::vector<std::string>& problems, const std::string& words) {
  return std::any_of(problems.begin(), problems.end(), [&](auto& p) { return p.find(words) != std::string::npos; });
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_real_registration_passes) {
  const auto report = audit(vl::lessons::linear_rnn::lesson(), {"linear-rnn.causal", "linear-rnn.main"});
  BOOST_TEST(report.ok());
  BOOST_TEST(report.passed() == 2);
}

BOOST_AUTO_TEST_CASE(a_deleted_check_leaves_its_claim_untested) {
  vl::Lesson lesson = vl::lessons::linear_rnn::lesson();
  std::erase_if(lesson.checks, [](auto& c) { return c.claim_id == "linear-rnn.causal"; });
  const auto report = audit(lesson, {"linear-rnn.causal"});
  BOOST_TEST(!report.ok());
  const auto& c = claim(report, "linear-rnn.causal");
  BOOST_TEST((c.status == vl::Status::untested));
  BOOST_TEST(c.why == "no check verifies this claim");
}

BOOST_AUTO_TEST_CASE(a_control_that_passes_makes_the_claim_vacuous) {
  vl::Lesson lesson = vl::lessons::linear_rnn::lesson();
  for (auto& c : lesson.checks)
    if (c.claim_id == "linear-rnn.causal") c.controls[0].backend = vl::backends::plain();  // the "broken" variant is the real one
  const auto report = audit(lesson, {"linear-rnn.causal"});
  BOOST_TEST(!report.ok());
  const auto& c = claim(report, "linear-rnn.causal");
  BOOST_TEST((c.status == vl::Status::vacuous));
  BOOST_TEST(c.why.find("passes the broken variant 'mask lets one future token through'") != std::string::npos, c.why);
}

BOOST_AUTO_TEST_CASE(a_check_without_control_is_vacuous) {
  vl::Lesson lesson = vl::lessons::linear_rnn::lesson();
  for (auto& c : lesson.checks)
    if (c.claim_id == "linear-rnn.state-size") c.controls.clear();
  const auto report = audit(lesson, {"linear-rnn.state-size"});  // kept alive: c refers into it
  const auto& c = claim(report, "linear-rnn.state-size");
  BOOST_TEST((c.status == vl::Status::vacuous));
  BOOST_TEST(c.why.find("no negative control") != std::string::npos, c.why);
}

BOOST_AUTO_TEST_CASE(a_check_naming_no_claim_is_a_problem) {
  vl::Lesson lesson = vl::lessons::linear_rnn::lesson();
  vl::ClaimCheck stray = lesson.checks.front();
  stray.claim_id = "linear-rnn.not-in-the-spec";
  lesson.checks.push_back(stray);
  const auto report = audit(lesson, {"linear-rnn.state-size"});
  BOOST_TEST(!report.ok());
  BOOST_TEST(mentions(report.lessons[0].problems, "names claim 'linear-rnn.not-in-the-spec'"));
}

BOOST_AUTO_TEST_CASE(a_failing_check_fails_its_claim) {
  vl::Lesson lesson = vl::lessons::linear_rnn::lesson();
  for (auto& c : lesson.checks)
    if (c.claim_id == "linear-rnn.forms-agree") {  // the check run against a broken backend instead of the audited one
      const auto broken = c.controls[0].backend;
      const vl::CheckFn real = c.run;
      c.run = [broken, real](const vl::CheckContext& ctx) { return real({*broken, ctx.goldens, ctx.settled_failing}); };
    }
  const auto report = audit(lesson, {"linear-rnn.forms-agree"});  // kept alive: c refers into it
  const auto& c = claim(report, "linear-rnn.forms-agree");
  BOOST_TEST((c.status == vl::Status::failed));
}

// The verdict is the engine's, in the spec's direction: a check that measures exactly the
// tolerance passes a "<=" claim (linear-rnn.forms-agree) and fails a ">" one
// (linear-rnn.phi-positive, tolerance 0); a condition the check reports unmet fails either.
BOOST_AUTO_TEST_CASE(the_engine_judges_a_measurement_in_the_spec_direction) {
  // The check's verdict (CheckResult::passed); its controls, given the same value, are not the point here.
  auto passes = [](const std::string& id, vl::Measurement m) {
    vl::Lesson lesson = vl::lessons::linear_rnn::lesson();
    // The claim's first check alone (forms-agree also has a generated one), measuring m.
    bool first = true;
    std::erase_if(lesson.checks, [&](const vl::ClaimCheck& c) {
      if (c.claim_id != id) return false;
      if (!first) return true;
      first = false;
      return false;
    });
    for (auto& c : lesson.checks)
      if (c.claim_id == id) c.run = [m](const vl::CheckContext&) { return m; };
    const auto report = audit(lesson, {id});
    const auto& r = claim(report, id);
    BOOST_REQUIRE(r.checks.size() == 1u);
    return r.checks[0].passed;
  };
  BOOST_TEST(passes("linear-rnn.forms-agree", {1e-12, "at the tolerance"}));
  BOOST_TEST(!passes("linear-rnn.forms-agree", {std::nextafter(1e-12, 1.0), "just past it"}));
  BOOST_TEST(!passes("linear-rnn.forms-agree", {std::nan(""), "not a number"}));
  BOOST_TEST(!passes("linear-rnn.forms-agree", vl::Measurement{0.0, "exact"}.require(false, "nothing compared")));
  BOOST_TEST(!passes("linear-rnn.phi-positive", {0.0, "at the tolerance"}));
  BOOST_TEST(passes("linear-rnn.phi-positive", {1e-300, "just above it"}));
}

// A control is rejected only by its claim's measure: one that throws is an error of the audit.
BOOST_AUTO_TEST_CASE(a_throwing_control_is_an_error_not_a_rejection) {
  vl::Lesson lesson = vl::lessons::linear_rnn::lesson();
  for (auto& c : lesson.checks)
    if (c.claim_id == "linear-rnn.state-size")
      c.controls[0].run = [](const vl::CheckContext&) -> vl::Measurement { throw std::runtime_error("refused"); };
  const auto report = audit(lesson, {"linear-rnn.state-size"});
  const auto& c = claim(report, "linear-rnn.state-size");
  BOOST_TEST((c.status == vl::Status::error));
  BOOST_TEST(!c.checks.at(0).controls.at(0).rejected);
  BOOST_TEST(c.why.find("the control threw") != std::string::npos, c.why);
}

BOOST_AUTO_TEST_CASE(a_throwing_check_is_an_error_not_a_crash) {
  vl::Lesson lesson = vl::lessons::linear_rnn::lesson();
  for (auto& c : lesson.checks)
    if (c.claim_id == "linear-rnn.state-size") c.run = [](const vl::CheckContext&) -> vl::Measurement { throw std::runtime_error("boom"); };
  const auto report = audit(lesson, {"linear-rnn.state-size"});  // kept alive: c refers into it
  const auto& c = claim(report, "linear-rnn.state-size");
  BOOST_TEST((c.status == vl::Status::error));
  BOOST_TEST(c.why.find("boom") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(listing_function_must_match_the_spec) {
  vl::Lesson lesson = vl::lessons::linear_rnn::lesson();
  lesson.listings[0].function = "vl::somewhere_else";
  const auto report = audit(lesson, {"linear-rnn.main"});
  BOOST_TEST(!report.ok());
  BOOST_TEST(mentions(report.lessons[0].problems, "names function 'vl::lessons::linear_rnn::listing_main'"));
}

BOOST_AUTO_TEST_CASE(a_listing_printing_a_wrong_digit_fails) {
  vl::Lesson lesson = vl::lessons::linear_rnn::lesson();
  auto real = lesson.listings[0].run;
  lesson.listings[0].run = [real](const vl::ListingContext& ctx) {
    auto out = real(ctx);
    out.lines[2] = "output O_par: (6, 6)";
    return out;
  };
  const auto report = audit(lesson, {"linear-rnn.main"});
  const auto& l = report.lessons.at(0).listings.at(0);
  BOOST_TEST((l.status == vl::Status::failed));
  BOOST_TEST(!l.lines.at(2).passed);
  BOOST_TEST(l.lines.at(2).documented == "output O_par: (6, 5)");
}

// A claim with `refutes:` (specs/README.md, "Refuted statements"): when its check demonstrates
// what is true, the reports call it refuted, a pass of the suite with the lesson's sentence
// beside it; when the demonstration fails (here: the check replaced by its own control, the
// world in which the lesson's sentence holds), it fails like any claim and nothing is refuted.
BOOST_AUTO_TEST_CASE(a_refuting_claim_is_refuted_only_when_its_check_passes) {
  const std::string id = "attention.seed-invariants-constant";
  auto text_of = [](const vl::AuditReport& r) {
    std::ostringstream out;
    vl::print_report(out, r, false);
    return out.str();
  };
  const auto shown = audit(vl::lessons::attention::lesson(), {id});
  BOOST_TEST(shown.ok());
  BOOST_TEST(shown.refuted() == 1);
  BOOST_TEST(report_json(shown)["refuted"] == 1);
  BOOST_TEST(!report_json(shown)["lessons"][0]["claims"][0]["refutes"].get<std::string>().empty());
  const std::string text = text_of(shown);
  BOOST_TEST(text.find("REFUTED claim " + id) != std::string::npos, text);
  BOOST_TEST(text.find("the lesson says seed 002, invariants attention_constraint_0") != std::string::npos, text);

  vl::Lesson lesson = vl::lessons::attention::lesson();
  for (auto& c : lesson.checks)
    if (c.claim_id == id) c.run = c.controls.at(0).run;
  const auto failed = audit(lesson, {id});
  BOOST_TEST(!failed.ok());
  BOOST_TEST(failed.refuted() == 0);
  const std::string failed_text = text_of(failed);
  BOOST_TEST(failed_text.find("FAIL    claim " + id) != std::string::npos, failed_text);
  BOOST_TEST(failed_text.find("REFUTED") == std::string::npos, failed_text);
}

BOOST_AUTO_TEST_CASE(unknown_selection_is_refused) {
  BOOST_CHECK_THROW(audit(vl::lessons::linear_rnn::lesson(), {"linear-rnn.nope"}), vl::InputError);
}

BOOST_AUTO_TEST_SUITE_END()  // test_audit_engine
