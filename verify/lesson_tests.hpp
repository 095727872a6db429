#pragma once
// Shared by the lesson verification programs: one Boost.Test case per claim check, labelled
// with its claim id (run one with --run_test=@<claim-id>), which asserts the check passes on our
// implementation and that every negative control is rejected; one case per listing comparing
// its output with the documented output under the spec's rules; and the traceability case.
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <map>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/audit.hpp"
#include "engine/lesson.hpp"
#include "engine/spec.hpp"

namespace vl::verify {

inline const Spec& spec_of(const Lesson& lesson) {
  static std::map<std::string, Spec> cache;
  auto it = cache.find(lesson.id);
  if (it == cache.end()) it = cache.emplace(lesson.id, parse_spec(std::filesystem::path(VL_SOURCE_DIR) / lesson.spec_file)).first;
  return it->second;
}

// The audit this ctest run already made (ctest's audit_all, whose JSON the lesson tests
// require as a fixture), so that a claim's check and controls run once per run, not once in
// the audit and again here. Read only when it stands for this program's code: an audit of
// this checkout on the plain backend by the `lessons` binary VL_AUDIT_BINARY, which was linked
// after every library in VL_LIBRARY_DIR changed, the JSON VL_AUDIT_JSON written after that
// binary, this program and every file of specs/ and reference_outputs/; otherwise (a program run by hand, a stale file or binary) each case
// runs its audit itself.
inline bool written_after_libraries(const std::filesystem::path& binary, const std::filesystem::path& library_dir) {
  std::error_code ec;
  const auto linked = std::filesystem::last_write_time(binary, ec);
  if (ec) return false;
  for (const auto& f : std::filesystem::directory_iterator(library_dir, ec))
    if (f.path().extension() == ".a" && f.last_write_time() > linked) return false;
  return !ec;
}

inline const nlohmann::json* shared_audit() {
  static const std::optional<nlohmann::json> audit = []() -> std::optional<nlohmann::json> {
    const char* path = std::getenv("VL_AUDIT_JSON");
    const char* binary = std::getenv("VL_AUDIT_BINARY");
    const char* libraries = std::getenv("VL_LIBRARY_DIR");
    if (!path || !binary || !libraries || !written_after_libraries(binary, libraries) ||
        !written_after_libraries("/proc/self/exe", libraries))
      return std::nullopt;
    std::error_code ec;
    const auto written = std::filesystem::last_write_time(path, ec);
    if (ec || written < std::filesystem::last_write_time("/proc/self/exe") || written < std::filesystem::last_write_time(binary))
      return std::nullopt;
    // Nor after a spec or a golden changed (another audit would judge them).
    for (const char* folder : {"specs", "reference_outputs"})
      for (const auto& f : std::filesystem::recursive_directory_iterator(std::filesystem::path(VL_SOURCE_DIR) / folder, ec))
        if (f.is_regular_file() && f.last_write_time() > written) return std::nullopt;
    std::ifstream in(path);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.contains("root") || !j.contains("provenance") || !j.contains("lessons")) return std::nullopt;
    if (!std::filesystem::equivalent(j["root"].get<std::string>(), VL_SOURCE_DIR, ec) ||
        j["provenance"].value("backend", "").rfind("plain", 0) != 0)
      return std::nullopt;
    return j;
  }();
  return audit ? &*audit : nullptr;
}

/// The shared audit's record of one claim or listing of a lesson ("claims" or "listings"); null
/// when the audit has none, which fails the case that asked.
inline const nlohmann::json* audited(const nlohmann::json& audit, const std::string& lesson, const char* kind, const std::string& id) {
  for (const auto& l : audit["lessons"])
    if (l["id"] == lesson)
      for (const auto& item : l[kind])
        if (item["id"] == id) return &item;
  return nullptr;
}

// The claim's checks as the audit runs them (on our plain backend, every control against its
// broken variant): the claim must pass and every control must be rejected.
inline void check_claim(const Lesson& lesson, const ClaimCheck& check) {
  const Claim* claim = spec_of(lesson).find_claim(check.claim_id);
  BOOST_REQUIRE_MESSAGE(claim, "check '" << check.name << "' names claim '" << check.claim_id << "', not in the spec");
  if (const nlohmann::json* audit = shared_audit()) {
    const nlohmann::json* r = audited(*audit, lesson.id, "claims", check.claim_id);
    BOOST_REQUIRE_MESSAGE(r, check.claim_id << " is not in the audit " << std::getenv("VL_AUDIT_JSON"));
    bool found = false;
    for (const auto& c : (*r)["checks"]) {
      if (c["name"] != check.name) continue;
      found = true;
      BOOST_TEST_MESSAGE(check.claim_id << ": " << c["detail"].get<std::string>());
      // On plain, which has every operation, every check runs: one that did not would leave the
      // claim judged by its other checks alone.
      BOOST_TEST(c["not_applicable"].get<std::string>().empty(), check.name << ": not applicable on plain: " << c["not_applicable"]);
      BOOST_TEST(c["error"].get<std::string>().empty(), check.name << ": " << c["error"]);
      BOOST_TEST(!c["controls"].empty(), check.claim_id << " has no negative control");
      for (const auto& control : c["controls"])
        BOOST_TEST(control["rejected"].get<bool>(), "negative control '" << control["name"].get<std::string>() << "' passed "
                                                                          << check.claim_id << ": the check cannot tell ("
                                                                          << control["detail"].get<std::string>() << ")");
    }
    BOOST_TEST(found, "check '" << check.name << "' of " << check.claim_id << " is not in the audit");
    BOOST_TEST((*r)["status"] == "passed", check.claim_id << " (tolerance " << claim->tolerance_text
                                                          << "): " << (*r)["status"].get<std::string>() << ": "
                                                          << (*r)["why"].get<std::string>());
    return;
  }
  AuditOptions options;
  options.root = VL_SOURCE_DIR;
  options.select = {check.claim_id};
  const AuditReport report = run_audit({lesson}, options);
  BOOST_REQUIRE_EQUAL(report.lessons.size(), 1u);
  BOOST_REQUIRE_EQUAL(report.lessons[0].claims.size(), 1u);
  const ClaimResult& r = report.lessons[0].claims[0];
  for (const auto& c : r.checks) {
    BOOST_TEST_MESSAGE(check.claim_id << ": " << c.measured.detail);
    BOOST_TEST(c.not_applicable.empty(), c.name << ": not applicable on plain: " << c.not_applicable);
    BOOST_TEST(c.error.empty(), c.name << ": " << c.error);
    BOOST_TEST(!c.controls.empty(), check.claim_id << " has no negative control");
    for (const auto& control : c.controls)
      BOOST_TEST(control.rejected, "negative control '" << control.name << "' passed " << check.claim_id
                                                        << ": the check cannot tell (" << control.detail << ")");
  }
  BOOST_TEST((r.status == Status::passed), check.claim_id << " (tolerance " << claim->tolerance_text << "): " << to_string(r.status)
                                                          << ": " << r.why);
}

