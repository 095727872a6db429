#pragma once
// Operation `attention_backward`: the gradients of attention's output (ops/attention.hpp) for an
// upstream gradient dO (kernels/reference/attention_backward.hpp computes them).
//
//   in   Q (B, Hq, Sq, D), K (B, Hkv, Sk, D), V (B, Hkv, Sk, Dv), dO (B, Hq, Sq, Dv), AttentionOptions
//   out  dQ, dK, dV, each shaped as its input
//   vl-candidate/1  request "attention_backward": q k v d_out [mask] → dq dk dv
#include <cstddef>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "ops/attention.hpp"

namespace vl {

template <class T, std::size_t N>
struct AttentionGradients {
  xt::xtensor<T, N> dq, dk, dv;
};

}  // namespace vl

namespace vl::ops {

struct AttentionBackward {
  static constexpr const char* name = "attention-backward";
  static constexpr const char* request = "attention_backward";

  template <class T>
  static std::vector<ResultShape> result_shapes(const AttentionGradients<T, 4>& g, const Tensor4<T>& q, const Tensor4<T>& k,
                                                const Tensor4<T>& v, const Tensor4<T>&, const AttentionOptions<T>&) {
    return {{"dq", "dQ", shape_of(g.dq), shape_of(q)}, {"dk", "dK", shape_of(g.dk), shape_of(k)}, {"dv", "dV", shape_of(g.dv), shape_of(v)}};
  }

  template <class Request, class T>
  static void encode(Request& r, const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const Tensor4<T>& d_out,
                     const AttentionOptions<T>& o) {
    encode_attention_options(r, o);
    r.input("q", xt::xarray<T>(q));
    r.input("k", xt::xarray<T>(k));
    r.input("v", xt::xarray<T>(v));
    r.input("d_out", xt::xarray<T>(d_out));
    for (const char* name : {"dq", "dk", "dv"}) r.output(name);
  }
  template <class Request, class T>
  static AttentionGradients<T, 4> decode(Request& r, const Tensor4<T>&, const Tensor4<T>&, const Tensor4<T>&, const Tensor4<T>&,
                                         const AttentionOptions<T>&) {
    AttentionGradients<T, 4> g;
    g.dq = r.template result<T, 4>("dq");
    g.dk = r.template result<T, 4>("dk");
    g.dv = r.template result<T, 4>("dv");
    return g;
  }
};

}  // namespace vl::ops
