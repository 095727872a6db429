#pragma once
// A backend judged in a precision p other than float64: the claims' checks call the double
// operations as always; InPrecision rounds every floating input once to p (round to nearest,
// ties to even), calls the backend's float32 operation on those numbers (each exactly a float),
// and returns its result exactly, as doubles. So the check's own float64 reasoning (a property,
// a bound, a reference computed in float64 from the same rounded inputs: CheckContext::precision)
// judges what the implementation computed.
//
//   float32            the backend's float32 operations, as they are
//   bfloat16, float16  the backend's float32 operations stored in p (Backend::stored_in): ours
//                      compute in float32 and round every output to p (StoredIn; plain's
//                      attention also stores its scores, exponentials, sums and weights in p, as
//                      ONNX's reference computes float16); a candidate receives and returns p.
//
// Every operation of the interface (ops/all.hpp) has a float32 signature, and runs so. A float32
// call from a check that computes in float32 itself (the seed's float32 fixture) goes to the
// backend as it is. Attention's storage rounding (an emulation of float16 in the working
// precision) is lacked here: a claim that needs it is not applicable, with that reason.
#include <memory>

#include "backends/backend.hpp"
#include "numeric/precision.hpp"

namespace vl::backends {

/// The backend computing in precision p: itself for float64, an InPrecision over it (over its
/// stored_in(p) for bfloat16 and float16) when it computes in p (Backend::precisions), else
/// nullptr (it does not compute in p).
std::shared_ptr<const Backend> computing_in(Precision p, std::shared_ptr<const Backend> backend);

/// Ours in bfloat16 or float16: the base's float32 operations with every output rounded to p (the
/// inputs come rounded to p: InPrecision). Attention, where the base has storage rounding, also
/// stores every stage through the softmax in p.
class StoredIn : public Decorator {
 public:
  StoredIn(Precision p, std::shared_ptr<const Backend> base);
  std::string name() const override { return base().name(); }
  using Decorator::attention, Decorator::attention_backward, Decorator::multi_head_attention, Decorator::positional_encoding,
      Decorator::linear_parallel, Decorator::linear_recurrent, Decorator::linear_chunked, Decorator::linear_family,
      Decorator::layer_norm, Decorator::encoder_layer, Decorator::decoder_layer, Decorator::decoder_step, Decorator::shift_right;
  AttentionResult<float, 4> attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                      const AttentionOptions<float>& o) const override;
  AttentionGradients<float, 4> attention_backward(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                  const Tensor4<float>& d_out, const AttentionOptions<float>& o) const override;
  ops::MhaResult3<float> multi_head_attention(const ops::Tensor3Of<float>& query, const ops::Tensor3Of<float>& key,
                                              const ops::Tensor3Of<float>& value, const MhaParameters<float>& p, std::size_t heads,
                                              const MhaOptions<float>& o) const override;
  ops::MatrixOf<float> positional_encoding(const std::vector<float>& positions, std::size_t d) const override;
  ops::MatrixOf<float> linear_parallel(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk,
                                       const ops::MatrixOf<float>& v) const override;
  ops::MatrixOf<float> linear_recurrent(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk,
                                        const ops::MatrixOf<float>& v) const override;
  ops::MatrixOf<float> linear_chunked(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk, const ops::MatrixOf<float>& v,
                                      std::size_t chunk) const override;
  FamilyResult<float> linear_family(const FamilyInputs<float>& in, const FamilyOptions& o) const override;
  ops::Tensor3Of<float> layer_norm(const ops::Tensor3Of<float>& x, const LayerNormParameters<float>& p, double eps) const override;
  ops::Tensor3Of<float> encoder_layer(const ops::Tensor3Of<float>& x, const EncoderLayerParameters<float>& p, std::size_t heads,
                                      const LayerOptions& o, const MhaOptions<float>& self) const override;
  ops::Tensor3Of<float> decoder_layer(const ops::Tensor3Of<float>& tgt, const ops::Tensor3Of<float>& memory,
                                      const DecoderLayerParameters<float>& p, std::size_t heads, const LayerOptions& o,
                                      const MhaOptions<float>& self, const MhaOptions<float>& cross) const override;
  ops::Tensor3Of<float> decoder_step(const ops::Tensor3Of<float>& x_t, const ops::Tensor3Of<float>& memory,
                                     const DecoderLayerParameters<float>& p, std::size_t heads, const LayerOptions& o,
                                     LayerCache<float>& cache, const MhaOptions<float>& cross) const override;
  ops::Tensor3Of<float> shift_right(const ops::Tensor3Of<float>& target, const xt::xtensor<float, 1>& start) const override;

 private:
  Precision p_;
};

class InPrecision : public Decorator {
 public:
  /// `base` computes in p through its float32 operations (for bfloat16 and float16: a stored_in(p)).
  InPrecision(Precision p, std::shared_ptr<const Backend> base);
  std::string name() const override { return base().name(); }
  std::string summary() const override;
  std::vector<Precision> precisions() const override { return {p_}; }
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

 private:
  Precision p_;
};

}  // namespace vl::backends
