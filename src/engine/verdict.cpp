#include "engine/verdict.hpp"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace vl {

bool holds(Comparison c, double m, double t) {
  if (std::isnan(m) || std::isnan(t)) return false;
  switch (c) {
    case Comparison::at_most: return m <= t;
    case Comparison::below: return m < t;
    case Comparison::at_least: return m >= t;
    case Comparison::above: return m > t;
    case Comparison::equal: return m == t;
  }
  return false;
}

bool passes(const Claim& claim, const Measurement& m) {
  if (!m.unmet.empty()) return false;
  if (!claim.tolerance) return true;  // none: a pass/fail property, its conditions are the verdict
  return claim.compare && holds(*claim.compare, m.value, *claim.tolerance);
}

std::string judged(const Claim& claim, const Measurement& m) {
  std::string s = claim.tolerance && claim.compare
                      ? fmt::format("{:.6g} {}", m.value, claim.stated_bound())
                      : std::string("no tolerance: a pass/fail property");
  if (!m.unmet.empty()) s += fmt::format("; unmet: {}", fmt::join(m.unmet, "; "));
  return s;
}

}  // namespace vl
