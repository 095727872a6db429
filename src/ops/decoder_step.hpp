#pragma once
// Operation `decoder_step`: the decoder layer at one new position over its KV cache
// (kernels/reference/decoder_step.hpp).
//
//   in   x_t (B, 1, d), memory (B, S, d), the layer's parameters, the head count, LayerOptions,
//        the layer's cache (appended to), the cross-attention's MhaOptions
//   out  (B, 1, d)
//   vl-candidate/1  no request
#include <cstddef>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "ops/decoder_layer.hpp"

namespace vl {

/// One layer's self-attention keys and values of the positions decoded so far: (B, t, d) each,
/// already projected. Starts empty (t = 0).
template <class T>
struct LayerCache {
  xt::xtensor<T, 3> keys, values;
};

}  // namespace vl

namespace vl::ops {

struct DecoderStep {
  static constexpr const char* name = "decoder-step";
  static constexpr const char* request = nullptr;
  // One position out. The cache is the backend's own state between steps (how it keeps keys and
  // values is its business), so only the output is checked; a cache that forgets is the
  // teacher-forcing claim's to find.
  template <class T>
  static std::vector<ResultShape> result_shapes(const Tensor3Of<T>& y, const Tensor3Of<T>& x_t, const Tensor3Of<T>&, const DecoderLayerParameters<T>&,
                                                std::size_t, const LayerOptions&, const LayerCache<T>&, const MhaOptions<T>&) {
    return same_shape("a decoder-step output", y, x_t);
  }
};

}  // namespace vl::ops
