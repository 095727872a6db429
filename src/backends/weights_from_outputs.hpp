#pragma once
// Backend decorator: attention's weights read from the implementation's outputs, for a backend
// that never forms them (a fused kernel, a candidate that returns y only). With it, a claim
// about the weights judges such a backend through what it computes.
//
// Attention is linear in V: y = W V, per (batch, query head). Take V = E_c, the one-hot values
// of keys c·Dv … c·Dv + Dv − 1 (V[j, m] = 1 where j = c·Dv + m, else 0; every kv head alike):
// then y's column m is W's column c·Dv + m. So ⌈Sk / Dv⌉ more calls with the caller's Q, K,
// options and value width Dv (a kernel that needs Dv = D still runs) give every weight:
//
//   W[b, h, i, c·Dv + m] = attention(Q, K, E_c)[b, h, i, m]        W: (B, Hq, Sq, Sk)
//
// Multi-head attention likewise, per head: with the value projection and the output projection
// the identity (W_v = I, b_v = 0, W_o = I, b_o = 0) and value rows one-hot, so that every head's
// values are E_c (value[b, j, h·dh + m] = 1 where j = c·dh + m), y[b, i, h·dh + m] is head h's
// weight of key c·dh + m; the query and key projections, the masks and the heads are the caller's.
//
// In exact arithmetic that is W; in floating point it is the weight the kernel's output carries
// (a fused kernel's p̃_j · rescale / ℓ), within its rounding, and a key the kernel hides reads 0
// bit for bit (its p̃_j is 0; 0 · 1 and sums of exact zeros are exact). What the implementation
// returns as y is the y of the caller's own V, from one more call.
#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace vl::backends {

class WeightsFromOutputs : public Decorator {
 public:
  explicit WeightsFromOutputs(std::shared_ptr<const Backend> base);
  /// Over a backend the caller holds (a check's ctx.backend): not owned, it must outlive this.
  static std::shared_ptr<const Backend> over(const Backend& base);
  /// `base` itself where it has `op`'s weights (a listing then reads the weights it forms), else
  /// over(base); not owned either.
  static std::shared_ptr<const Backend> where_lacking(const Backend& base, Op op);

  bool supports(Need need) const override;

  using Decorator::attention;
  AttentionResult<double, 4> attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                       const AttentionOptions<double>& o) const override;
  AttentionResult<float, 4> attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                      const AttentionOptions<float>& o) const override;
  /// The double call only: the checks call the module in double, and in another precision this
  /// decorator sits over InFloat32 (lessons/outputs_only.hpp), which rounds into the float32 module.
  /// A float32 call is forwarded as it is (asking it for weights gets the base's own answer).
  MhaResult<double, 3> multi_head_attention(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                                           const MhaParameters<double>& p, std::size_t heads,
                                           const MhaOptions<double>& o) const override;
  using Decorator::multi_head_attention;
};

}  // namespace vl::backends
