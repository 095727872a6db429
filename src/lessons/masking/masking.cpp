// Lesson masking: the causal mask of the decoder (spec: specs/masking.md).
//
// The listing is the C++ twin of the seed article's listing 5: the same nn.MultiheadAttention
// weights and inputs from torch.manual_seed(0) (our torch-compatible generator), run with and
// without the causal mask on x and on x with positions 5-7 redrawn, and the two printed lines.
// The checks verify the lesson's claims over sweeps of batch, heads, lengths and alignments, each
// against broken variants it must reject.
#include "numeric/compare.hpp"
#include "lessons/masking/masking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xview.hpp>

#include "backends/backend.hpp"
#include "backends/weights_from_outputs.hpp"
#include "kernels/reference/causal_mask.hpp"
#include "lessons/attention_error_bound.hpp"
#include "kernels/reference/multi_head_attention.hpp"
#include "numeric/numpy_random.hpp"
#include "numeric/torch_mha_init.hpp"
#include "numeric/torch_random.hpp"

namespace vl::lessons::masking {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

Inputs draw_inputs(std::size_t b, std::size_t h, std::size_t sq, std::size_t sk, std::size_t d, std::uint64_t seed) {
  numpy::Generator rng(seed);
  Inputs in;
  in.q = rng.standard_normal({b, h, sq, d});
  in.k = rng.standard_normal({b, h, sk, d});
  in.v = rng.standard_normal({b, h, sk, d});
  return in;
}

// ---------------------------------------------------------------------------------------------
// The listing (seed article, listing 5): d = 16, h = 4, n = 8, torch.manual_seed(0).

namespace {

// Python's str() of a list of strings: ['2.3e-01', '3.4e-01'].
std::string python_str_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& s : items) quoted.push_back("'" + s + "'");
  return "[" + fmt::format("{}", fmt::join(quoted, ", ")) + "]";
}

}  // namespace

// [masking.main]
ListingOutput listing_main(const ListingContext& ctx) {
  const std::size_t d = 16, h = 4, n = 8, changed_from = 5;
  // The audited backend's nn.MultiheadAttention; its weights read from its outputs where it forms none.
  const auto mha_module = backends::WeightsFromOutputs::where_lacking(ctx.implementation(), backends::Op::multi_head_attention);
  const backends::Backend& mha_of = *mha_module;
  torch_rng::Generator gen(0);  // torch.manual_seed(0)
  const MhaParameters<double> mha = torch_rng::mha_init<double>(gen, d, h);
  const xt::xtensor<bool, 2> causal = causal_blocked(n, n);  // triu(ones, diagonal=1): true = blocked

  const xt::xtensor<double, 3> x = torch_rng::randn<double>(gen, {1, n, d});
  xt::xtensor<double, 3> x2 = x;
  xt::view(x2, xt::all(), xt::range(changed_from, n), xt::all()) = torch_rng::randn<double>(gen, {1, n - changed_from, d});

  ListingOutput out;
  out.arrays["in_proj_weight"] = mha.in_proj_weight;
  out.arrays["out_proj_weight"] = mha.out_proj_weight;
  out.arrays["x"] = xt::view(x, 0);
  out.arrays["x2"] = xt::view(x2, 0);
  for (const auto& [name, tag, masked] : {std::tuple{"senza maschera", "unmasked", false}, std::tuple{"con maschera causale", "causal", true}}) {
    MhaOptions<double> o;
    if (masked) o.attn_mask = xt::xarray<bool>(causal);
    const MhaResult<double, 3> y = mha_of.multi_head_attention(x, x, x, mha, h, o);  // self-attention: query = key = value
    const MhaResult<double, 3> y2 = mha_of.multi_head_attention(x2, x2, x2, mha, h, o);
    const xt::xtensor<double, 1> diff = xt::amax(xt::abs(xt::view(y.output, 0) - xt::view(y2.output, 0)), {1});
    std::vector<std::string> printed;
    for (double v : diff) printed.push_back(fmt::format("{:.1e}", v));
    out.lines.push_back(fmt::format("{:>22}: variazione dell'uscita per posizione {}", name, python_str_list(printed)));
    out.arrays[fmt::format("Y_{}", tag)] = xt::view(y.output, 0);
    out.arrays[fmt::format("Y2_{}", tag)] = xt::view(y2.output, 0);
    out.arrays[fmt::format("W_{}", tag)] = xt::view(y.weights, 0);
    out.arrays[fmt::format("diff_{}", tag)] = diff;
  }
  return out;
}
// [masking.main]

