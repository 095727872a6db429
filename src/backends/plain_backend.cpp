// Backend `plain`: each operation is the reference kernel of the same name.
#include "backends/plain_backend.hpp"

#include "kernels/reference/attention.hpp"
#include "kernels/reference/attention_backward.hpp"
#include "kernels/reference/decoder_layer.hpp"
#include "kernels/reference/decoder_step.hpp"
#include "kernels/reference/encoder_layer.hpp"
#include "kernels/reference/layer_norm.hpp"
#include "kernels/reference/linear_attention.hpp"
#include "kernels/reference/linear_family_heads.hpp"
#include "kernels/reference/multi_head_attention.hpp"
#include "kernels/reference/positional_encoding.hpp"

namespace vl::backends {

// The attention rows are spelled as ops/all.hpp spells them (ops::AttentionResult4), so that
// Doxygen pairs each definition with its declaration.
ops::AttentionResult4<double> PlainBackend::attention(const ops::Tensor4<double>& q, const ops::Tensor4<double>& k,
                                                      const ops::Tensor4<double>& v, const AttentionOptions<double>& o) const {
  return vl::attention<double>(q, k, v, o);
}
ops::AttentionResult4<float> PlainBackend::attention(const ops::Tensor4<float>& q, const ops::Tensor4<float>& k,
                                                     const ops::Tensor4<float>& v, const AttentionOptions<float>& o) const {
  return vl::attention<float>(q, k, v, o);
}
ops::AttentionGradients4<double> PlainBackend::attention_backward(const ops::Tensor4<double>& q, const ops::Tensor4<double>& k,
                                                                  const ops::Tensor4<double>& v, const ops::Tensor4<double>& d_out,
                                                                  const AttentionOptions<double>& o) const {
  return vl::attention_backward<double>(q, k, v, d_out, o);
}
ops::AttentionGradients4<float> PlainBackend::attention_backward(const ops::Tensor4<float>& q, const ops::Tensor4<float>& k,
                                                                 const ops::Tensor4<float>& v, const ops::Tensor4<float>& d_out,
                                                                 const AttentionOptions<float>& o) const {
  return vl::attention_backward<float>(q, k, v, d_out, o);
}
ops::MhaResult3<double> PlainBackend::multi_head_attention(const ops::Tensor3& query, const ops::Tensor3& key, const ops::Tensor3& value,
                                                           const MhaParameters<double>& p, std::size_t heads,
                                                           const MhaOptions<double>& o) const {
  return vl::multi_head_attention<double>(query, key, value, p, heads, o);
}
ops::MhaResult3<float> PlainBackend::multi_head_attention(const ops::Tensor3Of<float>& query, const ops::Tensor3Of<float>& key,
                                                          const ops::Tensor3Of<float>& value, const MhaParameters<float>& p,
                                                          std::size_t heads, const MhaOptions<float>& o) const {
  return vl::multi_head_attention<float>(query, key, value, p, heads, o);
}
ops::Matrix PlainBackend::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  return vl::positional_encoding_at<double>(positions, d);
}
ops::MatrixOf<float> PlainBackend::positional_encoding(const std::vector<float>& positions, std::size_t d) const {
  return vl::positional_encoding_at<float>(positions, d);
}
ops::Matrix PlainBackend::linear_parallel(const ops::Matrix& pq, const ops::Matrix& pk, const ops::Matrix& v) const {
  return vl::linear_attention_parallel<double>(pq, pk, v);
}
ops::Matrix PlainBackend::linear_recurrent(const ops::Matrix& pq, const ops::Matrix& pk, const ops::Matrix& v) const {
  return vl::linear_attention_recurrent<double>(pq, pk, v);
}
ops::Matrix PlainBackend::linear_chunked(const ops::Matrix& pq, const ops::Matrix& pk, const ops::Matrix& v, std::size_t chunk) const {
  return vl::linear_attention_chunked<double>(pq, pk, v, chunk);
}
ops::MatrixOf<float> PlainBackend::linear_parallel(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk,
                                                   const ops::MatrixOf<float>& v) const {
  return vl::linear_attention_parallel<float>(pq, pk, v);
}
ops::MatrixOf<float> PlainBackend::linear_recurrent(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk,
                                                    const ops::MatrixOf<float>& v) const {
  return vl::linear_attention_recurrent<float>(pq, pk, v);
}
ops::MatrixOf<float> PlainBackend::linear_chunked(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk,
                                                  const ops::MatrixOf<float>& v, std::size_t chunk) const {
  return vl::linear_attention_chunked<float>(pq, pk, v, chunk);
}
FamilyResult<double> PlainBackend::linear_family(const FamilyInputs<double>& in, const FamilyOptions& o) const {
  return vl::linear_family<double>(in, o);
}
FamilyResult<float> PlainBackend::linear_family(const FamilyInputs<float>& in, const FamilyOptions& o) const {
  return vl::linear_family<float>(in, o);
}

