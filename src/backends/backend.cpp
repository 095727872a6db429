// The operations' defaults (Unsupported), the forwarding decorator and the shorthands.
#include "backends/backend.hpp"

#include <xtensor/xview.hpp>

namespace vl::backends {

std::string to_string(Op op) {
  switch (op) {
    case Op::attention: return "attention";
    case Op::attention_weights: return "attention-weights";
    case Op::attention_scores: return "attention-scores";
    case Op::attention_storage_rounding: return "attention-storage-rounding";
    case Op::attention_backward: return "attention-backward";
    case Op::multi_head_attention: return "multi-head-attention";
    case Op::positional_encoding: return "positional-encoding";
    case Op::linear_parallel: return "linear-parallel";
    case Op::linear_recurrent: return "linear-recurrent";
    case Op::linear_chunked: return "linear-chunked";
    case Op::layer_norm: return "layer-norm";
    case Op::encoder_layer: return "encoder-layer";
    case Op::decoder_layer: return "decoder-layer";
    case Op::decoder_step: return "decoder-step";
    case Op::shift_right: return "shift-right";
    case Op::linear_family: return "linear-family";
  }
  return "?";
}

void Backend::lacks(Op op, const std::string& why) const { throw Unsupported(op, lacking(op, why)); }
std::string Backend::lacking(Op op, const std::string& why) const {
  return "backend '" + name() + "' has no " + to_string(op) + (why.empty() ? "" : " (" + why + ")");
}

AttentionResult<double, 4> Backend::attention(const Tensor4<double>&, const Tensor4<double>&, const Tensor4<double>&,
                                              const AttentionOptions<double>&) const {
  lacks(Op::attention);
}
AttentionResult<float, 4> Backend::attention(const Tensor4<float>&, const Tensor4<float>&, const Tensor4<float>&,
                                             const AttentionOptions<float>&) const {
  lacks(Op::attention);
}
AttentionGradients<double, 4> Backend::attention_backward(const Tensor4<double>&, const Tensor4<double>&, const Tensor4<double>&,
                                                          const Tensor4<double>&, const AttentionOptions<double>&) const {
  lacks(Op::attention_backward);
}
AttentionGradients<float, 4> Backend::attention_backward(const Tensor4<float>&, const Tensor4<float>&, const Tensor4<float>&,
                                                         const Tensor4<float>&, const AttentionOptions<float>&) const {
  lacks(Op::attention_backward);
}
MhaResult<double, 3> Backend::multi_head_attention(const xt::xtensor<double, 3>&, const xt::xtensor<double, 3>&,
                                                   const xt::xtensor<double, 3>&, const MhaParameters<double>&, std::size_t,
                                                   const MhaOptions<double>&) const {
  lacks(Op::multi_head_attention);
}
Matrix Backend::positional_encoding(const std::vector<double>&, std::size_t) const { lacks(Op::positional_encoding); }
Matrix Backend::linear_parallel(const Matrix&, const Matrix&, const Matrix&) const { lacks(Op::linear_parallel); }
Matrix Backend::linear_recurrent(const Matrix&, const Matrix&, const Matrix&) const { lacks(Op::linear_recurrent); }
Matrix Backend::linear_chunked(const Matrix&, const Matrix&, const Matrix&, std::size_t) const { lacks(Op::linear_chunked); }
Tensor3 Backend::layer_norm(const Tensor3&, const LayerNormParameters<double>&, double) const { lacks(Op::layer_norm); }
Tensor3 Backend::encoder_layer(const Tensor3&, const EncoderLayerParameters<double>&, std::size_t, const LayerOptions&,
                               const MhaOptions<double>&) const {
  lacks(Op::encoder_layer);
}
Tensor3 Backend::decoder_layer(const Tensor3&, const Tensor3&, const DecoderLayerParameters<double>&, std::size_t, const LayerOptions&,
                               const MhaOptions<double>&, const MhaOptions<double>&) const {
  lacks(Op::decoder_layer);
}
Tensor3 Backend::decoder_step(const Tensor3&, const Tensor3&, const DecoderLayerParameters<double>&, std::size_t, const LayerOptions&,
                              LayerCache<double>&, const MhaOptions<double>&) const {
  lacks(Op::decoder_step);
}
Tensor3 Backend::shift_right(const Tensor3&, const xt::xtensor<double, 1>&) const { lacks(Op::shift_right); }
FamilyResult<double> Backend::linear_family(const FamilyInputs<double>&, const FamilyOptions&) const { lacks(Op::linear_family); }
FamilyResult<float> Backend::linear_family(const FamilyInputs<float>&, const FamilyOptions&) const { lacks(Op::linear_family); }

Decorator::Decorator(std::shared_ptr<const Backend> base, std::string name) : base_(std::move(base)), name_(std::move(name)) {}

AttentionResult<double, 4> Decorator::attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                                const AttentionOptions<double>& o) const {
  return base_->attention(q, k, v, o);
}
AttentionResult<float, 4> Decorator::attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                               const AttentionOptions<float>& o) const {
  return base_->attention(q, k, v, o);
}
AttentionGradients<double, 4> Decorator::attention_backward(const Tensor4<double>& q, const Tensor4<double>& k,
                                                            const Tensor4<double>& v, const Tensor4<double>& d_out,
                                                            const AttentionOptions<double>& o) const {
  return base_->attention_backward(q, k, v, d_out, o);
}
AttentionGradients<float, 4> Decorator::attention_backward(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                           const Tensor4<float>& d_out, const AttentionOptions<float>& o) const {
  return base_->attention_backward(q, k, v, d_out, o);
}
MhaResult<double, 3> Decorator::multi_head_attention(const xt::xtensor<double, 3>& query, const xt::xtensor<double, 3>& key,
                                                     const xt::xtensor<double, 3>& value, const MhaParameters<double>& p,
                                                     std::size_t heads, const MhaOptions<double>& o) const {
  return base_->multi_head_attention(query, key, value, p, heads, o);
}
Matrix Decorator::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  return base_->positional_encoding(positions, d);
}
Matrix Decorator::linear_parallel(const Matrix& pq, const Matrix& pk, const Matrix& v) const { return base_->linear_parallel(pq, pk, v); }
Matrix Decorator::linear_recurrent(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  return base_->linear_recurrent(pq, pk, v);
}
Matrix Decorator::linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const {
  return base_->linear_chunked(pq, pk, v, chunk);
}
Tensor3 Decorator::layer_norm(const Tensor3& x, const LayerNormParameters<double>& p, double eps) const {
  return base_->layer_norm(x, p, eps);
}
Tensor3 Decorator::encoder_layer(const Tensor3& x, const EncoderLayerParameters<double>& p, std::size_t heads, const LayerOptions& o,
                                 const MhaOptions<double>& self) const {
  return base_->encoder_layer(x, p, heads, o, self);
}
Tensor3 Decorator::decoder_layer(const Tensor3& tgt, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                                 const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross) const {
  return base_->decoder_layer(tgt, memory, p, heads, o, self, cross);
}
Tensor3 Decorator::decoder_step(const Tensor3& x_t, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                                const LayerOptions& o, LayerCache<double>& cache, const MhaOptions<double>& cross) const {
  return base_->decoder_step(x_t, memory, p, heads, o, cache, cross);
}
Tensor3 Decorator::shift_right(const Tensor3& target, const xt::xtensor<double, 1>& start) const { return base_->shift_right(target, start); }
FamilyResult<double> Decorator::linear_family(const FamilyInputs<double>& in, const FamilyOptions& o) const {
  return base_->linear_family(in, o);
}
FamilyResult<float> Decorator::linear_family(const FamilyInputs<float>& in, const FamilyOptions& o) const {
  return base_->linear_family(in, o);
}

MhaResult<double, 2> multi_head_attention_2d(const Backend& b, const Matrix& query, const Matrix& key, const Matrix& value,
                                             const MhaParameters<double>& p, std::size_t heads, const MhaOptions<double>& o) {
  auto as3 = [](const Matrix& x) -> xt::xtensor<double, 3> {
    return xt::reshape_view(x, std::array<std::size_t, 3>{1, x.shape(0), x.shape(1)});
  };
  const MhaResult<double, 3> r = b.multi_head_attention(as3(query), as3(key), as3(value), p, heads, o);
  MhaResult<double, 2> out;
  out.output = xt::view(r.output, 0);
  if (o.need_weights) out.weights = xt::view(r.weights, 0);
  return out;
}

Matrix positional_encoding_table(const Backend& b, std::size_t n, std::size_t d) {
  std::vector<double> positions(n);
  for (std::size_t i = 0; i < n; ++i) positions[i] = double(i);
  return b.positional_encoding(positions, d);
}

}  // namespace vl::backends