// ---------------------------------------------------------------------------------------------
// The claims' checks. Each calls only the judged backend's `attention`, with the operation's own
// masks; "hidden" is always decided by our reference mask (kernels/reference/causal_mask.hpp), the truth,
// never by the backend under test.

namespace {

struct FixedShape {  // one of the fixed sweep's shapes: batch, heads, sequence length, head size
  std::size_t b, h, s, d;
};
const std::vector<FixedShape> kCases = {{1, 1, 1, 4}, {1, 1, 2, 3}, {2, 3, 5, 4}, {1, 4, 8, 4}, {3, 2, 13, 8}, {1, 1, 32, 16}};

// The operation's options: no mask; the causal mask of an alignment; the weights returned too.
AttentionOptions<double> unmasked() { return {}; }
AttentionOptions<double> causal(CausalAlignment al = CausalAlignment::top_left) {
  AttentionOptions<double> o;
  o.causal = true;
  o.alignment = al;
  return o;
}
AttentionOptions<double> with_weights(AttentionOptions<double> o) {
  o.return_weights = true;
  return o;
}

// A blocked mask (true = hidden) broadcast to (B, H, Sq, Sk).
xt::xtensor<bool, 4> broadcast_blocked(const xt::xarray<bool>& blocked, std::size_t B, std::size_t H, std::size_t sq, std::size_t sk) {
  return xt::broadcast(blocked, std::array<std::size_t, 4>{B, H, sq, sk});
}

}  // namespace

Measurement masked_weights_zero(const CheckContext& ctx) {
  // Every weight on a hidden key must be exactly 0.0, and every row with a visible key must sum
  // to 1 (to `tolerance`). Includes scores of order 1e10 (q, k scaled by 1e5), where only −∞ is
  // certain to lose to every visible score.
  double worst_sum = 0, worst_leak = 0;
  std::size_t leaks = 0, rows = 0;
  std::string where = "none";
  for (const FixedShape& c : kCases) {
    // float16's largest is 65504: there q, k scaled by 60 give scores up to about 2·10⁴, still past
    // the −10⁴ of a finite fill (its control), where 10⁵ would overflow the inputs themselves.
    const double large = ctx.precision == Precision::float16 ? 60.0 : 1e5;
    for (double scale : {1.0, large}) {
      for (CausalAlignment al : {CausalAlignment::top_left, CausalAlignment::bottom_right}) {
        const std::size_t sq = al == CausalAlignment::top_left ? c.s : std::max<std::size_t>(1, c.s / 2), sk = c.s;
        Inputs in = draw_inputs(c.b, c.h, sq, sk, c.d, 100 + c.s);
        in.q *= scale;
        in.k *= scale;
        const auto r = ctx.backend.attention(in.q, in.k, in.v, with_weights(causal(al)));
        const auto truth = causal_blocked(sq, sk, al);
        for (std::size_t b = 0; b < c.b; ++b)
          for (std::size_t h = 0; h < c.h; ++h)
            for (std::size_t i = 0; i < sq; ++i) {
              double sum = 0;
              for (std::size_t j = 0; j < sk; ++j) {
                const double w = r.weights(b, h, i, j);
                sum += w;
                if (truth(i, j) && w != 0.0) {
                  ++leaks;
                  if (!(std::fabs(w) <= worst_leak)) {
                    worst_leak = std::isnan(w) ? kInf : std::fabs(w);
                    where = fmt::format("weight {:.3g} on hidden key {} of query {} (S={}, {}, score scale {:g})", w, j, i, c.s,
                                        al == CausalAlignment::top_left ? "top-left" : "bottom-right", scale);
                  }
                }
              }
              worst_sum = worse(worst_sum, std::fabs(sum - 1.0));
              ++rows;
            }
      }
    }
  }
  Measurement m{worst_sum, fmt::format("max |row sum − 1| = {:.2e} over {} rows; {} non-zero weights on hidden keys{}", worst_sum,
                                       rows, leaks, leaks ? fmt::format(" (largest: {})", where) : "")};
  return m.require(leaks == 0, fmt::format("{} non-zero weights on hidden keys (largest: {})", leaks, where));
}

