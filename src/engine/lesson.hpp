#pragma once
// The code side of a lesson: its listings (C++ twins that print what the lesson printed) and
// the checks of its claims, each with the negative controls it must reject.
//
// A check is a named predicate run against an implementation, a backend (backends/backend.hpp):
// the audited one (ours by default, or anyone's), and each negative control's deliberately
// broken variant (scale removed, state not carried, ...). A control that passes makes the check
// vacuous.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "numeric/precision.hpp"
#include "ops/all.hpp"  // Need: what a listing needs of a backend

namespace vl {

namespace backends {
class Backend;
using ops::Need;
}

/// A named run of numbers a check measured along the way (counts against n, ...), for plots
/// and other machine readers of the audit's JSON. `formula_of` names the series whose expected
/// values these are, when they are a formula's rather than measured.
struct Series {
  std::string name;
  std::vector<double> values;
  std::string formula_of;
};

/// What a check measured: its value (a max error, a count, a ratio...), which the engine
/// compares with the claim's tolerance in the claim's direction (spec: `compare:`;
/// engine/verdict.hpp), never the check itself; `detail` says it in words, `series` (often
/// empty) gives the numbers behind it, the first series being the abscissa of the others.
/// `unmet` lists the conditions of the claim other than its value that the check found false
/// (a later position that never moved, so the inputs could not show a leak; nothing compared):
/// any one fails the claim, whatever the value. A claim with `tolerance: none` is judged by them
/// alone.
struct Measurement {
  double value = 0;
  std::string detail;
  std::vector<Series> series{};       // {} spares the {value, detail} initialisers a warning
  std::vector<std::string> unmet{};

  /// Records `what` as unmet unless `condition` holds; returns *this for chaining.
  Measurement& require(bool condition, std::string what) {
    if (!condition) unmet.push_back(std::move(what));
    return *this;
  }
  /// A measurement that could not be made (a result of the wrong shape, inputs that tested
  /// nothing): `why` is both its detail and its unmet condition, so it fails in any direction.
  static Measurement failing(double value, std::string why) { return {value, why, {}, {why}}; }
};

/// What a check runs with: the implementation it judges and where the audited root keeps its
/// goldens. A check never sees its claim's tolerance: it measures, the engine judges.
/// `settled_failing` is the engine's own comparison, for a check that sweeps growing inputs and
/// may stop once a partial value already fails (the chunked-cost sweeps): it answers whether the
/// value fails the claim; the check still returns what it measured.
/// Generated cases per check by default: enough to meet the shapes no fixed sweep names, few
/// enough that the audit's time stays what it was (the cases are small); `--cases 1000` for a
/// nightly-style run (README).
inline constexpr int kDefaultCases = 24;
inline constexpr std::uint64_t kDefaultSeed = 20261206;

struct CheckContext {
  const backends::Backend& backend;
  std::filesystem::path goldens;  // reference_outputs/ of the audited root
  std::function<bool(double)> settled_failing = [](double) { return false; };
  /// The precision the backend computes in (backends/in_precision.hpp: it rounds the check's
  /// inputs once to it). A check that compares with something of the inputs reads them rounded
  /// likewise (first-position-self's v_0); one whose reference is a float64 golden of unrounded
  /// inputs compares in another precision with our plain float64 kernel on the rounded inputs
  /// (matches-torch), or judges agreement within the derived bound (masking's agreement claims).
  Precision precision = Precision::float64;
  /// How many generated cases a check that draws them runs (`lessons audit --cases N`), and the
  /// seed it draws them from (`--seed S`, printed in the report): engine/generated_cases.hpp.
  int cases = kDefaultCases;
  std::uint64_t seed = kDefaultSeed;

  /// The same context judging another backend (a control's broken one, a backend seen through
  /// its outputs): everything else, the generated cases' count and seed too, carried over.
  CheckContext judging(const backends::Backend& other) const { return {other, goldens, settled_failing, precision, cases, seed}; }
};
using CheckFn = std::function<Measurement(const CheckContext&)>;

/// A deliberately broken variant the claim's check must reject. For a claim about the
/// computation it is a backend (usually a backends::Decorator over ours that breaks one
/// operation), and the audit runs the claim's own check against it. For a claim about our own
/// code (spec: `subject: our-code`) it is that check run on our code with one piece broken.
struct NegativeControl {
  std::string name;                                  // "state not carried across chunks"
  std::shared_ptr<const backends::Backend> backend;  // the broken backend, or
  CheckFn run;                                       // the check on our broken code
};

/// A control that is a broken backend.
inline NegativeControl broken_backend(std::string name, std::shared_ptr<const backends::Backend> backend) {
  return {std::move(name), std::move(backend), {}};
}
/// A control that breaks our own code (claims about our code only).
inline NegativeControl broken_code(std::string name, CheckFn run) { return {std::move(name), nullptr, std::move(run)}; }

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
  /// For a line that prints a round-off residue (rule `bound derived`): the bound on it derived
  /// from the listing's own inputs, by line (1-based). Computed from the inputs alone, never from
  /// what the judged implementation returned.
  std::map<int, double> derived_bounds{};
};

/// What a listing runs with: where the audited root keeps its goldens (some listings print
/// their difference from a reference's output), and the implementation its backend operations
/// (Listing::ops) run on: the audited backend, ours or anyone's.
struct ListingContext {
  std::filesystem::path goldens;                 // reference_outputs/ of the audited root
  const backends::Backend* backend = nullptr;    // null: plain (lessons run, lessons export)
  /// The backend the listing computes through: *backend, or plain when none was given.
  const backends::Backend& implementation() const;
};

struct Listing {
  std::string id;           // "linear-rnn.main"
  std::string function;     // the C++ function that reproduces it (named in the spec too)
  std::function<ListingOutput(const ListingContext&)> run;
  /// The backend operations its computation runs through (ctx.implementation()), so that its
  /// goldens judge any backend that has them. Empty: the listing is our own code throughout (a
  /// timing, our RNG's experiment, our kernels compared with each other), run for our backends only.
  std::vector<backends::Need> ops{};
};

struct Lesson {
  std::string id;           // "linear-rnn"
  std::string spec_file;    // relative to the root: "specs/linear_rnn.md"
  std::vector<Listing> listings;
  std::vector<ClaimCheck> checks;
};

/// Every lesson of the suite, in reading order (src/lessons/catalog.cpp).
std::vector<Lesson> all_lessons();

}  // namespace vl
