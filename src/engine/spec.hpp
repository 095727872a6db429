#pragma once
// A lesson's spec: specs/<lesson>.md, parsed into claims, listings and documented outputs.
//
// The spec is Markdown that reads on its own. Between the prose it holds fenced blocks whose
// info string names their kind (format described in specs/README.md):
//
//   ```claim            id, kind, tolerance, compare, source, statement, subject, terms (one claim)
//   ```listing          id, function, parameters, source, arrays (one listing and its C++ twin)
//   ```output <id>      the listing's documented output, verbatim
//   ```rules <id>       comparison rules of the lines/numbers of that output that are not exact
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/comparison_rule.hpp"
#include "numeric/precision.hpp"

namespace vl {

/// Where something was written: file and 1-based line, for messages.
struct SpecLocation {
  std::filesystem::path file;
  int line = 0;
  std::string str() const;
};

enum class ClaimKind { identity, invariant, bound, statistical, complexity };
std::string to_string(ClaimKind kind);

/// What a claim is about: the computation (checked through whichever implementation is
/// audited) or our own code (workspace bytes, counted flops, RNG streams: only our backends).
enum class ClaimSubject { computation, our_code };
std::string to_string(ClaimSubject subject);  // "computation", "our-code"

/// The terms of an operation a claim's inputs can make count (specs/README.md, "terms:"): a
/// bias, a mask that hides something, the scale, heads > 1, GQA groups > 1, a chunk that does
/// not divide n, a KV cache, a sliding window, a softcap, key padding, a batch > 1, and the
/// element types. A term a claim's inputs leave inert is covered by another claim or is a gap.
const std::vector<std::string>& known_terms();

/// A term a claim's inputs leave inert and no other claim covers: a known gap, with why.
struct TermGap {
  std::string term;
  std::string note;  // the words in parentheses after it, e.g. "issue 19"
};

/// How a claim's measured value m must stand to its tolerance t (the spec's `compare:`):
/// `<=` m ≤ t (within t), `<` m < t (below t), `>=` m ≥ t (at least t), `>` m > t (above t),
/// `==` m = t (bit-identical: a difference of exactly 0, a count of exactly t).
enum class Comparison { at_most, below, at_least, above, equal };
std::string to_string(Comparison c);  // "<=", "<", ">=", ">", "==" (the engine judges: engine/verdict.hpp)

/// One claim of a lesson. `tolerance` is the number the engine compares the check's measured
/// value with (an absolute error, a bound, ...), in the direction `compare` names; "none" is a
/// pass/fail property, judged by the conditions the check reports (Measurement::unmet) alone.
/// A claim's tolerance in a precision other than float64 (spec: `tolerance-float32: 2e-6`), or
/// why the claim cannot hold there (`tolerance-float16: n/a: <reason>`).
struct PrecisionTolerance {
  std::optional<double> tolerance;  // absent with not_applicable
  std::string tolerance_text;
  std::string not_applicable;       // the reason, for "n/a: <reason>"
  int line = 0;
};

struct Claim {
  std::string id;
  ClaimKind kind = ClaimKind::invariant;
  std::optional<double> tolerance;     // in float64 (the spec's `tolerance:`)
  std::string tolerance_text;
  std::map<Precision, PrecisionTolerance> in_precision;  // `tolerance-<precision>:` lines
  /// Its tolerance in precision p: float64's for float64; the stated one for another; float64's
  /// when that is 0 or none (a property that holds bit for bit, or pass/fail, holds so in every
  /// precision); else nothing (the spec states none: the claim cannot be judged there).
  std::optional<PrecisionTolerance> tolerance_in(Precision p) const;
  /// The claim as judged in p: its tolerance replaced by tolerance_in(p) (which must be stated).
  Claim in(Precision p) const;
  std::optional<Comparison> compare;  // present exactly when tolerance is a number
  /// The comparison and tolerance as the spec states them: "<= 1e-12", ">= 1e-3", "none".
  std::string stated_bound() const;
  std::string statement;
  std::string source;
  /// `measure:` the quantity the measured value is, in words ("largest |row sum − 1|", "growth
  /// exponent"), and `unit:` its unit (empty: a pure number); the reports name the value with them.
  std::string measure;
  std::string unit;
  /// `measure-<precision>:` what the value is in that precision, where it differs (an error over
  /// the precision's derived bound, where float64 measures the error itself); Claim::in uses it.
  std::map<Precision, std::string> measure_in;
  /// `refutes:` the lesson's own sentence this claim shows wrong, quoted and glossed in English
  /// (specs/README.md, "Refuted statements"). Empty for a claim that states what the lesson says.
  /// Its statement is what is true instead, and its check demonstrates it: when the check passes
  /// (its controls rejected) the reports call the claim *refuted*, a finding about the lesson,
  /// never a failure of the suite; when it fails, the demonstration failed, as for any claim.
  std::string refutes;
  ClaimSubject subject = ClaimSubject::computation;
  bool terms_given = false;        // the block has a 'terms:' line
  std::vector<std::string> terms;  // the terms its check's inputs make count ("none": empty)
  std::vector<TermGap> term_gaps;  // after "; gaps:"
  SpecLocation where;
};

/// An array a listing produces that is compared with a numeric golden (.npy) made by an
/// independent reference (reference_outputs/generators/): name, golden file (relative to
/// reference_outputs/) and the absolute tolerance of the comparison.
struct ArrayGolden {
  std::string name;
  std::string golden;
  double abs_tolerance = 0;
};

struct ListingSpec {
  std::string id;
  std::string function;
  std::string parameters;
  std::string source;
  std::vector<ArrayGolden> arrays;
  SpecLocation where;
};

/// The documented output of a listing and the rules for its lines.
struct OutputSpec {
  std::string listing;
  std::vector<std::string> lines;
  std::vector<LineRule> rules;
  SpecLocation where;
  /// `reference_outputs/<lesson>/<listing name>.txt`: the same text, verbatim, with provenance.
  std::string golden;
};

/// One block of the spec in file order, with its line span, for tools that present the spec
/// (`lessons spec --json`): prose (the Markdown between two engine blocks, other fenced blocks
/// included) or one of the engine's blocks.
enum class BlockKind { prose, claim, listing, output, rules };
std::string to_string(BlockKind kind);

struct SpecBlock {
  BlockKind kind = BlockKind::prose;
  int first_line = 0;           // 1-based, inclusive; an engine block spans its two fences
  int last_line = 0;
  std::string text;             // its lines as written, each ending in '\n'
  std::size_t index = 0;        // claim, listing, output: its entry in Spec::claims/listings/outputs;
                                // rules: the entry of the output it rules
  std::size_t first_rule = 0;   // rules: its rules are outputs[index].rules[first_rule, + rule_lines.size())
  std::vector<int> rule_lines;  // rules: the line of each of its rules
};

struct Spec {
  std::filesystem::path file;
  std::string lesson;
  std::string title;
  std::vector<std::string> sources;
  std::vector<Claim> claims;
  std::vector<ListingSpec> listings;
  std::vector<OutputSpec> outputs;
  std::vector<SpecBlock> blocks;  // the spec after its front matter, in order (blank gaps are no block)
  std::string markdown;  // the whole text as read (lessons spec takes its rules as written from it)

  const Claim* find_claim(const std::string& id) const;
  const OutputSpec* find_output(const std::string& listing) const;
};

/// Parse a spec. Throws vl::InputError "file:line: what is wrong" on a malformed spec:
/// bad front matter, unterminated block, unknown block kind or field, missing or duplicate id,
/// unknown claim kind, subject or rule, an output or rules block for an unknown listing, and a
/// fence that Markdown could show as an engine block but the engine would not read
/// (specs/README.md, "Blocks").
Spec parse_spec(const std::filesystem::path& file);

/// The short name of a listing id: "linear-rnn.main" → "main".
std::string listing_name(const std::string& listing_id);

}  // namespace vl
