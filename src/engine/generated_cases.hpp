#pragma once
// Generated cases for a claim's check: its inputs drawn over the terms the claim names (batch,
// heads, GQA group, Sq and Sk, head size, mask, window, chunk, ...) from a seed the report prints,
// and the first case that fails shrunk to the smallest one that still fails, which the report
// shows. The fixed sweep a check also runs stays: the generated cases add the combinations
// nobody thought of (Sq ≠ Sk with GQA and a float mask at once, a head size no vector width
// divides).
//
// Our own generator and shrinker, not RapidCheck's (which verify/ uses for the kernels' unit
// properties): here every evaluation is one or more requests to the judged implementation,
// often a candidate process, so the search has a stated bound (kMaxShrinkRuns runs after the
// drawn cases), runs the same on every machine (a counter-based draw, no std:: distribution
// whose output differs between standard libraries), and ends in a case of named integers that
// `lessons audit --seed S` replays.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/lesson.hpp"

namespace vl {

/// One integer input of a generated case: its name as the report prints it, its inclusive range,
/// and the value shrinking moves toward (the simplest: one head, no mask, no window).
struct CaseTerm {
  std::string name;                 // "B", "Hkv", "group", "Sq", "Sk", "D", "mask", ...
  int lo = 0, hi = 0;
  int simplest = 0;                 // within [lo, hi]
  std::vector<std::string> labels;  // names of the values lo, lo + 1, ... (a mask kind), or none
};

/// One generated case: a value per term, in the terms' order, and the seed of its random inputs
/// (a shrunk case keeps the seed, so it is reproducible from its printed values and seed; its
/// tensors, of other shapes, are drawn anew from it).
class Case {
 public:
  Case(const std::vector<CaseTerm>* terms, std::vector<int> values, std::uint64_t data_seed)
      : terms_(terms), values_(std::move(values)), data_seed_(data_seed) {}
  /// The value of the term named `name` (throws std::logic_error for a name not among the terms).
  int operator[](const std::string& name) const;
  std::uint64_t data_seed() const { return data_seed_; }
  /// "B=2 Hkv=1 group=3 Sq=5 Sk=7 D=3 mask=float (data seed 1234)".
  std::string str() const;
  const std::vector<int>& values() const { return values_; }

 private:
  const std::vector<CaseTerm>* terms_;
  std::vector<int> values_;
  std::uint64_t data_seed_;
};

/// What one case measured, as a check measures (value, detail, unmet conditions).
using CaseMeasure = std::function<Measurement(const Case&)>;

/// The most runs shrinking makes after the first failing case (each run is one case measured:
/// the requests one case makes, at most this many times).
inline constexpr int kMaxShrinkRuns = 40;

/// Which way a claim's measured value gets worse: a larger error, or a smaller margin.
enum class Worse { larger, smaller };

/// Measure, over `terms` (each with lo ≤ simplest ≤ hi, else std::logic_error): first the anchor cases — every term at its simplest, every term at its
/// largest, then the check's own `anchors` (values in the terms' order, each clamped into its
/// term's range), chosen so that each of the check's negative controls meets its bug whatever the
/// seed — then ctx.cases cases drawn from ctx.seed. Returns the worst value and the case it came
/// from; at the first case that fails the claim (ctx.settled_failing, or an unmet condition) it
/// stops, shrinks that case (each term toward its simplest: to it, halfway, one step, each value
/// tried once; kept while the case still fails) and returns the smallest failing case's measurement, its detail naming
/// that case, the case it started from and the number of runs. A case the backend cannot run
/// (backends::Unsupported: an option it lacks) is skipped and counted; none it can run rethrows.
Measurement generated_cases(const CheckContext& ctx, const std::vector<CaseTerm>& terms, const std::vector<std::vector<int>>& anchors,
                            Worse worse, const CaseMeasure& measure);

}  // namespace vl
