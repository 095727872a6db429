#pragma once
// Operation `layer_norm`: torch.nn.LayerNorm over the last axis (kernels/reference/layer_norm.hpp).
//
//   in   x (B, S, d), γ and β (d), ε      out  (B, S, d)
//   vl-candidate/1  request "layer_norm": x, weight, bias, attr eps → y
#include <cstddef>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include "numeric/torch_linear_init.hpp"
#include "ops/result_shape.hpp"
#include "ops/tensors.hpp"

namespace vl {

template <class T>
using LayerNormParameters = torch_rng::LayerNormParameters<T>;

inline constexpr double kLayerNormEps = 1e-5;  // torch.nn.LayerNorm's default ε

}  // namespace vl

namespace vl::ops {

struct LayerNorm {
  static constexpr const char* name = "layer-norm";
  static constexpr const char* request = "layer_norm";
  template <class T>
  static std::vector<ResultShape> result_shapes(const Tensor3Of<T>& y, const Tensor3Of<T>& x, const LayerNormParameters<T>&, double) {
    return same_shape("a layer-norm output", y, x);
  }

  template <class Request, class T>
  static void encode(Request& r, const Tensor3Of<T>& x, const LayerNormParameters<T>& p, double eps) {
    r.input("x", xt::xarray<T>(x));
    r.input("weight", xt::xarray<T>(p.weight));
    r.input("bias", xt::xarray<T>(p.bias));
    r.attrs["eps"] = eps;
    r.output("y");
  }
  template <class Request, class T>
  static Tensor3Of<T> decode(Request& r, const Tensor3Of<T>&, const LayerNormParameters<T>&, double) {
    return r.template result<T, 3>("y");
  }
};

}  // namespace vl::ops
