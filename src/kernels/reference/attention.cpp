// Scaled dot-product attention; see attention.hpp for the equation and the conventions.
#include "kernels/reference/attention.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <xtensor/xbroadcast.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/gqa.hpp"
#include "kernels/reference/matmul.hpp"
#include "kernels/reference/softmax.hpp"

namespace vl {
namespace {

using Shape4 = std::array<std::size_t, 4>;

// `mask` broadcast NumPy-style to `target`: trailing dimensions aligned, each equal or 1.
template <class T, class M>
xt::xtensor<T, 4> broadcast_mask(const xt::xarray<M>& mask, const Shape4& target, const char* what) {
  check_mask_broadcasts(std::vector<std::size_t>(mask.shape().begin(), mask.shape().end()), target, what);
  return xt::broadcast(xt::cast<T>(mask), target);
}

// M: the additive mask (B, Hq, Sq, Sk) combining causal, window, key-length, boolean and
// additive masks (0 = attend, −∞ = hidden, anything else = a bias). Empty if there is none.
template <class T>
xt::xtensor<T, 4> combined_mask(const AttentionOptions<T>& o, const Shape4& shape) {
  const bool window = o.left_window >= 0 || o.right_window >= 0;
  if (!o.causal && !o.allowed && !o.bias && !window && !o.kv_lengths) return {};  // (first_query alone moves nothing)
  constexpr T neg_inf = -std::numeric_limits<T>::infinity();
  xt::xtensor<T, 4> m = o.bias ? broadcast_mask<T>(*o.bias, shape, "additive") : xt::xtensor<T, 4>(xt::zeros<T>(shape));
  if (o.allowed) {
    const xt::xtensor<T, 4> allowed = broadcast_mask<T>(*o.allowed, shape, "boolean");
    m = xt::where(xt::equal(allowed, T(0)), neg_inf, m);
  }
  if (!o.causal && !window && !o.kv_lengths) return m;
  const std::size_t B = shape[0];
  const auto sq = static_cast<std::ptrdiff_t>(shape[2]), sk = static_cast<std::ptrdiff_t>(shape[3]);
  for (std::size_t b = 0; b < B; ++b) {  // (the key lengths were checked on entry: check_attention_inputs)
    // L: the valid keys; query i sits at position p = i + offset; it sees key j iff
    // j < L, j ≤ p (causal), p − left ≤ j (window), j ≤ p + right (window).
    const std::ptrdiff_t L = o.kv_lengths ? static_cast<std::ptrdiff_t>((*o.kv_lengths)[b]) : sk;
    const std::ptrdiff_t offset = o.first_query ? *o.first_query : o.alignment == CausalAlignment::bottom_right ? L - sq : 0;
    for (std::ptrdiff_t i = 0; i < sq; ++i) {
      const std::ptrdiff_t p = i + offset;
      for (std::ptrdiff_t j = 0; j < sk; ++j) {
        const bool hidden = j >= L || (o.causal && j > p) || (o.left_window >= 0 && j < p - o.left_window) ||
                            (o.right_window >= 0 && j > p + o.right_window);
        if (hidden) xt::view(m, b, xt::all(), i, j) = neg_inf;
      }
    }
  }
  return m;
}

// x ← round(x) elementwise, if a storage rounding is set and `stage` is at most its last stage.
template <class T>
void store(xt::xtensor<T, 2>& x, const AttentionOptions<T>& o, ScoreStage stage) {
  if (!o.round || static_cast<int>(stage) > static_cast<int>(o.round_through)) return;
  for (auto& e : x) e = o.round(e);
}

}  // namespace

template <class T>
AttentionResult<T, 4> attention(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k,
                                const xt::xtensor<T, 4>& v, const AttentionOptions<T>& options) {
  const std::size_t B = q.shape(0), Hq = q.shape(1), Sq = q.shape(2), D = q.shape(3);
  const std::size_t Hkv = k.shape(1), Sk = k.shape(2), Dv = v.shape(3);
  check_attention_inputs(q.shape(), k.shape(), v.shape(), options.kv_lengths);
  const T scale = options.scale.value_or(T(1) / std::sqrt(static_cast<T>(D)));
  const xt::xtensor<T, 4> mask = combined_mask(options, Shape4{B, Hq, Sq, Sk});

  AttentionResult<T, 4> r;
  r.output = xt::zeros<T>({B, Hq, Sq, Dv});
  if (options.return_weights) r.weights = xt::zeros<T>({B, Hq, Sq, Sk});
  if (options.return_scores) r.scores = xt::zeros<T>({B, Hq, Sq, Sk});
  const auto keep = [&](const xt::xtensor<T, 2>& x, ScoreStage stage, std::size_t b, std::size_t h) {
    if (options.return_scores == stage) xt::view(r.scores, b, h, xt::all(), xt::all()) = x;
  };
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < Hq; ++h) {
      const std::size_t hkv = kv_head_of(h, Hq, Hkv);
      // S0 = scale · Q Kᵀ : (Sq, Sk)   (a storage rounding sees scale = 1: the caller folds it in)
      xt::xtensor<T, 2> scores =
          scale * matmul<T>(xt::view(q, b, h, xt::all(), xt::all()),
                            xt::transpose(xt::view(k, b, hkv, xt::all(), xt::all())));
      store(scores, options, ScoreStage::raw);
      keep(scores, ScoreStage::raw, b, h);
      // S1 = c · tanh(S0 / c), each of the three results stored
      if (options.softcap > 0) {
        scores = scores / options.softcap;
        store(scores, options, ScoreStage::softcapped);
        scores = xt::tanh(scores);
        store(scores, options, ScoreStage::softcapped);
        scores = options.softcap * scores;
        store(scores, options, ScoreStage::softcapped);
      }
      keep(scores, ScoreStage::softcapped, b, h);
      // S2 = S1 + M
      if (mask.size() > 0) {
        scores += xt::view(mask, b, h, xt::all(), xt::all());
        store(scores, options, ScoreStage::masked);
      }
      keep(scores, ScoreStage::masked, b, h);
      // W = softmax(S2), row by row
      const bool round_softmax = options.round && options.round_through == ScoreStage::softmax;
      const xt::xtensor<T, 2> w = round_softmax ? softmax_rows(scores, options.round) : softmax_rows(scores);
      keep(w, ScoreStage::softmax, b, h);
      // O = W V : (Sq, Dv)
      xt::view(r.output, b, h, xt::all(), xt::all()) = matmul<T>(w, xt::view(v, b, hkv, xt::all(), xt::all()));
      if (options.return_weights) xt::view(r.weights, b, h, xt::all(), xt::all()) = w;
    }
  }
  return r;
}

