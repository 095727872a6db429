// Lesson attention, listing 1: attention as a soft dictionary lookup (specs/attention.md,
// "Listing 1"). The listing, and the claims that every row of weights is a distribution, that
// every output is a convex combination of the visible values, and that the weights and outputs
// are PyTorch's; with the broken backends each claim must reject.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xbroadcast.hpp>
#include <xtensor/xview.hpp>

#include "backends/registry.hpp"
#include "backends/weights_from_outputs.hpp"
#include "kernels/reference/gqa.hpp"
#include "kernels/reference/matmul.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/attention/attention_common.hpp"
#include "lessons/attention_error_bound.hpp"
#include "numeric/compare.hpp"
#include "numeric/numpy_format.hpp"
#include "numeric/precision.hpp"

namespace vl::lessons::attention {

// ---------------------------------------------------------------------------------------------
// Listing 1: n = 5, d_k = 8, d_v = 4, default_rng(0).

// [attention.lookup]
ListingOutput listing_lookup(const ListingContext& ctx) {
  numpy::Generator rng(0);
  const Matrix Q = rng.standard_normal(5, 8), K = rng.standard_normal(5, 8), V = rng.standard_normal(5, 4);
  AttentionOptions<double> o;
  o.return_weights = true;
  // The audited backend's attention; its weights read from its outputs where it forms none.
  const auto attention_of = backends::WeightsFromOutputs::where_lacking(ctx.implementation(), backends::Op::attention);
  const auto r = backends::attention_2d<double>(*attention_of, Q, K, V, o);
  const Matrix& w = r.weights;

  xt::xarray<double> row_sums = xt::zeros<double>({w.shape(0)});
  for (std::size_t i = 0; i < w.shape(0); ++i) {
    double s = 0;  // w.sum(axis=1): five terms, NumPy adds them left to right
    for (std::size_t j = 0; j < w.shape(1); ++j) s += w(i, j);
    row_sums(i) = numpy::round_half_even(s, 12);
  }
  const xt::xarray<double> ref = load_golden(ctx.goldens, "lookup.out_torch.npy");
  xt::xarray<double> first_row = xt::zeros<double>({w.shape(1)});
  for (std::size_t j = 0; j < w.shape(1); ++j) first_row(j) = numpy::round_half_even(w(0, j), 3);

  ListingOutput out;
  out.lines.push_back(fmt::format("forma dei pesi: {} - somma di ogni riga: {}", numpy::format_shape({w.shape(0), w.shape(1)}),
                                  numpy::format_array(row_sums)));
  out.lines.push_back(fmt::format("differenza massima con torch: {:.2e}", max_abs_diff(r.output, ref)));
  out.lines.push_back(fmt::format("pesi della prima riga: {}", numpy::format_array(first_row)));
  // Line 2's residue: ours and torch's outputs each within attention's float64 bound of the exact.
  out.derived_bounds[2] = 2 * attention_error_bound(as4(Q), as4(K), as4(V), o, unit_roundoff(Precision::float64));
  out.arrays["O"] = r.output;
  out.arrays["W"] = r.weights;
  return out;
}
// [attention.lookup]

namespace {

// ---------------------------------------------------------------------------------------------
// The forward claims' cases, drawn as reference_outputs/generators/attention_goldens.py draws them.

struct SdpaCase {
  std::string name;
  Tensor4<double> q, k, v;
  AttentionOptions<double> options;
  std::string out_golden, w_golden;
};

const std::vector<SdpaCase>& sdpa_cases() {
  static const std::vector<SdpaCase> cases = [] {
    std::vector<SdpaCase> c;
    {
      numpy::Generator rng(0);
      const Matrix q = rng.standard_normal(5, 8), k = rng.standard_normal(5, 8), v = rng.standard_normal(5, 4);
      c.push_back({"listing 1 (n=5, d_k=8)", as4(q), as4(k), as4(v), {}, "lookup.out_torch.npy", "lookup.w_torch.npy"});
    }
    {
      numpy::Generator rng(10);
      SdpaCase s{"batched, 3 heads, boolean mask, Sq=5 Sk=7", draw4(rng, {2, 3, 5, 4}), draw4(rng, {2, 3, 7, 4}),
                 draw4(rng, {2, 3, 7, 6}), {}, "sdpa_masked.out.npy", "sdpa_masked.w.npy"};
      const xt::xarray<double> u = rng.random({5, 7});
      xt::xarray<bool> allowed = u < 0.6;
      xt::view(allowed, xt::all(), 0) = true;
      s.options.allowed = allowed;
      c.push_back(s);
    }
    {
      numpy::Generator rng(11);
      SdpaCase s{"causal, 2 heads, n=6", draw4(rng, {1, 2, 6, 8}), draw4(rng, {1, 2, 6, 8}), draw4(rng, {1, 2, 6, 8}),
                 {}, "sdpa_causal.out.npy", "sdpa_causal.w.npy"};
      s.options.causal = true;
      c.push_back(s);
    }
    {
      numpy::Generator rng(12);
      SdpaCase s{"scores around 1e3 (q, k times 32, d=16)", draw4(rng, {1, 1, 6, 16}), draw4(rng, {1, 1, 6, 16}),
                 draw4(rng, {1, 1, 6, 5}), {}, "sdpa_large.out.npy", "sdpa_large.w.npy"};
      s.q *= 32.0;
      s.k *= 32.0;
      c.push_back(s);
    }
    return c;
  }();
  return cases;
}

AttentionOptions<double> with_weights(AttentionOptions<double> o) {
  o.return_weights = true;
  return o;
}

// May query i of (b, h) see key j under the case's options?
bool visible(const AttentionOptions<double>& o, std::size_t i, std::size_t j) {
  if (o.causal && j > i) return false;
  if (o.allowed) {
    const auto& a = *o.allowed;
    return a(i % a.shape(0), j % a.shape(1));  // our cases' masks are (Sq, Sk)
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The predicates.

Measurement weights_distribution(const CheckContext& ctx) {
  // Every weight in [0, 1] and every row summing to 1: measured as the largest of |Σ_j w_ij − 1|
  // and the distance of a weight outside [0, 1].
  double worst = 0;
  std::string where = "every row a distribution";
  auto judge = [&](double dev, const std::string& at) {
    if (std::isnan(dev)) dev = kInf;
    if (dev > worst) { worst = dev; where = at; }
  };
  for (const SdpaCase& c : sdpa_cases()) {
    const auto w = ctx.backend.attention(c.q, c.k, c.v, with_weights(c.options)).weights;
    for (std::size_t b = 0; b < w.shape(0); ++b)
      for (std::size_t h = 0; h < w.shape(1); ++h)
        for (std::size_t i = 0; i < w.shape(2); ++i) judge(row_deviation(w, b, h, i), fmt::format("{}, b={} h={} row {}", c.name, b, h, i));
  }
  const Fixture f = seed_fixture();
  for (bool causal : {false, true}) {
    const auto r = heads_forward_on<float>(ctx.backend, f.q, f.k, f.v, HeadsConfig{4, 2, 0.0f, causal});
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t i = 0; i < 3; ++i) {
        float sum = 0;
        double outside = 0;
        for (std::size_t j = 0; j < 3; ++j) {
          const float x = r.weights(h, i, j);
          sum += x;
          outside = worse(outside, std::max(-double(x), double(x) - 1.0));
        }
        judge(std::max(std::fabs(double(sum) - 1.0), outside),
              fmt::format("seed 002 fixture (float32{}), head {} row {}", causal ? ", causal" : "", h, i));
      }
  }
  return {worst,
          fmt::format("largest |row sum − 1| or weight outside [0, 1]: {:.2e} ({}); {} float64 cases incl. scores ~1e3, "
                      "seed 002's float32 fixture with and without the causal mask",
                      worst, where, sdpa_cases().size())};
}

Measurement convex_combination(const CheckContext& ctx) {
  // o_i must lie, column by column, between the min and max of the values of the keys query i
  // may see (the mask's keys, not the weights'), up to tolerance · max |v|.
  double worst = 0;
  std::string where = "inside";
  std::vector<SdpaCase> cases = sdpa_cases();
  const Fixture f = seed_fixture();
  for (bool causal : {false, true}) {
    SdpaCase s{causal ? "seed 002 fixture, causal" : "seed 002 fixture", {}, {}, {}, {}, "", ""};
    s.q = split_heads<double>(xt::xtensor<double, 2>(xt::cast<double>(f.q)), 2);
    s.k = split_heads<double>(xt::xtensor<double, 2>(xt::cast<double>(f.k)), 2);
    s.v = split_heads<double>(xt::xtensor<double, 2>(xt::cast<double>(f.v)), 2);
    s.options.causal = causal;
    s.options.scale = 1.0 / std::sqrt(2.0);
    cases.push_back(s);
  }
  for (const SdpaCase& c : cases) {
    const auto out = ctx.backend.attention(c.q, c.k, c.v, c.options).output;
    const double scale = xt::amax(xt::abs(c.v))();
    for (std::size_t b = 0; b < out.shape(0); ++b)
      for (std::size_t h = 0; h < out.shape(1); ++h)
        for (std::size_t i = 0; i < out.shape(2); ++i)
          for (std::size_t col = 0; col < out.shape(3); ++col) {
            double lo = kInf, hi = -kInf;
            for (std::size_t j = 0; j < c.v.shape(2); ++j)
              if (visible(c.options, i, j)) {
                lo = std::min(lo, c.v(b, h, j, col));
                hi = std::max(hi, c.v(b, h, j, col));
              }
            const double excess = excursion(out(b, h, i, col), lo, hi, scale);
            if (excess > worst) { worst = excess; where = fmt::format("{}, b={} h={} query {} column {}", c.name, b, h, i, col); }
          }
  }
  return {worst,
          fmt::format("largest excursion outside the min/max of the visible values, relative to max|v|: {:.2e} ({})", worst, where)};
}

// Listing 1's goldens are one head, (n, ·): seen as (1, 1, n, ·) like the case's inputs.
xt::xarray<double> as_case_shape(xt::xarray<double> golden) {
  if (golden.dimension() == 2) golden.reshape({std::size_t(1), std::size_t(1), golden.shape(0), golden.shape(1)});
  return golden;
}

// The fifth case: no option inert (the cases above keep scale = 1/√D, one kv head per query
// head, no additive mask, no softcap): a candidate that drops any of them fails here.
SdpaCase option_case() {
  numpy::Generator rng(14);
  SdpaCase s{"GQA 4 query heads over 2, scale 0.3, softcap 5, additive mask, bottom-right causal 4 × 6",
             draw4(rng, {1, 4, 4, 5}), draw4(rng, {1, 2, 6, 5}), draw4(rng, {1, 2, 6, 3}), {}, "sdpa_gqa.out.npy", "sdpa_gqa.w.npy"};
  s.options.bias = xt::xarray<double>(rng.standard_normal(4, 6));
  s.options.scale = 0.3;
  s.options.softcap = 5.0;
  s.options.causal = true;
  s.options.alignment = CausalAlignment::bottom_right;
  return s;
}

// In a precision other than float64: the backend computes on inputs rounded once to it
// (backends/in_precision.hpp); the reference is our plain kernel in float64 on the same rounded
// inputs, and the measure is the error over its bound (lessons/attention_error_bound.hpp), for the
// output and for the weights (their bound: the output's with max|v| = 1).
Measurement matches_reference_in(const CheckContext& ctx, const std::vector<SdpaCase>& cases) {
  const Precision p = ctx.precision;
  double worst = 0;
  std::vector<std::string> parts;
  for (const SdpaCase& c : cases) {
    SdpaCase in = c;
    in.q = rounded_to(p, c.q), in.k = rounded_to(p, c.k), in.v = rounded_to(p, c.v);
    if (in.options.scale) in.options.scale = round_to(p, *in.options.scale);
    if (in.options.bias) in.options.bias = rounded_to(p, *in.options.bias);
    in.options.softcap = round_to(p, in.options.softcap);
    const auto r = ctx.backend.attention(in.q, in.k, in.v, with_weights(in.options));
    const auto ref = backends::plain()->attention(in.q, in.k, in.v, with_weights(in.options));
    const double bound = attention_error_bound(in.q, in.k, in.v, in.options, working_roundoff(p));
    const double vmax = xt::amax(xt::abs(in.v))();
    double o = max_abs_diff(r.output, ref.output) / bound, w = max_abs_diff(r.weights, ref.weights) / (bound / vmax);
    if (std::isnan(o)) o = kInf;  // std::max drops a NaN: it must fail
    if (std::isnan(w)) w = kInf;
    worst = std::max({worst, o, w});
    parts.push_back(fmt::format("{}: output {:.2e} of its bound {:.2e}, weights {:.2e} of theirs", c.name, o, bound, w));
  }
  if (std::isnan(worst)) worst = kInf;
  return {worst, fmt::format("largest error over its bound, against our float64 kernel on the inputs rounded to {}: {:.3f}; {}",
                             to_string(ctx.precision), worst, fmt::join(parts, "; "))};
}

Measurement matches_torch(const CheckContext& ctx) {
  std::vector<SdpaCase> cases = sdpa_cases();
  cases.push_back(option_case());
  if (ctx.precision != Precision::float64) return matches_reference_in(ctx, cases);
  double worst = 0;
  std::vector<std::string> parts;
  for (const SdpaCase& c : cases) {
    const auto r = ctx.backend.attention(c.q, c.k, c.v, with_weights(c.options));
    const double o = max_abs_diff(r.output, as_case_shape(load_golden(ctx.goldens, c.out_golden)));
    const double w = max_abs_diff(r.weights, as_case_shape(load_golden(ctx.goldens, c.w_golden)));
    worst = std::max({worst, o, w});
    parts.push_back(fmt::format("{}: output {:.2e}, weights {:.2e}", c.name, o, w));
  }
  return {worst, fmt::format("max |ours − torch| {:.2e}; {}", worst, fmt::join(parts, "; "))};
}

// ---------------------------------------------------------------------------------------------
// Broken backends.

// Softmaxes: the textbook one without the max subtraction (exp overflows for scores ~1e3 and
// the row becomes inf/inf = NaN), one that forgets to divide by the row sum, and one that
// subtracts the largest score of the whole matrix instead of each row's (rows far below it
// underflow to 0/0 = NaN).
enum class BrokenSoftmax { without_max, not_normalised, global_max };

template <class T>
xt::xtensor<T, 2> broken_softmax(const xt::xtensor<T, 2>& s, BrokenSoftmax bug) {
  xt::xtensor<T, 2> e = s;
  T global = -std::numeric_limits<T>::infinity();
  if (bug == BrokenSoftmax::global_max)
    for (const T x : s) global = std::max(global, x);
  for (std::size_t i = 0; i < e.shape(0); ++i) {
    T m = bug == BrokenSoftmax::without_max ? T(0) : bug == BrokenSoftmax::global_max ? global : -std::numeric_limits<T>::infinity();
    if (bug == BrokenSoftmax::not_normalised)
      for (std::size_t j = 0; j < e.shape(1); ++j) m = std::max(m, e(i, j));
    T sum = 0;
    for (std::size_t j = 0; j < e.shape(1); ++j) sum += (e(i, j) = std::exp(e(i, j) - m));
    if (bug != BrokenSoftmax::not_normalised)
      for (std::size_t j = 0; j < e.shape(1); ++j) e(i, j) /= sum;
  }
  return e;
}

// Attention composed by hand from scores, the masks, a broken softmax and W V (Hq = Hkv), in
// both precisions: S = scale · Q Kᵀ per (b, h), hidden keys −∞, W = softmax(S), O = W V; query head
// h reads key/value head h / (Hq / Hkv) (GQA), never a head k and v do not have.
class WithSoftmax : public AttentionBreak<WithSoftmax> {
 public:
  WithSoftmax(BrokenSoftmax bug, const std::string& name) : AttentionBreak(backends::plain(), name), bug_(bug) {}
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const {
    const std::size_t B = q.shape(0), H = q.shape(1), Sq = q.shape(2), Sk = k.shape(2), Hkv = k.shape(1);
    const T scale = o.scale.value_or(T(1) / std::sqrt(static_cast<T>(q.shape(3))));
    AttentionResult<T, 4> r{xt::zeros<T>({B, H, Sq, v.shape(3)}), xt::zeros<T>({B, H, Sq, Sk}), {}};
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < H; ++h) {
        xt::xtensor<T, 2> s = scale * matmul<T>(xt::view(q, b, h), xt::transpose(xt::view(k, b, kv_head_of(h, H, Hkv))));
        for (std::size_t i = 0; i < Sq; ++i)
          for (std::size_t j = 0; j < Sk; ++j) {
            bool hidden = o.causal && j > i;
            if (o.allowed) hidden = hidden || !xt::broadcast(*o.allowed, std::array<std::size_t, 4>{B, H, Sq, Sk})(b, h, i, j);
            if (hidden) s(i, j) = -std::numeric_limits<T>::infinity();
          }
        const xt::xtensor<T, 2> w = broken_softmax<T>(s, bug_);
        xt::view(r.weights, b, h) = w;
        xt::view(r.output, b, h) = matmul<T>(w, xt::view(v, b, kv_head_of(h, H, Hkv)));
      }
    return r;
  }

 private:
  BrokenSoftmax bug_;
};

// Attention with scale 1 whatever the options say (both precisions: attention_break.hpp).
class ScaleRemoved : public AttentionBreak<ScaleRemoved> {
 public:
  ScaleRemoved() : AttentionBreak(backends::plain(), "scale removed") {}
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const {
    AttentionOptions<T> without = o;
    without.scale = T(1);
    return base().attention(q, k, v, without);
  }
};

// One option of the attention dropped, or grouped-query heads read in the wrong order: the terms
// only matches-torch's fifth case makes count.
enum class OptionBug { explicit_scale_ignored, additive_mask_ignored, softcap_ignored, groups_interleaved };

class OptionDropped : public AttentionBreak<OptionDropped> {
 public:
  OptionDropped(OptionBug bug, const std::string& name) : AttentionBreak(backends::plain(), name), bug_(bug) {}
  template <class T>
  AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const {
    AttentionOptions<T> dropped = o;
    switch (bug_) {
      case OptionBug::explicit_scale_ignored: dropped.scale.reset(); break;
      case OptionBug::additive_mask_ignored: dropped.bias.reset(); break;
      case OptionBug::softcap_ignored: dropped.softcap = 0; break;
      case OptionBug::groups_interleaved: {  // query head h reads kv head h mod Hkv, not h / (Hq / Hkv)
        const std::size_t hq = q.shape(1), hkv = k.shape(1);
        Tensor4<T> kk = xt::zeros<T>({k.shape(0), hq, k.shape(2), k.shape(3)});
        Tensor4<T> vv = xt::zeros<T>({v.shape(0), hq, v.shape(2), v.shape(3)});
        for (std::size_t h = 0; h < hq; ++h) {
          xt::view(kk, xt::all(), h) = xt::view(k, xt::all(), h % hkv);
          xt::view(vv, xt::all(), h) = xt::view(v, xt::all(), h % hkv);
        }
        return base().attention(q, kk, vv, dropped);
      }
    }
    return base().attention(q, k, v, dropped);
  }

