#pragma once
// The three steps of the fused kernel (fused_attention.hpp) that decide which key blocks a
// query block visits and how a block's terms join the running softmax. The kernel is a
// template over them (fused_attention_core.hpp); FusedSteps is the one it ships with, and the
// only one compiled into the library. The lessons instantiate the kernel with their own steps
// to show that their checks catch a kernel that gets one of these wrong.
#include <cstddef>

#include "kernels/fused/softmax_rows.hpp"

namespace vl {

struct FusedSteps {
  /// Key blocks that cover Sk keys: ⌈Sk / block_k⌉ (the last one may be shorter).
  static std::size_t key_blocks(std::size_t sk, std::size_t block_k) { return (sk + block_k - 1) / block_k; }

  /// Causal: a key block starting after key `last_visible` (the last row's last visible key)
  /// is hidden from every row of the query block, and so is every later one.
  static bool causal_block_hidden(std::ptrdiff_t block_start, std::ptrdiff_t last_visible, std::size_t /*block_k*/) {
    return block_start > last_visible;
  }

  /// Fold one block into a row's running sum l and accumulator acc (Dv values): the maximum
  /// moved from m to m', alpha = exp(m − m'), sum = Σ_j exp(s_j − m') over the block.
  ///   l ← l · alpha + sum,   acc ← acc · alpha   (the block's P V is added by the caller)
  template <class T>
  static void rescale(T& l, T* acc, std::size_t dv, T alpha, T sum) {
    l = l * alpha + sum;
    if (alpha != T(1)) row_scale(acc, dv, alpha);
  }
};

}  // namespace vl