inline void check_traceability(const Lesson& lesson) {
  const Spec& spec = spec_of(lesson);
  for (const auto& claim : spec.claims) {
    int checks = 0;
    for (const auto& c : lesson.checks) checks += c.claim_id == claim.id;
    BOOST_TEST(checks > 0, "claim '" << claim.id << "' (" << claim.where.str() << ") has no check");
    // Its card and report name the quantity measured (docs/generate.py): "measured 0 ≤ 0" says nothing.
    BOOST_TEST(!claim.measure.empty(), "claim '" << claim.id << "' (" << claim.where.str() << ") has no 'measure:' line");
  }
  for (const auto& c : lesson.checks)
    BOOST_TEST(spec.find_claim(c.claim_id) != nullptr, "check '" << c.name << "' names no claim of the spec: '" << c.claim_id << "'");
  for (const auto& l : spec.listings) {
    bool found = false;
    for (const auto& code : lesson.listings) found = found || (code.id == l.id && code.function == l.function);
    BOOST_TEST(found, "spec listing '" << l.id << "' [" << l.function << "] has no C++ twin");
  }
}

inline void check_listing(const Lesson& lesson, const std::string& listing_id) {
  if (const nlohmann::json* audit = shared_audit()) {
    for (const auto& l : (*audit)["lessons"])
      if (l["id"] == lesson.id)
        for (const auto& p : l["problems"]) BOOST_TEST(false, p.get<std::string>());
    const nlohmann::json* r = audited(*audit, lesson.id, "listings", listing_id);
    BOOST_REQUIRE_MESSAGE(r, listing_id << " is not in the audit " << std::getenv("VL_AUDIT_JSON"));
    BOOST_TEST((*r)["status"] == "passed", listing_id << ": " << (*r)["why"].get<std::string>());
    for (const auto& v : (*r)["lines"])
      BOOST_TEST(v["passed"].get<bool>(), "line " << v["line"] << " [" << v["rule"].get<std::string>() << "] "
                                                  << v["detail"].get<std::string>() << "\n  documented: "
                                                  << v["documented"].get<std::string>() << "\n  produced:   "
                                                  << v["produced"].get<std::string>());
    for (const auto& a : (*r)["arrays"])
      BOOST_TEST(a["passed"].get<bool>(), a["name"].get<std::string>() << ": " << a["detail"].get<std::string>());
    return;
  }
  AuditOptions options;
  options.root = VL_SOURCE_DIR;
  options.select = {listing_id};
  const AuditReport report = run_audit({lesson}, options);
  BOOST_REQUIRE_EQUAL(report.lessons.size(), 1u);
  for (const auto& p : report.lessons[0].problems) BOOST_TEST(false, p);
  for (const auto& l : report.lessons[0].listings) {
    BOOST_TEST((l.status == Status::passed), l.id << ": " << l.why);
    for (const auto& v : l.lines)
      BOOST_TEST(v.passed, "line " << v.line << " [" << v.rule << "] " << v.detail << "\n  documented: " << v.documented
                                   << "\n  produced:   " << v.produced);
    for (const auto& a : l.arrays) BOOST_TEST(a.passed, a.name << ": " << a.detail);
  }
}

/// Register the cases of one lesson in the master suite.
inline void register_lesson(const Lesson& lesson) {
  namespace utf = boost::unit_test;
  auto* suite = BOOST_TEST_SUITE(lesson.id);
  std::map<std::string, int> checks_of;  // a claim's second check (read through the outputs, ...) is <id>.check-2
  for (const auto& check : lesson.checks) {
    const int k = ++checks_of[check.claim_id];
    const std::string name = k == 1 ? check.claim_id : fmt::format("{}.check-{}", check.claim_id, k);
    auto* tc = utf::make_test_case([lesson, check] { check_claim(lesson, check); }, name, __FILE__, __LINE__);
    tc->add_label(check.claim_id);
    suite->add(tc);
  }
  for (const auto& listing : lesson.listings) {
    const std::string id = listing.id;
    suite->add(utf::make_test_case([lesson, id] { check_listing(lesson, id); }, "listing " + id, __FILE__, __LINE__));
  }
  suite->add(utf::make_test_case([lesson] { check_traceability(lesson); }, "traceability", __FILE__, __LINE__));
  utf::framework::master_test_suite().add(suite);
}

}  // namespace vl::verify
