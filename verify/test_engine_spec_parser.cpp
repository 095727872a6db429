// The spec parser: a well-formed spec parses into claims, listings, outputs and rules; every
// kind of malformed spec is refused with file:line and what is wrong.
#include <boost/test/unit_test.hpp>

#include <fstream>

#include "core/errors.hpp"
#include "engine/spec.hpp"
#include "scratch_dir.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_engine_spec_parser).
BOOST_AUTO_TEST_SUITE(test_engine_spec_parser)

namespace {

const char* kGood = R"(---
lesson: demo
title: A demo lesson
sources:
  - a made-up source
---
Prose with $$x^2$$ and a code block that is not a claim:
```python
print("hello")
```
```claim
id: demo.first
kind: identity
tolerance: 1e-12
compare: <=
statement: Two things agree,
  on two lines.
source: here
```
```listing
id: demo.main
function: vl::demo
array: Y = demo/main.Y.npy, abs 1e-12
```
```output demo.main
a: 1.0
b: 3.33e-16
```
```rules demo.main
line 2: bound 1e-12 — a round-off residue
```
)";

std::filesystem::path write_spec(const std::string& text, const std::string& name = "spec.md") {
  static const ScratchDir dir("vl_spec_parser_test_");  // removed when the program ends
  const auto path = dir.path / name;
  std::ofstream(path) << text;
  return path;
}

