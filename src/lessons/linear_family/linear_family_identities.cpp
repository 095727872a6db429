// Lesson linear-family, two identities of the rules, each over a fixed case and generated cases
// (engine/generated_cases.hpp):
//
//   linear-family.delta-overwrites   m ≤ 6 orthonormal keys in d_k ≤ 8, each written twice with
//                                    β = 1 (n = 2m ≤ 12 tokens), values |v| < 2: read back from the
//                                    final state, the delta rule gives the last value written under
//                                    a key, the linear rule the sum of both. Drawn: batch, key/value
//                                    heads, GQA group, m, d_k, d_v and the order of the writes.
//   linear-family.normalised-form    seed 000's normalised linear attention (φ = elu + 1) as the
//                                    linear rule on φ(Q), φ(K), [V | 1], scale 1, the numerator over
//                                    the last column. Drawn: n ≤ 40, d_k ≤ 4, d_v ≤ 8.
//
// Both stay within the ranges their float32 tolerances are derived for (specs/linear_family.md);
// every form runs (recurrent, parallel, chunked at each of chunk_sizes(n)).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "engine/generated_cases.hpp"
#include "kernels/reference/linear_attention.hpp"
#include "kernels/reference/matmul.hpp"
#include "lessons/linear_family/linear_family_sweep.hpp"
#include "lessons/linear_rnn/linear_rnn.hpp"

namespace vl::lessons::linear_family {

namespace {

// ---------------------------------------------------------------------------------------------
// The delta rule overwrites.

struct Overwrites {
  std::size_t B, Hkv, group, m, dk, dv;
  int order;  // the second round of writes: 0 in the same order, 1 reversed; 2 each key twice in a row
  int gram_schmidt_passes;
};

// The key written at token t of n = 2m.
std::size_t key_at(const Overwrites& o, std::size_t t) {
  if (o.order == 2) return t / 2;
  if (o.order == 1 && t >= o.m) return 2 * o.m - 1 - t;
  return t % o.m;
}

// Orthonormal rows by Gram–Schmidt, `passes` times: a second pass removes what the first left of
// the other rows' directions (orthonormal to a few units of round-off whatever the rows'
// condition), which drawn keys need; the fixed case keeps its one pass (its keys, as requested
// of a candidate before, are well conditioned).
void orthonormalise(xt::xtensor<double, 2>& keys, int passes) {
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t i = 0; i < keys.shape(0); ++i) {
      auto ki = xt::row(keys, i);
      for (std::size_t j = 0; j < i; ++j) ki -= xt::sum(ki * xt::row(keys, j))() * xt::row(keys, j);
      ki /= std::sqrt(xt::sum(ki * ki)());
    }
}

//   k: (B, Hkv, n, d_k) rows of the orthonormal keys, v: (B, Hkv, n, d_v), β = 1;
//   state S: (B, Hkv, d_k, d_v), read back as Sᵀ k_i.
Measurement overwrites_case(const CheckContext& ctx, const Overwrites& o, std::uint64_t seed) {
  const std::size_t n = 2 * o.m;
  const FamilyInputs<double> drawn = draw<double>({o.B, o.Hkv * o.group, o.Hkv, n, o.dk, o.dv, false, false}, seed);
  FamilyInputs<double> in = drawn;
  // Values scaled by a power of two (exact) until |v| < 2, the range the float32 bound assumes.
  double vmax = xt::amax(xt::abs(in.v))();
  while (vmax >= 2) in.v *= 0.5, vmax *= 0.5;
  std::vector<std::size_t> first(o.m, n), last(o.m, n);
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t i = key_at(o, t);
    if (first[i] == n) first[i] = t;
    last[i] = t;
  }
  for (std::size_t b = 0; b < o.B; ++b)
    for (std::size_t h = 0; h < o.Hkv; ++h) {
      xt::xtensor<double, 2> keys = xt::view(drawn.q, b, h * o.group, xt::range(0, o.m), xt::all());
      orthonormalise(keys, o.gram_schmidt_passes);
      for (std::size_t t = 0; t < n; ++t) xt::view(in.k, b, h, t) = xt::row(keys, key_at(o, t));
    }
  in.beta.fill(1.0);
  in = rounded(ctx.precision, in);  // the keys read back are the rounded ones the backend wrote
  Worst w;
  double linear_from_last = 0;
  for (const FormAt& f : forms(n)) {
    const FamilyResult<double> d = run(ctx.backend, in, UpdateRule::delta, f.form, f.chunk);
    const FamilyResult<double> l = run(ctx.backend, in, UpdateRule::linear, f.form, f.chunk);
    if (d.state.shape() != std::array<std::size_t, 4>{o.B, o.Hkv, o.dk, o.dv} || l.state.shape() != d.state.shape())
      return Measurement::failing(kInfinity, fmt::format("{}: present_state of shape ({}), expected ({}, {}, {}, {})", f.name(),
                                                         fmt::join(d.state.shape(), ", "), o.B, o.Hkv, o.dk, o.dv));
    for (std::size_t b = 0; b < o.B; ++b)
      for (std::size_t h = 0; h < o.Hkv; ++h)
        for (std::size_t i = 0; i < o.m; ++i) {
          const xt::xtensor<double, 1> key = xt::view(in.k, b, h, first[i]);
          const xt::xtensor<double, 1> v_last = xt::view(in.v, b, h, last[i]), v_first = xt::view(in.v, b, h, first[i]);
          const xt::xtensor<double, 1> read_d = matvec<double>(xt::transpose(xt::view(d.state, b, h)), key);
          const xt::xtensor<double, 1> read_l = matvec<double>(xt::transpose(xt::view(l.state, b, h)), key);
          const std::string at = fmt::format("{}, batch {}, head {}, key {}", f.name(), b, h, i);
          w.see(max_abs_diff(read_d, v_last), UpdateRule::delta, "delta, " + at + ": read against its last value");
          w.see(max_abs_diff(read_l, xt::xtensor<double, 1>(v_first + v_last)), UpdateRule::linear,
                "linear, " + at + ": read against the sum of its values");
          linear_from_last = std::max(linear_from_last, max_abs_diff(read_l, v_last));
        }
  }
  return {w.value,
          fmt::format("largest |read − expected| {:.2e} ({}); per rule: {}; the linear rule's read is {:.2f} from the last "
                      "value written",
                      w.value, w.where, w.rules(), linear_from_last)};
}

