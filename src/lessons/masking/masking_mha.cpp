// Lesson masking, claim masking.mha-fully-masked-row: nn.MultiheadAttention's layout with a
// query that sees no key (a batch element whose key_padding_mask hides every key, an attn_mask
// row that blocks every key). Its attention has nothing to average: zero weights and a zero head
// output (the convention of masking.fully-masked-row-zero), so the module's output there is the
// output projection of zero, out_proj.bias, never NaN (specs/masking.md).
//
//   query, key, value: (B, S, d);  attn_mask (S, S) true = blocked;  key_padding_mask (B, S)
//   y = concat_h(softmax(Q_h K_hᵀ/√(d/H) + M) V_h) W_oᵀ + b_o: (B, S, d);  weights (B, H, S, S)
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "engine/generated_cases.hpp"
#include "lessons/attention_cases.hpp"
#include "lessons/masking/masking.hpp"
#include "lessons/masking/masking_broken_backends.hpp"
#include "numeric/compare.hpp"
#include "numeric/numpy_random.hpp"
#include "lessons/rounded_parameters.hpp"
#include "numeric/precision.hpp"

namespace vl::lessons::masking {

template <class T>
xt::xtensor<bool, 2> mha_rows_without_key(const MhaOptions<T>& o, std::size_t B, std::size_t sq, std::size_t sk) {
  xt::xtensor<bool, 2> none = xt::zeros<bool>({B, sq});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < sq; ++i) {
      bool seen = false;
      for (std::size_t j = 0; j < sk && !seen; ++j) {
        const bool blocked = (o.causal && j > i) || (o.attn_mask && (*o.attn_mask)(i, j)) ||
                             (o.key_padding_mask && (*o.key_padding_mask)(b, j));
        seen = !blocked;
      }
      none(b, i) = !seen;
    }
  return none;
}
template xt::xtensor<bool, 2> mha_rows_without_key(const MhaOptions<double>&, std::size_t, std::size_t, std::size_t);
template xt::xtensor<bool, 2> mha_rows_without_key(const MhaOptions<float>&, std::size_t, std::size_t, std::size_t);

namespace {

// B = 2, S = 5, d = 8, H = 2; every parameter drawn from default_rng(830), biases included (torch
// initialises them to zero, and a zero out_proj.bias would hide a module that drops it here).
struct MhaCase {
  xt::xtensor<double, 3> x;
  MhaParameters<double> p;
  MhaOptions<double> o;
};

// x (B, S, d), then every parameter, biases included, from rng in that order; no mask yet.
MhaCase draw_inputs_and_parameters(numpy::Generator& rng, std::size_t B, std::size_t S, std::size_t d) {
  MhaCase c;
  c.x = rng.standard_normal({B, S, d});
  c.p.in_proj_weight = rng.standard_normal(3 * d, d);
  c.p.in_proj_bias = xt::view(rng.standard_normal(1, 3 * d), 0);
  c.p.out_proj_weight = rng.standard_normal(d, d);
  c.p.out_proj_bias = xt::view(rng.standard_normal(1, d), 0);
  return c;
}

MhaCase draw_case() {
  const std::size_t B = 2, S = 5;
  numpy::Generator rng(830);
  MhaCase c = draw_inputs_and_parameters(rng, B, S, 8);
  xt::xarray<bool> blocked = xt::zeros<bool>({S, S});
  xt::view(blocked, 3, xt::all()) = true;  // query 3 blocked from every key
  xt::view(blocked, 1, 4) = true;          // and one key hidden from query 1: a mask that counts elsewhere too
  c.o.attn_mask = blocked;
  xt::xarray<bool> padding = xt::zeros<bool>({B, S});
  xt::view(padding, 0, 4) = true;          // batch 0: length 4
  xt::view(padding, 1, xt::all()) = true;  // batch 1: length 0
  c.o.key_padding_mask = padding;
  return c;
}

// The rows of c with no visible key: the largest |weight| and |y − out_proj.bias| (NaN: ∞); every
// other row must be finite (a module that is NaN everywhere proves nothing here). c's inputs and
// parameters as the backend holds them: rounded once to the precision it computes in (out_proj.bias
// too, the value the rows without a key must return exactly).
Measurement judge_rows_without_key(const CheckContext& ctx, MhaCase c, std::size_t H, const std::string& what) {
  c.x = rounded_to(ctx.precision, c.x);
  c.p = rounded_parameters(ctx.precision, c.p);
  const std::size_t B = c.x.shape(0), S = c.x.shape(1), d = c.x.shape(2);
  const MhaResult<double, 3> r = ctx.backend.multi_head_attention(c.x, c.x, c.x, c.p, H, c.o);
  const xt::xtensor<bool, 2> none = mha_rows_without_key(c.o, B, S, S);
  double worst = 0;
  std::size_t rows = 0, nonfinite_elsewhere = 0;
  std::string where = "none";
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < S; ++i) {
      if (!none(b, i)) {
        for (std::size_t x = 0; x < d; ++x) nonfinite_elsewhere += !std::isfinite(r.output(b, i, x));
        continue;
      }
      ++rows;
      double mag = 0;
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t j = 0; j < S; ++j) mag = worse(mag, std::fabs(r.weights(b, h, i, j)));
      for (std::size_t x = 0; x < d; ++x) mag = worse(mag, std::fabs(r.output(b, i, x) - c.p.out_proj_bias(x)));
      if (rows == 1 || mag > worst) {
        where = std::isinf(mag) ? fmt::format("batch {} query {}: NaN or ∞ in its weights or output", b, i)
                                : fmt::format("batch {} query {}: |weight| or |y − out_proj.bias| up to {:.3g}", b, i, mag);
      }
      worst = std::max(worst, mag);
    }
  Measurement m{worst,
          fmt::format("{} rows with no visible key ({}): largest |weight| or |y − out_proj.bias| {:.2e} (worst: {}); non-finite outputs in "
                      "the other rows: {}",
                      rows, what, worst, where, nonfinite_elsewhere)};
  return m.require(rows > 0, "no row without a visible key was judged")
      .require(nonfinite_elsewhere == 0, fmt::format("{} non-finite outputs in rows that see a key", nonfinite_elsewhere));
}

