#pragma once
// The steps of the fused kernel (fused_attention.hpp) that decide which key blocks a query
// block visits and how a block's terms join the running softmax, and those of its backward
// (fused_attention_backward.hpp) that save the softmax for it, choose the blocks it recomputes
// and sum a group's query heads. The kernels are templates over them (fused_attention_core.hpp,
// fused_attention_backward_core.hpp); FusedSteps is the one they ship with, and the only one
// compiled into the library. The lessons instantiate the kernels with their own steps to show
// that their checks catch a kernel that gets one of these wrong.
#include <cmath>
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

  /// What the forward saves of a row's softmax for the backward: lse = m + ln l, so that a
  /// weight is recomputed as exp(s − lse). A row with no visible key (l = 0) saves −∞.
  template <class T>
  static T row_lse(T m, T l) {
    return m + std::log(l);
  }

  /// The backward's causal skip: as the forward's (a key block after the query block's last
  /// visible key contributes nothing to it, in either direction).
  static bool backward_block_hidden(std::ptrdiff_t block_start, std::ptrdiff_t last_visible, std::size_t block_k) {
    return causal_block_hidden(block_start, last_visible, block_k);
  }

  /// Query heads whose dK, dV terms a key/value head sums: all `group` of them (grouped-query
  /// attention: Hq / Hkv query heads read each key/value head).
  static std::size_t heads_summed(std::size_t group) { return group; }
};

}  // namespace vl