 private:
  OptionBug bug_;
};

// softmax(s + c) = softmax(s) for a constant c per row (listing 1: "il softmax è invariante a
// una traslazione comune"). The shift enters as an extra column: Q gets a_i, K gets 1, so with
// the scale fixed at 1/√D of the unshifted columns every score of row i moves by a_i/√D (a_i/√D
// = ±100, ±750 times 1 + i/2; 750 overflows exp without the max subtraction). On the inputs as the precision
// stores them both runs have the same exact weights, each run within attention's bound of them
// (lessons/attention_error_bound.hpp, with the shift in its largest score): the measure is the
// largest difference over the sum of the two bounds, for the weights and the outputs.
Measurement shift_invariant(const CheckContext& ctx) {
  const Precision p = ctx.precision;
  const double u = working_roundoff(p);
  numpy::Generator rng(15);
  double worst = 0;
  std::vector<std::string> parts;
  for (const double shift : {100.0, -100.0, 750.0, -750.0}) {
    const std::size_t B = 2, H = 2, S = 6, D = 8, Dv = 4;
    const Tensor4<double> q = rounded_to(p, draw4(rng, {B, H, S, D})), k = rounded_to(p, draw4(rng, {B, H, S, D})),
                          v = rounded_to(p, draw4(rng, {B, H, S, Dv}));
    AttentionOptions<double> o;
    o.scale = round_to(p, 1 / std::sqrt(double(D)));
    o.return_weights = true;
    Tensor4<double> qs = xt::zeros<double>({B, H, S, D + 1}), ks = xt::ones<double>({B, H, S, D + 1});
    xt::view(qs, xt::all(), xt::all(), xt::all(), xt::range(0, D)) = q;
    xt::view(ks, xt::all(), xt::all(), xt::all(), xt::range(0, D)) = k;
    // a_i = shift·√D times 1 + i/2, so that the rows' shifts differ, at ±750 by up to 1875:
    // farther apart than exp's range in float64 (e^-745 underflows).
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < S; ++i) qs(b, h, i, D) = round_to(p, shift * std::sqrt(double(D)) * (1 + 0.5 * double(i)));
    const auto plain_run = ctx.backend.attention(q, k, v, o);
    const auto shifted_run = ctx.backend.attention(qs, ks, v, o);
    const double factor = attention_error_factor(q, k, o, u) + attention_error_factor(qs, ks, o, u);
    const double vmax = xt::amax(xt::abs(v))();
    const double w = max_abs_diff(shifted_run.weights, plain_run.weights) / factor;
    const double out = max_abs_diff(shifted_run.output, plain_run.output) / (factor * vmax);
    worst = worse(worse(worst, w), out);  // a NaN ratio counts as ∞
    parts.push_back(fmt::format("shift {:g}: weights {:.2e} of their bound {:.2e}, outputs {:.2e} of theirs {:.2e}", shift, w, factor, out,
                                factor * vmax));
  }
  return {worst, fmt::format("largest |softmax(s + c) − softmax(s)| over the two runs' bounds, weights and outputs: {:.3g}; {}", worst,
                             fmt::join(parts, "; "))};
}

}  // namespace

