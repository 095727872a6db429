// The spec parser: a well-formed spec parses into claims, listings, outputs and rules; every
// kind of malformed spec is refused with file:line and what is wrong.
#define BOOST_TEST_MODULE engine spec parser
#include <boost/test/unit_test.hpp>

#include <fstream>

#include "core/errors.hpp"
#include "engine/spec.hpp"

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
  const auto dir = std::filesystem::temp_directory_path() / "vl_spec_parser_test";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
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
  BOOST_TEST(*spec.claims[0].tolerance == 1e-12);
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

BOOST_AUTO_TEST_CASE(refuses_bad_front_matter) {
  expect_error(replace(kGood, "---\nlesson", "lesson"), 1, "front matter");
  expect_error(replace(kGood, "lesson: demo", "lesson: Demo Lesson"), 2, "lower-case");
  expect_error(replace(kGood, "title: A demo lesson", "author: me"), 3, "unknown front matter key 'author'");
  expect_error(replace(kGood, "---\nProse", "Prose"), 6, "unknown front matter key");
  expect_error("---\nlesson: demo\n", 1, "not closed");
}

BOOST_AUTO_TEST_CASE(refuses_missing_or_duplicate_claim_ids) {
  expect_error(replace(kGood, "id: demo.first\n", ""), 11, "claim block has no 'id:'");
  const std::string twice = replace(kGood, "```listing", "```claim\nid: demo.first\nkind: bound\ntolerance: 1\nstatement: s\nsource: s\n```\n```listing");
  expect_error(twice, 19, "duplicate claim id 'demo.first' (first at line 11)");
  expect_error(replace(kGood, "id: demo.first", "id: other.first"), 11, "does not start with the lesson id");
}

BOOST_AUTO_TEST_CASE(refuses_unknown_kinds_fields_and_rules) {
  expect_error(replace(kGood, "kind: identity", "kind: vibe"), 13, "unknown claim kind 'vibe'");
  expect_error(replace(kGood, "tolerance: 1e-12", "tolerance: small"), 14, "not a non-negative number");
  expect_error(replace(kGood, "source: here", "sauce: here"), 17, "unknown field 'sauce'");
  expect_error(replace(kGood, "line 2: bound 1e-12", "line 2: roughly"), 29, "unknown rule 'roughly'");
  expect_error(replace(kGood, "line 2: bound 1e-12", "line 7: bound 1e-12"), 29, "the output has 2 lines");
  expect_error(replace(kGood, "line 2: bound 1e-12 — a round-off residue", "line 2: bound 1e-12"), 29, "says why");
  expect_error(replace(kGood, "```claim\n", "```claims\n"), 11, "unknown block kind 'claims'");
}

BOOST_AUTO_TEST_CASE(refuses_output_for_unknown_listing_and_unterminated_blocks) {
  expect_error(replace(replace(kGood, "```output demo.main", "```output demo.other"), "```rules demo.main", "```rules demo.other"),
               24, "output block for unknown listing 'demo.other'");
  expect_error(replace(kGood, "```rules demo.main", "```rules demo.nothing"), 28, "comes before (or without) its output");
  std::string open = kGood;
  open = open.substr(0, open.rfind("```"));
  expect_error(open, 28, "is not closed");
}

BOOST_AUTO_TEST_CASE(refuses_a_missing_file) {
  BOOST_CHECK_THROW(vl::parse_spec("/nonexistent/spec.md"), vl::InputError);
}
