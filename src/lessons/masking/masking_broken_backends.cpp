// Lesson masking: the broken backends (see masking_broken_backends.hpp). Each override of
// `attention` is one template for float and double.
#include "lessons/masking/masking_broken_backends.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include <xtensor/xbroadcast.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/causal_mask.hpp"
#include "kernels/reference/gqa.hpp"
#include "kernels/reference/matmul.hpp"

namespace vl::lessons::masking {

namespace {

using Shape4 = std::array<std::size_t, 4>;

/// (B, Hq, Sq, Sk): the shape of the scores of Q (B, Hq, Sq, D) against K (B, Hkv, Sk, D).
template <class T>
Shape4 scores_shape(const Tensor4<T>& q, const Tensor4<T>& k) {
  return {q.shape(0), q.shape(1), q.shape(2), k.shape(2)};
}

/// The keys the options hide, (B, Hq, Sq, Sk), true = hidden: the causal mask of the options'
/// alignment, allowed = false, bias = −∞.
template <class T>
xt::xtensor<bool, 4> hidden_keys(const AttentionOptions<T>& o, const Shape4& shape) {
  xt::xtensor<bool, 4> hidden = xt::zeros<bool>(shape);
  if (o.causal) hidden = xt::broadcast(causal_blocked(shape[2], shape[3], o.alignment), shape);
  if (o.allowed) hidden = hidden || !xt::broadcast(*o.allowed, shape);
  if (o.bias) hidden = hidden || xt::equal(xt::broadcast(*o.bias, shape), -std::numeric_limits<T>::infinity());
  return hidden;
}

/// The same options without any mask.
template <class T>
AttentionOptions<T> without_masks(AttentionOptions<T> o) {
  o.causal = false;
  o.allowed.reset();
  o.bias.reset();
  return o;
}

/// O = W V per (batch, query head), query head h reading value head h / (Hq / Hkv): (B, Hq, Sq, Dv).
template <class T>
xt::xtensor<T, 4> weighted_values(const xt::xtensor<T, 4>& w, const Tensor4<T>& v) {
  const std::size_t B = w.shape(0), Hq = w.shape(1), Hkv = v.shape(1);
  xt::xtensor<T, 4> out = xt::zeros<T>({B, Hq, w.shape(2), v.shape(3)});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < Hq; ++h) xt::view(out, b, h) = matmul<T>(xt::view(w, b, h), xt::view(v, b, kv_head_of(h, Hq, Hkv)));
  return out;
}

template <class T>
AttentionResult<T, 4> causal_mask_built_wrong(const Backend& base, CausalMaskBuiltWrong::Builder build, const Tensor4<T>& q,
                                              const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) {
  if (!o.causal) return base.attention(q, k, v, o);
  AttentionOptions<T> wrong = o;
  wrong.causal = false;
  const xt::xarray<bool> causal = build(q.shape(2), k.shape(2), o.alignment);  // (Sq, Sk)
  wrong.allowed = o.allowed ? xt::xarray<bool>(*o.allowed && causal) : causal;
  return base.attention(q, k, v, wrong);
}

template <class T>
AttentionResult<T, 4> mask_after_softmax(const Backend& base, const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                         const AttentionOptions<T>& o) {
  AttentionOptions<T> unmasked = without_masks(o);
  unmasked.return_weights = true;
  AttentionResult<T, 4> r = base.attention(q, k, v, unmasked);
  r.weights = xt::where(hidden_keys(o, scores_shape(q, k)), T(0), r.weights);  // zeroed, not renormalised
  r.output = weighted_values(r.weights, v);
  if (!o.return_weights) r.weights = {};
  return r;
}

template <class T>
AttentionResult<T, 4> finite_fill(const Backend& base, const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                  const AttentionOptions<T>& o) {
  const Shape4 shape = scores_shape(q, k);
  const xt::xtensor<T, 4> bias = o.bias ? xt::xtensor<T, 4>(xt::broadcast(*o.bias, shape)) : xt::xtensor<T, 4>(xt::zeros<T>(shape));
  AttentionOptions<T> filled = without_masks(o);
  filled.bias = xt::xarray<T>(xt::where(hidden_keys(o, shape), T(-1e4), bias));  // −10⁴ where −∞ belongs
  return base.attention(q, k, v, filled);
}

/// W[i, j] = exp(S[i, j] − m_i) / Σ_j' exp(S[i, j'] − m_i), m_i = max_j S[i, j], with no case
/// for a row whose every score is −∞ (m_i = −∞): NaN there.   S, W: (Sq, Sk).
template <class T>
xt::xtensor<T, 2> softmax_rows_unguarded(const xt::xtensor<T, 2>& s) {
  const xt::xtensor<T, 2> e = xt::exp(s - xt::view(xt::amax(s, {1}), xt::all(), xt::newaxis()));
  return e / xt::view(xt::sum(e, {1}), xt::all(), xt::newaxis());
}

template <class T>
AttentionResult<T, 4> unguarded_softmax(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) {
  const Shape4 shape = scores_shape(q, k);
  const std::size_t Hkv = k.shape(1);
  const xt::xtensor<bool, 4> hidden = hidden_keys(o, shape);
  const T scale = o.scale.value_or(T(1) / std::sqrt(static_cast<T>(q.shape(3))));
  AttentionResult<T, 4> r;
  r.weights = xt::zeros<T>(shape);
  for (std::size_t b = 0; b < shape[0]; ++b)
    for (std::size_t h = 0; h < shape[1]; ++h) {
      // S = softcap(scale · Q Kᵀ) + finite bias, −∞ on the hidden keys: (Sq, Sk)
      xt::xtensor<T, 2> s = scale * matmul<T>(xt::view(q, b, h), xt::transpose(xt::view(k, b, kv_head_of(h, shape[1], Hkv))));
      if (o.softcap > 0) s = o.softcap * xt::tanh(s / o.softcap);
      if (o.bias) s += xt::view(xt::broadcast(*o.bias, shape), b, h);
      s = xt::where(xt::view(hidden, b, h), -std::numeric_limits<T>::infinity(), s);
      xt::view(r.weights, b, h) = softmax_rows_unguarded(s);
    }
  r.output = weighted_values(r.weights, v);
  if (!o.return_weights) r.weights = {};
  return r;
}

template <class T>
AttentionResult<T, 4> boolean_mask_dropped(const Backend& base, const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                           const AttentionOptions<T>& o) {
  AttentionOptions<T> dropped = o;
  dropped.allowed.reset();
  return base.attention(q, k, v, dropped);
}

/// Causal mask (Sq, Sk), true = may attend, with the last visible key of each row (the
/// diagonal) hidden, or the first hidden key shown: the mask shifted by one either way.
xt::xtensor<bool, 2> causal_shifted(std::size_t sq, std::size_t sk, CausalAlignment alignment, bool one_more) {
  xt::xtensor<bool, 2> m = causal_allowed(sq, sk, alignment);
  for (std::size_t i = 0; i < sq; ++i) {
    const std::size_t visible = causal_visible_keys(i, sq, sk, alignment);
    if (one_more && visible < sk) m(i, visible) = true;
    if (!one_more && visible > 0) m(i, visible - 1) = false;
  }
  return m;
}

}  // namespace

