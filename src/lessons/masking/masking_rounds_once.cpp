// Lesson masking, claim masking.narrow-formats-round-once (about our code): the float16 and
// bfloat16 storage the audit emulates (numeric/precision.hpp: round_to, which backends'
// --dtype and the float16 claims use) rounds each float64 value once, to the nearest number of
// the format, ties to even. Rounding twice (double → float → half) is wrong exactly at values
// just past a midpoint between two neighbours: float's rounding lands on the midpoint, and the
// tie then goes to the even neighbour, which may be the farther one.
//
//   for every finite float16 h ≥ 0 (and bfloat16 b with exponents −30 … 30), and their negatives:
//     m = (h + next(h)) / 2 (exact in double);  m⁺ = nextafter(m, ∞) → next(h);  m⁻ → h
//   and past float16's largest, 65504: the midpoint 65520 and above round to ∞.
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "lessons/masking/masking.hpp"
#include "numeric/float16.hpp"
#include "numeric/precision.hpp"

namespace vl::lessons::masking {

Measurement rounds_once(const std::function<double(Precision, double)>& round) {
  std::size_t wrong = 0, checked = 0;
  std::string first;
  // The doubles either side of the midpoint of neighbours lo < hi must round to the nearer one
  // (above: `above`, which is hi except past the largest finite number, where it is ∞).
  const auto probe = [&](Precision p, double lo, double hi, double above) {
    const double mid = lo + (hi - lo) / 2;
    for (const auto& [x, want] : {std::pair{std::nextafter(mid, INFINITY), above}, std::pair{std::nextafter(mid, -INFINITY), lo}}) {
      for (const double sign : {1.0, -1.0}) {  // and its mirror image below 0
        ++checked;
        const double got = round(p, sign * x);
        if (got != sign * want && ++wrong == 1)
          first = fmt::format("{} of {:.17g} gave {:.17g}, the nearest is {:.17g}", to_string(p), sign * x, got, sign * want);
      }
    }
  };
  // float16: 0 | smallest subnormal … 65504 | 65536 (the next binade, which rounds to ∞).
  for (std::uint16_t h = 0; h < 0x7bff; ++h) {
    const double lo = half_to_double(h), hi = half_to_double(std::uint16_t(h + 1));
    probe(Precision::float16, lo, hi, hi);
  }
  probe(Precision::float16, 65504.0, 65536.0, INFINITY);
  for (int e = -30; e <= 30; ++e)
    for (int m = 0; m < 128; ++m) {
      const auto b = std::uint16_t(((e + 127) << 7) | m);
      probe(Precision::bfloat16, bfloat16_value(b), bfloat16_value(std::uint16_t(b + 1)), bfloat16_value(std::uint16_t(b + 1)));
    }
  return {double(wrong), fmt::format("{} of {} values just past a midpoint rounded to the farther neighbour{}", wrong, checked,
                                     first.empty() ? "" : " (first: " + first + ")")};
}

Measurement narrow_formats_round_once(const CheckContext&) { return rounds_once(round_to); }

Measurement rounded_through_float(const CheckContext&) {
  return rounds_once([](Precision p, double x) { return round_to(p, double(float(x))); });
}

}  // namespace vl::lessons::masking
