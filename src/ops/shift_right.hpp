#pragma once
// Operation `shift_right`: the decoder's input, the target moved one position later with a start
// row first (kernels/reference/decoder_layer.hpp, shift_right).
//
//   in   target (B, T, d), start (d)      out  (B, T, d)
//   vl-candidate/1  no request
#include <vector>

#include <xtensor/xtensor.hpp>

#include "ops/result_shape.hpp"
#include "ops/tensors.hpp"

namespace vl::ops {

struct ShiftRight {
  static constexpr const char* name = "shift-right";
  static constexpr const char* request = nullptr;
  template <class T>
  static std::vector<ResultShape> result_shapes(const Tensor3Of<T>& y, const Tensor3Of<T>& target, const xt::xtensor<T, 1>&) {
    return same_shape("a shifted target", y, target);
  }
};

}  // namespace vl::ops