xt::xtensor<bool, 2> diagonal_blocked(std::size_t sq, std::size_t sk, CausalAlignment alignment) {
  return causal_shifted(sq, sk, alignment, false);
}
xt::xtensor<bool, 2> one_future_key(std::size_t sq, std::size_t sk, CausalAlignment alignment) {
  return causal_shifted(sq, sk, alignment, true);
}
xt::xtensor<bool, 2> always_top_left(std::size_t sq, std::size_t sk, CausalAlignment) {
  return causal_allowed(sq, sk, CausalAlignment::top_left);
}
xt::xtensor<bool, 2> always_bottom_right(std::size_t sq, std::size_t sk, CausalAlignment) {
  return causal_allowed(sq, sk, CausalAlignment::bottom_right);
}

CausalMaskBuiltWrong::CausalMaskBuiltWrong(std::shared_ptr<const Backend> base, std::string name, Builder allowed)
    : AttentionBreak(std::move(base), std::move(name)), allowed_(allowed) {}

template <class T>
AttentionResult<T, 4> CausalMaskBuiltWrong::broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                                   const AttentionOptions<T>& o) const {
  return causal_mask_built_wrong<T>(base(), allowed_, q, k, v, o);
}
VL_ATTENTION_BREAK_PRECISIONS(CausalMaskBuiltWrong)

template <class T>
AttentionResult<T, 4> MaskAfterSoftmax::broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                               const AttentionOptions<T>& o) const {
  return mask_after_softmax<T>(base(), q, k, v, o);
}
VL_ATTENTION_BREAK_PRECISIONS(MaskAfterSoftmax)

template <class T>
AttentionResult<T, 4> FiniteFill::broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                         const AttentionOptions<T>& o) const {
  return finite_fill<T>(base(), q, k, v, o);
}
VL_ATTENTION_BREAK_PRECISIONS(FiniteFill)

template <class T>
AttentionResult<T, 4> UnguardedSoftmax::broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                               const AttentionOptions<T>& o) const {
  return unguarded_softmax<T>(q, k, v, o);
}
VL_ATTENTION_BREAK_PRECISIONS(UnguardedSoftmax)

template <class T>
AttentionResult<T, 4> BooleanMaskDropped::broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                                 const AttentionOptions<T>& o) const {
  return boolean_mask_dropped<T>(base(), q, k, v, o);
}
VL_ATTENTION_BREAK_PRECISIONS(BooleanMaskDropped)

