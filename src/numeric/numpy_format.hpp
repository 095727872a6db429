#pragma once
// Printing as Python and NumPy print, digit for digit, so that the C++ listings reproduce the
// lessons' output lines:
//   format_array(a)          == str(a) / print(a) for float64 arrays (NumPy 1.24 defaults:
//                               precision 8, floatmode 'maxprec', suppress=False, linewidth 75,
//                               threshold 1000 with edgeitems 3, sign '-')
//   format_float32_array(a)  == the same for float32 arrays
//   format_shape({6, 4})     == str((6, 4)) -> "(6, 4)";  {5} -> "(5,)"
//   python_bool(b)           == str(b) -> "True" / "False"
//   python_float_repr(x)     == repr(x) for a Python float
//   round_half_even(x, d)    == np.round(x, d)
//   python_format("{:>9.3f}", x) == "{:>9.3f}".format(x)
// Python format specs such as {:>9.3f}, {:.2e} give the same text in fmt for finite values
// (ties round half to even on the exact binary value in both); the one difference found is
// that fmt left-aligns inf/nan in a width without explicit alignment where Python right-aligns
// them, which python_format corrects. verify/test_numeric_numpy_format.cpp checks the specs.
#include <cstddef>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

namespace vl::numpy {

/// str(np.asarray(a)) for a float64 array of any dimension (0-d prints like a float).
std::string format_array(const xt::xarray<double>& a);

/// str(np.asarray(a, dtype=np.float32)): as format_array, with float32's shortest digits.
std::string format_float32_array(const xt::xarray<float>& a);

/// str(tuple(shape)): "(6, 4)", "(5,)", "()".
std::string format_shape(const std::vector<std::size_t>& shape);

/// str(bool): "True" or "False".
std::string python_bool(bool b);

/// repr(float): shortest round-trip digits; positional when 1e-4 <= |x| < 1e16 (with ".0" for
/// integers), else d.ddde+XX; "nan", "inf", "-inf".
std::string python_float_repr(double x);

/// spec.format(x) for a single-field Python format string such as "{:>9.3f}" or "{:.2e}":
/// fmt::format, except that inf/nan are right-aligned as Python aligns numbers.
std::string python_format(const std::string& spec, double x);

/// np.round(x, decimals): x * 10^d, rounded half to even (rint), divided by 10^d (for d < 0:
/// x / 10^-d, rint, times 10^-d), with 10^d built as NumPy builds it.
double round_half_even(double x, int decimals);

}  // namespace vl::numpy
