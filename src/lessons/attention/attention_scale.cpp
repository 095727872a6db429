// Lesson attention, listing 2: why the scores are divided by √d_k (specs/attention.md,
// "Listing 2"). The listing's table, and the claims read off the experiment: the raw scores'
// standard deviation is √d_k, without the scale the softmax saturates, with it the weights and
// the Jacobian stay flat. The experiment is our own code (attention_scale_experiment.hpp: the
// lesson's draws, NumPy's sum order), so these claims are about our code (subject: our-code)
// and their controls are the experiment with one piece wrong.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lessons/attention/attention.hpp"
#include "lessons/attention/attention_common.hpp"
#include "lessons/attention/attention_scale_experiment.hpp"
#include "numeric/compare.hpp"

namespace vl::lessons::attention {

// [attention.scale]
ListingOutput listing_scale(const ListingContext&) {
  const auto rows = scale_experiment(1, reference_scale_variant());
  ListingOutput out;
  out.lines.push_back(scale_table_header());
  xt::xtensor<double, 2> table = xt::zeros<double>({rows.size(), std::size_t(5)});
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ScaleRow& r = rows[i];
    out.lines.push_back(format_scale_row(r));
    table(i, 0) = r.score_std;
    table(i, 1) = r.raw_max_weight;
    table(i, 2) = r.raw_jacobian;
    table(i, 3) = r.scaled_max_weight;
    table(i, 4) = r.scaled_jacobian;
  }
  out.arrays["table"] = table;
  return out;
}
// [attention.scale]

