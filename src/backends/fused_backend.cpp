// Backend `fused`: the production instantiations of the fused and the fast chunked kernels; its
// multi-head attention is multi_head_attention_fused (block products and the fused kernel, no BLAS).
#include "backends/fused_backend.hpp"

#include "kernels/fused/fused_attention.hpp"
#include "kernels/fused/fused_attention_backward.hpp"
#include "kernels/fused/linear_attention_fast.hpp"
#include "kernels/fused/linear_family_fast.hpp"
#include "kernels/fused/multi_head_attention_fused.hpp"
#include "kernels/reference/linear_family_heads.hpp"

namespace vl::backends {

namespace {
// Attention's options (weights, score stages, storage rounding) are what the fused kernel lacks.
template <class T>
AttentionResult<T, 4> fused(const FusedBackend& self, const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                            const AttentionOptions<T>& o) {
  const Option option = ops::Attention::option_used(q, k, v, o);
  if (option != Option::none)
    self.lacks(Need(Op::attention, option), option == Option::storage_rounding ? "the fused kernel rounds nothing to a storage format"
                                                                               : "the fused kernel never forms them");
  return {vl::fused_attention<T>(q, k, v, o), {}, {}};
}
}  // namespace

AttentionResult<double, 4> FusedBackend::attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                                   const AttentionOptions<double>& o) const {
  return fused<double>(*this, q, k, v, o);
}
AttentionResult<float, 4> FusedBackend::attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                  const AttentionOptions<float>& o) const {
  return fused<float>(*this, q, k, v, o);
}
namespace {
template <class T>
AttentionGradients<T, 4> fused_backward(const FusedBackend& self, const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                        const Tensor4<T>& d_out, const AttentionOptions<T>& o) {
  // Weights or score stages asked of the forward are not returned by a backward: only a rounding changes it.
  if (o.round) self.lacks(Need(Op::attention_backward, Option::storage_rounding), "the fused backward rounds nothing to a storage format");
  if (o.softcap > 0) throw UnsupportedOption(Need(Op::attention_backward), "the fused backward does not differentiate a softcap's tanh");
  return vl::fused_attention_backward<T>(q, k, v, d_out, o);
}
}  // namespace

AttentionGradients<double, 4> FusedBackend::attention_backward(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                                               const Tensor4<double>& d_out, const AttentionOptions<double>& o) const {
  return fused_backward<double>(*this, q, k, v, d_out, o);
}
AttentionGradients<float, 4> FusedBackend::attention_backward(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                              const Tensor4<float>& d_out, const AttentionOptions<float>& o) const {
  return fused_backward<float>(*this, q, k, v, d_out, o);
}

namespace {
template <class T>
MhaResult<T, 3> fused_mha(const FusedBackend& self, const ops::Tensor3Of<T>& query, const ops::Tensor3Of<T>& key,
                          const ops::Tensor3Of<T>& value, const MhaParameters<T>& p, std::size_t heads, const MhaOptions<T>& o) {
  if (o.need_weights) self.lacks(Need(Op::multi_head_attention, Option::weights), "the fused kernel never forms them");
  return {vl::multi_head_attention_fused<T>(query, key, value, p, heads, o), {}};
}
}  // namespace

MhaResult<double, 3> FusedBackend::multi_head_attention(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                                                       const MhaParameters<double>& p, std::size_t heads,
                                                       const MhaOptions<double>& o) const {
  return fused_mha<double>(*this, query, key, value, p, heads, o);
}
MhaResult<float, 3> FusedBackend::multi_head_attention(const ops::Tensor3Of<float>& query, const ops::Tensor3Of<float>& key,
                                                      const ops::Tensor3Of<float>& value, const MhaParameters<float>& p,
                                                      std::size_t heads, const MhaOptions<float>& o) const {
  return fused_mha<float>(*this, query, key, value, p, heads, o);
}
Matrix FusedBackend::linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const {
  return vl::linear_attention_chunked_fast<double>(pq, pk, v, chunk);
}
ops::MatrixOf<float> FusedBackend::linear_chunked(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk,
                                                  const ops::MatrixOf<float>& v, std::size_t chunk) const {
  return vl::linear_attention_chunked_fast<float>(pq, pk, v, chunk);
}

namespace {
// The chunked form with a decay per head, at most 0, is the fast kernel's; the recurrent and
// parallel forms, a decay per key dimension and a growing state (g > 0, or NaN) are the reference's
// (kernels/reference/linear_family_heads.hpp), so that the claims comparing forms judge the fast
// chunked form against the reference's recurrence.
template <class T>
FamilyResult<T> fused_family(const FamilyInputs<T>& in, const FamilyOptions& o) {
  return vl::linear_family_fast_declines(in, o) ? vl::linear_family<T>(in, o) : vl::linear_family_chunked_fast<T>(in, o);
}
}  // namespace

FamilyResult<double> FusedBackend::linear_family(const FamilyInputs<double>& in, const FamilyOptions& o) const {
  return fused_family<double>(in, o);
}
FamilyResult<float> FusedBackend::linear_family(const FamilyInputs<float>& in, const FamilyOptions& o) const {
  return fused_family<float>(in, o);
}

}  // namespace vl::backends
