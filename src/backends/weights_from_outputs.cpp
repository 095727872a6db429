// The weights of attention as its outputs give them (see weights_from_outputs.hpp).
#include "backends/weights_from_outputs.hpp"

#include <algorithm>
#include <stdexcept>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

namespace vl::backends {

namespace {

// y for the caller's V, and W column block by column block from one-hot values E_c.
template <class T>
AttentionResult<T, 4> through_outputs(const Backend& base, const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                      const AttentionOptions<T>& o) {
  if (!o.return_weights) return base.attention(q, k, v, o);
  AttentionOptions<T> outputs_only = o;
  outputs_only.return_weights = false;
  AttentionResult<T, 4> r = base.attention(q, k, v, outputs_only);
  const std::size_t B = q.shape(0), Hq = q.shape(1), Sq = q.shape(2), Hkv = v.shape(1), Sk = v.shape(2), Dv = v.shape(3);
  r.weights = xt::zeros<T>({B, Hq, Sq, Sk});
  // The one-hot values' own width: the caller's Dv, or 1 when its V has no columns (Dv = 0 still
  // has weights to read).
  const std::size_t cols = std::max<std::size_t>(Dv, 1);
  for (std::size_t first = 0; first < Sk; first += cols) {
    const std::size_t width = std::min(cols, Sk - first);
    Tensor4<T> one_hot = xt::zeros<T>({B, Hkv, Sk, cols});
    for (std::size_t m = 0; m < width; ++m) xt::view(one_hot, xt::all(), xt::all(), first + m, m) = T(1);
    const Tensor4<T> y = base.attention(q, k, one_hot, outputs_only).output;
    if (y.shape() != std::array<std::size_t, 4>{B, Hq, Sq, cols})  // (an audited backend is ShapeChecked: not reached)
      throw std::runtime_error("attention's output for one-hot values has the wrong shape");
    xt::view(r.weights, xt::all(), xt::all(), xt::all(), xt::range(first, first + width)) =
        xt::view(y, xt::all(), xt::all(), xt::all(), xt::range(0, width));
  }
  return r;
}

}  // namespace

WeightsFromOutputs::WeightsFromOutputs(std::shared_ptr<const Backend> base)
    : Decorator(base, base->name() + ", its weights read from its outputs") {}

std::shared_ptr<const Backend> WeightsFromOutputs::over(const Backend& base) {
  return std::make_shared<WeightsFromOutputs>(unowned(base));
}

std::shared_ptr<const Backend> WeightsFromOutputs::where_lacking(const Backend& base, Op op) {
  if (base.supports({op, Option::weights})) return unowned(base);
  return over(base);
}

bool WeightsFromOutputs::supports(Need need) const {
  if (need.option == Option::weights && (need.op == Op::attention || need.op == Op::multi_head_attention))
    return Decorator::supports(need.op);
  return Decorator::supports(need);
}

MhaResult<double, 3> WeightsFromOutputs::multi_head_attention(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                                                              const MhaParameters<double>& p, std::size_t heads,
                                                              const MhaOptions<double>& o) const {
  if (!o.need_weights) return base().multi_head_attention(query, key, value, p, heads, o);
  MhaOptions<double> outputs_only = o;
  outputs_only.need_weights = false;
  MhaResult<double, 3> r = base().multi_head_attention(query, key, value, p, heads, outputs_only);
  const std::size_t B = query.shape(0), Sq = query.shape(1), Sk = key.shape(1), d = query.shape(2);
  if (heads == 0 || d % heads != 0 || p.in_proj_weight.shape(0) != 3 * d) return r;  // the base refused such a call above
  const std::size_t dh = d / heads;
  MhaParameters<double> identity = p;  // W_v = I, b_v = 0, W_o = I, b_o = 0; W_q, W_k, b_q, b_k the caller's
  xt::view(identity.in_proj_weight, xt::range(2 * d, 3 * d), xt::all()) = xt::eye<double>(d);
  xt::view(identity.in_proj_bias, xt::range(2 * d, 3 * d)) = 0.0;
  identity.out_proj_weight = xt::eye<double>(d);
  identity.out_proj_bias = xt::zeros<double>({d});
  r.weights = xt::zeros<double>({B, heads, Sq, Sk});
  for (std::size_t first = 0; first < Sk; first += dh) {
    const std::size_t width = std::min(dh, Sk - first);
    Tensor3 one_hot = xt::zeros<double>({B, Sk, d});
    for (std::size_t m = 0; m < width; ++m)
      for (std::size_t h = 0; h < heads; ++h) xt::view(one_hot, xt::all(), first + m, h * dh + m) = 1.0;
    const Tensor3 y = base().multi_head_attention(query, key, one_hot, identity, heads, outputs_only).output;
    if (y.shape() != std::array<std::size_t, 3>{B, Sq, d})  // (an audited backend is ShapeChecked: not reached)
      throw std::runtime_error("multi-head attention's output for one-hot values has the wrong shape");
    for (std::size_t h = 0; h < heads; ++h)
      xt::view(r.weights, xt::all(), h, xt::all(), xt::range(first, first + width)) =
          xt::view(y, xt::all(), xt::all(), xt::range(h * dh, h * dh + width));
  }
  return r;
}

AttentionResult<double, 4> WeightsFromOutputs::attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                                         const AttentionOptions<double>& o) const {
  return through_outputs<double>(base(), q, k, v, o);
}
AttentionResult<float, 4> WeightsFromOutputs::attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                        const AttentionOptions<float>& o) const {
  return through_outputs<float>(base(), q, k, v, o);
}

}  // namespace vl::backends
