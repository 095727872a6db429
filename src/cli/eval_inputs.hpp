#pragma once
// Loading and checking the .npy inputs of `lessons eval`, and writing its outputs.
// Every problem is a vl::InputError naming the option and the file.
#include <cmath>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <xtensor/xarray.hpp>

#include "engine/errors.hpp"
#include "numeric/npy.hpp"

namespace vl::cli {

/// The precision `eval` computes in: that of the query (or X) input.
enum class Precision { f32, f64 };

inline Precision precision_of(const npy::Array& a, const std::string& option, const std::string& path) {
  if (a.dtype == "float32") return Precision::f32;
  if (a.dtype == "float64") return Precision::f64;
  throw InputError(fmt::format("{} {}: dtype {} is not supported here (float32 or float64)", option, path, a.dtype));
}

/// A float input as T; it must have the given dtype, at least `min_rank` dimensions, no
/// empty dimension, and only finite values (NaN and ±inf are refused, never hidden).
template <class T>
xt::xarray<T> checked_input(const npy::Array& a, const std::string& path, const std::string& option, Precision precision,
                            std::size_t min_rank) {
  const std::string want = precision == Precision::f32 ? "float32" : "float64";
  if (a.dtype != want)
    throw InputError(fmt::format("{} {}: dtype {}, but the inputs are {} (give every input the same precision)", option, path,
                                 a.dtype, want));
  if (a.shape.size() < min_rank)
    throw InputError(fmt::format("{} {}: {} dimensions, at least {} needed", option, path, a.shape.size(), min_rank));
  for (std::size_t i = 0; i < a.shape.size(); ++i)
    if (a.shape[i] == 0) throw InputError(fmt::format("{} {}: dimension {} is empty", option, path, i));
  for (std::size_t i = 0; i < a.values.size(); ++i)
    if (!std::isfinite(a.values[i]))
      throw InputError(fmt::format("{} {}: value at flat index {} is {} (inputs must be finite)", option, path, i, a.values[i]));
  return npy::to_xarray<T>(a);
}

/// npy::load, its error prefixed with the option that named the file ("--k /x.npy: ...").
inline npy::Array load_npy(const std::string& path, const std::string& option) {
  try {
    return npy::load(path);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", option, e.what()));
  }
}

/// Refuse an output path whose folder does not exist, before any work is done.
inline void check_output_path(const std::string& path, const std::string& option) {
  if (path.empty()) return;
  const auto dir = std::filesystem::absolute(path).parent_path();
  if (!std::filesystem::is_directory(dir))
    throw InputError(fmt::format("{} {}: folder {} does not exist", option, path, dir.string()));
  if (std::filesystem::is_directory(path)) throw InputError(fmt::format("{} {}: is a folder", option, path));
}

}  // namespace vl::cli
