#pragma once
// Comparison rules for a documented output, line by line and number by number.
//
// Default: the produced line must equal the documented line exactly. A rule relaxes one line
// (or one number of it, counted from 1 left to right) and says why:
//
//   exact                 the text, character for character (the default)
//   ws                    the text, with every run of spaces counted as one space (for a source
//                         whose extraction collapsed spaces)
//   abs A [rel R]         the number(s) within A absolute or R relative; the text around exact
//   bound X               the produced number below X: an error printed as 3.33e-16 is a
//                         round-off residue whose digits vary by machine; what the lesson claims
//                         is that it is small
//   bound derived         the same, below the round-off bound the listing derives for that line
//                         from its own inputs (ListingOutput::derived_bounds: the error-bound
//                         formulas of the claims, with u = 2⁻⁵³), written out in the spec
//   machine               a timing or other machine-dependent number: form only (a number with
//                         the same decimals / exponent style), shown as such
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace vl {

enum class RuleKind { exact, ws, numeric, bound, machine };
std::string to_string(RuleKind kind);

struct LineRule {
  int first_line = 1;              // 1-based, inclusive
  int last_line = 1;               // inclusive
  std::optional<int> number;       // 1-based index of the number in the line; none = all numbers
  RuleKind kind = RuleKind::exact;
  double abs_tol = 0;              // numeric
  double rel_tol = 0;              // numeric
  double bound = 0;                // bound X
  bool derived = false;            // bound derived: the listing's derived bound for the line
  std::string reason;              // why the line is not exact (shown in reports and docs)
  std::string text;                // the rule as written, e.g. "bound 1e-12"

  bool covers(int line) const { return line >= first_line && line <= last_line; }
};

/// Parse one rule line: "line 2: bound 1e-12 — why", "lines 2-6 number 4: machine — why",
/// "line 1: ws — why", "line 3 number 2: abs 5e-4 — why". Throws std::invalid_argument with
/// what is wrong (the spec parser adds file:line).
LineRule parse_rule(const std::string& text);

/// The verdict on one line of a listing's output.
struct LineVerdict {
  int line = 0;               // 1-based
  std::string documented;
  std::string produced;
  std::string rule;           // the rule(s) applied, "exact" by default
  bool passed = false;
  std::string detail;         // on a mismatch: what differs (text, or number with abs/rel error)
  std::optional<double> abs_error;
  std::optional<double> rel_error;
  std::optional<double> bound;  // a bound rule's X, or the derived bound it judged by
};

/// Compare produced lines with documented lines under the rules. A missing or extra line is a
/// failed verdict of its own. `derived` holds the listing's derived bound per line (1-based) for
/// the rules `bound derived`; such a line with none there fails, saying so.
std::vector<LineVerdict> compare_output(const std::vector<std::string>& documented,
                                        const std::vector<std::string>& produced,
                                        const std::vector<LineRule>& rules,
                                        const std::map<int, double>& derived = {});

}  // namespace vl