std::vector<ClaimCheck> lookup_checks() {
  const auto without_max = std::make_shared<WithSoftmax>(BrokenSoftmax::without_max, "softmax without the max subtraction");
  const auto not_normalised = std::make_shared<WithSoftmax>(BrokenSoftmax::not_normalised, "softmax not divided by the row sum");
  const auto mask_ignored = std::make_shared<MaskIgnored>();
  const auto scale_removed = std::make_shared<ScaleRemoved>();
  const std::vector<NegativeControl> shift_controls = {
      broken_backend("softmax without the max subtraction", without_max),
      broken_backend("softmax subtracting the whole matrix's largest score, not each row's",
                     std::make_shared<WithSoftmax>(BrokenSoftmax::global_max, "softmax with the global max"))};
  return {
      {"attention.weights-distribution", "weight rows over 4 float64 cases and seed 002's float32 fixture", weights_distribution,
       {broken_backend("softmax without the max subtraction, scores ~1e3", without_max),
        broken_backend("softmax not divided by the row sum", not_normalised)}},
      {"attention.softmax-shift-invariant", "scores shifted by ±100 and ±750 per row, B = 2, H = 2, 6 × 6", shift_invariant,
       shift_controls},
      {"attention.softmax-shift-invariant", "generated cases: shifts of ±100 and ±750 under every mask, window, GQA group, Sq ≠ Sk, scale",
       shift_invariant_generated,
       shift_controls},
      {"attention.weights-distribution", "generated cases: every mask, window, GQA group, Sq ≠ Sk, softcap, key lengths (Sk ≤ 7)",
       weights_distribution_generated,
       {broken_backend("softmax not divided by the row sum", not_normalised),
        broken_backend("key lengths applied after the softmax (padded keys zeroed, rows not renormalised)", lengths_after_softmax())}},
      {"attention.convex-combination", "outputs within the visible values' min/max, 6 cases", convex_combination,
       {broken_backend("softmax not divided by the row sum", not_normalised), broken_backend("mask ignored", mask_ignored)}},
      {"attention.convex-combination", "generated cases: every mask, window, GQA group, Sq ≠ Sk, softcap, key lengths (Sk ≤ 7)",
       convex_combination_generated,
       {broken_backend("softmax not divided by the row sum", not_normalised), broken_backend("mask ignored", mask_ignored),
        broken_backend("additive mask ignored", std::make_shared<OptionDropped>(OptionBug::additive_mask_ignored, "additive mask ignored")),
        broken_backend("query head h reads kv head h mod Hkv",
                       std::make_shared<OptionDropped>(OptionBug::groups_interleaved, "grouped-query heads interleaved")),
        broken_backend("key lengths applied after the softmax (padded keys zeroed, rows not renormalised)", lengths_after_softmax())}},
      {"attention.matches-torch", "output and weights vs torch, 5 cases (listing 1, mask, causal, scores ~1e3; GQA, scale, softcap, additive mask)", matches_torch,
       {broken_backend("scale removed", scale_removed), broken_backend("mask ignored", mask_ignored),
        broken_backend("softmax without the max subtraction", without_max),
        broken_backend("explicit scale ignored (1/√D used)",
                       std::make_shared<OptionDropped>(OptionBug::explicit_scale_ignored, "explicit scale ignored")),
        broken_backend("additive mask ignored", std::make_shared<OptionDropped>(OptionBug::additive_mask_ignored, "additive mask ignored")),
        broken_backend("softcap ignored", std::make_shared<OptionDropped>(OptionBug::softcap_ignored, "softcap ignored")),
        broken_backend("query head h reads kv head h mod Hkv",
                       std::make_shared<OptionDropped>(OptionBug::groups_interleaved, "grouped-query heads interleaved"))}},
  };
}

}  // namespace vl::lessons::attention
