#include "engine/generated_cases.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "backends/backend.hpp"

namespace vl {

namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a counter-based draw, the same bits on every machine.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Value of term t in case i of the run seeded `seed`: uniform over [lo, hi] up to a bias below
// 2⁻⁵⁰ (ranges are small).
int draw(std::uint64_t seed, std::size_t i, std::size_t t, const CaseTerm& term) {
  const std::uint64_t span = std::uint64_t(term.hi - term.lo) + 1;
  return term.lo + int(mix(mix(seed ^ mix(i)) + t) % span);
}

bool fails(const CheckContext& ctx, const Measurement& m) { return !m.unmet.empty() || ctx.settled_failing(m.value); }

bool worse_than(Worse w, double a, double b) {
  if (std::isnan(a)) return !std::isnan(b);
  return w == Worse::larger ? a > b : a < b;
}

}  // namespace

int Case::operator[](const std::string& name) const {
  for (std::size_t t = 0; t < terms_->size(); ++t)
    if ((*terms_)[t].name == name) return values_[t];
  throw std::logic_error(fmt::format("generated case: no term '{}'", name));
}

std::string Case::str() const {
  std::string s;
  for (std::size_t t = 0; t < terms_->size(); ++t) {
    const CaseTerm& term = (*terms_)[t];
    const int v = values_[t];
    const std::size_t k = std::size_t(v - term.lo);
    s += fmt::format("{}{}={}", s.empty() ? "" : " ", term.name, k < term.labels.size() ? term.labels[k] : std::to_string(v));
  }
  return s + fmt::format(" (data seed {})", data_seed_);
}

Measurement generated_cases(const CheckContext& ctx, const std::vector<CaseTerm>& terms, const std::vector<std::vector<int>>& anchors,
                            Worse worse, const CaseMeasure& measure) {
  std::vector<std::vector<int>> fixed(2);
  for (const CaseTerm& t : terms) {
    if (!(t.lo <= t.simplest && t.simplest <= t.hi)) throw std::logic_error(fmt::format("generated case: term {} needs lo <= simplest <= hi", t.name));
    fixed[0].push_back(t.simplest), fixed[1].push_back(t.hi);
  }
  for (const auto& a : anchors) {
    if (a.size() != terms.size()) throw std::logic_error("generated case: an anchor case has a value per term");
    fixed.push_back({});
    for (std::size_t t = 0; t < terms.size(); ++t) fixed.back().push_back(std::clamp(a[t], terms[t].lo, terms[t].hi));
  }
  const int total = int(fixed.size()) + ctx.cases;
  std::optional<Case> worst_case;
  Measurement worst;
  int skipped = 0;
  std::exception_ptr lacking;  // the last case the backend could not run
  std::string lacks;
  for (int i = 0; i < total; ++i) {
    std::vector<int> values;
    if (i < int(fixed.size())) values = fixed[std::size_t(i)];
    else
      for (std::size_t t = 0; t < terms.size(); ++t) values.push_back(draw(ctx.seed, std::size_t(i), t, terms[t]));
    Case c(&terms, values, mix(ctx.seed ^ mix(~std::uint64_t(i))));
    Measurement m;
    try {
      m = measure(c);
    } catch (const backends::Unsupported& e) {
      // An option this backend lacks (a softcap, a window): the case is not its to judge.
      ++skipped, lacking = std::current_exception(), lacks = e.what();
      continue;
    }
    if (fails(ctx, m)) {
      // Shrink: each term toward its simplest value (to it, halfway, one step), kept while the
      // case still fails, until a pass over the terms changes nothing or the runs are spent.
      const Case first = c;
      int runs = 0;
      for (bool progress = true; progress && runs < kMaxShrinkRuns;) {
        progress = false;
        for (std::size_t t = 0; t < terms.size() && runs < kMaxShrinkRuns; ++t) {
          const int v = c.values()[t], target = terms[t].simplest;
          int tried[3], n_tried = 0;  // halfway and one step coincide for |v − target| ≤ 3: each value once
          for (int next : {target, v + (target - v) / 2, v + (target > v ? 1 : -1)}) {
            if (v == target || runs >= kMaxShrinkRuns) break;
            if (next == v || std::find(tried, tried + n_tried, next) != tried + n_tried) continue;
            tried[n_tried++] = next;
            std::vector<int> smaller = c.values();
            smaller[t] = next;
            const Case candidate(&terms, smaller, c.data_seed());
            ++runs;
            Measurement mc;
            try {
              mc = measure(candidate);
            } catch (const backends::Unsupported&) {
              continue;  // not this backend's to run: no smaller failing case here
            }
            if (fails(ctx, mc)) {
              c = candidate, m = std::move(mc), progress = true;
              break;
            }
          }
        }
      }
      const std::string origin = i < int(fixed.size()) ? fmt::format("anchor case {} of {}", i + 1, fixed.size())
                                                       : fmt::format("case {} of {} drawn with seed {}", i + 1 - int(fixed.size()), ctx.cases, ctx.seed);
      m.detail = fmt::format("FAILS at the smallest case found: {} — {} ({}: {}; shrunk in {} runs, at most {})", c.str(), m.detail,
                             origin, first.str(), runs, kMaxShrinkRuns);
      if (m.unmet.empty()) m.unmet.push_back(fmt::format("the generated case {} fails", c.str()));
      m.series.clear();
      return m;
    }
    if (!worst_case || worse_than(worse, m.value, worst.value)) worst = m, worst_case = c;
  }
  if (!worst_case) std::rethrow_exception(lacking);  // no case it could run: not applicable (at least two cases ran or were skipped)
  const std::string skips = skipped ? fmt::format(" ({} of them not run: the backend lacks an option they use, e.g. {})", skipped, lacks) : "";
  worst.detail = fmt::format("{} anchor and {} drawn cases (seed {}) pass{}; the worst, {}: {}", fixed.size(), ctx.cases, ctx.seed,
                             skips, worst_case->str(), worst.detail);
  worst.series.clear();
  return worst;
}

}  // namespace vl
