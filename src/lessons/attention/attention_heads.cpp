// Lesson attention, listing 3: multiple heads (specs/attention.md, "Listing 3"). The listing
// (nn.MultiheadAttention(16, 4) by hand), and the claims that our multi-head attention is
// torch's, that the heads divide the parameters rather than multiply them, and that a bad
// configuration is refused; with the broken variants each claim must reject.
#include <cmath>
#include <functional>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xview.hpp>

#include "backends/registry.hpp"
#include "kernels/reference/causal_mask.hpp"
#include "kernels/reference/matmul.hpp"
#include "kernels/reference/multi_head_attention.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/attention/attention_common.hpp"
#include "lessons/mha_break.hpp"
#include "lessons/mha_error_bound.hpp"
#include "lessons/rounded_parameters.hpp"
#include "numeric/npy.hpp"
#include "numeric/precision.hpp"
#include "numeric/torch_mha_init.hpp"
#include "numeric/torch_random.hpp"

namespace vl::lessons::attention {

namespace {

// torch.manual_seed(0): nn.MultiheadAttention(16, 4)'s parameters, then x = randn(1, 6, 16).
struct HeadsInputs {
  MhaParameters<double> p;
  Matrix x;
};
HeadsInputs heads_inputs() {
  torch_rng::Generator gen(0);
  HeadsInputs in{torch_rng::mha_init<double>(gen, 16, 4), {}};
  const xt::xarray<double> x = torch_rng::randn<double>(gen, {1, 6, 16});
  in.x = xt::reshape_view(x, std::array<std::size_t, 2>{6, 16});
  return in;
}

// Number of parameters of nn.MultiheadAttention(d, heads), as torch's initialiser creates them
// (our torch stream's mha_init; throws when d % heads ≠ 0).
std::size_t mha_parameter_count(std::size_t d, std::size_t heads) {
  torch_rng::Generator gen(0);
  const auto p = torch_rng::mha_init<float>(gen, d, heads);
  return p.in_proj_weight.size() + p.in_proj_bias.size() + p.out_proj_weight.size() + p.out_proj_bias.size();
}

}  // namespace

// [attention.heads]
ListingOutput listing_heads(const ListingContext& ctx) {
  const std::size_t d = 16, h = 4;
  const HeadsInputs in = heads_inputs();
  const MhaResult<double, 2> r = multi_head_self_attention<double, 2>(in.x, in.p, h);
  ListingOutput out;
  out.lines.push_back(fmt::format("differenza massima sull'uscita: {:.2e}", max_abs_diff(r.output, load_golden(ctx.goldens, "heads.out_torch.npy"))));
  out.lines.push_back(fmt::format("differenza massima sui pesi:    {:.2e}", max_abs_diff(r.weights, load_golden(ctx.goldens, "heads.w_torch.npy"))));
  for (std::size_t heads : {1, 4, 16}) out.lines.push_back(fmt::format("{:>2} teste -> parametri: {}", heads, mha_parameter_count(d, heads)));
  out.lines.push_back(fmt::format("formula 4*d*d + 4*d = {}", 4 * d * d + 4 * d));
  // Lines 1-2's residues: ours and torch's module each within the module's float64 bound of the exact.
  const xt::xtensor<double, 3> x3 = xt::reshape_view(in.x, std::array<std::size_t, 3>{1, 6, d});
  const MhaErrorBound bound = mha_error_bound(x3, x3, x3, in.p, h, {}, unit_roundoff(Precision::float64));
  out.derived_bounds = {{1, 2 * bound.output}, {2, 2 * bound.weights}};
  out.arrays["in_proj_weight"] = in.p.in_proj_weight;
  out.arrays["in_proj_bias"] = in.p.in_proj_bias;
  out.arrays["out_proj_weight"] = in.p.out_proj_weight;
  out.arrays["out_proj_bias"] = in.p.out_proj_bias;
  out.arrays["x"] = in.x;
  out.arrays["output"] = r.output;
  out.arrays["weights"] = r.weights;
  // The same heads with the causal mask (query i sees keys j <= i), for the docs' "try it" panel
  // and heat maps; compared with NumPy's reading of the equations (attention_heads_causal_goldens.py).
  MhaOptions<double> causal;
  causal.attn_mask = xt::xarray<bool>(causal_blocked(in.x.shape(0), in.x.shape(0)));
  const MhaResult<double, 2> rc = multi_head_self_attention<double, 2>(in.x, in.p, h, causal);
  out.arrays["output_causal"] = rc.output;
  out.arrays["weights_causal"] = rc.weights;
  return out;
}
// [attention.heads]

namespace {

// ---------------------------------------------------------------------------------------------
// mha-matches-torch: through the backend's multi_head_attention.

// torch's cross-attention case (masking_goldens.py): non-zero biases, batch 2, a bool attn_mask
// with a key_padding_mask, and an additive float mask.
struct MhaCrossCase {
  MhaParameters<double> p;
  xt::xtensor<double, 3> query, kv;
  MhaOptions<double> masked, additive;
};
MhaCrossCase mha_cross_case(const std::filesystem::path& goldens) {
  auto cross = [&](const char* name) { return npy::load_double(goldens / "masking" / fmt::format("mha_cross.{}.npy", name)); };
  MhaCrossCase c{{cross("in_proj_weight"), cross("in_proj_bias"), cross("out_proj_weight"), cross("out_proj_bias")},
                 cross("query"), cross("kv"), {}, {}};
  c.masked.attn_mask = xt::xarray<bool>(xt::not_equal(cross("blocked"), 0.0));
  c.masked.key_padding_mask = xt::xarray<bool>(xt::not_equal(cross("padding"), 0.0));
  c.additive.attn_bias = cross("additive");
  return c;
}

// In a precision other than float64: the backend on the inputs and parameters rounded once to it,
// against our plain module in float64 on the same rounded numbers; the measure is the largest
// error over its bound (lessons/mha_error_bound.hpp), for the output and the per-head weights.
Measurement mha_matches_reference_in(const CheckContext& ctx) {
  const Precision pr = ctx.precision;
  const double u = working_roundoff(pr);
  const HeadsInputs in = heads_inputs();
  const MhaCrossCase c = mha_cross_case(ctx.goldens);
  MhaOptions<double> additive = c.additive;
  additive.attn_bias = rounded_to(pr, *additive.attn_bias);
  struct Case {
    const char* name;
    xt::xtensor<double, 3> query, kv;
    MhaParameters<double> p;
    std::size_t heads;
    MhaOptions<double> o;
  };
  const xt::xtensor<double, 3> x = xt::reshape_view(rounded_to(pr, in.x), std::array<std::size_t, 3>{1, in.x.shape(0), in.x.shape(1)});
  const std::vector<Case> cases = {{"self-attention 16 × 4 heads, n = 6", x, x, rounded_parameters(pr, in.p), 4, {}},
                                   {"cross-attention, bool + padding masks", rounded_to(pr, c.query), rounded_to(pr, c.kv), rounded_parameters(pr, c.p), 4, c.masked},
                                   {"cross-attention, additive mask", rounded_to(pr, c.query), rounded_to(pr, c.kv), rounded_parameters(pr, c.p), 4, additive}};
  double worst = 0;
  std::vector<std::string> parts;
  for (const Case& k : cases) {
    MhaResult<double, 3> r;
    try {
      r = ctx.backend.multi_head_attention(k.query, k.kv, k.kv, k.p, k.heads, k.o);
    } catch (const backends::UnsupportedOption& e) {  // the additive mask, to a candidate that lists none
      if (!k.o.attn_bias) throw;
      parts.push_back(fmt::format("{}: not asked ({})", k.name, e.what()));
      continue;
    }
    const auto ref = backends::plain()->multi_head_attention(k.query, k.kv, k.kv, k.p, k.heads, k.o);
    const MhaErrorBound bound = mha_error_bound(k.query, k.kv, k.kv, k.p, k.heads, k.o, u);
    double o = max_abs_diff(r.output, ref.output) / bound.output, w = max_abs_diff(r.weights, ref.weights) / bound.weights;
    if (std::isnan(o)) o = kInf;  // std::max drops a NaN: it must fail
    if (std::isnan(w)) w = kInf;
    worst = std::max({worst, o, w});
    parts.push_back(fmt::format("{}: output error {:.2e} of its bound ({:.2e}), weights {:.2e} of theirs ({:.2e})", k.name, o, bound.output, w,
                                bound.weights));
  }
  return {worst, fmt::format("largest error over its bound, against our float64 module on the inputs and parameters rounded to {}: "
                             "{:.3f}; {}", to_string(pr), worst, fmt::join(parts, "; "))};
}

Measurement mha_matches_torch(const CheckContext& ctx) {
  if (ctx.precision != Precision::float64) return mha_matches_reference_in(ctx);
  const HeadsInputs in = heads_inputs();
  // Our torch streams must give torch's parameters and input bit for bit.
  auto golden = [&](const char* name) { return load_golden(ctx.goldens, name); };
  const double params = std::max({max_abs_diff(in.p.in_proj_weight, golden("heads.in_proj_weight.npy")),
                                  max_abs_diff(in.p.in_proj_bias, golden("heads.in_proj_bias.npy")),
                                  max_abs_diff(in.p.out_proj_weight, golden("heads.out_proj_weight.npy")),
                                  max_abs_diff(in.p.out_proj_bias, golden("heads.out_proj_bias.npy")), max_abs_diff(in.x, golden("heads.x.npy"))});
  const MhaResult<double, 2> r = backends::multi_head_attention_2d(ctx.backend, in.x, in.x, in.x, in.p, 4);
  const double o = max_abs_diff(r.output, golden("heads.out_torch.npy"));
  const double w = max_abs_diff(r.weights, golden("heads.w_torch.npy"));
  // torch initialises both biases to zero, so the case above cannot see a candidate that drops
  // them: torch's cross-attention case has non-zero biases (mha_cross_case).
  const MhaCrossCase c = mha_cross_case(ctx.goldens);
  auto cross = [&](const char* name) { return npy::load_double(ctx.goldens / "masking" / fmt::format("mha_cross.{}.npy", name)); };
  const std::size_t heads = 4;
  const auto rb = ctx.backend.multi_head_attention(c.query, c.kv, c.kv, c.p, heads, c.masked);
  double biased = std::max(max_abs_diff(rb.output, cross("out_bool")), max_abs_diff(rb.weights, cross("weights_bool")));
  // The additive mask came after vl-candidate/1's first version: a candidate that does not list it
  // is judged on the rest, and the detail says what was not asked.
  std::string additive = "and an additive mask";
  try {
    const auto ra = ctx.backend.multi_head_attention(c.query, c.kv, c.kv, c.p, heads, c.additive);
    biased = std::max({biased, max_abs_diff(ra.output, cross("out_additive")), max_abs_diff(ra.weights, cross("weights_additive"))});
  } catch (const backends::UnsupportedOption& e) {
    additive = fmt::format("(the additive-mask case not asked: {})", e.what());
  }
  const double worst = std::max({params, o, w, biased});
  Measurement m{worst, fmt::format("nn.MultiheadAttention(16, 4), n=6: output {:.2e}, per-head weights {:.2e}; parameters and input "
                      "from our torch streams vs torch's: {:.2e} (must be 0); with non-zero biases, batch 2, "
                      "cross-attention 3 × 5, {} heads, bool + padding masks {}: {:.2e}",
                      o, w, params, heads, additive, biased)};
  return m.require(params == 0, fmt::format("our torch streams' parameters and input differ from torch's by {:.2e}", params));
}

// nn.MultiheadAttention with its in- and out-projection biases dropped (torch's initial zeros).
class MhaBiasesDropped : public MhaBreak<MhaBiasesDropped> {
 public:
  MhaBiasesDropped() : MhaBreak(backends::plain(), "multi-head biases dropped") {}
  template <class T>
  MhaResult<T, 3> broken(const xt::xtensor<T, 3>& query, const xt::xtensor<T, 3>& key, const xt::xtensor<T, 3>& value,
                         const MhaParameters<T>& p, std::size_t heads, const MhaOptions<T>& o) const {
    MhaParameters<T> unbiased = p;
    unbiased.in_proj_bias.fill(0);
    unbiased.out_proj_bias.fill(0);
    return base().multi_head_attention(query, key, value, unbiased, heads, o);
  }
};

// nn.MultiheadAttention composed by hand with one bug: heads reading interleaved columns (head
// h takes h, h + H, h + 2H, ...: a (S, dh, H) reshape in place of (S, H, dh)), or the 1/√dh
// scale dropped. Masks are not applied (the claim's case has none).
class MhaComposed : public MhaBreak<MhaComposed> {
 public:
  MhaComposed(bool interleaved, std::optional<double> scale, const std::string& name)
      : MhaBreak(backends::plain(), name), interleaved_(interleaved), scale_(scale) {}
  template <class T>
  MhaResult<T, 3> broken(const xt::xtensor<T, 3>& query, const xt::xtensor<T, 3>& key, const xt::xtensor<T, 3>& value,
                         const MhaParameters<T>& p, std::size_t heads, const MhaOptions<T>&) const {
    const std::size_t B = query.shape(0), d = p.in_proj_weight.shape(1), dh = d / heads, Sq = query.shape(1), Sk = key.shape(1);
    auto column = [&](std::size_t h, std::size_t c) { return interleaved_ ? c * heads + h : h * dh + c; };
    // (B, S, d) projected, then head h's dh columns gathered: (B, H, S, dh).
    auto heads_of = [&](const xt::xtensor<T, 3>& x, std::size_t which, std::size_t S) {
      Tensor4<T> out = xt::zeros<T>({B, heads, S, dh});
      for (std::size_t b = 0; b < B; ++b) {
        const xt::xtensor<T, 2> y = detail::mha_project<T>(xt::view(x, b), p, which, d);
        for (std::size_t h = 0; h < heads; ++h)
          for (std::size_t s = 0; s < S; ++s)
            for (std::size_t c = 0; c < dh; ++c) out(b, h, s, c) = y(s, column(h, c));
      }
      return out;
    };
    AttentionOptions<T> o;
    o.scale = T(scale_.value_or(1.0 / std::sqrt(double(dh))));
    o.return_weights = true;
    const auto r = base().attention(heads_of(query, 0, Sq), heads_of(key, 1, Sk), heads_of(value, 2, Sk), o);
    MhaResult<T, 3> out{xt::zeros<T>({B, Sq, d}), r.weights};
    for (std::size_t b = 0; b < B; ++b) {
      xt::xtensor<T, 2> concat = xt::zeros<T>({Sq, d});
      for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t s = 0; s < Sq; ++s)
          for (std::size_t c = 0; c < dh; ++c) concat(s, column(h, c)) = r.output(b, h, s, c);
      xt::xtensor<T, 2> y = matmul<T>(concat, xt::transpose(p.out_proj_weight));
      y += xt::view(p.out_proj_bias, xt::newaxis(), xt::all());
      xt::view(out.output, b) = y;
    }
    return out;
  }

