// Lesson attention, the gradient (specs/attention.md, "The gradient"): dQ, dK, dV against
// central differences and PyTorch's autograd, seed 002's float32 fixture and its tests
// (gradient, dropout at inference, the causal mask); with the broken backends each claim must
// reject.
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xview.hpp>

#include "backends/registry.hpp"
#include "kernels/reference/gqa.hpp"
#include "kernels/reference/matmul.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/attention/attention_common.hpp"
#include "lessons/attention_backward_error_bound.hpp"
#include "lessons/attention_cases.hpp"
#include "numeric/precision.hpp"

namespace vl::lessons::attention {

namespace {

// L = Σ G ⊙ O, the loss whose gradient the backward computes for dO = G.
double loss(const backends::Backend& b, const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
            const Tensor4<double>& g, const AttentionOptions<double>& o) {
  const auto out = b.attention(q, k, v, o).output;
  double s = 0;
  for (std::size_t i = 0; i < g.size(); ++i) s += g.flat(i) * out.flat(i);
  return s;
}

struct GradCase {
  std::string name;
  Tensor4<double> q, k, v, g;
  AttentionOptions<double> options;
};

std::vector<GradCase> grad_cases() {
  std::vector<GradCase> cases;
  {
    numpy::Generator rng(20);
    cases.push_back({"2 heads, n=5, d=4", draw4(rng, {1, 2, 5, 4}), draw4(rng, {1, 2, 5, 4}), draw4(rng, {1, 2, 5, 4}),
                     draw4(rng, {1, 2, 5, 4}), {}});
  }
  {
    numpy::Generator rng(21);
    GradCase c{"causal, n=6, d=3, d_v=5", draw4(rng, {1, 1, 6, 3}), draw4(rng, {1, 1, 6, 3}), draw4(rng, {1, 1, 6, 5}),
               draw4(rng, {1, 1, 6, 5}), {}};
    c.options.causal = true;
    cases.push_back(c);
  }
  {
    numpy::Generator rng(22);
    GradCase c{"batch 2, boolean mask, Sq=4 Sk=7", draw4(rng, {2, 1, 4, 3}), draw4(rng, {2, 1, 7, 3}), draw4(rng, {2, 1, 7, 2}),
               draw4(rng, {2, 1, 4, 2}), {}};
    xt::xarray<bool> allowed = rng.random({4, 7}) < 0.5;
    xt::view(allowed, xt::all(), 0) = true;
    c.options.allowed = allowed;
    cases.push_back(c);
  }
  {
    // Every term a backward can drop counts here: grouped-query heads (dK, dV sum over the two
    // query heads of each group), a scale that is not 1/√D, an additive mask.
    numpy::Generator rng(23);
    GradCase c{"GQA 4 query heads over 2 kv heads, scale 0.7, additive mask, Sq=3 Sk=4", draw4(rng, {1, 4, 3, 3}),
               draw4(rng, {1, 2, 4, 3}), draw4(rng, {1, 2, 4, 2}), draw4(rng, {1, 4, 3, 2}), {}};
    c.options.scale = 0.7;
    c.options.bias = xt::xarray<double>(draw4(rng, {1, 1, 3, 4}));
    cases.push_back(c);
  }
  return cases;
}

Measurement backward_finite_differences(const CheckContext& ctx) {
  // Central differences with step h = 1e-5 of L = Σ G ⊙ O, against dQ, dK, dV.
  const double step = 1e-5;
  double worst = 0;
  std::string where = "";
  std::size_t entries = 0;
  for (GradCase c : grad_cases()) {
    const auto grads = ctx.backend.attention_backward(c.q, c.k, c.v, c.g, c.options);
    const std::array<std::pair<const char*, std::pair<Tensor4<double>*, const Tensor4<double>*>>, 3> inputs = {
        {{"dQ", {&c.q, &grads.dq}}, {"dK", {&c.k, &grads.dk}}, {"dV", {&c.v, &grads.dv}}}};
    for (const auto& [name, pair] : inputs) {
      Tensor4<double>& x = *pair.first;
      const Tensor4<double>& analytic = *pair.second;
      if (analytic.shape() != x.shape()) return Measurement::failing(kInf, fmt::format("{}: {} has the wrong shape", c.name, name));
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double keep = x.flat(i);
        x.flat(i) = keep + step;
        const double up = loss(ctx.backend, c.q, c.k, c.v, c.g, c.options);
        x.flat(i) = keep - step;
        const double down = loss(ctx.backend, c.q, c.k, c.v, c.g, c.options);
        x.flat(i) = keep;
        double err = std::fabs((up - down) / (2 * step) - analytic.flat(i));
        if (std::isnan(err)) err = kInf;
        if (err > worst) { worst = err; where = fmt::format("{}, {}[{}]", c.name, name, i); }
        ++entries;
      }
    }
  }
  return {worst,
          fmt::format("max |backward − central difference (h = 1e-5)| over {} entries: {:.2e} ({})", entries, worst, where)};
}

namespace {

// The generated terms: the attention terms where every query sees a key (no key lengths, no
// window, no bottom-right alignment: the built-in masks always show query i its key i mod Sk, and
// a top-left causal mask shows it key 0 … i), so that L is a smooth function of every input (a row
// that sees no key is masking.fully-masked-row-zero's); no softcap (the backward the operation
// defines has none: ops/attention.hpp).
std::vector<CaseTerm> fd_terms() {
  std::vector<CaseTerm> t = attention_case_terms(false);
  for (CaseTerm& term : t) {
    if (term.name == "kv_lengths" || term.name == "window" || term.name == "softcap") term.hi = term.lo;
    if (term.name == "causal") term.hi = term.lo + 1;  // no, top-left
  }
  return t;
}

// One drawn case: the backward's dQ, dK, dV against central differences (step 1e-5) of L = Σ G ⊙ O
// along one direction per input, u of unit Frobenius norm: (L(x + hu) − L(x − hu))/2h against
// ⟨dX, u⟩. G is drawn, then halved (exactly) until Σ|G|·max|v| ≤ 1: L's rounding is then at most
// γ_n·Σ|G ⊙ O| ≤ n·2⁻⁵³ with n ≤ 2187 outputs (O is a convex combination of V's rows), and the
// difference quotient's at most 2·that/2h ≈ 2.4·10⁻⁸, below the tolerance whatever the shape
// (specs/attention.md). 1 + 6 requests.
Measurement fd_case(const CheckContext& ctx, const Case& c) {
  AttentionCase a = attention_case(c);
  for (std::size_t b = 0; b < a.q.shape(0); ++b)
    for (std::size_t h = 0; h < a.q.shape(1); ++h)
      for (std::size_t i = 0; i < a.q.shape(2); ++i)
        if (!a.sees_a_key(b, h, i)) throw std::logic_error("attention.backward-fd's generated case has a row that sees no key");
  a.options.return_weights = false;
  numpy::Generator rng(c.data_seed() + 7);
  Tensor4<double> g = normal_like(rng, Tensor4<double>(xt::zeros<double>({a.q.shape(0), a.q.shape(1), a.q.shape(2), a.v.shape(3)})));
  const double vmax = std::max(xt::amax(xt::abs(a.v))(), 1.0);
  while (xt::sum(xt::abs(g))() * vmax > 1) g *= 0.5;
  const auto grads = ctx.backend.attention_backward(a.q, a.k, a.v, g, a.options);
  const double step = 1e-5;
  double worst = 0;
  std::string where;
  const std::array<std::pair<const char*, std::pair<Tensor4<double>*, const Tensor4<double>*>>, 3> inputs = {
      {{"dQ", {&a.q, &grads.dq}}, {"dK", {&a.k, &grads.dk}}, {"dV", {&a.v, &grads.dv}}}};
  for (const auto& [name, pair] : inputs) {
    Tensor4<double>& x = *pair.first;
    const Tensor4<double>& analytic = *pair.second;
    if (analytic.shape() != x.shape()) return Measurement::failing(kInf, fmt::format("{} has the wrong shape", name));
    Tensor4<double> u = normal_like(rng, x);
    u /= std::sqrt(xt::sum(u * u)());
    const Tensor4<double> keep = x;
    x = keep + step * u;
    const double up = loss(ctx.backend, a.q, a.k, a.v, g, a.options);
    x = keep - step * u;
    const double down = loss(ctx.backend, a.q, a.k, a.v, g, a.options);
    x = keep;
    double err = std::fabs((up - down) / (2 * step) - xt::sum(analytic * u)());
    if (std::isnan(err)) err = kInf;
    if (err > worst || where.empty()) worst = std::max(worst, err), where = name;
  }
  return {worst, fmt::format("max |⟨dX, u⟩ − central difference along u (h = 1e-5)| over dQ, dK, dV: {:.2e} ({})", worst, where)};
}

}  // namespace

Measurement backward_fd_generated(const CheckContext& ctx) {
  const auto terms = fd_terms();
  return generated_cases(ctx, terms, attention_anchor_cases(), Worse::larger, [&](const Case& c) { return fd_case(ctx, c); });
}

// In a precision other than float64: the backend's gradients on q, k, v, dO rounded once to it,
// against our plain backward in float64 on the same rounded numbers, each over its bound
// (lessons/attention_backward_error_bound.hpp).
Measurement backward_matches_reference_in(const CheckContext& ctx, const Tensor4<double>& q0, const Tensor4<double>& k0,
                                          const Tensor4<double>& v0, const Tensor4<double>& g0, const AttentionOptions<double>& o) {
  const Precision p = ctx.precision;
  const Tensor4<double> q = rounded_to(p, q0), k = rounded_to(p, k0), v = rounded_to(p, v0), g = rounded_to(p, g0);
  const auto got = ctx.backend.attention_backward(q, k, v, g, o);
  const auto ref = backends::plain()->attention_backward(q, k, v, g, o);
  const BackwardErrorBound bound = attention_backward_error_bound(q, k, v, g, o, working_roundoff(p));
  auto ratio = [](double err, double b) { return std::isnan(err) ? kInf : err / b; };
  const double dq = ratio(max_abs_diff(got.dq, ref.dq), bound.dq), dk = ratio(max_abs_diff(got.dk, ref.dk), bound.dk),
               dv = ratio(max_abs_diff(got.dv, ref.dv), bound.dv);
  const double worst = std::max({dq, dk, dv});
  return {worst, fmt::format("causal, 2 heads, n=5, d=4, against our float64 backward on the inputs rounded to {}: error over its "
                             "bound: dQ {:.2e} of its bound ({:.2e}), dK {:.2e} of its bound ({:.2e}), dV {:.2e} of its bound ({:.2e})",
                             to_string(p), dq, bound.dq, dk, bound.dk, dv, bound.dv)};
}

Measurement backward_matches_torch(const CheckContext& ctx) {
  numpy::Generator rng(13);
  const Tensor4<double> q = draw4(rng, {1, 2, 5, 4}), k = draw4(rng, {1, 2, 5, 4}), v = draw4(rng, {1, 2, 5, 4}),
                        g = draw4(rng, {1, 2, 5, 4});
  AttentionOptions<double> o;
  o.causal = true;
  if (ctx.precision != Precision::float64) return backward_matches_reference_in(ctx, q, k, v, g, o);
  const auto grads = ctx.backend.attention_backward(q, k, v, g, o);
  const double dq = max_abs_diff(grads.dq, load_golden(ctx.goldens, "grad_causal.dq.npy"));
  const double dk = max_abs_diff(grads.dk, load_golden(ctx.goldens, "grad_causal.dk.npy"));
  const double dv = max_abs_diff(grads.dv, load_golden(ctx.goldens, "grad_causal.dv.npy"));
  const double worst = std::max({dq, dk, dv});
  return {worst,
          fmt::format("causal, 2 heads, n=5, d=4 vs torch autograd: dQ {:.2e}, dK {:.2e}, dV {:.2e}", dq, dk, dv)};
}

// The seed's loss, in float32 as the seed computes it: total += g_x · out_x, x = 0 … 11.
float fixture_loss(const backends::Backend& b, const Fixture& f) {
  const auto r = heads_forward_on<float>(b, f.q, f.k, f.v, HeadsConfig{4, 2, 0.0f, false}, /*weights=*/false);  // L reads O alone
  const auto g = fixture_loss_gradient();
  float total = 0;
  for (std::size_t x = 0; x < 12; ++x) total = total + g.flat(x) * r.output.flat(x);
  return total;
}

Measurement fixture_gradient_float32(const CheckContext& ctx) {
  // Seed 002: dQ, dK, dV of the fixture against (L(x + 1e-3) − L(x − 1e-3)) / 2e-3, in float32.
  const Fixture f = seed_fixture();
  const auto grads = heads_backward_on<float>(ctx.backend, f.q, f.k, f.v, fixture_loss_gradient(), HeadsConfig{4, 2, 0.0f, false});
  double worst = 0, total = 0;
  std::string where;
  std::vector<std::string> seed_entries;
  const std::array<std::pair<const char*, const xt::xtensor<float, 2>*>, 3> all = {{{"q", &grads.dq}, {"k", &grads.dk}, {"v", &grads.dv}}};
  for (std::size_t which = 0; which < 3; ++which) {
    for (std::size_t x = 0; x < 12; ++x) {
      Fixture up = f, down = f;
      xt::xtensor<float, 2>& u = which == 0 ? up.q : which == 1 ? up.k : up.v;
      xt::xtensor<float, 2>& dn = which == 0 ? down.q : which == 1 ? down.k : down.v;
      u.flat(x) = u.flat(x) + 0.001f;
      dn.flat(x) = dn.flat(x) - 0.001f;
      const float slope = (fixture_loss(ctx.backend, up) - fixture_loss(ctx.backend, down)) / 0.002f;
      const double analytic = all[which].second->flat(x);
      total += std::fabs(analytic);
      double err = std::fabs(analytic - double(slope));
      if (std::isnan(err)) err = kInf;
      if (err > worst) { worst = err; where = fmt::format("d{}[{}]: {:.6f} vs {:.6f}", all[which].first, x, analytic, slope); }
      if ((which == 0 && (x == 0 || x == 7)) || (which == 1 && x == 5) || (which == 2 && x == 10))
        seed_entries.push_back(fmt::format("d{}[{}] {:.5f}/{:.5f}", all[which].first, x, analytic, slope));
    }
  }
  Measurement m{worst, fmt::format("max |gradient − central difference (step 1e-3, float32)| over the 36 entries: {:.2e} ({}); "
                                   "the seed's entries (backward/difference): {}; Σ|gradient| = {:.3f}",
                                   worst, where, fmt::join(seed_entries, ", "), total)};
  return m.require(total > 0, "every gradient entry is 0: the comparison cannot tell a gradient from none");
}

Measurement fixture_causal(const CheckContext& ctx) {
  const Fixture f = seed_fixture();
  const auto r = heads_forward_on<float>(ctx.backend, f.q, f.k, f.v, HeadsConfig{4, 2, 0.0f, true});
  double worst = 0;
  std::vector<std::string> bad;
  auto expect = [&](double got, double want, const std::string& what) {
    double d = std::fabs(got - want);
    if (std::isnan(d)) d = kInf;
    if (d > 0) bad.push_back(fmt::format("{} = {} (expected {})", what, got, want));
    worst = std::max(worst, d);
  };
  expect(r.weights(0, 0, 0), 1.0, "head 0 weight (0, 0)");
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = i + 1; j < 3; ++j) expect(r.weights(h, i, j), 0.0, fmt::format("head {} weight ({}, {})", h, i, j));
  // Query 0 sees key 0 alone: its output is v₀ as the backend holds it (in bfloat16 or float16
  // the fixture's float32 values are stored rounded to that precision).
  expect(r.output(0, 0), round_to(ctx.precision, double(0.1f)), "output[0]");
  expect(r.output(0, 2), round_to(ctx.precision, double(f.v(0, 2))), "output[2] (head 1, row 0)");
  return {worst,
          bad.empty() ? fmt::format("head 0 row 0 = [{}, {}, {}], every future weight 0, output[0] = {} == 0.1f", r.weights(0, 0, 0),
                                    r.weights(0, 0, 1), r.weights(0, 0, 2), r.output(0, 0))
                      : fmt::format("{}", fmt::join(bad, "; "))};
}

