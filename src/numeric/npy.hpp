#pragma once
// NumPy's .npy files: read any numeric array NumPy writes, write float64/float32/bool arrays
// exactly as np.save does.
//
// Format (numpy.lib.format): magic "\x93NUMPY", version (major, minor) as two bytes, the
// header length (uint16 LE in 1.0, uint32 LE in 2.0/3.0), then a Python dict literal
//   {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a final '\n' so that the data starts at a multiple of 64 bytes,
// then the raw elements (C order unless fortran_order is True).
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>

namespace vl::npy {

/// An array read from a .npy file: its NumPy dtype name, its shape and its elements in C
/// (row-major) order, converted to double (exact for every dtype we accept).
struct Array {
  std::string dtype;               ///< "float16", "float32", "float64", "bool", "int8".."int64", "uint8".."uint64"
  std::vector<std::size_t> shape;  ///< empty for a 0-d array (one element)
  std::vector<double> values;      ///< product(shape) elements, C order

  std::size_t size() const { return values.size(); }
};

/// What a .npy file's header says: its dtype (named as Array::dtype) and shape. Reads the
/// header only; the same checks as load(), the data's size included.
struct Info {
  std::string dtype;
  std::vector<std::size_t> shape;
};
Info read_info(const std::filesystem::path& path);

/// Called with a file's Info once its header is read and checked, before its data is decoded (by
/// load_exact, before it is read): a caller with its own rules for the dtype and shape throws
/// from it, and the file is opened once. What it throws reaches the caller unchanged. Empty: no
/// check.
using InfoCheck = std::function<void(const Info&)>;

/// Reads a .npy file (versions 1.0/2.0/3.0; '<', '>' or '|' byte order; C or Fortran order;
/// dtypes f2/f4/f8, b1, i1..i8, u1..u8). Throws vl::InputError naming the file and the
/// problem: missing file, bad magic, truncated header or data, malformed header, unsupported
/// dtype (strings, objects, complex, structured), data size that does not match the shape,
/// or a 64-bit integer too large to be exact in a double (|x| > 2^53). `check` runs on the
/// header first.
Array load(const std::filesystem::path& path, const InfoCheck& check = {});

/// A float32 (T = float) or float64 (T = double) file read straight into an array of T, with
/// no detour through double: either byte order, C or Fortran order. Throws vl::InputError,
/// naming the file, where load() would, and when the file's dtype is not T's (after `check`,
/// which runs on the header first).
template <class T>
xt::xarray<T> load_exact(const std::filesystem::path& path, const InfoCheck& check = {});

/// The elements as an `xt::xarray<T>` of the file's shape (values cast with `static_cast<T>`;
/// for bool, non-zero is true).
template <class T>
xt::xarray<T> to_xarray(const Array& a) {
  xt::xarray<T> out = xt::xarray<T>::from_shape(a.shape);
  T* data = out.data();
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      data[i] = a.values[i] != 0.0;
    } else {
      data[i] = static_cast<T>(a.values[i]);
    }
  }
  return out;
}

/// Shortcuts: load(path) converted to an xarray of double / float / bool.
xt::xarray<double> load_double(const std::filesystem::path& path);
xt::xarray<float> load_float(const std::filesystem::path& path);
xt::xarray<bool> load_bool(const std::filesystem::path& path);

/// How save() puts the file at `path`.
enum class Write {
  /// The bytes go to a temporary file in the same directory that is renamed over `path` only
  /// once complete: a reader never sees a partial file, and an existing one is replaced whole.
  atomically,
  /// `path` must not exist (else vl::InputError, nothing touched): the file is created and
  /// written in place, with no temporary and no rename. For a folder the caller owns and no one
  /// reads before the call returns (a candidate's request files: half of the suite's file
  /// system calls in a candidate audit were the temporaries' renames).
  new_file,
};

/// Writes `a` as np.save would (version 1.0, little-endian, C order, header padded to 64
/// bytes; dtype '<f8', '<f4' or '|b1'), as `how` says; on any failure a temporary or partial
/// file is removed, an existing `path` is left as it was, and vl::InputError names `path`.
void save(const std::filesystem::path& path, const xt::xarray<double>& a, Write how = Write::atomically);
void save(const std::filesystem::path& path, const xt::xarray<float>& a, Write how = Write::atomically);
void save(const std::filesystem::path& path, const xt::xarray<bool>& a, Write how = Write::atomically);
/// The same as dtype '<f2': each value rounded to the nearest float16 (ties to even).
void save_float16(const std::filesystem::path& path, const xt::xarray<double>& a, Write how = Write::atomically);
/// The same as dtype '<u2': the bits of each value rounded to bfloat16 (ties to even), as
/// vl-candidate/1 carries bfloat16 (NumPy has no such dtype; numeric/precision.hpp).
void save_bfloat16_bits(const std::filesystem::path& path, const xt::xarray<double>& a, Write how = Write::atomically);

}  // namespace vl::npy
