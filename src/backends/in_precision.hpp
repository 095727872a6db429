#pragma once
// A backend judged in float32: the claims' checks call the double operations as always; this
// decorator rounds every floating input once to float32 (round to nearest, ties to even),
// calls the backend's float32 operation, and returns its result exactly, as doubles. So the
// check's own float64 reasoning (a property, a bound, a reference computed in float64 from the
// same rounded inputs: CheckContext::precision) judges what the implementation computed in float32.
//
// Every operation of the interface (ops/all.hpp) has a float32 signature, and runs so. A float32
// call from a check that computes in float32 itself (the seed's float32 fixture) goes to the
// backend as it is. Attention's storage rounding (an emulation of float16 in the working
// precision) is lacked in float32: a claim that needs it is not applicable there, with that reason.
#include <memory>

#include "backends/backend.hpp"
#include "numeric/precision.hpp"

namespace vl::backends {

/// The backend computing in precision p: itself for float64, an InFloat32 over it for float32
/// when it computes in float32 (Backend::precisions), else nullptr (it does not compute in p).
std::shared_ptr<const Backend> computing_in(Precision p, std::shared_ptr<const Backend> backend);

class InFloat32 : public Decorator {
 public:
  explicit InFloat32(std::shared_ptr<const Backend> base);
  std::string name() const override { return base().name(); }
  std::string summary() const override;
  std::vector<Precision> precisions() const override { return {Precision::float32}; }
  bool supports(Need need) const override;
  using Decorator::attention, Decorator::attention_backward, Decorator::multi_head_attention, Decorator::positional_encoding,
      Decorator::linear_parallel, Decorator::linear_recurrent, Decorator::linear_chunked, Decorator::linear_family,
      Decorator::layer_norm, Decorator::encoder_layer, Decorator::decoder_layer, Decorator::decoder_step, Decorator::shift_right;

  AttentionResult<double, 4> attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                       const AttentionOptions<double>& o) const override;
  AttentionGradients<double, 4> attention_backward(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                                   const Tensor4<double>& d_out, const AttentionOptions<double>& o) const override;
  MhaResult<double, 3> multi_head_attention(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                                            const MhaParameters<double>& p, std::size_t heads, const MhaOptions<double>& o) const override;
  Matrix positional_encoding(const std::vector<double>& positions, std::size_t d) const override;
  Matrix linear_parallel(const Matrix& pq, const Matrix& pk, const Matrix& v) const override;
  Matrix linear_recurrent(const Matrix& pq, const Matrix& pk, const Matrix& v) const override;
  Matrix linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const override;
  FamilyResult<double> linear_family(const FamilyInputs<double>& in, const FamilyOptions& o) const override;
  Tensor3 layer_norm(const Tensor3& x, const LayerNormParameters<double>& p, double eps) const override;
  Tensor3 encoder_layer(const Tensor3& x, const EncoderLayerParameters<double>& p, std::size_t heads, const LayerOptions& o,
                        const MhaOptions<double>& self) const override;
  Tensor3 decoder_layer(const Tensor3& tgt, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                        const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross) const override;
  Tensor3 decoder_step(const Tensor3& x_t, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                       const LayerOptions& o, LayerCache<double>& cache, const MhaOptions<double>& cross) const override;
  Tensor3 shift_right(const Tensor3& target, const xt::xtensor<double, 1>& start) const override;

 protected:
  std::string lacking(Need need, const std::string& why) const override;
};

}  // namespace vl::backends