 private:
  bool interleaved_;
  std::optional<double> scale_;
};

// ---------------------------------------------------------------------------------------------
// parameter-count and config-checked: about our own code (the torch initialiser's shapes and
// the seed module's argument checks), run with the pieces below or broken copies of them.

struct HeadsCode {
  std::function<std::size_t(std::size_t d, std::size_t heads)> parameter_count = mha_parameter_count;
  std::function<void(const HeadsConfig&, const HeadsShapes&)> check_config = check_heads_config;
};

Measurement parameter_count(const HeadsCode& code) {
  double worst = 0;
  std::vector<std::string> parts;
  for (std::size_t d : {16, 64, 512}) {
    std::vector<std::string> counts;
    for (std::size_t h : {1, 2, 4, 8, 16}) {
      const std::size_t n = code.parameter_count(d, h);
      worst = std::max(worst, std::fabs(double(n) - double(4 * d * d + 4 * d)));
      counts.push_back(fmt::format("h={}: {}", h, n));
    }
    parts.push_back(fmt::format("d={} (4d²+4d = {}): {}", d, 4 * d * d + 4 * d, fmt::join(counts, ", ")));
  }
  return {worst, fmt::format("largest |count − (4d² + 4d)|: {}; {}", worst, fmt::join(parts, "; "))};
}

Measurement config_checked(const HeadsCode& code) {
  // Each bad configuration must be refused with a message that names the offending numbers;
  // the seed's own configuration must be accepted.
  std::vector<std::string> failures, seen;
  auto must_refuse = [&](const std::string& what, const std::vector<std::string>& mentions, const std::function<void()>& f) {
    try {
      f();
      failures.push_back(what + ": accepted");
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      for (const auto& m : mentions)
        if (msg.find(m) == std::string::npos) failures.push_back(fmt::format("{}: message '{}' does not name {}", what, msg, m));
      seen.push_back(what);
    }
  };
  const HeadsShapes ok_shapes{{{3, 4}, {3, 4}, {3, 4}}};
  must_refuse("d_model 10, 4 heads (seed module)", {"10", "4"}, [&] { code.check_config({10, 4, 0.0f, false}, {{{3, 10}, {3, 10}, {3, 10}}}); });
  must_refuse("d_model 10, 4 heads (nn.MultiheadAttention init)", {"10", "4"}, [&] { code.parameter_count(10, 4); });
  must_refuse("d_model 10, 4 heads (multi-head forward)", {"10", "4"}, [&] {
    MhaParameters<double> p{xt::zeros<double>({30, 10}), xt::zeros<double>({30}), xt::zeros<double>({10, 10}), xt::zeros<double>({10})};
    multi_head_self_attention<double, 2>(xt::zeros<double>({3, 10}), p, 4);
  });
  must_refuse("dropout 1", {"1"}, [&] { code.check_config({4, 2, 1.0f, false}, ok_shapes); });
  must_refuse("dropout -0.1", {"-0.1"}, [&] { code.check_config({4, 2, -0.1f, false}, ok_shapes); });
  must_refuse("key of another length", {"(3, 4)", "(2, 4)"}, [&] { code.check_config({4, 2, 0.0f, false}, {{{3, 4}, {2, 4}, {3, 4}}}); });
  must_refuse("rows of 6 columns for d_model 4", {"6"}, [&] { code.check_config({4, 2, 0.0f, false}, {{{3, 6}, {3, 6}, {3, 6}}}); });
  try {
    code.check_config({4, 2, 0.5f, false}, ok_shapes);
  } catch (const std::exception& e) {
    failures.push_back(fmt::format("seed configuration (d_model 4, 2 heads, dropout 0.5) refused: {}", e.what()));
  }
  // Each failure is an unmet condition of the claim (tolerance: none); the value counts them.
  return {double(failures.size()),
          failures.empty() ? fmt::format("refused with a message naming the numbers: {}; seed configuration accepted", fmt::join(seen, ", "))
                           : fmt::format("{}", fmt::join(failures, "; ")),
          {}, failures};
}

// Heads that multiply the parameters instead of dividing the dimension: a full-size attention
// (4d² + 4d) per head.
HeadsCode parameters_per_head() {
  HeadsCode code;
  code.parameter_count = [](std::size_t d, std::size_t heads) { return heads * mha_parameter_count(d, 1); };
  return code;
}
// Configuration checks that let bad input through: the head size floored (d_model 10 with 4
// heads "works" with heads of 2 columns, dropping 2), the dropout range not checked.
HeadsCode head_size_floored() {
  HeadsCode code;
  code.check_config = [](const HeadsConfig& c, const HeadsShapes& shapes) {
    if (c.num_heads == 0 || c.d_model % c.num_heads == 0) return check_heads_config(c, shapes);  // only the divisibility is lost
    HeadsConfig floored = c;
    floored.d_model = c.d_model / c.num_heads * c.num_heads;
    auto s = shapes;
    for (auto& x : s)
      if (x[1] == c.d_model) x[1] = floored.d_model;  // rows of d_model columns read as floored heads
    check_heads_config(floored, s);
  };
  return code;
}
// The seed's invariant _2 (query, key and value of one shape (seq, d_model)) not checked.
HeadsCode shapes_unchecked() {
  HeadsCode code;
  code.check_config = [](const HeadsConfig& c, const HeadsShapes&) {
    check_heads_config(c, {{{1, c.d_model}, {1, c.d_model}, {1, c.d_model}}});
  };
  return code;
}
HeadsCode dropout_unchecked() {
  HeadsCode code;
  code.check_config = [](const HeadsConfig& c, const HeadsShapes& shapes) {
    HeadsConfig any = c;
    any.dropout = 0;
    check_heads_config(any, shapes);
  };
  return code;
}

CheckFn on(Measurement (*predicate)(const HeadsCode&), HeadsCode code) {
  return [predicate, code](const CheckContext&) { return predicate(code); };
}

}  // namespace

