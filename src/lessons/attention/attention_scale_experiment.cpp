// Lesson attention, listing 2: the √d_k experiment (see attention_scale_experiment.hpp).
#include "lessons/attention/attention_scale_experiment.hpp"

#include <cmath>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "numeric/numpy_pairwise_sum.hpp"
#include "numeric/numpy_random.hpp"

namespace vl::lessons::attention {

namespace {

using Scores = std::vector<double>;  // (trials, keys), row-major

// s = (q * k).sum(axis=-1): the products elementwise, each row of d_k summed pairwise.
Scores draw_scores(numpy::Generator& rng, std::size_t d_k) {
  std::vector<double> q(kScaleTrials * d_k);
  for (double& x : q) x = rng.standard_normal();
  Scores s(kScaleTrials * kScaleKeys);
  std::vector<double> prod(d_k);
  for (std::size_t t = 0; t < kScaleTrials; ++t)
    for (std::size_t j = 0; j < kScaleKeys; ++j) {
      for (std::size_t i = 0; i < d_k; ++i) prod[i] = q[t * d_k + i] * rng.standard_normal();
      s[t * kScaleKeys + j] = numpy::pairwise_sum(prod.data(), d_k);
    }
  return s;
}

// The raw scores of every d_k for one seed, drawn in the lesson's order and kept.
const std::vector<Scores>& raw_scores(std::uint64_t seed) {
  static std::mutex mutex;
  static std::map<std::uint64_t, std::vector<Scores>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(seed);
  if (it == cache.end()) {
    numpy::Generator rng(seed);
    std::vector<Scores> all;
    for (std::size_t d_k : kScaleDims) all.push_back(draw_scores(rng, d_k));
    it = cache.emplace(seed, std::move(all)).first;
  }
  return it->second;
}

// softmax(z) = e / e.sum(axis=-1) with e = exp(z − max): each row in place.
void softmax_rows_numpy(std::vector<double>& z) {
  for (std::size_t t = 0; t < kScaleTrials; ++t) {
    double* row = z.data() + t * kScaleKeys;
    double m = row[0];
    for (std::size_t j = 1; j < kScaleKeys; ++j) m = std::max(m, row[j]);
    for (std::size_t j = 0; j < kScaleKeys; ++j) row[j] = std::exp(row[j] - m);
    const double sum = numpy::pairwise_sum(row, kScaleKeys);
    for (std::size_t j = 0; j < kScaleKeys; ++j) row[j] /= sum;
  }
}

// p.max(axis=1).mean() and jac_norm(p).mean().
std::pair<double, double> max_weight_and_jacobian(const std::vector<double>& p, const ScaleVariant& variant) {
  std::vector<double> maxes(kScaleTrials), norms(kScaleTrials);
  for (std::size_t t = 0; t < kScaleTrials; ++t) {
    const double* row = p.data() + t * kScaleKeys;
    double m = row[0];
    for (std::size_t j = 1; j < kScaleKeys; ++j) m = std::max(m, row[j]);
    maxes[t] = m;
    norms[t] = variant.jacobian_norm(row, kScaleKeys);
  }
  return {numpy::array_mean(maxes.data(), kScaleTrials), numpy::array_mean(norms.data(), kScaleTrials)};
}

}  // namespace

ScaleVariant reference_scale_variant() {
  return {
      [](std::size_t) { return 1.0; },
      [](std::size_t d_k) { return std::sqrt(static_cast<double>(d_k)); },
      [](const double* p, std::size_t n) {
        // J = einsum("ti,ij->tij", p, eye) − einsum("ti,tj->tij", p, p); sqrt((J**2).sum(axis=(1, 2)))
        std::vector<double> sq(n * n);
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < n; ++j) {
            const double jij = p[i] * (i == j ? 1.0 : 0.0) - p[i] * p[j];
            sq[i * n + j] = jij * jij;
          }
        return std::sqrt(numpy::pairwise_sum(sq.data(), n * n));
      },
      0.0,      // no offset
      nullptr,  // no gain before the softmax
  };
}

std::vector<ScaleRow> scale_experiment(std::uint64_t seed, const ScaleVariant& variant) {
  const std::vector<Scores>& scores = raw_scores(seed);
  std::vector<ScaleRow> rows;
  for (std::size_t i = 0; i < kScaleDims.size(); ++i) {
    ScaleRow r;
    r.d_k = kScaleDims[i];
    Scores s = scores[i];
    if (variant.score_offset != 0)
      for (double& x : s) x += variant.score_offset;
    r.score_mean = numpy::array_mean(s.data(), s.size());
    r.score_std = numpy::array_std(s.data(), s.size());
    Scores raw = s, scaled = s;
    const double raw_div = variant.raw_divisor(r.d_k), scaled_div = variant.scaled_divisor(r.d_k);
    if (raw_div != 1.0)
      for (double& x : raw) x /= raw_div;
    for (double& x : scaled) x /= scaled_div;
    r.scaled_std = numpy::array_std(scaled.data(), scaled.size());
    if (variant.scaled_softmax_gain)
      for (double& x : scaled) x *= variant.scaled_softmax_gain(r.d_k);
    softmax_rows_numpy(raw);
    softmax_rows_numpy(scaled);
    std::tie(r.raw_max_weight, r.raw_jacobian) = max_weight_and_jacobian(raw, variant);
    std::tie(r.scaled_max_weight, r.scaled_jacobian) = max_weight_and_jacobian(scaled, variant);
    rows.push_back(r);
  }
  return rows;
}

std::string scale_table_header() {
  return fmt::format("{:>5} {:>9} {:>9} | {:>9} {:>9} | {:>9} {:>9}", "d_k", "std(q.k)", "sqrt(d_k)", "peso max",
                     "|J| senza", "peso max", "|J| con");
}

std::string format_scale_row(const ScaleRow& r) {
  return fmt::format("{:>5} {:>9.3f} {:>9.3f} | {:>9.3f} {:>9.4f} | {:>9.3f} {:>9.4f}", r.d_k, r.score_std,
                     std::sqrt(static_cast<double>(r.d_k)), r.raw_max_weight, r.raw_jacobian, r.scaled_max_weight,
                     r.scaled_jacobian);
}

}  // namespace vl::lessons::attention