//                                          B Hkv group m d_k d_v order
const std::vector<CaseTerm> kOverwriteTerms = {{"B", 1, 2, 1, {}},   {"Hkv", 1, 2, 1, {}}, {"group", 1, 2, 1, {}}, {"m", 1, 6, 1, {}},
                                               {"d_k", 1, 8, 1, {}}, {"d_v", 1, 8, 1, {}},
                                               {"order", 0, 2, 0, {"again in order", "reversed", "twice in a row"}}};
// The fixed case's shape, and GQA with each key written twice in a row: the controls (the
// correction read from the updated state, the UT transform's diagonal) meet their bugs in both.
const std::vector<std::vector<int>> kOverwriteAnchors = {{1, 1, 1, 6, 8, 4, 0}, {2, 2, 2, 4, 5, 3, 2}};

Overwrites overwrites_of(const Case& c) {
  const std::size_t dk = c["d_k"];
  return {std::size_t(c["B"]), std::size_t(c["Hkv"]), std::size_t(c["group"]), std::min<std::size_t>(c["m"], dk), dk,
          std::size_t(c["d_v"]), c["order"], 2};
}

// ---------------------------------------------------------------------------------------------
// Normalised attention as the linear rule.

// Seed 000's o_t = Σ (φq_t·φk_j) v_j / Σ φq_t·φk_j against the linear rule on φ(Q), φ(K), [V | 1],
// scale 1, in every form: the output's last column is the normaliser. The inputs, from seed
// onward, are the first draw whose max|v| / max|o| is below 1.9 (the float32 bound's range; a
// draw of n = 1 always is: o = v).
void normalised_case(const CheckContext& ctx, std::size_t n, std::size_t dk, std::size_t dv, std::uint64_t seed, Worst& w) {
  const Precision p = ctx.precision;
  linear_rnn::Inputs drawn = linear_rnn::draw_inputs(n, dk, dv, seed);  // seed 000's φ = elu + 1
  xt::xtensor<double, 2> pq, pk, v, want;
  for (int tries = 0;; ++tries) {
    pq = rounded_to(p, drawn.pq), pk = rounded_to(p, drawn.pk), v = rounded_to(p, drawn.v);
    want = linear_attention_parallel<double>(pq, pk, v);
    if (xt::amax(xt::abs(v))() < 1.9 * xt::amax(xt::abs(want))()) break;
    if (tries == 64) throw std::logic_error(fmt::format("normalised_case: no draw of n = {} within max|v|/max|o| < 1.9 in 64 seeds", n));
    drawn = linear_rnn::draw_inputs(n, dk, dv, ++seed);
  }
  FamilyInputs<double> in;
  in.q = xt::reshape_view(pq, std::array<std::size_t, 4>{1, 1, n, dk});
  in.k = xt::reshape_view(pk, std::array<std::size_t, 4>{1, 1, n, dk});
  in.v = xt::ones<double>({std::size_t(1), std::size_t(1), n, dv + 1});
  xt::view(in.v, 0, 0, xt::all(), xt::range(0, dv)) = v;
  for (const FormAt& f : forms(n)) {
    const FamilyResult<double> r = run(ctx.backend, in, UpdateRule::linear, f.form, f.chunk, 1.0);
    if (r.o.shape() != std::array<std::size_t, 4>{1, 1, n, dv + 1}) {
      w.see(kInfinity, UpdateRule::linear, fmt::format("{}, n = {}: output of shape ({})", f.name(), n, fmt::join(r.o.shape(), ", ")));
      continue;
    }
    const auto o = xt::view(r.o, 0, 0);
    const xt::xtensor<double, 2> got = xt::view(o, xt::all(), xt::range(0, dv)) / xt::view(o, xt::all(), xt::range(dv, dv + 1));
    w.see(relative(got, want), UpdateRule::linear, fmt::format("{}, n = {}, d_k = {}, d_v = {}", f.name(), n, dk, dv));
  }
}

