#pragma once
// A backend whose every result is checked against the shape its operation defines (see
// backend.hpp) before a check reads it: a backend that returns the wrong shape is an error
// naming the operation and both shapes, never an out-of-bounds read. The audit judges every
// backend, and every control, through it.
#include "backends/backend.hpp"

namespace vl::backends {

class ShapeChecked : public Decorator {
 public:
  explicit ShapeChecked(std::shared_ptr<const Backend> base);
  std::string summary() const override { return base().summary(); }

  AttentionResult<double, 4> attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                       const AttentionOptions<double>& o) const override;
  AttentionResult<float, 4> attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                      const AttentionOptions<float>& o) const override;
  AttentionGradients<double, 4> attention_backward(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                                   const Tensor4<double>& d_out, const AttentionOptions<double>& o) const override;
  AttentionGradients<float, 4> attention_backward(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                  const Tensor4<float>& d_out, const AttentionOptions<float>& o) const override;
  MhaResult<double, 3> multi_head_attention(const xt::xtensor<double, 3>& query, const xt::xtensor<double, 3>& key,
                                            const xt::xtensor<double, 3>& value, const MhaParameters<double>& p, std::size_t heads,
                                            const MhaOptions<double>& o) const override;
  Matrix positional_encoding(const std::vector<double>& positions, std::size_t d) const override;
  Matrix linear_parallel(const Matrix& pq, const Matrix& pk, const Matrix& v) const override;
  Matrix linear_recurrent(const Matrix& pq, const Matrix& pk, const Matrix& v) const override;
  Matrix linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const override;
  FamilyResult<double> linear_family(const FamilyInputs<double>& in, const FamilyOptions& o) const override;
  FamilyResult<float> linear_family(const FamilyInputs<float>& in, const FamilyOptions& o) const override;
  Tensor3 layer_norm(const Tensor3& x, const LayerNormParameters<double>& p, double eps) const override;
  Tensor3 encoder_layer(const Tensor3& x, const EncoderLayerParameters<double>& p, std::size_t heads, const LayerOptions& o,
                        const MhaOptions<double>& self) const override;
  Tensor3 decoder_layer(const Tensor3& tgt, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                        const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross) const override;
  Tensor3 decoder_step(const Tensor3& x_t, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                       const LayerOptions& o, LayerCache<double>& cache, const MhaOptions<double>& cross) const override;
  Tensor3 shift_right(const Tensor3& target, const xt::xtensor<double, 1>& start) const override;
};

}  // namespace vl::backends
