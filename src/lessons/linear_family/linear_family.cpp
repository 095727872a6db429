// Lesson linear-family: the claims' predicates (spec: specs/linear_family.md).
//
// Each check draws its inputs, calls the judged backend's linear_family operation in the forms
// it verifies, and measures the largest relative gap max|a − b| / max|b| from what the claim
// says the result must be: ONNX's recurrence (our kernel of its definition), another form, another
// chunk size, one pass over the whole sequence, the rule it reduces to.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "backends/backend.hpp"
#include "engine/generated_cases.hpp"
#include "kernels/reference/heads.hpp"
#include "kernels/reference/linear_attention.hpp"
#include "kernels/reference/matmul.hpp"
#include "lessons/linear_family/linear_family.hpp"
#include "lessons/linear_family/linear_family_sweep.hpp"
#include "numeric/compare.hpp"
#include "numeric/numpy_random.hpp"
#include "numeric/precision.hpp"

namespace vl::lessons::linear_family {

std::vector<std::size_t> chunk_sizes(std::size_t n) {
  std::vector<std::size_t> c = {1, 2, 3, 5, n, n + 3, 64};
  for (std::size_t d = 2; d < n; ++d)
    if (n % d == 0) c.push_back(d);
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

std::string FormAt::name() const { return form == FamilyForm::chunked ? fmt::format("chunked c={}", chunk) : to_string(form); }

std::vector<FormAt> forms(std::size_t n) {
  std::vector<FormAt> f = {{FamilyForm::recurrent, 1}, {FamilyForm::parallel, 1}};
  for (std::size_t c : chunk_sizes(n)) f.push_back({FamilyForm::chunked, c});
  return f;
}

FamilyResult<double> definition(const FamilyInputs<double>& in, UpdateRule rule, std::optional<double> scale) {
  return vl::linear_family<double>(in, FamilyOptions{rule, FamilyForm::recurrent, 1, scale});
}

void Worst::see(double g, UpdateRule rule, const std::string& at) {
  double& r = per_rule[to_string(rule)];
  r = worse(r, g);
  if (worse(value, g) > value || where.empty()) {
    value = worse(value, g);
    where = at;
  }
}

std::string Worst::rules() const {
  std::vector<std::string> parts;
  for (const auto& [rule, v] : per_rule) parts.push_back(fmt::format("{} {:.2e}", rule, v));
  return fmt::format("{}", fmt::join(parts, ", "));
}

Measurement measured(const Worst& w, const std::string& what) {
  return {w.value, fmt::format("largest relative gap {:.2e} ({}); per rule: {}; {}", w.value, w.where, w.rules(), what)};
}

FamilyInputs<double> rounded(Precision p, FamilyInputs<double> in) {
  in.q = rounded_to(p, in.q), in.k = rounded_to(p, in.k), in.v = rounded_to(p, in.v);
  in.g = rounded_to(p, in.g), in.beta = rounded_to(p, in.beta);
  if (in.past) in.past = rounded_to(p, *in.past);
  return in;
}

namespace {

std::string shape_name(const Shape& s) {
  return fmt::format("B={} Hq={} Hkv={} n={} d_k={} d_v={}{}{}", s.B, s.Hq, s.Hkv, s.n, s.dk, s.dv,
                     s.per_dimension ? " decay per key dim" : "", s.past ? " with past" : "");
}

// The sweep: one token up; d_k ≠ d_v; one head, equal heads, GQA groups of 2 and 3, MQA; decay
// per head and per key dimension; with and without a past state.
const std::vector<Shape> kShapes = {
    {1, 1, 1, 1, 4, 5, false, false}, {1, 2, 2, 7, 3, 4, true, true},  {2, 4, 2, 12, 5, 3, false, true},
    {1, 4, 1, 17, 8, 6, true, false}, {1, 6, 2, 24, 4, 4, true, true}, {1, 2, 1, 40, 16, 8, false, true},
};

template <class T>
FamilyInputs<float> to_float(const FamilyInputs<T>& in) {
  FamilyInputs<float> f{xt::cast<float>(in.q), xt::cast<float>(in.k), xt::cast<float>(in.v), xt::cast<float>(in.g),
                        xt::cast<float>(in.beta), std::nullopt};
  if (in.past) f.past = xt::xtensor<float, 4>(xt::cast<float>(*in.past));
  return f;
}
FamilyInputs<double> to_double(const FamilyInputs<float>& in) {
  FamilyInputs<double> d{xt::cast<double>(in.q), xt::cast<double>(in.k), xt::cast<double>(in.v), xt::cast<double>(in.g),
                         xt::cast<double>(in.beta), std::nullopt};
  if (in.past) d.past = xt::xtensor<double, 4>(xt::cast<double>(*in.past));
  return d;
}

}  // namespace

template <>
FamilyInputs<double> draw<double>(const Shape& s, std::uint64_t seed) {
  numpy::Generator rng(seed);
  auto normal = [&](std::vector<std::size_t> shape) {
    xt::xarray<double> a = xt::zeros<double>(shape);
    for (auto& x : a) x = rng.standard_normal();
    return a;
  };
  FamilyInputs<double> in;
  in.q = normal({s.B, s.Hq, s.n, s.dk});
  in.k = normal({s.B, s.Hkv, s.n, s.dk});
  in.v = normal({s.B, s.Hkv, s.n, s.dv});
  for (std::size_t b = 0; b < s.B; ++b)
    for (std::size_t h = 0; h < s.Hkv; ++h)
      for (std::size_t t = 0; t < s.n; ++t) {
        auto key = xt::view(in.k, b, h, t, xt::all());
        key /= std::sqrt(xt::sum(key * key)());
      }
  const xt::xtensor<double, 4> x = normal({s.B, s.Hkv, s.n, s.per_dimension ? s.dk : 1});
  in.g = -xt::log1p(xt::exp(-(x + 2.0)));  // log σ(x + 2) = −log(1 + e^{−(x+2)})
  const xt::xtensor<double, 3> y = normal({s.B, s.Hkv, s.n});
  in.beta = 1.0 / (1.0 + xt::exp(-y));
  if (s.past) in.past = xt::xtensor<double, 4>(normal({s.B, s.Hkv, s.dk, s.dv}));
  return in;
}
template <>
FamilyInputs<float> draw<float>(const Shape& s, std::uint64_t seed) {
  return to_float(draw<double>(s, seed));
}

namespace {

FamilyInputs<double> inputs_for(const CheckContext& ctx, const Shape& s, std::uint64_t seed) {
  return rounded(ctx.precision, draw<double>(s, seed));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The listing: one small ONNX-layout case, B = 1, T = 6, q_num_heads 2, kv_num_heads 1,
// d_k = 4, d_v = 3, drawn from default_rng(21) in the order Q, K, V, x (decay), y (beta), each in
// C order as NumPy's standard_normal fills it; keys normalised, decay log σ(x + 2), β = σ(y).
// Each rule's three forms (chunk 4: the last chunk holds two tokens); the chunked outputs are
// compared with NumPy's recurrence (reference_outputs/generators/linear_family_goldens.py).

// [linear-family.main]
ListingOutput listing_main(const ListingContext& ctx) {
  const std::size_t T = 6, hq = 2, hkv = 1, dk = 4, dv = 3, chunk = 4;
  const backends::Backend& b = ctx.implementation();  // the audited backend's LinearAttention
  numpy::Generator rng(21);
  auto draw3 = [&](std::size_t width) {
    xt::xtensor<double, 3> a = xt::zeros<double>({std::size_t(1), T, width});
    for (auto& x : a) x = rng.standard_normal();
    return a;
  };
  const xt::xtensor<double, 3> q = draw3(hq * dk);
  xt::xtensor<double, 3> k = draw3(hkv * dk);
  const xt::xtensor<double, 3> v = draw3(hkv * dv), x = draw3(hkv), y = draw3(hkv);
  FamilyInputs<double> in;
  in.q = split_heads<double>(q, hq);
  in.k = split_heads<double>(k, hkv);
  for (std::size_t t = 0; t < T; ++t) {
    auto key = xt::view(in.k, 0, 0, t);
    key /= std::sqrt(xt::sum(key * key)());
  }
  in.v = split_heads<double>(v, hkv);
  in.g = split_heads<double>(xt::xtensor<double, 3>(-xt::log1p(xt::exp(-(x + 2.0)))), hkv);
  in.beta = xt::view(split_heads<double>(xt::xtensor<double, 3>(1.0 / (1.0 + xt::exp(-y))), hkv), xt::all(), xt::all(), xt::all(), 0);

  ListingOutput out;
  out.lines.push_back(fmt::format("Q: (1, {}, {}) K: (1, {}, {}) V: (1, {}, {}), q_num_heads {}, kv_num_heads {}", T, hq * dk, T,
                                  hkv * dk, T, hkv * dv, hq, hkv));
  FamilyResult<double> last;
  for (UpdateRule rule : kRules) {
    const FamilyResult<double> rec = b.linear_family(in, {rule, FamilyForm::recurrent, chunk, {}});
    const FamilyResult<double> par = b.linear_family(in, {rule, FamilyForm::parallel, chunk, {}});
    last = b.linear_family(in, {rule, FamilyForm::chunked, chunk, {}});
    const double g = std::max({gap(par, rec), gap(last, rec)});
    out.lines.push_back(fmt::format("{}: the three forms agree to 1e-12: {}", to_string(rule), g < 1e-12 ? "True" : "False"));
    out.arrays[std::string("O_") + to_string(rule)] = merge_heads<double>(last.o);
  }
  out.lines.push_back(fmt::format("present_state: ({}) -> fixed, whatever the length", fmt::join(last.state.shape(), ", ")));
  return out;
}
// [linear-family.main]

Measurement forms_agree(const CheckContext& ctx) {
  // Also the largest gap at each shape's n, per rule (series for the docs' plot).
  Worst w;
  std::vector<Series> series = {{"n", {}, ""}};
  for (const Shape& s : kShapes) series[0].values.push_back(double(s.n));
  for (UpdateRule rule : kRules) {
    series.push_back({std::string("largest gap between forms, ") + to_string(rule), {}, ""});
    for (std::size_t i = 0; i < kShapes.size(); ++i) {
      const FamilyInputs<double> in = inputs_for(ctx, kShapes[i], 2100 + i);
      const FamilyResult<double> want = definition(in, rule);
      double at_n = 0;
      for (const FormAt& f : forms(kShapes[i].n)) {
        const double g = gap(run(ctx.backend, in, rule, f.form, f.chunk), want);
        at_n = worse(at_n, g);
        w.see(g, rule, fmt::format("{}, {}, {}", to_string(rule), f.name(), shape_name(kShapes[i])));
      }
      series.back().values.push_back(at_n);
    }
  }
  Measurement m = measured(w, fmt::format("outputs and present states of each form in {} against ONNX's recurrence in float64 on the same inputs", to_string(ctx.precision)));
  m.series = std::move(series);
  return m;
}

// Generated cases (engine/generated_cases.hpp) over the claims' terms, within their derivation's
// range (n ≤ 40, d ≤ 16): batch, key/value heads and the GQA group, n, d_k, d_v, the rule, decay
// per key dimension, a past state, and the chunk size (1 … 45: divisors, remainders, above n).
// One anchor per rule (n = 13, chunk 4, GQA 2 × 2, a past state) and one with the decay per key
// dimension meet each control's bug whatever the seed.
namespace {

const std::vector<CaseTerm> kFamilyTerms = {{"B", 1, 2, 1, {}},   {"Hkv", 1, 3, 1, {}},  {"group", 1, 3, 1, {}},
                                            {"n", 1, 40, 1, {}},  {"d_k", 1, 16, 1, {}}, {"d_v", 1, 16, 1, {}},
                                            {"rule", 0, 3, 0, {"linear", "gated", "delta", "gated_delta"}},
                                            {"decay", 0, 1, 0, {"per head", "per key dim"}},
                                            {"past", 0, 1, 0, {"none", "given"}},
                                            {"chunk", 1, 45, 1, {}}};
//                                                         B Hkv group n d_k d_v rule decay past chunk
const std::vector<std::vector<int>> kFamilyAnchors = {{1, 2, 2, 13, 4, 3, 0, 0, 1, 4},
                                                      {1, 2, 2, 13, 4, 3, 1, 0, 1, 4},
                                                      {1, 2, 2, 13, 4, 3, 2, 0, 1, 4},
                                                      {1, 2, 2, 13, 4, 3, 3, 0, 1, 4},
                                                      {2, 1, 3, 9, 5, 2, 1, 1, 0, 2}};

struct FamilyCase {
  UpdateRule rule;
  FamilyInputs<double> in;
  std::size_t chunk;
};

// `always_past`: a past state whatever the case's term says (the reductions need one to keep).
FamilyCase family_case(const CheckContext& ctx, const Case& c, bool always_past = false) {
  const std::size_t Hkv = c["Hkv"];
  const Shape s{std::size_t(c["B"]), Hkv * c["group"], Hkv, std::size_t(c["n"]), std::size_t(c["d_k"]), std::size_t(c["d_v"]),
                c["decay"] == 1, always_past || c["past"] == 1};
  return {kRules[c["rule"]], inputs_for(ctx, s, c.data_seed()), std::size_t(c["chunk"])};
}

}  // namespace

namespace {

// The case's three forms (recurrent, parallel, chunked at its chunk size) against `want`: the
// largest relative gap, and the form it was found in.
template <class T>
Measurement three_forms_gap(const CheckContext& ctx, const FamilyInputs<T>& in, UpdateRule rule, std::size_t chunk,
                            const FamilyResult<double>& want, const std::string& what) {
  double g = 0;
  std::string where;
  for (const FormAt& f : {FormAt{FamilyForm::recurrent, 1}, FormAt{FamilyForm::parallel, 1}, FormAt{FamilyForm::chunked, chunk}}) {
    const double gf = gap(run(ctx.backend, in, rule, f.form, f.chunk), want);
    if (worse(g, gf) > g || where.empty()) g = worse(g, gf), where = f.name();
  }
  return Measurement{g, fmt::format("largest relative gap {} {:.2e} ({})", what, g, where)};
}

}  // namespace

Measurement forms_agree_generated(const CheckContext& ctx) {
  return generated_cases(ctx, kFamilyTerms, kFamilyAnchors, Worse::larger, [&](const Case& c) {
    const FamilyCase fc = family_case(ctx, c);
    return three_forms_gap(ctx, fc.in, fc.rule, fc.chunk, definition(fc.in, fc.rule), "from ONNX's recurrence");
  });
}

Measurement forms_agree_float32_generated(const CheckContext& ctx) {
  // The float32 forms against the recurrence in float64 on the same (float32) inputs, over the
  // generated cases (n ≤ 40, d_k, d_v ≤ 16: the bound 2·n·d·u's range).
  return generated_cases(ctx, kFamilyTerms, kFamilyAnchors, Worse::larger, [&](const Case& c) {
    const FamilyCase fc = family_case(ctx, c);
    const FamilyInputs<float> in = to_float(fc.in);
    return three_forms_gap(ctx, in, fc.rule, fc.chunk, definition(to_double(in), fc.rule),
                           "of the float32 forms from the float64 recurrence");
  });
}

Measurement chunk_invariant_generated(const CheckContext& ctx) {
  return generated_cases(ctx, kFamilyTerms, kFamilyAnchors, Worse::larger, [&](const Case& c) {
    const FamilyCase fc = family_case(ctx, c);
    const double g = gap(run(ctx.backend, fc.in, fc.rule, FamilyForm::chunked, fc.chunk), run(ctx.backend, fc.in, fc.rule, FamilyForm::chunked, 64));
    return Measurement{g, fmt::format("largest relative gap of chunk size {} from chunk size 64: {:.2e}", fc.chunk, g)};
  });
}

namespace {

// One decode step from `step`'s past state, token 0: ONNX's update applied once (our recurrence's
// step), and each query head's read of the new state.
FamilyResult<double> one_step_expected(const FamilyInputs<double>& step, UpdateRule rule) {
  const std::size_t B = step.q.shape(0), Hq = step.q.shape(1), Hkv = step.k.shape(1), G = Hq / Hkv, dk = step.q.shape(3);
  FamilyResult<double> expect{xt::zeros<double>({B, Hq, std::size_t(1), step.v.shape(3)}), *step.past};
  const double scale = 1 / std::sqrt(double(dk));
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < Hkv; ++h) {
      const FamilyHead<double> head = family_head(step, rule, b, h, G);
      xt::xtensor<double, 2> S = head.s0;
      OnnxStep::update(rule, S, head, 0);
      xt::view(expect.state, b, h) = S;
      for (std::size_t j = 0; j < G; ++j)
        xt::view(expect.o, b, h * G + j, 0) = scale * matvec<double>(xt::transpose(S), xt::view(head.q, j, 0));
    }
  return expect;
}

// Prefill on tokens [0, t1), continue on [t1, n) from its present state: the joined outputs and
// the last state, to set against one pass, and the prefill's own state.
struct Continued {
  FamilyResult<double> joined;
  xt::xtensor<double, 4> prefill_state;
};
Continued prefill_then_continue(const backends::Backend& b, const FamilyInputs<double>& in, UpdateRule rule, const FormAt& f, std::size_t t1) {
  const std::size_t n = in.q.shape(2);
  const FamilyResult<double> first = run(b, tokens(in, 0, t1), rule, f.form, f.chunk);
  FamilyInputs<double> rest = tokens(in, t1, n);
  rest.past = first.state;
  const FamilyResult<double> second = run(b, rest, rule, f.form, f.chunk);
  return {{xt::concatenate(xt::xtuple(first.o, second.o), 2), second.state}, first.state};
}

// The three reductions in one form: gated with zero log-decay against linear, gated_delta with
// zero log-decay against delta, and delta with β = 0's present state against the past state
// (`in` must have one).
struct ReductionGaps {
  double gated_linear, gated_delta_delta, state_kept;
};
ReductionGaps reduction_gaps(const backends::Backend& b, const FamilyInputs<double>& in, const FormAt& f) {
  FamilyInputs<double> no_decay = in, no_beta = in;
  no_decay.g.fill(0.0);
  no_beta.beta.fill(0.0);
  return {gap(run(b, no_decay, UpdateRule::gated, f.form, f.chunk), run(b, in, UpdateRule::linear, f.form, f.chunk)),
          gap(run(b, no_decay, UpdateRule::gated_delta, f.form, f.chunk), run(b, in, UpdateRule::delta, f.form, f.chunk)),
          relative(run(b, no_beta, UpdateRule::delta, f.form, f.chunk).state, *in.past)};
}

}  // namespace

// The two claims below draw the form too (0 recurrent, 1 parallel, 2 chunked at the drawn size) and,
// for the continuation, where the sequence is split (clamped to 1 … n − 1; n = 1 has no split).
namespace {
std::vector<CaseTerm> with_terms(std::vector<CaseTerm> terms, std::initializer_list<CaseTerm> more) {
  terms.insert(terms.end(), more);
  return terms;
}
const CaseTerm kFormTerm{"form", 0, 2, 0, {"recurrent", "parallel", "chunked"}};
FormAt form_of(const Case& c) {
  return c["form"] == 0 ? FormAt{FamilyForm::recurrent, 1} : c["form"] == 1 ? FormAt{FamilyForm::parallel, 1} : FormAt{FamilyForm::chunked, std::size_t(c["chunk"])};
}
// The forms-agree anchors, each with a form, and for the continuation a split after 5 of 13 tokens.
// The controls break the recurrent step (linear_family_broken_backends.hpp), which the first two
// anchors run with a past state: linear, and gated_delta (the decay after the write). The chunked
// form, a fast kernel's on the fused backend, takes the gated rule with a past state and the decay
// per key dimension; the parallel form the delta rule.
std::vector<std::vector<int>> anchors_with(std::initializer_list<int> extra_last) {
  constexpr int recurrent = 0, parallel = 1, chunked = 2;
  const int form_of_anchor[] = {recurrent, chunked, parallel, recurrent, chunked};  // linear, gated, delta, gated_delta, gated per key dim
  std::vector<std::vector<int>> out;
  for (std::size_t i = 0; i < kFamilyAnchors.size(); ++i) {
    std::vector<int> v = kFamilyAnchors[i];
    v.push_back(form_of_anchor[i]);
    v.insert(v.end(), extra_last);
    out.push_back(v);
  }
  return out;
}
}  // namespace

Measurement state_continuation_generated(const CheckContext& ctx) {
  static const std::vector<CaseTerm> terms = with_terms(kFamilyTerms, {kFormTerm, {"split", 1, 39, 1, {}}});
  static const std::vector<std::vector<int>> anchors = anchors_with({5});
  return generated_cases(ctx, terms, anchors, Worse::larger, [&](const Case& c) {
    const FamilyCase fc = family_case(ctx, c);
    const FormAt f = form_of(c);
    const std::size_t n = fc.in.q.shape(2);
    const FamilyResult<double> whole = run(ctx.backend, fc.in, fc.rule, f.form, f.chunk);
    double g = relative(whole.state, definition(fc.in, fc.rule).state);
    std::string what = "present_state against the recurrence's";
    if (n >= 2) {
      const std::size_t t1 = std::min<std::size_t>(std::size_t(c["split"]), n - 1);
      const double split = gap(prefill_then_continue(ctx.backend, fc.in, fc.rule, f, t1).joined, whole);
      if (worse(g, split) > g) g = worse(g, split), what = fmt::format("prefill {} then continue against one pass", t1);
      FamilyInputs<double> step = tokens(fc.in, n - 1, n);
      step.past = run(ctx.backend, tokens(fc.in, 0, n - 1), fc.rule, f.form, f.chunk).state;
      const double one = gap(run(ctx.backend, step, fc.rule, f.form, f.chunk), one_step_expected(step, fc.rule));
      if (worse(g, one) > g) g = worse(g, one), what = "one decode step against ONNX's update";
    }
    return Measurement{g, fmt::format("largest relative gap {:.2e} ({}, {})", g, f.name(), what)};
  });
}

Measurement reductions_generated(const CheckContext& ctx) {
  // The drawn rule is not read: each case checks the three reductions; the past state is always given.
  static const std::vector<CaseTerm> terms = with_terms(kFamilyTerms, {kFormTerm});
  static const std::vector<std::vector<int>> anchors = anchors_with({});
  return generated_cases(ctx, terms, anchors, Worse::larger, [&](const Case& c) {
    const FamilyCase fc = family_case(ctx, c, true);
    const FormAt f = form_of(c);
    const ReductionGaps r = reduction_gaps(ctx.backend, fc.in, f);
    const double g = worse(worse(r.gated_linear, r.gated_delta_delta), r.state_kept);
    return Measurement{g, fmt::format("{}: gated(g = 0) vs linear {:.2e}, gated_delta(g = 0) vs delta {:.2e}, delta(β = 0) state vs past {:.2e}",
                                      f.name(), r.gated_linear, r.gated_delta_delta, r.state_kept)};
  });
}

Measurement forms_agree_float32(const CheckContext& ctx) {
  // The float32 forms against the recurrence in float64 on the same (float32) inputs.
  Worst w;
  for (UpdateRule rule : kRules)
    for (std::size_t i = 0; i < kShapes.size(); ++i) {
      const FamilyInputs<float> in = draw<float>(kShapes[i], 2100 + i);
      const FamilyResult<double> want = definition(to_double(in), rule);
      for (const FormAt& f : forms(kShapes[i].n))
        w.see(gap(run(ctx.backend, in, rule, f.form, f.chunk), want), rule,
              fmt::format("{}, {}, {}", to_string(rule), f.name(), shape_name(kShapes[i])));
    }
  return measured(w, "float32 forms against the float64 recurrence on the same inputs");
}

Measurement chunk_invariant(const CheckContext& ctx) {
  Worst w;
  for (UpdateRule rule : kRules)
    for (std::size_t i = 0; i < kShapes.size(); ++i) {
      const FamilyInputs<double> in = inputs_for(ctx, kShapes[i], 2200 + i);
      const FamilyResult<double> at64 = run(ctx.backend, in, rule, FamilyForm::chunked, 64);
      for (std::size_t c : chunk_sizes(kShapes[i].n))
        w.see(gap(run(ctx.backend, in, rule, FamilyForm::chunked, c), at64), rule,
              fmt::format("{}, chunk {} against 64, {}", to_string(rule), c, shape_name(kShapes[i])));
    }
  return measured(w, "the chunked form at every chunk size against chunk_size 64 (ONNX's hint)");
}

Measurement state_continuation(const CheckContext& ctx) {
  Worst w;
  for (UpdateRule rule : kRules)
    for (std::size_t i = 1; i < kShapes.size(); ++i) {
      const Shape& s = kShapes[i];
      const FamilyInputs<double> in = inputs_for(ctx, s, 2300 + i);
      const std::size_t t1 = s.n / 3 + 1;
      const FamilyResult<double> want = definition(in, rule);
      for (const FormAt& f : forms(s.n)) {
        if (f.form == FamilyForm::chunked && f.chunk != 5 && f.chunk != 64) continue;
        const FamilyResult<double> whole = run(ctx.backend, in, rule, f.form, f.chunk);
        const std::string at = fmt::format("{}, {}, {}", to_string(rule), f.name(), shape_name(s));
        const Continued continued = prefill_then_continue(ctx.backend, in, rule, f, t1);
        w.see(gap(continued.joined, whole), rule, at + ": prefill " + std::to_string(t1) + " then continue");
        w.see(relative(whole.state, want.state), rule, at + ": present_state against the recurrence's");
        // One decode step from the prefill's state: ONNX's update applied once.
        FamilyInputs<double> step = tokens(in, s.n - 1, s.n);
        step.past = continued.prefill_state;
        w.see(gap(run(ctx.backend, step, rule, f.form, f.chunk), one_step_expected(step, rule)), rule, at + ": one decode step against ONNX's update");
      }
    }
  return measured(w, "prefill + continue against one pass, present_state against the recurrence, one decode step");
}

Measurement reductions(const CheckContext& ctx) {
  Worst w;
  for (std::size_t i = 0; i < kShapes.size(); ++i) {
    Shape s = kShapes[i];
    s.past = true;  // β = 0 must leave a state that is there
    const FamilyInputs<double> in = inputs_for(ctx, s, 2400 + i);
    for (const FormAt& f : forms(s.n)) {
      const std::string at = fmt::format("{}, {}", f.name(), shape_name(s));
      const ReductionGaps r = reduction_gaps(ctx.backend, in, f);
      w.see(r.gated_linear, UpdateRule::gated, "gated with zero log-decay against linear, " + at);
      w.see(r.gated_delta_delta, UpdateRule::gated_delta, "gated_delta with zero log-decay against delta, " + at);
      w.see(r.state_kept, UpdateRule::delta, "delta with β = 0: present_state against past_state, " + at);
    }
  }
  return measured(w, "gated(g = 0) = linear, gated_delta(g = 0) = delta, delta(β = 0) keeps the state");
}

}  // namespace vl::lessons::linear_family
