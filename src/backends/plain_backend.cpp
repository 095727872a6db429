// Backend `plain`: each operation is the reference kernel of the same name.
#include "backends/plain_backend.hpp"

#include "kernels/linear_attention.hpp"
#include "kernels/positional_encoding.hpp"

namespace vl::backends {

AttentionResult<double, 4> PlainBackend::attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                                   const AttentionOptions<double>& o) const {
  return vl::attention<double>(q, k, v, o);
}
AttentionResult<float, 4> PlainBackend::attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                  const AttentionOptions<float>& o) const {
  return vl::attention<float>(q, k, v, o);
}
AttentionGradients<double, 4> PlainBackend::attention_backward(const Tensor4<double>& q, const Tensor4<double>& k,
                                                               const Tensor4<double>& v, const Tensor4<double>& d_out,
                                                               const AttentionOptions<double>& o) const {
  return vl::attention_backward<double>(q, k, v, d_out, o);
}
AttentionGradients<float, 4> PlainBackend::attention_backward(const Tensor4<float>& q, const Tensor4<float>& k,
                                                              const Tensor4<float>& v, const Tensor4<float>& d_out,
                                                              const AttentionOptions<float>& o) const {
  return vl::attention_backward<float>(q, k, v, d_out, o);
}
MhaResult<double, 3> PlainBackend::multi_head_attention(const xt::xtensor<double, 3>& query, const xt::xtensor<double, 3>& key,
                                                        const xt::xtensor<double, 3>& value, const MhaParameters<double>& p,
                                                        std::size_t heads, const MhaOptions<double>& o) const {
  return vl::multi_head_attention<double>(query, key, value, p, heads, o);
}
Matrix PlainBackend::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  return vl::positional_encoding_at<double>(positions, d);
}
Matrix PlainBackend::linear_parallel(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  return vl::linear_attention_parallel<double>(pq, pk, v);
}
Matrix PlainBackend::linear_recurrent(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  return vl::linear_attention_recurrent<double>(pq, pk, v);
}
Matrix PlainBackend::linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const {
  return vl::linear_attention_chunked<double>(pq, pk, v, chunk);
}
FamilyResult<double> PlainBackend::linear_family(const FamilyInputs<double>& in, const FamilyOptions& o) const {
  return vl::linear_family<double>(in, o);
}
FamilyResult<float> PlainBackend::linear_family(const FamilyInputs<float>& in, const FamilyOptions& o) const {
  return vl::linear_family<float>(in, o);
}

}  // namespace vl::backends
