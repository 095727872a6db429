// Lesson attention, seed 002's module (kernels/reference/heads_attention.hpp): its outputs and
// per-head weights against torch's own attention, head by head (spec: specs/attention.md,
// attention.module-matches-torch). The other claims on the module read its rows and gradients;
// this one reads its values, so a module with the wrong scale or a wrong row stride fails here.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xview.hpp>

#include "backends/registry.hpp"
#include "kernels/reference/heads.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/attention/attention_common.hpp"
#include "numeric/compare.hpp"

namespace vl::lessons::attention {

namespace {

using Rows = xt::xtensor<double, 2>;  // (seq, d_model)
/// The module under test: seed 002's (heads_forward) or a broken copy, over a backend's attention.
using ModuleFn = std::function<HeadsOutput<double>(const backends::Backend&, const Rows&, const Rows&, const Rows&, const HeadsConfig&)>;

struct ModuleCase {
  std::string name;  // the goldens' module.<name>.{out,w}.npy
  Rows q, k, v;
  std::size_t heads;
  bool causal;
};

// Seed 002's fixture (float32 values, exact in float64) with 1, 2 and 4 heads, and a rectangular
// case (seq 5, d_model 6, 3 heads of 2), each unmasked and causal.
std::vector<ModuleCase> module_cases(const std::filesystem::path& goldens) {
  const Fixture f = seed_fixture();
  const Rows fq = xt::cast<double>(f.q), fk = xt::cast<double>(f.k), fv = xt::cast<double>(f.v);
  const Rows rq = load_golden(goldens, "module.rect.q.npy"), rk = load_golden(goldens, "module.rect.k.npy"),
             rv = load_golden(goldens, "module.rect.v.npy");
  std::vector<ModuleCase> cases;
  for (bool causal : {false, true}) {
    for (std::size_t h : {1, 2, 4}) cases.push_back({fmt::format("fixture_h{}{}", h, causal ? "_causal" : ""), fq, fk, fv, h, causal});
    cases.push_back({fmt::format("rect_h3{}", causal ? "_causal" : ""), rq, rk, rv, 3, causal});
  }
  return cases;
}

HeadsOutput<double> seed_module(const backends::Backend& b, const Rows& q, const Rows& k, const Rows& v, const HeadsConfig& c) {
  return heads_forward_on<double>(b, q, k, v, c);
}

// max |module − torch| over the outputs and per-head weights of every case, in float64. A claim
// about our code: the module runs over our plain kernel whichever backend is audited (the fused
// one has no weights to give it), and the attention inside is judged in every precision, on any
// implementation, by the claims on it.
Measurement module_values(const CheckContext& ctx, const ModuleFn& module) {
  double worst = 0;
  std::vector<std::string> parts;
  for (const ModuleCase& c : module_cases(ctx.goldens)) {
    const HeadsOutput<double> r = module(*backends::plain(), c.q, c.k, c.v, HeadsConfig{c.q.shape(1), c.heads, 0.0f, c.causal});
    const double o = max_abs_diff(r.output, load_golden(ctx.goldens, "module." + c.name + ".out.npy"));
    const double w = max_abs_diff(r.weights, load_golden(ctx.goldens, "module." + c.name + ".w.npy"));
    parts.push_back(fmt::format("{}: output {:.1e}, weights {:.1e}", c.name, o, w));
    worst = worse(worse(worst, o), w);
  }
  return {worst, fmt::format("max |module − torch's _scaled_dot_product_attention per head| = {:.2e}; {}", worst, fmt::join(parts, "; "))};
}

// The broken copies are the module itself (heads_forward) over an attention that undoes one of
// its steps: the bug sits where the module's own code would have it, and the rest is the module.

// Broken: the module scales every head by 1/√d_model instead of 1/√hd.
HeadsOutput<double> scale_over_d_model(const backends::Backend& b, const Rows& q, const Rows& k, const Rows& v, const HeadsConfig& c) {
  return heads_forward<double>(
      [&](const Tensor4<double>& q4, const Tensor4<double>& k4, const Tensor4<double>& v4, AttentionOptions<double> o) {
        o.scale = 1 / std::sqrt(double(c.d_model));
        return b.attention(q4, k4, v4, o);
      },
      q, k, v, c);
}

// Broken: the bug the seed records as fixed (#8980), every row indexed as head_dim wide: head h
// of row i reads elements i·hd + h·hd … of the row-major (seq, d_model) buffer instead of
// i·d_model + h·hd …. `heads` is the module's correct split (1, H, seq, hd), read back as rows.
Tensor4<double> split_rows_head_wide(const Tensor4<double>& heads) {
  const Rows x = merge_heads_2d<double>(heads);
  const std::size_t H = heads.shape(1), seq = heads.shape(2), hd = heads.shape(3);
  Tensor4<double> out = xt::zeros<double>({std::size_t(1), H, seq, hd});
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < seq; ++i)
      for (std::size_t t = 0; t < hd; ++t) out(0, h, i, t) = x.flat(i * hd + h * hd + t);
  return out;
}
HeadsOutput<double> rows_head_wide(const backends::Backend& b, const Rows& q, const Rows& k, const Rows& v, const HeadsConfig& c) {
  return heads_forward<double>(
      [&](const Tensor4<double>& q4, const Tensor4<double>& k4, const Tensor4<double>& v4, const AttentionOptions<double>& o) {
        return b.attention(split_rows_head_wide(q4), split_rows_head_wide(k4), split_rows_head_wide(v4), o);
      },
      q, k, v, c);
}

CheckFn with(ModuleFn module) {
  return [module](const CheckContext& ctx) { return module_values(ctx, module); };
}

}  // namespace

std::vector<ClaimCheck> module_checks() {
  return {{"attention.module-matches-torch",
           "seed 002's module vs torch's _scaled_dot_product_attention per head: the fixture with 1, 2, 4 heads, seq 5 × d_model 6 "
           "with 3, unmasked and causal",
           with(seed_module),
           {broken_code("scale 1/√d_model instead of 1/√hd", with(scale_over_d_model)),
            broken_code("every row indexed as head_dim wide (the seed's fixed bug #8980)", with(rows_head_wide))}}};
}

}  // namespace vl::lessons::attention
