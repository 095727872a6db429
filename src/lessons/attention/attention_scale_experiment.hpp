#pragma once
// Lesson attention, listing 2: why the scores are divided by √d_k (specs/attention.md).
//
// For d_k = 4 … 1024: 4000 queries, 16 keys each, components N(0, 1) from default_rng(seed),
// drawn as the lesson draws them (q: (trials, 1, d_k), then k: (trials, 16, d_k)). Raw scores
// s = q·k; then, without and with the division by √d_k, the softmax p of each query's 16
// scores, its largest weight, and the Frobenius norm of its Jacobian diag(p) − p pᵀ.
// Every sum is done in NumPy's order (numeric/numpy_pairwise_sum.hpp), so that the table's
// digits are NumPy's.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace vl::lessons::attention {

/// One row of the table.
struct ScaleRow {
  std::size_t d_k = 0;
  double score_mean = 0;       ///< mean of the raw scores q·k
  double score_std = 0;        ///< std of the raw scores q·k
  double scaled_std = 0;       ///< std of the scores after the scaled branch's division
  double raw_max_weight = 0;   ///< mean over queries of max_j p_j, without the scale
  double raw_jacobian = 0;     ///< mean ‖diag(p) − p pᵀ‖_F, without the scale
  double scaled_max_weight = 0;
  double scaled_jacobian = 0;
};

/// The pieces of the experiment a negative control may replace.
struct ScaleVariant {
  /// What the "without" branch divides the scores by (reference: 1, i.e. nothing).
  std::function<double(std::size_t d_k)> raw_divisor;
  /// What the "with" branch divides the scores by (reference: √d_k).
  std::function<double(std::size_t d_k)> scaled_divisor;
  /// ‖J‖_F of one softmax row p of n weights (reference: diag(p) − p pᵀ, NumPy's sum order).
  std::function<double(const double* p, std::size_t n)> jacobian_norm;
  /// Added to every raw score before anything else (reference: 0; a control's common offset).
  double score_offset = 0;
  /// Multiplies the "with" branch's scores after their std is taken, before the softmax
  /// (reference: none, 1; a control's temperature).
  std::function<double(std::size_t d_k)> scaled_softmax_gain;
};
ScaleVariant reference_scale_variant();

inline const std::vector<std::size_t> kScaleDims = {4, 16, 64, 256, 1024};
inline constexpr std::size_t kScaleTrials = 4000, kScaleKeys = 16;

/// The table for default_rng(seed). The raw scores of a seed are drawn once and kept.
std::vector<ScaleRow> scale_experiment(std::uint64_t seed, const ScaleVariant& variant);

/// The lesson's row format: f"{d_k:>5} {std:>9.3f} {sqrt:>9.3f} | {max:>9.3f} {J:>9.4f} | ...".
std::string format_scale_row(const ScaleRow& row);
std::string scale_table_header();

}  // namespace vl::lessons::attention