// Generated: B, heads, the head width, S, and which masks hide keys: the attn_mask always blocks
// one query's every key (so some row has none) and, with `mask`, a quarter of the others at
// random; `padding` draws key lengths (draw_key_lengths: the other batch elements may be all
// padding); `causal` adds the causal mask. Every parameter drawn, biases included.
std::vector<CaseTerm> mha_terms() {
  return {{"B", 1, 3, 1, {}},       {"heads", 1, 4, 1, {}},        {"d_head", 1, 4, 1, {}},
          {"S", 1, 8, 1, {}},       {"mask", 0, 1, 0, {"one row", "one row and drawn"}},
          {"padding", 0, 1, 0, {"none", "drawn"}}, {"causal", 0, 1, 0, {"no", "yes"}}};
}

// Anchors (B, heads, d_head, S, mask, padding, causal): padding and a drawn mask over 2 heads, and
// the causal mask over 3 heads of width 3; each has a row without a key by construction.
std::vector<std::vector<int>> mha_anchor_cases() { return {{2, 2, 2, 5, 1, 1, 0}, {1, 3, 3, 6, 0, 0, 1}}; }

Measurement mha_case(const CheckContext& ctx, const Case& k) {
  const std::size_t B = k["B"], H = k["heads"], d = H * std::size_t(k["d_head"]), S = k["S"];
  numpy::Generator rng(k.data_seed());
  MhaCase c = draw_inputs_and_parameters(rng, B, S, d);
  const xt::xarray<double> u = rng.random({S, S});
  xt::xarray<bool> blocked = k["mask"] == 1 ? xt::xarray<bool>(u < 0.25) : xt::xarray<bool>(xt::zeros<bool>({S, S}));
  xt::view(blocked, std::size_t(k.data_seed() % S), xt::all()) = true;
  c.o.attn_mask = blocked;
  if (k["padding"] == 1) {
    const std::vector<std::size_t> lengths = draw_key_lengths(rng, B, S);
    xt::xarray<bool> padding = xt::zeros<bool>({B, S});
    for (std::size_t b = 0; b < B; ++b) xt::view(padding, b, xt::range(lengths[b], S)) = true;
    c.o.key_padding_mask = padding;
  }
  c.o.causal = k["causal"] == 1;
  return judge_rows_without_key(ctx, c, H, k.str());
}

}  // namespace

Measurement mha_fully_masked_row(const CheckContext& ctx) {
  return judge_rows_without_key(ctx, draw_case(), 2, "batch 1 all padding, query 3 blocked by attn_mask");
}

Measurement mha_fully_masked_row_generated(const CheckContext& ctx) {
  const auto terms = mha_terms();
  return generated_cases(ctx, terms, mha_anchor_cases(), Worse::larger, [&](const Case& k) { return mha_case(ctx, k); });
}

// ---------------------------------------------------------------------------------------------
// The broken modules: our plain module, then the rows with no visible key rewritten.

MhaRowWithoutKey::MhaRowWithoutKey(std::shared_ptr<const Backend> base, std::string name, Bug bug)
    : MhaBreak(std::move(base), std::move(name)), bug_(bug) {}

template <class T>
MhaResult<T, 3> MhaRowWithoutKey::broken(const xt::xtensor<T, 3>& query, const xt::xtensor<T, 3>& key, const xt::xtensor<T, 3>& value,
                                         const MhaParameters<T>& p, std::size_t heads, const MhaOptions<T>& o) const {
  MhaResult<T, 3> r = base().multi_head_attention(query, key, value, p, heads, o);
  const xt::xtensor<bool, 2> none = mha_rows_without_key(o, query.shape(0), query.shape(1), key.shape(1));
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (std::size_t b = 0; b < none.shape(0); ++b)
    for (std::size_t i = 0; i < none.shape(1); ++i) {
      if (!none(b, i)) continue;
      // torch: softmax over an all −∞ row is 0/0 = NaN, and out_proj carries it to every column;
      // bias dropped: the zero head output left as the module's output.
      xt::view(r.output, b, i) = bug_ == Bug::nan_as_torch ? nan : T(0);
      if (bug_ == Bug::nan_as_torch && r.weights.size()) xt::view(r.weights, b, xt::all(), i) = nan;
    }
  return r;
}
VL_MHA_BREAK_PRECISIONS(MhaRowWithoutKey)

}  // namespace vl::lessons::masking