namespace {

Measurement score_std(const ScaleVariant& variant) {
  double worst = 0;
  std::vector<std::string> parts;
  for (std::uint64_t seed : {1, 2}) {
    for (const ScaleRow& r : scale_experiment(seed, variant)) {
      const double root = std::sqrt(double(r.d_k));
      const double mean = std::fabs(r.score_mean) / root;
      const double raw = std::fabs(r.score_std / root - 1.0);
      const double scaled = std::fabs(r.scaled_std - 1.0);
      worst = worse(worse(worse(worst, mean), raw), scaled);  // a NaN counts as ∞
      if (seed == 1)
        parts.push_back(fmt::format("d_k={}: mean {:.3f}, std {:.3f} vs √d_k {:.3f}, scaled std {:.3f}", r.d_k, r.score_mean, r.score_std,
                                    root, r.scaled_std));
    }
  }
  return {worst,
          fmt::format("largest |mean(q·k)|/√d_k, |std(q·k)/√d_k − 1| or |std(q·k/√d_k) − 1| over seeds 1, 2: {:.4f}; seed 1: {}", worst,
                      fmt::join(parts, "; "))};
}

Measurement unscaled_saturates(const ScaleVariant& variant) {
  // Without the scale, the mean max weight must rise and the mean Jacobian norm fall at every
  // step of d_k, and at d_k = 1024 the norm must be at most the tolerance times the scaled one.
  double worst_ratio = 0;
  bool monotone = true;
  std::string detail;
  for (std::uint64_t seed : {1, 2}) {
    const auto rows = scale_experiment(seed, variant);
    for (std::size_t i = 1; i < rows.size(); ++i)
      monotone = monotone && rows[i].raw_max_weight > rows[i - 1].raw_max_weight && rows[i].raw_jacobian < rows[i - 1].raw_jacobian;
    const double ratio = rows.back().raw_jacobian / rows.back().scaled_jacobian;
    worst_ratio = worse(worst_ratio, ratio);
    detail += fmt::format("seed {}: max weight {:.3f} → {:.3f}, |J| {:.4f} → {:.4f} (scaled at d_k=1024: {:.4f}); ", seed,
                          rows.front().raw_max_weight, rows.back().raw_max_weight, rows.front().raw_jacobian, rows.back().raw_jacobian,
                          rows.back().scaled_jacobian);
  }
  Measurement m{worst_ratio, fmt::format("{}unscaled/scaled |J| at d_k=1024: {:.3f}; max weight rising and |J| falling at every "
                                         "step: {}", detail, worst_ratio, monotone ? "yes" : "NO")};
  return m.require(monotone, "without the scale, the max weight does not rise and |J| fall at every step of d_k");
}

Measurement scaled_flat(const ScaleVariant& variant) {
  double worst = 0;
  std::string detail;
  for (std::uint64_t seed : {1, 2}) {
    const auto rows = scale_experiment(seed, variant);
    double wmin = kInf, wmax = -kInf, jmin = kInf, jmax = -kInf;
    for (const ScaleRow& r : rows) {
      wmin = std::min(wmin, r.scaled_max_weight);
      wmax = std::max(wmax, r.scaled_max_weight);
      jmin = std::min(jmin, r.scaled_jacobian);
      jmax = std::max(jmax, r.scaled_jacobian);
    }
    double spread = std::max(wmax - wmin, jmax - jmin);
    if (std::isnan(spread)) spread = kInf;
    worst = std::max(worst, spread);
    detail += fmt::format("seed {}: max weight {:.3f}…{:.3f}, |J| {:.4f}…{:.4f}; ", seed, wmin, wmax, jmin, jmax);
  }
  return {worst, fmt::format("{}largest spread over d_k = 4…1024 with the scale: {:.4f}", detail, worst)};
}

Measurement dk_compresses(const ScaleVariant& variant) {
  // The experiment's "with" branch divided by d_k: the scores' std must be 1/√d_k, and the mean
  // largest weight fall at every step of d_k, to near the uniform 1/16 at d_k = 1024.
  double worst = 0;
  bool falls = true;
  double last_weight = 0;
  std::vector<std::string> parts;
  for (std::uint64_t seed : {1, 2}) {
    const auto rows = scale_experiment(seed, variant);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const ScaleRow& r = rows[i];
      const double gap = std::fabs(r.scaled_std * std::sqrt(double(r.d_k)) - 1.0);
      worst = worse(worst, gap);
      if (i > 0) falls = falls && rows[i].scaled_max_weight < rows[i - 1].scaled_max_weight;
      if (seed == 1) parts.push_back(fmt::format("d_k={}: std(q·k/d_k) {:.3f}, max weight {:.3f}", r.d_k, r.scaled_std, r.scaled_max_weight));
    }
    last_weight = worse(last_weight, rows.back().scaled_max_weight);
  }
  const double uniform = 1.0 / double(kScaleKeys);
  Measurement m{worst, fmt::format("largest |std(q·k/d_k)·√d_k − 1| over seeds 1, 2: {:.4f}; seed 1: {}; the mean largest weight falls at "
                                   "every step: {}; at d_k = 1024 it is {:.4f}, uniform 1/16 = {:.4f}",
                                   worst, fmt::join(parts, "; "), falls ? "yes" : "NO", last_weight, uniform)};
  m.require(falls, "divided by d_k, the mean largest weight does not fall at every step of d_k");
  return m.require(last_weight - uniform <= 0.01, fmt::format("at d_k = 1024 the mean largest weight {:.4f} is not within 0.01 of 1/16",
                                                              last_weight));
}

// The experiment with one piece replaced.
ScaleVariant variant_with(void (*edit)(ScaleVariant&)) {
  ScaleVariant v = reference_scale_variant();
  edit(v);
  return v;
}
// Functions, not namespace-scope constants: a constant here would be initialised after a
// program that registers the lesson from its own static initialisers (the Boost.Test programs)
// copied it, empty, and every control would then have thrown std::bad_function_call.
ScaleVariant scale_removed() {
  return variant_with([](ScaleVariant& v) { v.scaled_divisor = [](std::size_t) { return 1.0; }; });
}
ScaleVariant divides_by_dk() {
  return variant_with([](ScaleVariant& v) { v.scaled_divisor = [](std::size_t d_k) { return double(d_k); }; });
}
ScaleVariant both_scaled() {
  return variant_with([](ScaleVariant& v) { v.raw_divisor = [](std::size_t d_k) { return std::sqrt(double(d_k)); }; });
}
ScaleVariant jacobian_without_outer() {
  return variant_with([](ScaleVariant& v) {
    v.jacobian_norm = [](const double* p, std::size_t n) {  // ‖diag(p)‖_F: the −p pᵀ term lost
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += p[i] * p[i];
      return std::sqrt(s);
    };
  });
}