// dropout-inference is about our module (kernels/reference/heads_attention.hpp): with dropout configured,
// inference must leave the gradients as they are. It runs our module over our kernels, or the
// broken module below.
using ModuleGradients = std::function<HeadsGradients<float>(const Fixture&, const xt::xtensor<float, 2>&, const HeadsConfig&)>;

HeadsGradients<float> our_module_gradients(const Fixture& f, const xt::xtensor<float, 2>& g, const HeadsConfig& c) {
  return heads_backward_on<float>(*backends::plain(), f.q, f.k, f.v, g, c);
}

// Dropout left on at inference: inverted dropout's 1/(1 − p) scale on the weights, which scales
// the output and so every gradient by 1/(1 − p).
HeadsGradients<float> module_scaling_at_inference(const Fixture& f, const xt::xtensor<float, 2>& g, const HeadsConfig& c) {
  auto grads = our_module_gradients(f, g, c);
  const float s = 1.0f / (1.0f - c.dropout);
  grads.dq *= s;
  grads.dk *= s;
  grads.dv *= s;
  return grads;
}

Measurement dropout_inference(const ModuleGradients& module) {
  const Fixture f = seed_fixture();
  const auto g = fixture_loss_gradient();
  const auto base = module(f, g, HeadsConfig{4, 2, 0.0f, false});
  double worst = 0;
  for (float p : {0.1f, 0.5f, 0.9f}) {
    const auto with = module(f, g, HeadsConfig{4, 2, p, false});
    worst = std::max({worst, max_abs_diff(with.dq, base.dq), max_abs_diff(with.dk, base.dk), max_abs_diff(with.dv, base.dv)});
  }
  return {worst,
          fmt::format("largest difference between the gradients with dropout 0.1, 0.5, 0.9 configured and with 0: {:.2e} "
                      "(dv[3] = {}, dq[11] = {} at dropout 0)",
                      worst, base.dv.flat(3), base.dq.flat(11))};
}