template <class T>
AttentionResult<T, 4> VisibleKeyDropped::broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                                const AttentionOptions<T>& o) const {
  AttentionOptions<T> with = o;
  with.return_weights = true;
  AttentionResult<T, 4> r = base().attention(q, k, v, with);
  const std::size_t B = q.shape(0), H = q.shape(1), Sq = q.shape(2), Sk = k.shape(2), Dv = v.shape(3), group = H / k.shape(1);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < Sq; ++i) {
        std::size_t seen = 0, first = 0;
        for (std::size_t j = 0; j < Sk; ++j)
          if (r.weights(b, h, i, j) > T(0) && seen++ == 0) first = j;
        if (seen < 2) continue;
        const T rest = T(1) - r.weights(b, h, i, first);
        r.weights(b, h, i, first) = T(0);
        for (std::size_t j = 0; j < Sk; ++j) r.weights(b, h, i, j) /= rest;
        for (std::size_t x = 0; x < Dv; ++x) {
          T sum = 0;
          for (std::size_t j = 0; j < Sk; ++j) sum += r.weights(b, h, i, j) * v(b, h / group, j, x);
          r.output(b, h, i, x) = sum;
        }
      }
  if (!o.return_weights) r.weights = {};
  return r;
}
VL_ATTENTION_BREAK_PRECISIONS(VisibleKeyDropped)

NanSilenced::NanSilenced(std::shared_ptr<const Backend> base, std::string name, Where where)
    : AttentionBreak(std::move(base), std::move(name)), where_(where) {}
template <class T>
AttentionResult<T, 4> NanSilenced::broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const {
  const auto zero_nan = [](Tensor4<T> t) {
    for (T& x : t)
      if (std::isnan(x)) x = T(0);
    return t;
  };
  if (where_ == Where::inputs) return base().attention(zero_nan(q), zero_nan(k), zero_nan(v), o);
  AttentionResult<T, 4> r = base().attention(q, k, v, o);
  r.output = zero_nan(r.output);
  return r;
}
VL_ATTENTION_BREAK_PRECISIONS(NanSilenced)

namespace {
template <class T>
AttentionOptions<T> window_wrong(AttentionOptions<T> o, WindowBuiltWrong::Bug bug) {
  using Bug = WindowBuiltWrong::Bug;
  if (o.left_window >= 0) o.left_window = bug == Bug::wider ? o.left_window + 1 : bug == Bug::dropped ? -1 : std::max<std::ptrdiff_t>(0, o.left_window - 1);
  return o;
}
}  // namespace

WindowBuiltWrong::WindowBuiltWrong(std::shared_ptr<const Backend> base, std::string name, Bug bug)
    : AttentionBreak(std::move(base), std::move(name)), bug_(bug) {}
template <class T>
AttentionResult<T, 4> WindowBuiltWrong::broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                               const AttentionOptions<T>& o) const {
  return base().attention(q, k, v, window_wrong(o, bug_));
}
VL_ATTENTION_BREAK_PRECISIONS(WindowBuiltWrong)

namespace {
template <class T>
AttentionOptions<T> cache_wrong(AttentionOptions<T> o, CacheBuiltWrong::Bug bug) {
  if (bug == CacheBuiltWrong::Bug::lengths_dropped) o.kv_lengths.reset();
  else o.first_query.reset();
  return o;
}
}  // namespace

CacheBuiltWrong::CacheBuiltWrong(std::shared_ptr<const Backend> base, std::string name, Bug bug)
    : AttentionBreak(std::move(base), std::move(name)), bug_(bug) {}
template <class T>
AttentionResult<T, 4> CacheBuiltWrong::broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                              const AttentionOptions<T>& o) const {
  return base().attention(q, k, v, cache_wrong(o, bug_));
}
VL_ATTENTION_BREAK_PRECISIONS(CacheBuiltWrong)

AttentionResult<double, 4> Float16SoftmaxUnshifted::attention(const Tensor4<double>& q, const Tensor4<double>& k,
                                                              const Tensor4<double>& v, const AttentionOptions<double>& o) const {
  if (!o.round) return base().attention(q, k, v, o);
  AttentionOptions<double> w = o;
  // No max shift: W = h(h(exp(S)) / h(Σ h(exp(S)))) from the base's stored masked scores S.
  w.return_scores = ScoreStage::masked;
  AttentionResult<double, 4> r = base().attention(q, k, v, w);
  const std::size_t B = q.shape(0), H = q.shape(1), Sq = q.shape(2), Sk = k.shape(2), Dv = v.shape(3), Hkv = k.shape(1);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < Sq; ++i) {
        std::vector<double> e(Sk);
        double sum = 0;
        for (std::size_t j = 0; j < Sk; ++j) sum += e[j] = o.round(std::exp(r.scores(b, h, i, j)));
        sum = o.round(sum);
        for (std::size_t d = 0; d < Dv; ++d) {
          double y = 0;
          for (std::size_t j = 0; j < Sk; ++j) y += o.round(e[j] / sum) * v(b, kv_head_of(h, H, Hkv), j, d);
          r.output(b, h, i, d) = y;
        }
      }
  return r;
}
AttentionResult<float, 4> Float16SoftmaxUnshifted::attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                       const AttentionOptions<float>& o) const {
  if (o.round) lacks(backends::Need(backends::Op::attention, backends::Option::storage_rounding), "float16 storage is emulated in double only");
  return base().attention(q, k, v, o);
}

}  // namespace vl::lessons::masking
