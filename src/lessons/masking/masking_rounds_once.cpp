// Lesson masking, claim masking.narrow-formats-round-once (about our code): the float16 and
// bfloat16 storage the audit emulates (numeric/precision.hpp: round_to, which backends'
// --dtype and the float16 claims use) rounds each float64 value once, to the nearest number of
// the format, ties to even. Rounding twice (double → float → half) is wrong exactly at values
// just past a midpoint between two neighbours: float's rounding lands on the midpoint, and the
// tie then goes to the even neighbour, which may be the farther one.
//
//   for every positive finite float16 h (and bfloat16 b with exponents −30 … 30):
//     m = (h + next(h)) / 2 (exact in double);  m⁺ = nextafter(m, ∞) → next(h);  m⁻ → h
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
  const auto probe = [&](Precision p, double lo, double hi) {
    const double mid = lo + (hi - lo) / 2;
    for (const auto& [x, want] : {std::pair{std::nextafter(mid, INFINITY), hi}, std::pair{std::nextafter(mid, -INFINITY), lo}}) {
      ++checked;
      const double got = round(p, x);
      if (got != want && ++wrong == 1) first = fmt::format("{} of {:.17g} gave {:.17g}, the nearest is {:.17g}", to_string(p), x, got, want);
    }
  };
  for (std::uint16_t h = 1; h < 0x7bff; ++h) probe(Precision::float16, half_to_double(h), half_to_double(std::uint16_t(h + 1)));
  for (int e = -30; e <= 30; ++e)
    for (int m = 0; m < 128; ++m) {
      const auto b = std::uint16_t(((e + 127) << 7) | m);
      probe(Precision::bfloat16, bfloat16_value(b), bfloat16_value(std::uint16_t(b + 1)));
    }
  return {double(wrong), fmt::format("{} of {} values just past a midpoint rounded to the farther neighbour{}", wrong, checked,
                                     first.empty() ? "" : " (first: " + first + ")")};
}

Measurement narrow_formats_round_once(const CheckContext&) { return rounds_once(round_to); }

Measurement rounded_through_float(const CheckContext&) {
  return rounds_once([](Precision p, double x) { return round_to(p, double(float(x))); });
}

}  // namespace vl::lessons::masking