ScaleVariant dk_then_gain() {  // divided by d_k, then the softmax fed √d_k times that: the compression undone
  return variant_with([](ScaleVariant& v) {
    v.scaled_divisor = [](std::size_t d_k) { return double(d_k); };
    v.scaled_softmax_gain = [](std::size_t d_k) { return std::sqrt(double(d_k)); };
  });
}
ScaleVariant dk_then_flat() {  // divided by d_k, then fed to the softmax with std 1/32 at every d_k: flat near 1/16
  return variant_with([](ScaleVariant& v) {
    v.scaled_divisor = [](std::size_t d_k) { return double(d_k); };
    v.scaled_softmax_gain = [](std::size_t d_k) { return std::sqrt(double(d_k)) / 32.0; };
  });
}
ScaleVariant dk_then_quarter() {  // divided by d_k, then fed d_k^¼ times that: falling, but not to 1/16
  return variant_with([](ScaleVariant& v) {
    v.scaled_divisor = [](std::size_t d_k) { return double(d_k); };
    v.scaled_softmax_gain = [](std::size_t d_k) { return std::pow(double(d_k), 0.25); };
  });
}
ScaleVariant scores_offset() {
  return variant_with([](ScaleVariant& v) { v.score_offset = 1.0; });
}

// A predicate on a variant of the experiment, as a check.
CheckFn on(Measurement (*predicate)(const ScaleVariant&), ScaleVariant variant) {
  return [predicate, variant](const CheckContext&) { return predicate(variant); };
}

}  // namespace

std::vector<ClaimCheck> scale_checks() {
  const ScaleVariant ref = reference_scale_variant();
  return {
      {"attention.score-std", "std of raw and scaled scores, d_k = 4 … 1024, seeds 1 and 2", on(score_std, ref),
       {broken_code("scale removed", on(score_std, scale_removed())),
        broken_code("divided by d_k instead of √d_k", on(score_std, divides_by_dk())),
        broken_code("q·k offset by 1 (queries and keys sharing a mean component)", on(score_std, scores_offset()))}},
      {"attention.unscaled-saturates", "max weight and |J| without the scale, d_k = 4 … 1024, seeds 1 and 2",
       on(unscaled_saturates, ref),
       {broken_code("Jacobian without the −p pᵀ term", on(unscaled_saturates, jacobian_without_outer())),
        broken_code("the 'without' branch scaled too", on(unscaled_saturates, both_scaled()))}},
      {"attention.scaled-flat", "max weight and |J| with the scale, d_k = 4 … 1024, seeds 1 and 2", on(scaled_flat, ref),
       {broken_code("scale removed", on(scaled_flat, scale_removed())),
        broken_code("divided by d_k instead of √d_k", on(scaled_flat, divides_by_dk()))}},
      {"attention.dk-compresses", "the scaled branch divided by d_k: std and max weight, d_k = 4 … 1024, seeds 1 and 2",
       on(dk_compresses, divides_by_dk()),
       {broken_code("divided by √d_k (the lesson's scale)", on(dk_compresses, ref)),
        broken_code("scale removed", on(dk_compresses, scale_removed())),
        broken_code("divided by d_k, the softmax fed √d_k times the scores", on(dk_compresses, dk_then_gain())),
        broken_code("divided by d_k, the softmax fed scores of spread 1/32 at every d_k (flat near 1/16)",
                    on(dk_compresses, dk_then_flat())),
        broken_code("divided by d_k, the softmax fed d_k^¼ times the scores (falling, not to 1/16)", on(dk_compresses, dk_then_quarter()))}},
  };
}

}  // namespace vl::lessons::attention