// ---------------------------------------------------------------------------------------------
// Broken backends.

// The backward's equations with one piece wrong; the forward is our kernel's.
//   dV = Pᵀ dO,  dP = dO Vᵀ,  dS = P ⊙ (dP − rowsum(P ⊙ dP)),  dQ = scale · dS K,  dK = scale · dSᵀ Q
//   with Hkv < Hq kv heads: dK, dV of kv head h / (Hq / Hkv) sum over its query heads
enum class BackwardBug { no_jacobian_term, dp_passed_straight, scale_dropped, mask_ignored, group_not_summed };

class BrokenBackward : public backends::Decorator {
 public:
  BrokenBackward(BackwardBug bug, const std::string& name) : Decorator(backends::plain(), name), bug_(bug) {}
  AttentionGradients<double, 4> attention_backward(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                                   const Tensor4<double>& d_out, const AttentionOptions<double>& o) const override {
    return broken<double>(q, k, v, d_out, o);
  }
  AttentionGradients<float, 4> attention_backward(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                  const Tensor4<float>& d_out, const AttentionOptions<float>& o) const override {
    return broken<float>(q, k, v, d_out, o);
  }

 private:
  template <class T>
  AttentionGradients<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const Tensor4<T>& d_out,
                                  AttentionOptions<T> o) const {
    const T scale = o.scale.value_or(T(1) / std::sqrt(static_cast<T>(q.shape(3))));
    if (bug_ == BackwardBug::mask_ignored) {
      o.causal = false;
      o.allowed.reset();
      o.bias.reset();
    }
    o.return_weights = true;
    const auto fwd = base().attention(q, k, v, o);
    AttentionGradients<T, 4> g{xt::zeros<T>(q.shape()), xt::zeros<T>(k.shape()), xt::zeros<T>(v.shape())};
    const std::size_t group = q.shape(1) / k.shape(1);
    for (std::size_t b = 0; b < q.shape(0); ++b)
      for (std::size_t h = 0; h < q.shape(1); ++h) {
        const std::size_t kv = kv_head_of(h, q.shape(1), k.shape(1));
        if (bug_ == BackwardBug::group_not_summed && h % group != 0) continue;  // only the group's first query head
        const xt::xtensor<T, 2> p = xt::view(fwd.weights, b, h), qq = xt::view(q, b, h), kk = xt::view(k, b, kv),
                                vv = xt::view(v, b, kv), dO = xt::view(d_out, b, h);
        xt::view(g.dv, b, kv) += matmul<T>(xt::transpose(p), dO);
        const xt::xtensor<T, 2> dp = matmul<T>(dO, xt::transpose(vv));
        xt::xtensor<T, 2> ds;
        switch (bug_) {
          case BackwardBug::no_jacobian_term: ds = p * dp; break;  // dS = P ⊙ dP: the −rowsum(P ⊙ dP) term lost
          case BackwardBug::dp_passed_straight: ds = dp; break;     // dL/dP pushed into the scores unchanged
          default: ds = softmax_rows_backward<T>(p, dp);
        }
        const T s = bug_ == BackwardBug::scale_dropped ? T(1) : scale;
        xt::view(g.dq, b, h) = s * matmul<T>(ds, kk);
        xt::view(g.dk, b, kv) += s * matmul<T>(xt::transpose(ds), qq);
      }
    return g;
  }
  BackwardBug bug_;
};