ops::Tensor3 PlainBackend::layer_norm(const ops::Tensor3& x, const LayerNormParameters<double>& p, double eps) const {
  return vl::layer_norm<double>(x, p, eps);
}
ops::Tensor3 PlainBackend::encoder_layer(const ops::Tensor3& x, const EncoderLayerParameters<double>& p, std::size_t heads, const LayerOptions& o,
                                    const MhaOptions<double>& self) const {
  return vl::encoder_layer<double>(x, p, heads, o, self);
}
ops::Tensor3 PlainBackend::decoder_layer(const ops::Tensor3& tgt, const ops::Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                                    const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross) const {
  return vl::decoder_layer<double>(tgt, memory, p, heads, o, self, cross);
}
ops::Tensor3 PlainBackend::decoder_step(const ops::Tensor3& x_t, const ops::Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                                   const LayerOptions& o, LayerCache<double>& cache, const MhaOptions<double>& cross) const {
  return vl::decoder_layer_step<double>(x_t, memory, p, heads, o, cache, cross);
}
ops::Tensor3 PlainBackend::shift_right(const ops::Tensor3& target, const xt::xtensor<double, 1>& start) const {
  return vl::shift_right<double>(target, start);
}
ops::Tensor3Of<float> PlainBackend::layer_norm(const ops::Tensor3Of<float>& x, const LayerNormParameters<float>& p, double eps) const {
  return vl::layer_norm<float>(x, p, eps);
}
ops::Tensor3Of<float> PlainBackend::encoder_layer(const ops::Tensor3Of<float>& x, const EncoderLayerParameters<float>& p, std::size_t heads,
                                                  const LayerOptions& o, const MhaOptions<float>& self) const {
  return vl::encoder_layer<float>(x, p, heads, o, self);
}
ops::Tensor3Of<float> PlainBackend::decoder_layer(const ops::Tensor3Of<float>& tgt, const ops::Tensor3Of<float>& memory,
                                                  const DecoderLayerParameters<float>& p, std::size_t heads, const LayerOptions& o,
                                                  const MhaOptions<float>& self, const MhaOptions<float>& cross) const {
  return vl::decoder_layer<float>(tgt, memory, p, heads, o, self, cross);
}
ops::Tensor3Of<float> PlainBackend::decoder_step(const ops::Tensor3Of<float>& x_t, const ops::Tensor3Of<float>& memory,
                                                 const DecoderLayerParameters<float>& p, std::size_t heads, const LayerOptions& o,
                                                 LayerCache<float>& cache, const MhaOptions<float>& cross) const {
  return vl::decoder_layer_step<float>(x_t, memory, p, heads, o, cache, cross);
}
ops::Tensor3Of<float> PlainBackend::shift_right(const ops::Tensor3Of<float>& target, const xt::xtensor<float, 1>& start) const {
  return vl::shift_right<float>(target, start);
}

}  // namespace vl::backends
