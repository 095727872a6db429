#pragma once
// Operations `linear_parallel`, `linear_recurrent`, `linear_chunked`: causal linear attention
// (Katharopoulos et al. 2020) on feature-mapped queries and keys, in its three forms — one
// function, so one header (kernels/reference/linear_attention.hpp computes each).
//
//   in   φ(Q), φ(K) (n, d_k), V (n, d_v) [, the chunk size]      out  (n, d_v)
//   vl-candidate/1  request "linear_attention": phi_q phi_k v, attrs form, chunk → y
#include <cstddef>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include "ops/result_shape.hpp"
#include "ops/tensors.hpp"

namespace vl::ops {

/// The three forms differ only in their name and the `form` attr they send.
template <class Form>
struct LinearAttentionForm {
  static constexpr const char* request = "linear_attention";

  template <class T, class... Chunk>
  static std::vector<ResultShape> result_shapes(const MatrixOf<T>& y, const MatrixOf<T>& pq, const MatrixOf<T>&, const MatrixOf<T>& v,
                                                Chunk...) {
    return {{"y", "a linear-attention output", shape_of(y), {pq.shape(0), v.shape(1)}}};
  }
  template <class Request, class T, class... Chunk>
  static void encode(Request& r, const MatrixOf<T>& pq, const MatrixOf<T>& pk, const MatrixOf<T>& v, Chunk... chunk) {
    r.input("phi_q", xt::xarray<T>(pq));
    r.input("phi_k", xt::xarray<T>(pk));
    r.input("v", xt::xarray<T>(v));
    r.attrs["form"] = Form::form;
    r.attrs["chunk"] = (std::size_t(0) + ... + chunk);  // 0 for the forms without chunks
    r.output("y");
  }
  template <class Request, class T, class... Chunk>
  static MatrixOf<T> decode(Request& r, const MatrixOf<T>&, const MatrixOf<T>&, const MatrixOf<T>&, Chunk...) {
    return r.template result<T, 2>("y");
  }
};

struct LinearParallel : LinearAttentionForm<LinearParallel> {
  static constexpr const char* name = "linear-parallel";
  static constexpr const char* form = "parallel";
};
struct LinearRecurrent : LinearAttentionForm<LinearRecurrent> {
  static constexpr const char* name = "linear-recurrent";
  static constexpr const char* form = "recurrent";
};
struct LinearChunked : LinearAttentionForm<LinearChunked> {
  static constexpr const char* name = "linear-chunked";
  static constexpr const char* form = "chunked";
};

}  // namespace vl::ops
