#pragma once
// Loading and checking the .npy inputs of `lessons eval`, and writing its outputs.
// Every problem is a vl::InputError naming the option and the file.
#include <cmath>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <xtensor/xarray.hpp>

#include "core/errors.hpp"
#include "numeric/compare.hpp"  // dims_string: the shapes in its messages
#include "numeric/first_non_finite.hpp"
#include "numeric/npy.hpp"
#include "numeric/precision.hpp"

namespace vl::cli {

/// The precision `eval` computes in (numeric/precision.hpp): that of the query (or X) input.
/// float16 (eval attention only): emulated in double, as ONNX's reference computes it
/// (eval_attention); bfloat16 is not read.
inline Precision precision_of(const npy::Info& info, const std::string& option, const std::string& path, bool half_ok = false) {
  if (info.dtype == "float32") return Precision::float32;
  if (info.dtype == "float64") return Precision::float64;
  if (info.dtype == "float16" && half_ok) return Precision::float16;
  throw InputError(fmt::format("{} {}: dtype {} is not supported here (float32 or float64{})", option, path, info.dtype,
                               half_ok ? " or float16" : ""));
}

/// `call` (an npy reader) with its error prefixed by the option that named the file
/// ("--k /x.npy: ...").
template <class F>
auto for_option(const std::string& option, F call) {
  try {
    return call();
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", option, e.what()));
  }
}

/// npy::load of the file an option names, errors prefixed with the option.
inline npy::Array load_npy(const std::string& path, const std::string& option) {
  return for_option(option, [&] { return npy::load(path); });
}

/// npy::read_info (the header only) of the file an option names, errors prefixed with the option.
inline npy::Info read_npy_info(const std::string& path, const std::string& option) {
  return for_option(option, [&] { return npy::read_info(path); });
}

/// A float input as T, read straight into T (npy::load_exact); it must have the given dtype,
/// at least `min_rank` dimensions, no empty dimension, and only finite values (NaN and ±inf
/// are refused, never hidden).
template <class T>
xt::xarray<T> checked_input(const std::string& path, const std::string& option, Precision precision, std::size_t min_rank) {
  const npy::Info info = read_npy_info(path, option);
  const std::string want = precision == Precision::float32 ? "float32" : precision == Precision::float64 ? "float64" : "float16";
  if (info.dtype != want)
    throw InputError(fmt::format("{} {}: dtype {}, but the inputs are {} (give every input the same precision)", option, path,
                                 info.dtype, want));
  if (info.shape.size() < min_rank)
    throw InputError(fmt::format("{} {}: {} dimensions, at least {} needed", option, path, info.shape.size(), min_rank));
  for (std::size_t i = 0; i < info.shape.size(); ++i)
    if (info.shape[i] == 0) throw InputError(fmt::format("{} {}: dimension {} is empty", option, path, i));
  xt::xarray<T> x = precision == Precision::float16 ? npy::to_xarray<T>(load_npy(path, option))  // exact in double
                                                : for_option(option, [&] { return npy::load_exact<T>(path); });
  const T* values = x.data();  // row-major, as read
  if (const std::size_t i = first_non_finite(values, x.size()); i < x.size())
    throw InputError(fmt::format("{} {}: value at flat index {} is {} (inputs must be finite)", option, path, i, values[i]));
  return x;
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
