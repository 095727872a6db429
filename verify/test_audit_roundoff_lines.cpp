// Every documented line that prints a round-off residue is judged by `bound derived`: the
// listing derives the bound from its own inputs (specs/README.md). Here, for each such line of
// every spec: the listing supplies a finite positive bound; the produced number lies below it;
// the same line with the number set just past the bound fails (the rule can fail); and the bound
// is the inputs', not the implementation's: run through a broken multi-head attention (the
// encoder given the causal mask), whose printed lines differ, the listings derive the same bounds.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "backends/registry.hpp"
#include "engine/comparison_rule.hpp"
#include "engine/lesson.hpp"
#include "engine/spec.hpp"
#include "lessons/positions/positions_broken_backends.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_audit_roundoff_lines).
BOOST_AUTO_TEST_SUITE(test_audit_roundoff_lines)

namespace {

const std::regex kNumeral(R"([-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)");

// The line with its `number`-th number (from 1; 0: the last) replaced by `value`.
std::string with_number(const std::string& line, int number, double value) {
  std::vector<std::smatch> found;
  for (auto it = std::sregex_iterator(line.begin(), line.end(), kNumeral); it != std::sregex_iterator(); ++it) found.push_back(*it);
  const std::smatch& m = found.at(std::size_t(number == 0 ? int(found.size()) : number) - 1);
  return line.substr(0, std::size_t(m.position())) + fmt::format("{:.2e}", value) + line.substr(std::size_t(m.position() + m.length()));
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_derived_line_is_bounded_by_its_inputs_and_can_fail) {
  const auto root = std::filesystem::path(VL_SOURCE_DIR);
  const auto broken = std::make_shared<vl::lessons::positions::CausalMaskForced>(vl::backends::plain(), "mha-causal-in-the-encoder", true);
  int lines = 0, moved = 0;
  for (const vl::Lesson& lesson : vl::all_lessons()) {
    const vl::Spec spec = vl::parse_spec(root / lesson.spec_file);
    for (const vl::OutputSpec& doc : spec.outputs)
      for (const vl::LineRule& rule : doc.rules) {
        if (!rule.derived) continue;
        const auto listing = std::find_if(lesson.listings.begin(), lesson.listings.end(), [&](auto& l) { return l.id == doc.listing; });
        BOOST_REQUIRE(listing != lesson.listings.end());
        const vl::ListingOutput out = listing->run({root / "reference_outputs", nullptr});
        const vl::ListingOutput out_broken = listing->run({root / "reference_outputs", broken.get()});
        moved += out_broken.lines != out.lines;
        for (int line = rule.first_line; line <= rule.last_line; ++line) {
          ++lines;
          BOOST_TEST_CONTEXT(doc.listing << " line " << line) {
            BOOST_REQUIRE(out.derived_bounds.count(line) == 1u);
            const double bound = out.derived_bounds.at(line);
            BOOST_TEST((std::isfinite(bound) && bound > 0));
            BOOST_TEST(out_broken.derived_bounds.at(line) == bound);
            // The line alone, as line 1, under the same rule.
            vl::LineRule alone = rule;
            alone.first_line = alone.last_line = 1;
            const std::string& documented = doc.lines.at(std::size_t(line - 1));
            const std::string& produced = out.lines.at(std::size_t(line - 1));
            const auto ok = vl::compare_output({documented}, {produced}, {alone}, {{1, bound}});
            BOOST_TEST(ok.at(0).passed, ok.at(0).detail);
            const std::string past = with_number(produced, rule.number.value_or(0), bound * 1.01);
            BOOST_TEST(!vl::compare_output({documented}, {past}, {alone}, {{1, bound}}).at(0).passed, past);
            BOOST_TEST_MESSAGE(fmt::format("{} line {}: '{}'; derived bound {:.3e}", doc.listing, line, produced, bound));
          }
        }
      }
  }
  BOOST_TEST(lines == 7);  // attention.lookup 2; attention.heads 1, 2; positions.main 1, 3; encoder-decoder.main 1, 2
  BOOST_TEST(moved >= 1);  // the broken backend changed what some listing printed: the same bounds are the inputs'
}

// Two bounds evaluated independently of the code that derives them: listing 1's, the spec's
// formula 2·(e^{2δ} − 1 + (2κ + 2·S_k + 4)u)·max|v| evaluated by NumPy 1.24 on default_rng(0)'s
// Q, K, V (L = 2.690006357137083, max|v| = 1.689107452443673): 335.52490567511956 u; and the
// rotation's closed form at pos = 29, k = 5: (√2·(23.4·29 + 4) + (23.4·34 + 4) + √2·(23.4·5 + 4)
// + 2√2)·u.
BOOST_AUTO_TEST_CASE(two_bounds_match_their_formulas_evaluated_apart) {
  const auto root = std::filesystem::path(VL_SOURCE_DIR);
  const double u = std::ldexp(1.0, -53);
  auto bound_of = [&](const std::string& id, int line) {
    for (const vl::Lesson& lesson : vl::all_lessons())
      for (const vl::Listing& l : lesson.listings)
        if (l.id == id) return l.run({root / "reference_outputs", nullptr}).derived_bounds.at(line);
    throw std::runtime_error("no listing " + id);
  };
  BOOST_TEST(bound_of("attention.lookup", 2) / u == 335.52490567511956, boost::test_tools::tolerance(1e-9));
  const double r2 = std::sqrt(2.0);
  BOOST_TEST(bound_of("positions.main", 3) / u == r2 * (23.4 * 29 + 4) + (23.4 * 34 + 4) + r2 * (23.4 * 5 + 4) + 2 * r2,
             boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_SUITE_END()  // test_audit_roundoff_lines