Measurement first_position_self(const CheckContext& ctx) {
  // Query 0 of a causal pass sees key 0 only: weight exactly 1.0, output = v_0 bit for bit (v_0 as
  // the backend holds it: rounded once to the precision it computes in, numeric/precision.hpp).
  double worst = 0;
  std::string where = "exact";
  std::size_t checked = 0;
  for (const FixedShape& c : kCases) {
    for (std::size_t sk : {c.s, c.s + 3}) {  // Sq = Sk, and Sq < Sk top-left
      const Inputs in = draw_inputs(c.b, c.h, c.s, sk, c.d, 200 + c.s);
      const auto r = ctx.backend.attention(in.q, in.k, in.v, with_weights(causal(CausalAlignment::top_left)));
      for (std::size_t b = 0; b < c.b; ++b)
        for (std::size_t h = 0; h < c.h; ++h) {
          double err = worse(0, std::fabs(r.weights(b, h, 0, 0) - 1.0));
          for (std::size_t x = 0; x < c.d; ++x)
            err = worse(err, std::fabs(r.output(b, h, 0, x) - round_to(ctx.precision, in.v(b, h, 0, x))));
          if (err > worst) {
            worst = err;
            where = fmt::format("S={} Sk={}: w[0,0] = {}, output row 0 off by up to {:.3g}", c.s, sk, r.weights(b, h, 0, 0), err);
          }
          ++checked;
        }
    }
  }
  return {worst,
          fmt::format("max(|w[0,0] − 1|, |o_0 − v_0|) = {:.2e} over {} (batch, head) pairs ({})", worst, checked, where)};
}

Measurement prefix_unchanged(const CheckContext& ctx) {
  // Replace q, k, v at positions ≥ p by fresh draws: with the mask, outputs before p must not move
  // a bit and every output from p on must move; without a mask, every output must move.
  double worst = 0;
  bool later_moved = true, unmasked_all_moved = true;
  std::string where = "prefixes unchanged", why_not;
  for (const FixedShape& c : kCases) {
    if (c.s < 2) continue;
    const Inputs a = draw_inputs(c.b, c.h, c.s, c.s, c.d, 300 + c.s);
    const Inputs fresh = draw_inputs(c.b, c.h, c.s, c.s, c.d, 400 + c.s);
    for (std::size_t p : {std::size_t(1), c.s / 2, c.s - 1}) {
      Inputs b = a;
      positions(b.q, p, c.s) = positions(fresh.q, p, c.s);
      positions(b.k, p, c.s) = positions(fresh.k, p, c.s);
      positions(b.v, p, c.s) = positions(fresh.v, p, c.s);
      const auto ra = ctx.backend.attention(a.q, a.k, a.v, causal()), rb = ctx.backend.attention(b.q, b.k, b.v, causal());
      const double moved = max_abs_diff(positions(ra.output, 0, p), positions(rb.output, 0, p));
      if (moved > worst) { worst = moved; where = fmt::format("S={}, positions ≥ {} changed", c.s, p); }
      for (std::size_t t = p; t < c.s; ++t)
        if (max_abs_diff(positions(ra.output, t, t + 1), positions(rb.output, t, t + 1)) == 0) {
          later_moved = false;
          why_not = fmt::format("; BUT output {} did not move (S={}, p={})", t, c.s, p);
        }
      const auto ua = ctx.backend.attention(a.q, a.k, a.v, unmasked()), ub = ctx.backend.attention(b.q, b.k, b.v, unmasked());
      for (std::size_t t = 0; t < c.s; ++t)
        if (max_abs_diff(positions(ua.output, t, t + 1), positions(ub.output, t, t + 1)) == 0) {
          unmasked_all_moved = false;
          why_not = fmt::format("; BUT without a mask output {} did not move (S={}, p={})", t, c.s, p);
        }
    }
  }
  Measurement m{worst, fmt::format("largest change of an output before p when positions ≥ p change: {:.2e} ({}){}", worst, where,
                                   why_not.empty() ? "; every output from p on moved, and every output moved without a mask" : why_not)};
  return m.require(later_moved, "an output from p on did not move: the inputs could not show a leak")
      .require(unmasked_all_moved, "without a mask an output did not move: the inputs could not show a leak");
}

Agreement agreement_unit(const CheckContext& ctx, const Tensor4<double>& q, const Tensor4<double>& k, Tensor4<double>& v,
                         const AttentionOptions<double>& o) {
  const Precision p = ctx.precision;
  if (p != Precision::float64) return {2 * attention_error_bound(rounded_to(p, q), rounded_to(p, k), rounded_to(p, v), o, working_roundoff(p)), 1};
  const double twice_bound = 2 * attention_error_factor(q, k, o, working_roundoff(p)) * xt::amax(xt::abs(v))();
  double s = 1;
  while (twice_bound * s > kFloat64Agreement) s /= 2;
  v *= s;
  return {1, s};
}

