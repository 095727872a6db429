#pragma once
// Lesson masking: the broken backends its claims must reject (specs/masking.md, "Negative
// controls"). Each is one plausible bug in how attention applies its masks: a decorator over a
// working backend that breaks `attention`, written once for float and double (AttentionBreak,
// lessons/attention/attention_break.hpp), and forwards everything else.
//
// The masks it receives are the operation's own (kernels/reference/attention.hpp, ONNX semantics):
// `causal` with its `alignment`, `allowed` (true = may attend; the checks' key-padding mask)
// and the additive `bias`.
#include <cstddef>
#include <memory>
#include <string>

#include <xtensor/xtensor.hpp>

#include "backends/backend.hpp"
#include "lessons/mha_break.hpp"
#include "kernels/reference/attention.hpp"
#include "lessons/attention/attention_break.hpp"

namespace vl::lessons::masking {

using backends::Backend;
using backends::Tensor4;  // xt::xtensor<T, 4>

/// Builds the causal mask itself, with a bug, and hands it to the base as a boolean mask in
/// place of options.causal (combined with any options.allowed). Without options.causal it
/// forwards the call unchanged.
class CausalMaskBuiltWrong : public AttentionBreak<CausalMaskBuiltWrong> {
 public:
  /// The (wrong) causal mask (Sq, Sk) in the ONNX convention: true = query i may attend key j.
  using Builder = xt::xtensor<bool, 2> (*)(std::size_t sq, std::size_t sk, CausalAlignment alignment);
  CausalMaskBuiltWrong(std::shared_ptr<const Backend> base, std::string name, Builder allowed);

  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const;

 private:
  Builder allowed_;
};

// The wrong causal masks, for CausalMaskBuiltWrong (true = may attend).

/// Shifted by one: triu(ones, diagonal=0) blocked, the diagonal too (query i sees keys j < i).
xt::xtensor<bool, 2> diagonal_blocked(std::size_t sq, std::size_t sk, CausalAlignment alignment);
/// Shifted the other way: triu(ones, diagonal=2) blocked, one future key let through.
xt::xtensor<bool, 2> one_future_key(std::size_t sq, std::size_t sk, CausalAlignment alignment);
/// The alignment ignored: always top-left.
xt::xtensor<bool, 2> always_top_left(std::size_t sq, std::size_t sk, CausalAlignment alignment);
/// The alignment ignored: always bottom-right.
xt::xtensor<bool, 2> always_bottom_right(std::size_t sq, std::size_t sk, CausalAlignment alignment);

/// The masks applied AFTER the softmax: W = softmax(scale · Q Kᵀ) with the hidden weights
/// zeroed and the rows not renormalised, O = W V.
class MaskAfterSoftmax : public AttentionBreak<MaskAfterSoftmax> {
 public:
  using AttentionBreak::AttentionBreak;
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const;
};

/// A visible key dropped where no row sum shows it: in every row with two or more keys of weight
/// above 0, the first of them gets weight 0 and the others are renormalised (the output recomputed
/// as W V): every row still sums to 1 and none is emptied.
class VisibleKeyDropped : public AttentionBreak<VisibleKeyDropped> {
 public:
  using AttentionBreak::AttentionBreak;
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const;
};

/// A NaN silenced: `output` — every NaN of the output replaced by 0 (a kernel that guards its rows
/// with isnan → 0); `inputs` — every NaN of Q, K and V read as 0 before attending.
class NanSilenced : public AttentionBreak<NanSilenced> {
 public:
  enum class Where { output, inputs };
  NanSilenced(std::shared_ptr<const Backend> base, std::string name, Where where);
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const;

 private:
  Where where_;
};

/// A finite fill: every hidden score gets −10⁴ added (an additive bias) in place of −∞: finite in
/// every precision (float16's largest is 65504, so a −1e9 fill would be −∞ there and no bug).
class FiniteFill : public AttentionBreak<FiniteFill> {
 public:
  using AttentionBreak::AttentionBreak;
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const;
};

/// −∞ fill, but a softmax without the guard for rows with no finite score:
/// exp(−∞ − (−∞)) = NaN, as torch returns for such rows.
class UnguardedSoftmax : public AttentionBreak<UnguardedSoftmax> {
 public:
  using AttentionBreak::AttentionBreak;
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const;
};

/// The boolean mask (options.allowed, the key-padding mask of the checks) dropped on the floor.
class BooleanMaskDropped : public AttentionBreak<BooleanMaskDropped> {
 public:
  using AttentionBreak::AttentionBreak;
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const;
};

/// The sliding window (options.left_window) applied wrongly: one key wider than asked (query i
/// sees i − w − 1 … i), one key narrower (i − w + 1 … i, for w ≥ 1: the key at the window's edge
/// hidden), or dropped altogether.
class WindowBuiltWrong : public AttentionBreak<WindowBuiltWrong> {
 public:
  enum class Bug { wider, narrower, dropped };
  WindowBuiltWrong(std::shared_ptr<const Backend> base, std::string name, Bug bug);
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const;

 private:
  Bug bug_;
};

/// A KV cache handled wrongly: the per-batch key lengths (options.kv_lengths, ONNX's
/// nonpad_kv_seqlen) dropped, so the padding is attended; or the cache's query position
/// (options.first_query, the past length) dropped, so the queries sit at 0.
class CacheBuiltWrong : public AttentionBreak<CacheBuiltWrong> {
 public:
  enum class Bug { lengths_dropped, position_dropped };
  CacheBuiltWrong(std::shared_ptr<const Backend> base, std::string name, Bug bug);
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const;

 private:
  Bug bug_;
};

/// Float16 storage done wrongly (when options.round is set): the softmax computed without
/// subtracting the row maximum, so its exponentials overflow float16 beyond 11.09.
class Float16SoftmaxUnshifted : public backends::Decorator {
 public:
  using Decorator::Decorator;
  AttentionResult<double, 4> attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                       const AttentionOptions<double>& o) const override;
  AttentionResult<float, 4> attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                      const AttentionOptions<float>& o) const override;
};

/// nn.MultiheadAttention wrong at a query with no visible key (masking_mha.cpp): NaN weights and
/// output there, as torch's module returns; or a zero output, the output projection's bias dropped.
class MhaRowWithoutKey : public MhaBreak<MhaRowWithoutKey> {
 public:
  enum class Bug { nan_as_torch, bias_dropped };
  MhaRowWithoutKey(std::shared_ptr<const Backend> base, std::string name, Bug bug);
  template <class T>
  MhaResult<T, 3> broken(const xt::xtensor<T, 3>& query, const xt::xtensor<T, 3>& key, const xt::xtensor<T, 3>& value,
                         const MhaParameters<T>& p, std::size_t heads, const MhaOptions<T>& o) const;

 private:
  Bug bug_;
};

}  // namespace vl::lessons::masking