std::vector<ClaimCheck> heads_checks() {
  return {
      {"attention.mha-matches-torch", "nn.MultiheadAttention(16, 4): parameters, output, per-head weights", mha_matches_torch,
       {broken_backend("heads sliced wrongly (interleaved columns)",
                       std::make_shared<MhaComposed>(true, std::nullopt, "heads sliced wrongly")),
        broken_backend("scale removed", std::make_shared<MhaComposed>(false, 1.0, "multi-head scale removed")),
        broken_backend("in- and out-projection biases dropped", std::make_shared<MhaBiasesDropped>())}},
      {"attention.parameter-count", "nn.MultiheadAttention parameters, d = 16, 64, 512, h = 1 … 16", on(parameter_count, {}),
       {broken_code("a full-size attention per head", on(parameter_count, parameters_per_head()))}},
      {"attention.config-checked", "bad d_model/heads, dropout and shapes refused with a clear message", on(config_checked, {}),
       {broken_code("head size floored (d_model % heads not checked)", on(config_checked, head_size_floored())),
        broken_code("dropout range not checked", on(config_checked, dropout_unchecked())),
        broken_code("shapes not checked (the seed's invariant _2)", on(config_checked, shapes_unchecked()))}},
  };
}

}  // namespace vl::lessons::attention