Measurement one_pass_equals_decoding(const CheckContext& ctx) {
  // Row t of one causal pass over the whole sequence vs. decoding step t: query t alone over the
  // keys and values 0 … t (a KV cache), with the causal mask bottom-right for Sq = 1, Sk = t + 1.
  double worst = 0;
  std::string where = "equal";
  std::size_t steps = 0;
  for (const FixedShape& c : kCases) {
    Inputs in = draw_inputs(c.b, c.h, c.s, c.s, c.d, 500 + c.s);
    const double unit = agreement_unit(ctx, in.q, in.k, in.v, causal()).unit;
    const auto full = ctx.backend.attention(in.q, in.k, in.v, causal());
    for (std::size_t t = 0; t < c.s; ++t) {
      const Tensor4<double> q = positions(in.q, t, t + 1), k = positions(in.k, 0, t + 1), v = positions(in.v, 0, t + 1);
      const auto step = ctx.backend.attention(q, k, v, causal(CausalAlignment::bottom_right));
      const double diff = max_abs_diff(positions(full.output, t, t + 1), step.output) / unit;
      if (diff > worst) { worst = diff; where = fmt::format("S={}, step {}", c.s, t); }
      ++steps;
    }
  }
  return {worst,
          fmt::format("max |one pass − token by token|{} = {:.2e} over {} decoding steps (worst: {})", unit_words(ctx), worst, steps,
                      where)};
}

Measurement alignment(const CheckContext& ctx) {
  // Sq < Sk: the LAST r queries with bottom-right alignment reproduce the last r rows of the full
  // causal pass; the FIRST r queries with top-left alignment reproduce its first r rows.
  double worst = 0;
  std::string where = "equal";
  for (const FixedShape& c : kCases) {
    if (c.s < 3) continue;
    Inputs in = draw_inputs(c.b, c.h, c.s, c.s, c.d, 600 + c.s);
    const double unit = agreement_unit(ctx, in.q, in.k, in.v, causal()).unit;
    const auto full = ctx.backend.attention(in.q, in.k, in.v, causal());
    for (std::size_t r : {std::size_t(1), c.s / 2, c.s - 1}) {
      const Tensor4<double> last = positions(in.q, c.s - r, c.s), first = positions(in.q, 0, r);
      const auto br = ctx.backend.attention(last, in.k, in.v, causal(CausalAlignment::bottom_right));
      const auto tl = ctx.backend.attention(first, in.k, in.v, causal(CausalAlignment::top_left));
      const double d_br = max_abs_diff(positions(full.output, c.s - r, c.s), br.output) / unit;
      const double d_tl = max_abs_diff(positions(full.output, 0, r), tl.output) / unit;
      if (d_br > worst) { worst = d_br; where = fmt::format("last {} of {} queries, bottom-right", r, c.s); }
      if (d_tl > worst) { worst = d_tl; where = fmt::format("first {} of {} queries, top-left", r, c.s); }
    }
  }
  return {worst,
          fmt::format("max |query block − rows of the full causal pass|{} = {:.2e} (worst: {})", unit_words(ctx), worst, where)};
}

Measurement padding_ignored(const CheckContext& ctx) {
  // Three sequences of lengths 7, 4, 1 padded to 7, with and without the causal mask: every weight
  // on a padding key is exactly 0, and redrawing the padding keys and values moves no output bit.
  // The key-padding mask is the operation's boolean mask, (B, 1, 1, Sk), true = may attend.
  const std::size_t B = 3, H = 2, S = 7, D = 4;
  const std::vector<std::size_t> lengths = {7, 4, 1};
  const Inputs a = draw_inputs(B, H, S, S, D, 700);
  const Inputs fresh = draw_inputs(B, H, S, S, D, 701);
  Inputs b = a;
  for (std::size_t s = 0; s < B; ++s) {
    auto pad = xt::range(lengths[s], S);
    xt::view(b.k, s, xt::all(), pad, xt::all()) = xt::view(fresh.k, s, xt::all(), pad, xt::all());
    xt::view(b.v, s, xt::all(), pad, xt::all()) = xt::view(fresh.v, s, xt::all(), pad, xt::all());
  }
  double worst_weight = 0, worst_move = 0;
  for (bool is_causal : {true, false}) {
    AttentionOptions<double> o = with_weights(is_causal ? causal() : unmasked());
    o.allowed = key_padding_allowed_4d(key_padding_blocked(lengths, S));
    const auto ra = ctx.backend.attention(a.q, a.k, a.v, o), rb = ctx.backend.attention(b.q, b.k, b.v, o);
    for (std::size_t s = 0; s < B; ++s)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < S; ++i)
          for (std::size_t j = lengths[s]; j < S; ++j) {
            const double w = std::fabs(ra.weights(s, h, i, j));
            worst_weight = worse(worst_weight, w);
          }
    worst_move = std::max(worst_move, max_abs_diff(ra.output, rb.output));
  }
  const double worst = std::max(worst_weight, worst_move);
  return {worst,
          fmt::format("lengths {} padded to {}, with and without the causal mask: max weight on a padding key {:.2e}, "
                      "max output change when padding keys/values are redrawn {:.2e}",
                      fmt::join(lengths, ", "), S, worst_weight, worst_move)};
}

