// Lesson masking: the checks of its claims, each with the broken variants it must reject.
#include <cmath>
#include <limits>

#include <xtensor/xview.hpp>

#include "kernels/causal_mask.hpp"
#include "kernels/matmul.hpp"
#include "lessons/masking.hpp"

namespace vl::lessons::masking {

namespace {

// --- Broken variants. Each is one plausible bug.

// The mask shifted by one: triu(ones, diagonal=0), the diagonal is blocked too (query i sees j < i).
BoolMatrix diagonal_blocked(std::size_t sq, std::size_t sk, CausalAlignment al) {
  BoolMatrix m = causal_blocked(sq, sk, al);
  for (std::size_t i = 0; i < sq; ++i) {
    const std::size_t visible = causal_visible_keys(i, sq, sk, al);
    if (visible > 0) m(i, visible - 1) = true;
  }
  return m;
}

// The mask shifted the other way: triu(ones, diagonal=2), one future key let through.
BoolMatrix one_future_key(std::size_t sq, std::size_t sk, CausalAlignment al) {
  BoolMatrix m = causal_blocked(sq, sk, al);
  for (std::size_t i = 0; i < sq; ++i) {
    const std::size_t visible = causal_visible_keys(i, sq, sk, al);
    if (visible < sk) m(i, visible) = false;
  }
  return m;
}

// The alignment ignored: always top-left, or always bottom-right.
BoolMatrix always_top_left(std::size_t sq, std::size_t sk, CausalAlignment) { return causal_blocked(sq, sk, CausalAlignment::top_left); }
BoolMatrix always_bottom_right(std::size_t sq, std::size_t sk, CausalAlignment) { return causal_blocked(sq, sk, CausalAlignment::bottom_right); }

// The key-padding mask dropped on the floor.
xt::xarray<bool> padding_dropped(const BoolMatrix& mask, const BoolMatrix&) { return mask; }

// The mask applied AFTER the softmax: hidden weights zeroed, the rows not renormalised.
AttentionResult<double, 4> mask_after_softmax(const Tensor4& q, const Tensor4& k, const Tensor4& v, const xt::xarray<bool>& blocked) {
  AttentionOptions<double> o;
  o.return_weights = true;
  AttentionResult<double, 4> r = attention<double>(q, k, v, o);
  r.weights = xt::where(xt::broadcast(blocked, r.weights.shape()), 0.0, r.weights);
  for (std::size_t b = 0; b < q.shape(0); ++b)
    for (std::size_t h = 0; h < q.shape(1); ++h)
      xt::view(r.output, b, h) = matmul<double>(xt::view(r.weights, b, h), xt::view(v, b, h));
  return r;
}

// A finite fill, −1e9, added to the hidden scores in place of −∞.
AttentionResult<double, 4> fill_minus_1e9(const Tensor4& q, const Tensor4& k, const Tensor4& v, const xt::xarray<bool>& blocked) {
  AttentionOptions<double> o;
  o.bias = xt::xarray<double>(xt::where(blocked, -1e9, 0.0));
  o.return_weights = true;
  return attention<double>(q, k, v, o);
}

// −∞ fill but a softmax without the guard for rows with no finite score: exp(−∞ − (−∞)) = NaN,
// as torch returns for such rows.
AttentionResult<double, 4> naive_softmax(const Tensor4& q, const Tensor4& k, const Tensor4& v, const xt::xarray<bool>& blocked) {
  const std::size_t B = q.shape(0), H = q.shape(1), sq = q.shape(2), sk = k.shape(2);
  const auto hidden = xt::eval(xt::broadcast(blocked, std::array<std::size_t, 4>{B, H, sq, sk}));
  AttentionResult<double, 4> r;
  r.weights = xt::zeros<double>({B, H, sq, sk});
  r.output = xt::zeros<double>({B, H, sq, v.shape(3)});
  const double scale = 1.0 / std::sqrt(double(q.shape(3)));
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      xt::xtensor<double, 2> s = scale * matmul<double>(xt::view(q, b, h), xt::transpose(xt::view(k, b, h)));
      s = xt::where(xt::view(hidden, b, h), -std::numeric_limits<double>::infinity(), s);
      const xt::xtensor<double, 2> e = xt::exp(s - xt::view(xt::amax(s, {1}), xt::all(), xt::newaxis()));
      const xt::xtensor<double, 2> w = e / xt::view(xt::sum(e, {1}), xt::all(), xt::newaxis());
      xt::view(r.weights, b, h) = w;
      xt::view(r.output, b, h) = matmul<double>(w, xt::view(v, b, h));
    }
  return r;
}

Masking with_mask(decltype(Masking::causal_blocked) f) { Masking m = reference_masking(); m.causal_blocked = std::move(f); return m; }
Masking with_attend(decltype(Masking::attend) f) { Masking m = reference_masking(); m.attend = std::move(f); return m; }
Masking with_padding(decltype(Masking::with_padding) f) { Masking m = reference_masking(); m.with_padding = std::move(f); return m; }

template <class Predicate>
CheckFn on(Predicate predicate, Masking impl) {
  return [predicate, impl](double tolerance) { return predicate(impl, tolerance); };
}

}  // namespace

