#pragma once
// The code side of a lesson: its listings (C++ twins that print what the lesson printed) and
// the checks of its claims, each with the negative controls it must reject.
//
// A check is a named predicate run against an implementation. The real check runs it on our
// kernels; each negative control runs the same predicate on a deliberately broken variant
// (scale removed, state not carried, ...). A control that passes makes the check vacuous.
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

namespace vl {

/// A named run of numbers a check measured along the way (counts against n, ...), for plots
/// and other machine readers of the audit's JSON. `formula_of` names the series whose expected
/// values these are, when they are a formula's rather than measured.
struct Series {
  std::string name;
  std::vector<double> values;
  std::string formula_of;
};

/// What a check measured: its value (a max error, a count, a ratio...), compared with the
/// claim's tolerance from the spec, and the verdict; `detail` says it in words, `series` (often
/// empty) gives the numbers behind it, the first series being the abscissa of the others.
struct Measurement {
  double value = 0;
  bool passed = false;
  std::string detail;
  std::vector<Series> series{};  // {} also spares the 3-field {value, passed, detail} initialisers a warning
};

/// A check receives the tolerance its claim states in the spec (0 when the claim says none).
using CheckFn = std::function<Measurement(double tolerance)>;

struct NegativeControl {
  std::string name;         // "state not carried across chunks"
  CheckFn run;              // the claim's predicate on the broken variant: must NOT pass
};

struct ClaimCheck {
  std::string claim_id;     // the spec's claim id this check verifies
  std::string name;         // what it does, e.g. "three forms agree over n, d_k, d_v, B sweep"
  CheckFn run;
  std::vector<NegativeControl> controls;
};

/// What a listing produced: its printed lines (compared with the documented output) and named
/// arrays (compared with numeric goldens from an independent reference).
struct ListingOutput {
  std::vector<std::string> lines;
  std::map<std::string, xt::xarray<double>> arrays;
};

struct Listing {
  std::string id;           // "linear-rnn.main"
  std::string function;     // the C++ function that reproduces it (named in the spec too)
  std::function<ListingOutput()> run;
};

struct Lesson {
  std::string id;           // "linear-rnn"
  std::string spec_file;    // relative to the root: "specs/linear_rnn.md"
  std::vector<Listing> listings;
  std::vector<ClaimCheck> checks;
};

/// The reference_outputs/ folder that listings and checks read goldens from: the audited root's
/// (run_audit sets it from --root), else that of default_root().
const std::filesystem::path& reference_outputs_dir();
void set_reference_outputs_dir(const std::filesystem::path& dir);

/// Every lesson of the suite, in reading order (src/lessons/catalog.cpp).
std::vector<Lesson> all_lessons();

}  // namespace vl
