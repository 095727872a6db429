#pragma once
// NumPy's ziggurat tables for the standard normal (see numpy_ziggurat_tables.cpp for the source).
#include <array>
#include <cstdint>

namespace vl::numpy::detail {

// float64 ziggurat: 52-bit mantissa thresholds, layer widths, and densities at the layer edges.
extern const std::array<std::uint64_t, 256> ki_double;
extern const std::array<double, 256> wi_double;
extern const std::array<double, 256> fi_double;
// float32 ziggurat: 23-bit mantissa thresholds, layer widths, densities.
extern const std::array<std::uint32_t, 256> ki_float;
extern const std::array<float, 256> wi_float;
extern const std::array<float, 256> fi_float;

// Start of the tail (r) and its inverse, in both precisions.
inline constexpr double ziggurat_nor_r = 3.6541528853610087963519472518;
inline constexpr double ziggurat_nor_inv_r = 0.27366123732975827203338247596;
inline constexpr float ziggurat_nor_r_f = 3.6541528853610087963519472518f;
inline constexpr float ziggurat_nor_inv_r_f = 0.27366123732975827203338247596f;

}  // namespace vl::numpy::detail