const std::vector<CaseTerm> kNormalisedTerms = {{"n", 1, 40, 1, {}}, {"d_k", 1, 4, 1, {}}, {"d_v", 1, 8, 1, {}}};
// A token reading the state before its own write meets its bug from n = 1 (the first output's
// normaliser is 0): the engine's simplest case; one anchor of the fixed sweep's width.
const std::vector<std::vector<int>> kNormalisedAnchors = {{17, 4, 5}};

}  // namespace

Measurement delta_overwrites(const CheckContext& ctx) {
  // Six orthonormal keys in d_k = 8, each written twice: (k_i, v_i), then (k_i, w_i), β = 1.
  // Reading key k_i from the final state: Sᵀ k_i = w_i (delta), v_i + w_i (linear).
  return overwrites_case(ctx, {1, 1, 1, 6, 8, 4, 0, 1}, 2500);
}

Measurement delta_overwrites_generated(const CheckContext& ctx) {
  return generated_cases(ctx, kOverwriteTerms, kOverwriteAnchors, Worse::larger,
                         [&](const Case& c) { return overwrites_case(ctx, overwrites_of(c), c.data_seed()); });
}

Measurement normalised_form(const CheckContext& ctx) {
  Worst w;
  for (std::size_t n : {1, 6, 17, 40}) normalised_case(ctx, n, 4, 5, 2600 + n, w);
  return measured(w, "numerator over the last column against seed 000's normalised linear attention");
}

Measurement normalised_form_generated(const CheckContext& ctx) {
  return generated_cases(ctx, kNormalisedTerms, kNormalisedAnchors, Worse::larger, [&](const Case& c) {
    Worst w;
    normalised_case(ctx, std::size_t(c["n"]), std::size_t(c["d_k"]), std::size_t(c["d_v"]), c.data_seed(), w);
    return measured(w, "numerator over the last column against seed 000's normalised linear attention");
  });
}

}  // namespace vl::lessons::linear_family