// Parsing must fail with a message holding "spec.md:<line>:" and the expected words.
void expect_error(const std::string& text, int line, const std::string& words) {
  const auto path = write_spec(text);
  try {
    vl::parse_spec(path);
    BOOST_ERROR("accepted a malformed spec; expected: " << words);
  } catch (const vl::InputError& e) {
    const std::string msg = e.what();
    BOOST_TEST(msg.find(path.string() + ":" + std::to_string(line) + ":") != std::string::npos, msg);
    BOOST_TEST(msg.find(words) != std::string::npos, "message '" << msg << "' lacks '" << words << "'");
  }
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  BOOST_REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

BOOST_AUTO_TEST_CASE(parses_a_good_spec) {
  const vl::Spec spec = vl::parse_spec(write_spec(kGood));
  BOOST_TEST(spec.lesson == "demo");
  BOOST_TEST(spec.sources.size() == 1u);
  BOOST_REQUIRE(spec.claims.size() == 1u);
  BOOST_TEST(spec.claims[0].statement == "Two things agree, on two lines.");
  BOOST_TEST(spec.claims[0].refutes.empty());  // a claim that states what the lesson says
  BOOST_TEST(*spec.claims[0].tolerance == 1e-12);
  BOOST_TEST((spec.claims[0].compare == vl::Comparison::at_most));
  BOOST_TEST(spec.claims[0].where.line == 11);
  BOOST_REQUIRE(spec.listings.size() == 1u);
  BOOST_TEST(spec.listings[0].arrays.size() == 1u);
  BOOST_TEST(spec.listings[0].arrays[0].golden == "demo/main.Y.npy");
  const vl::OutputSpec* out = spec.find_output("demo.main");
  BOOST_REQUIRE(out);
  BOOST_TEST(out->lines.size() == 2u);
  BOOST_TEST(out->golden == "demo/main.txt");
  BOOST_REQUIRE(out->rules.size() == 1u);
  BOOST_TEST(out->rules[0].reason == "a round-off residue");
}

// `refutes:` quotes the lesson's sentence the claim shows wrong (specs/README.md).
BOOST_AUTO_TEST_CASE(parses_what_a_claim_refutes) {
  std::string text = kGood;
  text.replace(text.find("source: here"), 12, "source: here\nrefutes: the demo: \"it never fails\"");
  const auto spec = vl::parse_spec(write_spec(text));
  BOOST_TEST(spec.claims.at(0).refutes == "the demo: \"it never fails\"");
}

BOOST_AUTO_TEST_CASE(refuses_bad_front_matter) {
  expect_error(replace(kGood, "---\nlesson", "lesson"), 1, "front matter");
  expect_error(replace(kGood, "lesson: demo", "lesson: Demo Lesson"), 2, "lower-case");
  expect_error(replace(kGood, "title: A demo lesson", "author: me"), 3, "unknown front matter key 'author'");
  expect_error(replace(kGood, "---\nProse", "Prose"), 6, "unknown front matter key");
  expect_error("---\nlesson: demo\n", 1, "not closed");
}

BOOST_AUTO_TEST_CASE(refuses_missing_or_duplicate_claim_ids) {
  expect_error(replace(kGood, "id: demo.first\n", ""), 11, "claim block has no 'id:'");
  const std::string twice = replace(kGood, "```listing", "```claim\nid: demo.first\nkind: bound\ntolerance: 1\ncompare: <=\nstatement: s\nsource: s\n```\n```listing");
  expect_error(twice, 20, "duplicate claim id 'demo.first' (first at line 11)");
  expect_error(replace(kGood, "id: demo.first", "id: other.first"), 11, "does not start with the lesson id");
}

BOOST_AUTO_TEST_CASE(refuses_unknown_kinds_fields_and_rules) {
  expect_error(replace(kGood, "kind: identity", "kind: vibe"), 13, "unknown claim kind 'vibe'");
  expect_error(replace(kGood, "tolerance: 1e-12", "tolerance: small"), 14, "not a non-negative number");
  expect_error(replace(kGood, "source: here", "sauce: here"), 18, "unknown field 'sauce'");
  expect_error(replace(kGood, "line 2: bound 1e-12", "line 2: roughly"), 30, "unknown rule 'roughly'");
  expect_error(replace(kGood, "line 2: bound 1e-12", "line 7: bound 1e-12"), 30, "the output has 2 lines");
  expect_error(replace(kGood, "line 2: bound 1e-12 — a round-off residue", "line 2: bound 1e-12"), 30, "says why");
  expect_error(replace(kGood, "```claim\n", "```claims\n"), 11, "unknown block kind 'claims'");
}

// The comparison is the spec's, spelled one way each; a number needs one, none refuses one.
BOOST_AUTO_TEST_CASE(parses_and_refuses_the_comparison) {
  const auto with = [](const std::string& c) {
    return *vl::parse_spec(write_spec(replace(kGood, "compare: <=", "compare: " + c))).claims[0].compare;
  };
  BOOST_TEST((with("<=") == vl::Comparison::at_most));
  BOOST_TEST((with("<") == vl::Comparison::below));
  BOOST_TEST((with(">=") == vl::Comparison::at_least));
  BOOST_TEST((with(">") == vl::Comparison::above));
  BOOST_TEST((with("==") == vl::Comparison::equal));
  for (auto c : {vl::Comparison::at_most, vl::Comparison::below, vl::Comparison::at_least, vl::Comparison::above, vl::Comparison::equal})
    BOOST_TEST((with(vl::to_string(c)) == c));  // to_string writes what the parser reads
  expect_error(replace(kGood, "compare: <=", "compare: ≤"), 15, "unknown comparison '≤' (known: <=, <, >=, >, ==)");
  expect_error(replace(kGood, "compare: <=", "compare: =<"), 15, "unknown comparison '=<'");
  expect_error(replace(kGood, "compare: <=\n", ""), 11, "claim 'demo.first' has a tolerance but no 'compare:'");
  expect_error(replace(kGood, "tolerance: 1e-12", "tolerance: none"), 15, "has 'tolerance: none' and a 'compare:'");
  expect_error(replace(kGood, "compare: <=", "compare: <=\ncompare: <"), 16, "field 'compare' given twice");
}

BOOST_AUTO_TEST_CASE(parses_a_tolerance_per_precision) {
  using vl::Precision;
  const vl::Claim plain = vl::parse_spec(write_spec(kGood)).claims[0];
  BOOST_TEST(plain.tolerance_in(Precision::float64)->tolerance.value() == 1e-12);
  BOOST_TEST(!plain.tolerance_in(Precision::float32));  // 1e-12 is not 0: float32 must be stated
  const vl::Claim c = vl::parse_spec(write_spec(replace(kGood, "tolerance: 1e-12\n",
      "tolerance: 1e-12\ntolerance-float32: 2e-6\ntolerance-float16: n/a: an identity of float64 only\n"))).claims[0];
  BOOST_TEST(c.tolerance_in(Precision::float32)->tolerance.value() == 2e-6);
  BOOST_TEST(c.in(Precision::float32).tolerance.value() == 2e-6);
  BOOST_TEST(c.in(Precision::float32).stated_bound() == "<= 2e-6");
  BOOST_TEST(c.tolerance_in(Precision::float16)->not_applicable == "an identity of float64 only");
  BOOST_TEST(!c.tolerance_in(Precision::bfloat16));
  // Bit for bit holds bit for bit in every precision.
  const vl::Claim exact = vl::parse_spec(write_spec(replace(replace(kGood, "tolerance: 1e-12", "tolerance: 0"), "compare: <=", "compare: =="))).claims[0];
  for (Precision p : vl::kAllPrecisions) BOOST_TEST(exact.tolerance_in(p)->tolerance.value() == 0.0);
}

BOOST_AUTO_TEST_CASE(refuses_a_bad_tolerance_per_precision) {
  expect_error(replace(kGood, "tolerance: 1e-12\n", "tolerance: 1e-12\ntolerance-float32: small\n"), 15,
               "tolerance-float32 'small' is not a non-negative number or 'n/a: <reason>'");
  expect_error(replace(kGood, "tolerance: 1e-12\n", "tolerance: 1e-12\ntolerance-float32: inf\n"), 15, "not a non-negative number");
  expect_error(replace(kGood, "tolerance: 1e-12\n", "tolerance: 1e-12\ntolerance-float16: n/a:\n"), 15, "gives no reason");
  expect_error(replace(kGood, "tolerance: 1e-12\n", "tolerance: 1e-12\ntolerance-float8: 1\n"), 15, "unknown field 'tolerance-float8'");
  expect_error(replace(replace(kGood, "tolerance: 1e-12\n", "tolerance: none\ntolerance-float32: 1e-6\n"), "compare: <=\n", ""), 11,
               "a pass/fail property holds or fails alike in every precision");
}

BOOST_AUTO_TEST_CASE(refuses_output_for_unknown_listing_and_unterminated_blocks) {
  expect_error(replace(replace(kGood, "```output demo.main", "```output demo.other"), "```rules demo.main", "```rules demo.other"),
               25, "output block for unknown listing 'demo.other'");
  expect_error(replace(kGood, "```rules demo.main", "```rules demo.nothing"), 29, "comes before (or without) its output");
  std::string open = kGood;
  open = open.substr(0, open.rfind("```"));
  expect_error(open, 29, "is not closed");
}

BOOST_AUTO_TEST_CASE(refuses_a_missing_file) {
  BOOST_CHECK_THROW(vl::parse_spec("/nonexistent/spec.md"), vl::InputError);
}

// The engine reads blocks only from "```" at the start of a line. A fence that Markdown would
// show as a block but the engine would not read is refused, naming its line (specs/README.md).
BOOST_AUTO_TEST_CASE(refuses_fences_the_engine_does_not_read) {
  const std::string claim = "id: demo.second\nkind: bound\ntolerance: 1\ncompare: <=\nstatement: s\nsource: s\n";
  expect_error(std::string(kGood) + "\n~~~claim\n" + claim + "~~~\n", 33, "'~~~claim': the engine reads only fences of three backticks; write '```claim'");
  expect_error(std::string(kGood) + "\n  ```claim\n" + claim + "  ```\n", 33, "fence '```claim' is indented by 2 space(s)");
  // 1 to 3 spaces is a fence to Markdown, 4 is code: the range's ends, for any info string.
  expect_error(std::string(kGood) + "\n   ```claim\n" + claim + "   ```\n", 33, "fence '```claim' is indented by 3 space(s)");
  expect_error(std::string(kGood) + "\n   ```python\nx = 1\n   ```\n", 33, "fence '```python' is indented by 3 space(s)");
  expect_error(std::string(kGood) + "\n ```python\nx = 1\n ```\n", 33, "fence '```python' is indented by 1 space(s)");
  expect_error(std::string(kGood) + "\n    ```claim\n" + claim + "    ```\n", 33, "is indented by 4 or more columns: Markdown may show it as a claim block");
  expect_error(std::string(kGood) + "\n\t```listing\n\t```\n", 33, "is indented by 4 or more columns");
  expect_error(std::string(kGood) + "\n- a list item\n\n  - ```claim\n", 35, "is inside a list item or block quote");
  expect_error(std::string(kGood) + "\n> ```rules demo.main\n", 33, "is inside a list item or block quote: Markdown may show it as a rules block");
  expect_error(replace(replace(kGood, "```output demo.main", "~~~output demo.main"), "b: 3.33e-16\n```", "b: 3.33e-16\n~~~"), 25,
               "'~~~output demo.main': the engine reads only fences of three backticks; write '```output'");
  expect_error(std::string(kGood) + "\n~~~python\nprint(1)\n~~~\n", 33, "write '```python'");
  expect_error(replace(kGood, "```claim\n", "````claim\n"), 11, "exactly three backticks");
  // Markdown ends a block at an indented closing fence; the engine would read on.
  expect_error(replace(kGood, "source: here\n```", "source: here\n  ```"), 19, "ends the block for Markdown but not for the engine");
}

BOOST_AUTO_TEST_CASE(other_fences_and_indented_code_are_prose) {
  const vl::Spec spec = vl::parse_spec(write_spec(std::string(kGood) +
      "\n    ```python\n    x = 1\n    ```\n"         // indented code, not an engine word
      "```text\n~~~claim\n  ```claim\n```\n"           // inside a code block: its text
      "- item with `inline` code and ``` a run of backticks\n"
      "    ~~~\n"));
  BOOST_TEST(spec.claims.size() == 1u);
  BOOST_REQUIRE(!spec.blocks.empty());
  BOOST_TEST((spec.blocks.back().kind == vl::BlockKind::prose));
  BOOST_TEST(spec.blocks.back().first_line == 32);
  BOOST_TEST(spec.blocks.back().last_line == 41);
}

BOOST_AUTO_TEST_CASE(parses_the_claim_subject) {
  BOOST_TEST((vl::parse_spec(write_spec(kGood)).claims[0].subject == vl::ClaimSubject::computation));
  const auto with = [](const std::string& subject) {
    return vl::parse_spec(write_spec(replace(kGood, "source: here\n", "source: here\nsubject: " + subject + "\n"))).claims[0].subject;
  };
  BOOST_TEST((with("our-code") == vl::ClaimSubject::our_code));
  BOOST_TEST((with("computation") == vl::ClaimSubject::computation));
  BOOST_TEST(vl::to_string(vl::ClaimSubject::our_code) == "our-code");
  BOOST_TEST(vl::to_string(vl::ClaimSubject::computation) == "computation");
  expect_error(replace(kGood, "source: here\n", "source: here\nsubject: ours\n"), 19,
               "unknown claim subject 'ours' (known: computation, our-code)");
  expect_error(replace(kGood, "source: here\n", "source: here\nsubject: our-code\nsubject: computation\n"), 20,
               "field 'subject' given twice");
}

// The blocks in file order, each with its first and last line: prose between engine blocks
// (blank gaps are none), the engine blocks from fence to fence.
BOOST_AUTO_TEST_CASE(records_the_blocks_and_their_lines) {
  const vl::Spec spec = vl::parse_spec(write_spec(replace(kGood, "```\n```listing", "```\n\n```listing") + "\nThe end.\n"));
  struct Expected { vl::BlockKind kind; int first, last; std::size_t index; };
  const std::vector<Expected> expected{{vl::BlockKind::prose, 7, 10, 0}, {vl::BlockKind::claim, 11, 19, 0},
      {vl::BlockKind::listing, 21, 25, 0}, {vl::BlockKind::output, 26, 29, 0}, {vl::BlockKind::rules, 30, 32, 0},
      {vl::BlockKind::prose, 33, 34, 0}};
  BOOST_REQUIRE(spec.blocks.size() == expected.size());
  for (std::size_t k = 0; k < expected.size(); ++k) {
    BOOST_TEST_CONTEXT("block " << k) {
      BOOST_TEST(vl::to_string(spec.blocks[k].kind) == vl::to_string(expected[k].kind));
      BOOST_TEST(spec.blocks[k].first_line == expected[k].first);
      BOOST_TEST(spec.blocks[k].last_line == expected[k].last);
      BOOST_TEST(spec.blocks[k].index == expected[k].index);
    }
  }
  BOOST_TEST(spec.blocks[0].text == "Prose with $$x^2$$ and a code block that is not a claim:\n```python\nprint(\"hello\")\n```\n");
  BOOST_TEST(spec.blocks[2].text == "```listing\nid: demo.main\nfunction: vl::demo\narray: Y = demo/main.Y.npy, abs 1e-12\n```\n");
  BOOST_TEST(spec.blocks[4].rule_lines == std::vector<int>{31}, boost::test_tools::per_element());
  BOOST_TEST(spec.blocks[4].first_rule == 0u);
  BOOST_TEST(spec.blocks[5].text == "\nThe end.\n");
}

BOOST_AUTO_TEST_SUITE_END()  // test_engine_spec_parser
