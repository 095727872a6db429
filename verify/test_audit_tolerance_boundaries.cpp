// Every claim's check at the boundary of its own tolerance. The spec says a claim's tolerance
// is "the number the check compares with" (specs/README.md): a measured value within it passes,
// and a value exactly equal to it passes (≤), unless the claim says "below" (then <, listed
// here with the words of its statement). So, for each check of each lesson, run on plain:
//
//   m = the value it measures under the spec's tolerance (it passes: the audit says so too)
//   tolerance m            → passes   (≤)  or fails (<, the "below" claims)
//   tolerance m·(1 + 10⁻⁶) → passes
//   tolerance m·(1 − 10⁻⁶) → fails    (for m = 0: tolerance −10⁻³⁰⁰ fails)
//
// and the mirror image for a claim of "at least t" (a difference that must be large).
// A check whose tolerance is added to or multiplied into another number (a slope ≤ 1 + t) is
// probed at that number instead; they are listed with the arithmetic. This catches a check
// comparing with ten times its tolerance, a `<=` that became `<`, or one ignoring its tolerance.
#define BOOST_TEST_MODULE audit tolerance boundaries
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "backends/registry.hpp"
#include "engine/lesson.hpp"
#include "engine/spec.hpp"

namespace {

// Which side of its tolerance a claim's measured value must lie, from its statement's words.
enum class Side {
  at_most,   // "within t", "at most t": m ≤ t (the default)
  below,     // "below t": m < t
  at_least,  // "by at least t": m ≥ t
};
const std::map<std::string, Side> sides = {
    {"attention.fused-workspace", Side::below},                    // "stays below 64 MiB"
    {"positions.encoding-breaks-equivariance", Side::at_least},    // "differ ... by at least 1e-2"
    {"encoder-decoder.encoder-sees-every-position", Side::at_least},    // "changes every output position by at least 1e-3"
    {"encoder-decoder.cross-attention-reads-encoder", Side::at_least},  // "changes every decoder output position by at least 1e-3"
};

// Claims whose check compares m with a number made of the tolerance t: the t at which m sits
// on the check's boundary.
const std::map<std::string, double (*)(double m)> offsets = {
    {"linear-rnn.chunked-linear-cost", [](double m) { return m - 1; }},  // growth exponent m ≤ 1 + t
};

}  // namespace

BOOST_AUTO_TEST_CASE(every_check_sits_on_its_tolerance) {
  const std::filesystem::path root = VL_SOURCE_DIR;
  const auto& backend = *vl::backends::plain();
  int probed = 0;
  for (const auto& lesson : vl::all_lessons()) {
    const vl::Spec spec = vl::parse_spec(root / lesson.spec_file);
    for (const auto& check : lesson.checks) {
      const vl::Claim* claim = spec.find_claim(check.claim_id);
      BOOST_REQUIRE_MESSAGE(claim, check.claim_id);
      if (!claim->tolerance) continue;  // none: a pass/fail property, no number to probe
      const std::string what = fmt::format("{} ('{}')", check.claim_id, check.name);
      auto run = [&](double t) { return check.run(vl::CheckContext{backend, root / "reference_outputs", t}); };
      const vl::Measurement at_spec = run(*claim->tolerance);
      BOOST_REQUIRE_MESSAGE(at_spec.passed, what << " fails at its own tolerance: " << at_spec.detail);
      const double m = at_spec.value;
      const auto o = offsets.find(check.claim_id);
      const double edge = o == offsets.end() ? m : o->second(m);
      // One part in 10⁶ of the boundary; at a boundary of 0, of m; at m = 0 (bit-identical),
      // the smallest step below 0 that a check could tell from 0.
      const double delta = edge != 0 ? 1e-6 * std::fabs(edge) : m != 0 ? 1e-6 * std::fabs(m) : 1e-300;
      const auto s = sides.find(check.claim_id);
      const Side side = s == sides.end() ? Side::at_most : s->second;
      BOOST_TEST_CONTEXT(what << ": measured " << m << ", boundary at tolerance " << edge) {
        BOOST_TEST(run(edge).passed == (side != Side::below));
        BOOST_TEST(run(edge + delta).passed == (side != Side::at_least));
        BOOST_TEST(run(edge - delta).passed == (side == Side::at_least));
      }
      ++probed;
    }
  }
  BOOST_TEST(probed > 30);
}