RowMagnitude row_magnitude(const AttentionResult<double, 4>& r, std::size_t b, std::size_t h, std::size_t i) {
  RowMagnitude m;
  for (std::size_t j = 0; j < r.weights.shape(3); ++j) m.nan = m.nan || std::isnan(r.weights(b, h, i, j)), m.largest = worse(m.largest, std::fabs(r.weights(b, h, i, j)));
  for (std::size_t x = 0; x < r.output.shape(3); ++x) m.nan = m.nan || std::isnan(r.output(b, h, i, x)), m.largest = worse(m.largest, std::fabs(r.output(b, h, i, x)));
  return m;
}

Measurement fully_masked_row_zero(const CheckContext& ctx) {
  // Rows with no visible key: (a) bottom-right with Sq = 5 > Sk = 3 (queries 0, 1 see nothing),
  // (b) a sequence of length 0 in a padded batch, (c) a boolean mask that blocks query 2's whole row.
  double worst = 0;
  std::size_t rows = 0;
  std::string where = "all zero";
  auto judge = [&](const AttentionResult<double, 4>& r, const xt::xtensor<bool, 4>& truth, const char* what) {
    const auto& s = truth.shape();
    for (std::size_t b = 0; b < s[0]; ++b)
      for (std::size_t h = 0; h < s[1]; ++h)
        for (std::size_t i = 0; i < s[2]; ++i) {
          bool none = true;
          for (std::size_t j = 0; j < s[3]; ++j) none = none && truth(b, h, i, j);
          if (!none) continue;
          ++rows;
          const RowMagnitude m = row_magnitude(r, b, h, i);  // torch's softmax of an all −∞ row: said as NaN, measured as ∞
          if (m.largest > worst)
            where = m.nan ? fmt::format("{}, query {}: NaN weights or output", what, i)
                          : fmt::format("{}, query {}: |weight| or |output| up to {:.3g}", what, i, m.largest);
          worst = std::max(worst, m.largest);
        }
  };
  {
    const Inputs in = draw_inputs(2, 2, 5, 3, 4, 800);
    const auto r = ctx.backend.attention(in.q, in.k, in.v, with_weights(causal(CausalAlignment::bottom_right)));
    judge(r, broadcast_blocked(causal_blocked(5, 3, CausalAlignment::bottom_right), 2, 2, 5, 3), "bottom-right, Sq=5 > Sk=3");
  }
  {
    const Inputs in = draw_inputs(2, 2, 4, 4, 4, 801);
    const xt::xtensor<bool, 2> padding = key_padding_blocked({4, 0}, 4);
    AttentionOptions<double> o = with_weights(unmasked());
    o.allowed = key_padding_allowed_4d(padding);
    const auto r = ctx.backend.attention(in.q, in.k, in.v, o);
    judge(r, broadcast_blocked(negate_mask(*o.allowed), 2, 2, 4, 4), "a sequence of length 0");
  }
  {
    const Inputs in = draw_inputs(1, 3, 4, 6, 4, 802);
    xt::xtensor<bool, 2> blocked = xt::zeros<bool>({std::size_t(4), std::size_t(6)});
    xt::view(blocked, 2, xt::all()) = true;
    AttentionOptions<double> o = with_weights(unmasked());
    o.allowed = xt::xarray<bool>(!blocked);
    const auto r = ctx.backend.attention(in.q, in.k, in.v, o);
    judge(r, broadcast_blocked(blocked, 1, 3, 4, 6), "query 2 blocked from every key");
  }
  Measurement m{worst, fmt::format("{} rows with no visible key: largest |weight| or |output| {:.2e} ({})", rows, worst, where)};
  return m.require(rows > 0, "no row without a visible key was judged");
}

}  // namespace vl::lessons::masking
