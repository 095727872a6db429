#pragma once
// The cases on which our fused kernels are compared with the plain ones (specs/attention.md,
// "Beyond n²"): the forward (attention_fused.cpp) and the backward (attention_fused_backward.cpp).
#include <array>
#include <cstddef>
#include <limits>
#include <vector>

#include <xtensor/xview.hpp>

#include "lessons/attention/attention_common.hpp"

namespace vl::lessons::attention {

struct FusedCase {
  std::array<std::size_t, 4> q, k, v;
  bool causal = false;
  CausalAlignment alignment = CausalAlignment::top_left;
  bool allowed = false, bias = false;
  double softcap = 0;
};

// Shapes, masks and alignments for the float64 agreement: n not a multiple of the blocks, Sq < Sk
// and Sq > Sk in both alignments, GQA and MQA, a bool mask with a fully masked row, an additive
// mask with −∞, softcap.
inline std::vector<FusedCase> fused_cases_f64() {
  using A = CausalAlignment;
  return {
      {{1, 1, 300, 16}, {1, 1, 300, 16}, {1, 1, 300, 8}},
      {{2, 2, 129, 8}, {2, 2, 129, 8}, {2, 2, 129, 8}, true},
      {{1, 2, 70, 8}, {1, 2, 130, 8}, {1, 2, 130, 5}, true, A::top_left},
      {{1, 2, 70, 8}, {1, 2, 130, 8}, {1, 2, 130, 5}, true, A::bottom_right},
      {{1, 2, 130, 8}, {1, 2, 70, 8}, {1, 2, 70, 5}, true, A::bottom_right},
      {{1, 2, 130, 8}, {1, 2, 70, 8}, {1, 2, 70, 5}, true, A::top_left},
      {{2, 4, 65, 8}, {2, 2, 97, 8}, {2, 2, 97, 8}, false, A::top_left, true},
      {{1, 3, 50, 8}, {1, 1, 77, 8}, {1, 1, 77, 4}, true, A::bottom_right, true, true},
      {{1, 1, 90, 8}, {1, 1, 90, 8}, {1, 1, 90, 8}, true, A::top_left, false, true, 5.0},
  };
}

template <class T>
struct FusedCaseInputs {
  Tensor4<T> q, k, v;
  AttentionOptions<T> options;
};

/// A case's Q, K, V drawn in that order (standard normal), then its masks: a boolean mask with
/// 70 % of keys allowed and query 1 seeing none; an additive mask of standard normals over the
/// keys, −∞ at key 0.
template <class T>
FusedCaseInputs<T> draw_fused_case(const FusedCase& c, numpy::Generator& rng) {
  FusedCaseInputs<T> in{draw4_as<T>(rng, c.q), draw4_as<T>(rng, c.k), draw4_as<T>(rng, c.v), {}};
  AttentionOptions<T>& o = in.options;
  o.causal = c.causal;
  o.alignment = c.alignment;
  o.softcap = T(c.softcap);
  if (c.allowed) {
    xt::xarray<bool> a = xt::xarray<bool>::from_shape({c.q[2], c.k[2]});
    for (auto& e : a) e = rng.random() < 0.7;
    xt::view(a, 1, xt::all()) = false;  // a query that may see nothing: zeros
    o.allowed = a;
  }
  if (c.bias) {
    xt::xarray<T> b = xt::cast<T>(xt::view(rng.standard_normal(1, c.k[2]), 0, xt::all()));
    b(0) = -std::numeric_limits<T>::infinity();
    o.bias = b;
  }
  return in;
}

}  // namespace vl::lessons::attention