// A causal mask off by one (float32): query i also sees key i + 1.
class MaskOneFutureKey : public backends::Decorator {
 public:
  MaskOneFutureKey() : Decorator(backends::plain(), "causal mask lets key i + 1 through") {}
  using Decorator::attention;
  AttentionResult<float, 4> attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                      const AttentionOptions<float>& o) const override {
    AttentionOptions<float> broken = o;
    if (o.causal) {
      broken.causal = false;
      xt::xarray<bool> allowed = xt::zeros<bool>({q.shape(2), k.shape(2)});
      for (std::size_t i = 0; i < q.shape(2); ++i)
        for (std::size_t j = 0; j < k.shape(2) && j <= i + 1; ++j) allowed(i, j) = true;
      broken.allowed = allowed;
    }
    return base().attention(q, k, v, broken);
  }
};

}  // namespace

std::vector<ClaimCheck> gradient_checks() {
  const std::vector<std::pair<std::string, BackwardBug>> bugs = {
      {"backward without the Jacobian term (dS = P ⊙ dP)", BackwardBug::no_jacobian_term},
      {"dP passed straight to the scores (dS = dP)", BackwardBug::dp_passed_straight},
      {"scale removed from dQ, dK", BackwardBug::scale_dropped},
      {"mask ignored in the backward", BackwardBug::mask_ignored},
      {"GQA: dK, dV from the first query head of each group only", BackwardBug::group_not_summed}};
  std::vector<NegativeControl> all_bugs, one_head_per_kv_bugs, unmasked_bugs;  // only backward-fd has grouped heads
  for (const auto& [name, bug] : bugs) {
    const auto backend = std::make_shared<BrokenBackward>(bug, name);
    all_bugs.push_back(broken_backend(name, backend));
    if (bug != BackwardBug::group_not_summed) one_head_per_kv_bugs.push_back(broken_backend(name, backend));
    if (bug != BackwardBug::mask_ignored && bug != BackwardBug::group_not_summed) unmasked_bugs.push_back(broken_backend(name, backend));  // the fixture has no mask
  }
  const CheckFn dropout_ours = [](const CheckContext&) { return dropout_inference(our_module_gradients); };
  const CheckFn dropout_scaled = [](const CheckContext&) { return dropout_inference(module_scaling_at_inference); };
  return {
      {"attention.backward-fd", "dQ, dK, dV vs central differences, 4 float64 cases (plain, causal, mask; GQA, scale, additive mask)", backward_finite_differences,
       all_bugs},
      {"attention.backward-fd", "generated cases: the attention terms where every query sees a key, one direction per input",
       backward_fd_generated, all_bugs},
      {"attention.backward-matches-torch", "dQ, dK, dV vs torch autograd (causal)", backward_matches_torch, one_head_per_kv_bugs},
      {"attention.fixture-gradient", "seed 002: 36 gradient entries vs central differences in float32", fixture_gradient_float32,
       unmasked_bugs},
      {"attention.dropout-inference", "seed 002: gradients with dropout 0.1/0.5/0.9 vs 0", dropout_ours,
       {broken_code("inverted-dropout scaling applied at inference", dropout_scaled)}},
      {"attention.fixture-causal", "seed 002: causal weights and output[0]", fixture_causal,
       {broken_backend("mask ignored", std::make_shared<MaskIgnored>()),
        broken_backend("causal mask lets key i + 1 through", std::make_shared<MaskOneFutureKey>())}},
  };
}

}  // namespace vl::lessons::attention
