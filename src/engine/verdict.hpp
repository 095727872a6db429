#pragma once
// The verdict on a claim's measurement, decided here and only here: the check measures
// (lesson.hpp: Measurement), the spec states the tolerance and the direction (spec.hpp:
// Claim::tolerance, Claim::compare), and the engine compares them.
//
//   passes(claim, m)  =  m.unmet is empty  and  (tolerance none  or  holds(compare, m.value, t))
//
// The one NaN rule: a NaN measured value, or a NaN tolerance, never holds in any direction.
#include "engine/lesson.hpp"
#include "engine/spec.hpp"

namespace vl {

/// Whether m stands to t as `c` says (m ≤ t, m < t, m ≥ t, m > t, m = t); false when either is NaN.
bool holds(Comparison c, double m, double t);

/// The engine's verdict on one measurement of `claim`.
bool passes(const Claim& claim, const Measurement& m);

/// The verdict in words for the report: "0.31 ≤ 1e-12", "2 unmet: ..." (no verdict word).
std::string judged(const Claim& claim, const Measurement& m);

}  // namespace vl