template <class T>
AttentionResult<T, 2> attention(const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k,
                                const xt::xtensor<T, 2>& v, const AttentionOptions<T>& options) {
  // The 4-D kernel with B = H = 1.
  auto as4 = [](const xt::xtensor<T, 2>& x) -> xt::xtensor<T, 4> {
    return xt::reshape_view(x, std::array<std::size_t, 4>{1, 1, x.shape(0), x.shape(1)});
  };
  AttentionResult<T, 4> r4 = attention<T>(as4(q), as4(k), as4(v), options);
  AttentionResult<T, 2> r;
  r.output = xt::view(r4.output, 0, 0, xt::all(), xt::all());
  if (options.return_weights) r.weights = xt::view(r4.weights, 0, 0, xt::all(), xt::all());
  if (options.return_scores) r.scores = xt::view(r4.scores, 0, 0, xt::all(), xt::all());
  return r;
}

template AttentionResult<float, 4> attention(const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&,
                                             const xt::xtensor<float, 4>&, const AttentionOptions<float>&);
template AttentionResult<double, 4> attention(const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&,
                                              const xt::xtensor<double, 4>&, const AttentionOptions<double>&);
template AttentionResult<float, 2> attention(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&,
                                             const xt::xtensor<float, 2>&, const AttentionOptions<float>&);
template AttentionResult<double, 2> attention(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&,
                                              const xt::xtensor<double, 2>&, const AttentionOptions<double>&);

}  // namespace vl
