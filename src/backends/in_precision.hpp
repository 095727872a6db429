#pragma once
// A backend judged in float32: the claims' checks call the double operations as always; this
// decorator rounds every floating input once to float32 (round to nearest, ties to even),
// calls the backend's float32 operation, and returns its result exactly, as doubles. So the
// check's own float64 reasoning (a property, a bound, a reference computed in float64 from the
// same rounded inputs: CheckContext::precision) judges what the implementation computed in float32.
//
// The operations with a float32 signature in the backend interface (ops/all.hpp) run so:
// attention, attention_backward, multi_head_attention, positional_encoding, the linear-attention
// forms, linear_family.
// Every other operation, and attention's storage
// rounding (an emulation of float16 in the working precision), is lacked in float32: a claim
// that needs one is not applicable there, with that reason.
#include <memory>

#include "backends/backend.hpp"
#include "numeric/precision.hpp"

namespace vl::backends {

/// The backend computing in precision p: itself for float64, an InFloat32 over it for float32
/// when it computes in float32 (Backend::precisions), else nullptr (it does not compute in p).
std::shared_ptr<const Backend> computing_in(Precision p, std::shared_ptr<const Backend> backend);

class InFloat32 : public Backend {
 public:
  explicit InFloat32(std::shared_ptr<const Backend> base);
  std::string name() const override;
  std::string summary() const override;
  bool ours() const override { return base_->ours(); }
  std::vector<Precision> precisions() const override { return {Precision::float32}; }
  bool supports(Need need) const override;

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
  // A check that computes in float32 itself (the seed's float32 fixture) calls these: as they are.
  AttentionResult<float, 4> attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                      const AttentionOptions<float>& o) const override;
  AttentionGradients<float, 4> attention_backward(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                  const Tensor4<float>& d_out, const AttentionOptions<float>& o) const override;
  MhaResult<float, 3> multi_head_attention(const ops::Tensor3Of<float>& query, const ops::Tensor3Of<float>& key,
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

 protected:
  std::string lacking(Need need, const std::string& why) const override;

 private:
  std::shared_ptr<const Backend> base_;
};

}  // namespace vl::backends
