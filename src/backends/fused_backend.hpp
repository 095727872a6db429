#pragma once
// Backend `fused`: the kernels `lessons eval` runs. Attention is the fused, blocked kernel
// (kernels/fused/fused_attention.hpp: the score matrix is never formed, so it has no weights);
// multi-head attention is torch's module with its projections on our block products and its heads
// through that kernel (kernels/fused/multi_head_attention_fused.hpp; no weights either);
// attention's backward is FlashAttention-2's fused backward (kernels/fused/fused_attention_backward.hpp:
// the weights recomputed per block from the forward's saved log-sum-exp); linear attention is the
// fast chunked form (kernels/fused/linear_attention_fast.hpp); the linear family's chunked form
// with a decay per head, at most 0, is the fast kernel's (kernels/fused/linear_family_fast.hpp), its
// other forms, a decay per key dimension or above 0 the reference's (as the plain backend's), so that the claims
// comparing forms judge the fast one against the reference's recurrence. It has no other
// operation: a claim that needs one is not applicable to it.
#include "backends/backend.hpp"

namespace vl::backends {

class FusedBackend : public Backend {
 public:
  std::string name() const override { return "fused"; }
  std::string summary() const override {
    return "the kernels `lessons eval` runs: fused blocked attention and multi-head attention over it (no weights), "
           "the fused backward, fast chunked linear attention and linear family";
  }
  bool ours() const override { return true; }
  /// float64 and float32 computed; bfloat16 and float16 stored (float32 arithmetic: StoredIn, in_precision.hpp).
  std::vector<Precision> precisions() const override {
    return {Precision::float64, Precision::float32, Precision::bfloat16, Precision::float16};
  }
  bool supports(Need need) const override {
    return need == Need(Op::attention) || need == Need(Op::attention_backward) || need == Need(Op::multi_head_attention) ||
           need == Need(Op::linear_chunked) || need == Need(Op::linear_family);
  }

  AttentionResult<double, 4> attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                       const AttentionOptions<double>& o) const override;
  AttentionResult<float, 4> attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                      const AttentionOptions<float>& o) const override;
  AttentionGradients<double, 4> attention_backward(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                                   const Tensor4<double>& d_out, const AttentionOptions<double>& o) const override;
  AttentionGradients<float, 4> attention_backward(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                  const Tensor4<float>& d_out, const AttentionOptions<float>& o) const override;
  MhaResult<double, 3> multi_head_attention(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                                           const MhaParameters<double>& p, std::size_t heads,
                                           const MhaOptions<double>& o) const override;
  MhaResult<float, 3> multi_head_attention(const ops::Tensor3Of<float>& query, const ops::Tensor3Of<float>& key,
                                          const ops::Tensor3Of<float>& value, const MhaParameters<float>& p, std::size_t heads,
                                          const MhaOptions<float>& o) const override;
  Matrix linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const override;
  ops::MatrixOf<float> linear_chunked(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk, const ops::MatrixOf<float>& v,
                                      std::size_t chunk) const override;
  FamilyResult<double> linear_family(const FamilyInputs<double>& in, const FamilyOptions& o) const override;
  FamilyResult<float> linear_family(const FamilyInputs<float>& in, const FamilyOptions& o) const override;
};

}  // namespace vl::backends
