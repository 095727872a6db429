// The `terms:` line of a claim (specs/README.md): which terms of the operation its check's
// inputs make count, and the known gaps. The parser refuses an unknown or repeated term; every
// claim of the suite's specs declares its terms; every known term is made to count by some
// claim or is a declared gap; and each gap says why.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "engine/spec.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_engine_spec_terms).
BOOST_AUTO_TEST_SUITE(test_engine_spec_terms)

namespace {

struct TempSpec {
  std::filesystem::path file;
  explicit TempSpec(const std::string& terms_line) {
    file = std::filesystem::temp_directory_path() / fmt::format("vl_terms_{}.md", ::getpid());
    std::ofstream(file) << "---\nlesson: t\ntitle: T\nsources:\n  - s\n---\n\n```claim\nid: t.one\nkind: bound\ntolerance: 0\ncompare: ==\n"
                        << "statement: s.\nsource: s\n" << terms_line << "```\n";
  }
  ~TempSpec() { std::filesystem::remove(file); }
};

vl::Claim parse_one(const std::string& terms_line) {
  const TempSpec s(terms_line);
  return vl::parse_spec(s.file).claims.at(0);
}

std::vector<std::string> claims_without_terms(const vl::Spec& spec) {
  std::vector<std::string> out;
  for (const auto& c : spec.claims)
    if (!c.terms_given) out.push_back(c.id);
  return out;
}

std::vector<vl::Spec> suite_specs() {
  std::vector<vl::Spec> specs;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(VL_SOURCE_DIR) / "specs"))
    if (e.path().extension() == ".md" && e.path().filename() != "README.md") specs.push_back(vl::parse_spec(e.path()));
  return specs;
}

}  // namespace

BOOST_AUTO_TEST_CASE(terms_and_gaps_parse) {
  const auto c = parse_one("terms: mask, heads, float64; gaps: bias (issue 19), gqa (no claim has Hq > Hkv (yet))\n");
  BOOST_TEST(c.terms_given);
  BOOST_TEST(c.terms == (std::vector<std::string>{"mask", "heads", "float64"}), boost::test_tools::per_element());
  BOOST_REQUIRE_EQUAL(c.term_gaps.size(), 2u);
  BOOST_TEST(c.term_gaps[0].term == "bias");
  BOOST_TEST(c.term_gaps[0].note == "issue 19");
  BOOST_TEST(c.term_gaps[1].term == "gqa");
  BOOST_TEST(c.term_gaps[1].note == "no claim has Hq > Hkv (yet)");
  const auto none = parse_one("terms: none\n");
  BOOST_TEST(none.terms_given);
  BOOST_TEST(none.terms.empty());
  BOOST_TEST(!parse_one("").terms_given);
}

BOOST_AUTO_TEST_CASE(bad_terms_are_refused_with_the_line) {
  for (const std::string bad : {"terms: masks\n", "terms: mask, mask\n", "terms: mask; gaps: mask (why)\n", "terms: mask; bias\n",
                                "terms: mask; gaps: bias (why\n", "terms: mask,, heads\n", "terms: \n"}) {
    try {
      parse_one(bad);
      BOOST_ERROR("accepted: " << bad);
    } catch (const vl::InputError& e) {
      BOOST_TEST(std::string(e.what()).find(":15:") != std::string::npos, e.what());  // the terms line
    }
  }
}

BOOST_AUTO_TEST_CASE(every_claim_declares_its_terms) {
  const TempSpec without("");
  BOOST_TEST(claims_without_terms(vl::parse_spec(without.file)).size() == 1u);  // the check can fail
  int claims = 0;
  for (const auto& spec : suite_specs()) {
    BOOST_TEST(claims_without_terms(spec).empty(), spec.file << ": claims without 'terms:'");
    claims += int(spec.claims.size());
  }
  BOOST_TEST(claims > 30);
}

BOOST_AUTO_TEST_CASE(every_known_term_counts_somewhere_or_is_a_gap_with_why) {
  std::set<std::string> covered, gaps;
  for (const auto& spec : suite_specs())
    for (const auto& c : spec.claims) {
      covered.insert(c.terms.begin(), c.terms.end());
      for (const auto& g : c.term_gaps) {
        BOOST_TEST(!g.note.empty(), c.id << ": gap '" << g.term << "' says no why");
        gaps.insert(g.term);
      }
    }
  for (const auto& t : vl::known_terms())
    BOOST_TEST((covered.count(t) || gaps.count(t)), "term '" << t << "' is neither made to count by a claim nor a declared gap");
  BOOST_TEST_MESSAGE("known gaps: " << fmt::format("{}", fmt::join(gaps, ", ")));
}

BOOST_AUTO_TEST_SUITE_END()  // test_engine_spec_terms