Lesson lesson() {
  Lesson l;
  l.id = "masking";
  l.spec_file = "specs/masking.md";
  l.listings.push_back({"masking.main", "vl::lessons::masking::listing_main", listing_main});
  const Masking ref = reference_masking();
  const Masking diag = with_mask(diagonal_blocked), future = with_mask(one_future_key);
  const Masking after = with_attend(mask_after_softmax), finite = with_attend(fill_minus_1e9);

  l.checks.push_back({"masking.masked-weights-zero", "hidden weights exactly 0, rows sum to 1, 6 shapes × 2 alignments × 2 score scales",
                      on(masked_weights_zero, ref),
                      {{"mask lets one future key through", on(masked_weights_zero, future)},
                       {"mask applied after the softmax", on(masked_weights_zero, after)},
                       {"−1e9 in place of −∞", on(masked_weights_zero, finite)}}});

  l.checks.push_back({"masking.first-position-self", "query 0: weight 1.0 on key 0, output v_0 bit for bit",
                      on(first_position_self, ref),
                      {{"mask shifted: diagonal blocked", on(first_position_self, diag)},
                       {"mask lets one future key through", on(first_position_self, future)}}});

  l.checks.push_back({"masking.prefix-unchanged", "positions ≥ p redrawn: outputs before p bit for bit, the others move",
                      on(prefix_unchanged, ref),
                      {{"mask lets one future key through", on(prefix_unchanged, future)},
                       {"mask applied after the softmax", on(prefix_unchanged, after)}}});

  l.checks.push_back({"masking.one-pass-equals-decoding", "one causal pass vs. token-by-token decoding with a KV cache",
                      on(one_pass_equals_decoding, ref),
                      {{"mask lets one future key through", on(one_pass_equals_decoding, future)},
                       {"mask applied after the softmax", on(one_pass_equals_decoding, after)}}});

  l.checks.push_back({"masking.alignment", "query blocks with Sq < Sk against rows of the full causal pass",
                      on(alignment, ref),
                      {{"alignment ignored: always top-left", on(alignment, with_mask(always_top_left))},
                       {"alignment ignored: always bottom-right", on(alignment, with_mask(always_bottom_right))}}});

  l.checks.push_back({"masking.padding-ignored", "padding keys: weight 0, redrawn keys/values change nothing",
                      on(padding_ignored, ref),
                      {{"key-padding mask ignored", on(padding_ignored, with_padding(padding_dropped))}}});

  l.checks.push_back({"masking.fully-masked-row-zero", "rows with no visible key: zero weights, zero output, no NaN",
                      on(fully_masked_row_zero, ref),
                      {{"−1e9 in place of −∞", on(fully_masked_row_zero, finite)},
                       {"softmax without the guard (NaN, as torch)", on(fully_masked_row_zero, with_attend(naive_softmax))}}});
  return l;
}

}  // namespace vl::lessons::masking
