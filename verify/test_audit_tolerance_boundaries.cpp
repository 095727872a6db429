// Every claim of every spec at the boundary of its own tolerance, judged as the audit judges it
// (engine/verdict.hpp): the check measures, the spec's `compare:` and `tolerance:` decide. For a
// claim with tolerance t and δ one part in 10⁶ of t (at t = 0, the smallest step 10⁻³⁰⁰):
//
//   compare   m = t − δ   m = t    m = t + δ
//   <=        passes      passes   fails
//   <         passes      fails    fails
//   >=        fails       passes   passes
//   >         fails       fails    passes
//   ==        fails       passes   fails
//
// and a NaN never passes, nor does any value with an unmet condition; a claim with tolerance
// none passes exactly when nothing is unmet. Every claim is probed from the parsed specs, so a
// claim added tomorrow is probed too; the table of directions is the specs' own, not a copy. A
// claim that states a tolerance in another precision (tolerance-float32: ...) is probed at it too.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <limits>

#include "engine/lesson.hpp"
#include "engine/spec.hpp"
#include "engine/verdict.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_audit_tolerance_boundaries).
BOOST_AUTO_TEST_SUITE(test_audit_tolerance_boundaries)

namespace {

struct Expected {
  bool below, at, above;  // passes at t − δ, t, t + δ
};

Expected expected(vl::Comparison c) {
  switch (c) {
    case vl::Comparison::at_most: return {true, true, false};
    case vl::Comparison::below: return {true, false, false};
    case vl::Comparison::at_least: return {false, true, true};
    case vl::Comparison::above: return {false, false, true};
    case vl::Comparison::equal: return {false, true, false};
  }
  return {};
}

bool passes_at(const vl::Claim& claim, double m) { return vl::passes(claim, vl::Measurement{m, "probe"}); }

}  // namespace

BOOST_AUTO_TEST_CASE(every_claim_is_judged_at_its_tolerance_in_its_direction) {
  const std::filesystem::path specs = std::filesystem::path(VL_SOURCE_DIR) / "specs";
  int probed = 0, without_tolerance = 0, in_other_precisions = 0;
  for (const auto& entry : std::filesystem::directory_iterator(specs)) {
    if (entry.path().extension() != ".md" || entry.path().filename() == "README.md") continue;
    for (const vl::Claim& stated : vl::parse_spec(entry.path()).claims)
    for (vl::Precision p : vl::kAllPrecisions) {  // at its tolerance in every precision it states one for
      const auto in_p = stated.tolerance_in(p);
      if (!in_p || !in_p->not_applicable.empty() || (p != vl::Precision::float64 && !stated.in_precision.count(p))) continue;
      const vl::Claim claim = stated.in(p);
      if (p != vl::Precision::float64) ++in_other_precisions;
      BOOST_TEST_CONTEXT(claim.id << " [" << vl::to_string(p) << "] (" << claim.where.str() << ", tolerance " << claim.tolerance_text << ")") {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        if (!claim.tolerance) {
          BOOST_TEST(!claim.compare.has_value());
          BOOST_TEST(passes_at(claim, 0.0));  // the value is information only
          BOOST_TEST(passes_at(claim, nan));
          BOOST_TEST(!vl::passes(claim, vl::Measurement{0.0, "probe", {}, {"a condition"}}));
          ++without_tolerance;
          continue;
        }
        BOOST_REQUIRE(claim.compare.has_value());
        const double t = *claim.tolerance;
        const double delta = t != 0 ? 1e-6 * std::fabs(t) : 1e-300;
        const Expected e = expected(*claim.compare);
        BOOST_TEST(passes_at(claim, t - delta) == e.below);
        BOOST_TEST(passes_at(claim, t) == e.at);
        BOOST_TEST(passes_at(claim, t + delta) == e.above);
        BOOST_TEST(!passes_at(claim, nan));
        // A value that passes still fails with a condition unmet.
        const double inside = e.at ? t : e.below ? t - delta : t + delta;
        BOOST_TEST(!vl::passes(claim, vl::Measurement{inside, "probe", {}, {"a condition"}}));
        ++probed;
      }
    }
  }
  BOOST_TEST(probed + without_tolerance - in_other_precisions >= 62);  // the six lessons' claims
  BOOST_TEST(probed - in_other_precisions > 55);
  BOOST_TEST(in_other_precisions >= 4);  // the tolerance-float32 lines
}

// The comparison itself, on both sides of NaN and at the infinities.
BOOST_AUTO_TEST_CASE(holds_has_one_nan_rule) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (auto c : {vl::Comparison::at_most, vl::Comparison::below, vl::Comparison::at_least, vl::Comparison::above, vl::Comparison::equal}) {
    BOOST_TEST(!vl::holds(c, nan, 1.0));
    BOOST_TEST(!vl::holds(c, 1.0, nan));
    BOOST_TEST(!vl::holds(c, nan, nan));
  }
  BOOST_TEST(!vl::holds(vl::Comparison::at_most, inf, 1e300));
  BOOST_TEST(vl::holds(vl::Comparison::at_least, inf, 1e300));
  BOOST_TEST(vl::holds(vl::Comparison::equal, 0.0, -0.0));  // a difference of −0 is bit-identical too
}

BOOST_AUTO_TEST_SUITE_END()  // test_audit_tolerance_boundaries
