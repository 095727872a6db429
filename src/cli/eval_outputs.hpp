#pragma once
// Writing the results of `lessons eval`: every file asked for, or none.
//
// Finite inputs can still overflow the computed type (scores or sums beyond its range give
// ±inf, then inf − inf = NaN): such a result is refused before anything is written, with an
// InputError naming the file, the value and where it is. Only a stage of the scores may hold
// −∞ (a masked key). If one file cannot be written, those already written are removed again:
// a failed command leaves no file behind.
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xarray.hpp>

#include "core/errors.hpp"
#include "numeric/float16.hpp"
#include "numeric/npy.hpp"

namespace vl::cli {

/// One result to write: where (empty: not asked for, skipped), what it is ("output",
/// "weights", ...: for the message) and the caller's array (not copied).
template <class T>
struct EvalResult {
  std::string path;
  const char* what;
  const xt::xarray<T>* array;
  bool masked_scores = false;  ///< a stage of the scores: −∞ (a masked key) is a value, not an overflow
};

/// Checks every result given a path, then writes them all (or none, see above).
/// half (T = double only): written as float16 ('<f2'), each value rounded to the nearest half,
/// and checked after that rounding (a value beyond 65504 becomes inf).
template <class T>
void save_results(const std::vector<EvalResult<T>>& results, bool half = false) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  if (half && !std::is_same_v<T, double>) throw std::logic_error("save_results: float16 is written from double");
  const char* type = half ? "float16" : sizeof(T) == 4 ? "float32" : "float64";
  for (const EvalResult<T>& r : results) {
    if (r.path.empty()) continue;
    const xt::xarray<T>& a = *r.array;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double x = half ? round_to_half(double(a.flat(i))) : double(a.flat(i));
      if (std::isfinite(x) || (r.masked_scores && x == -HUGE_VAL)) continue;
      throw InputError(fmt::format("the {} for {} holds {} at flat index {}: the inputs overflow {} (scores or sums "
                                   "beyond its range); scale them down{}; nothing was written", r.what, r.path, x, i, type,
                                   sizeof(T) == 8 && !half ? "" : " or use float64"));
    }
  }
  std::vector<std::string> written;
  try {
    for (const EvalResult<T>& r : results) {
      if (r.path.empty()) continue;
      if constexpr (std::is_same_v<T, double>) {
        if (half) npy::save_float16(r.path, *r.array);
        else npy::save(r.path, *r.array);
      } else {
        npy::save(r.path, *r.array);
      }
      written.push_back(r.path);
    }
  } catch (...) {
    std::error_code ec;
    for (const auto& w : written) std::filesystem::remove(w, ec);
    throw;
  }
}

}  // namespace vl::cli
