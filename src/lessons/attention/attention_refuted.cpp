// Lesson attention: what the seeds say about attention that is not so (specs/attention.md,
// "What the lessons get wrong"). Each check demonstrates what is true instead; each control is a
// world in which the lesson's sentence would hold, and the check must reject it.
//
//   module-stores-weights      seed 002 calls its module "memory-efficient attention for long
//                              sequences"; it stores heads × n × n weights
//   seed-invariants-constant   seed 002's invariants _0, _1 and _2 read the test's constants, never
//                              the module: they hold for a module that checks nothing
//   timings-vary               seed 001 says every listing ran twice with identical output; its
//                              listing 6 prints timings, which differ from run to run
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/registry.hpp"
#include "kernels/fused/fused_attention.hpp"
#include "kernels/reference/heads.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/attention/attention_common.hpp"
#include "numeric/numpy_random.hpp"

namespace vl::lessons::attention {

namespace {

// --- module-stores-weights ------------------------------------------------------------------

using ModuleRows = xt::xtensor<double, 2>;  // (seq, d_model)
using KeepingModule = std::function<HeadsOutput<double>(const ModuleRows&, const ModuleRows&, const ModuleRows&, const HeadsConfig&)>;

// The bytes a forward of the module keeps: its output (seq × d_model) and its weights
// (heads × seq × seq), in float64, for seq = 128 … 1024, d_model 4, 2 heads (the seed's
// configuration). Measured: the growth exponent log₂(bytes(2n) / bytes(n)) at the last doubling,
// 2 for a module that keeps n² per head, 1 for one that keeps only its output. The weights must
// hold exactly heads · n² values at every n (the count, not only its growth).
Measurement stored_bytes(const KeepingModule& module) {
  numpy::Generator rng(24);
  const HeadsConfig config{4, 2, 0.0f, false};
  std::vector<double> ns, bytes;
  std::vector<std::string> unmet;
  for (std::size_t n : {128, 256, 512, 1024}) {
    const ModuleRows q = rng.standard_normal(n, 4), k = rng.standard_normal(n, 4), v = rng.standard_normal(n, 4);
    const HeadsOutput<double> r = module(q, k, v, config);
    if (r.weights.size() != config.num_heads * n * n)
      unmet.push_back(fmt::format("n = {}: {} weights kept, not heads · n² = {}", n, r.weights.size(), config.num_heads * n * n));
    ns.push_back(double(n));
    bytes.push_back(double(sizeof(double) * (r.output.size() + r.weights.size())));
  }
  const double exponent = std::log2(bytes.back() / bytes[bytes.size() - 2]);
  Measurement m{exponent,
                fmt::format("bytes kept per forward (output + weights, float64) at n = {}: {}; growth exponent at the last doubling "
                            "{:.4f} (2: quadratic in n; at n = 4096 its two heads keep {} MiB of weights)",
                            fmt::join(ns, ", "), fmt::join(bytes, ", "), exponent, 2 * 4096 * 4096 * 8 / (1 << 20)),
                {{"n", ns, ""}, {"bytes kept by the module", bytes, ""}},
                unmet};
  return m;
}

HeadsOutput<double> seed_module_on_plain(const ModuleRows& q, const ModuleRows& k, const ModuleRows& v, const HeadsConfig& c) {
  return heads_forward_on<double>(*backends::plain(), q, k, v, c);
}

// The module the sentence describes: the same heads through the fused kernel, which forms no
// weights (O(block) workspace), keeping only its output.
HeadsOutput<double> memory_efficient_module(const ModuleRows& q, const ModuleRows& k, const ModuleRows& v, const HeadsConfig& c) {
  check_heads_config(c, shapes_of(q, k, v));
  AttentionOptions<double> o = heads_options<double>(c);
  o.return_weights = false;
  const std::size_t H = c.num_heads;
  const AttentionResult<double, 4> r =
      backends::find("fused")->attention(split_heads<double>(q, H), split_heads<double>(k, H), split_heads<double>(v, H), o);
  return {merge_heads_2d<double>(r.output), {}};
}

// --- seed-invariants-constant ---------------------------------------------------------------

// Seed 002's test file configures the module with cfg(causal, dropout) = {d_model 4, 2 heads,
// dropout, causal} and states, as invariants of the module:
//   _0  valid_input() == 0, where valid_input() = cfg(false, 0).d_model % cfg(false, 0).num_heads
//   _1  cfg(false, 0.5).dropout >= 0 and cfg(false, 0.5).dropout < 1
//   _2  cfg(false, 0.0).d_model == 4            (its comment: "query.shape == key.shape == value.shape")
// Each is written here as a predicate over the module under test, which it never reads.
HeadsConfig seed_cfg(bool causal, float dropout) { return {4, 2, dropout, causal}; }

/// A module as the invariants could see it: the argument check its forward runs.
struct CheckedModule {
  std::string name;
  std::function<void(const HeadsConfig&, const HeadsShapes&)> check_config;
};
using Invariant = std::function<bool(const CheckedModule&)>;

bool invariant_0(const CheckedModule&) {
  const std::size_t valid_input = seed_cfg(false, 0).d_model % seed_cfg(false, 0).num_heads;
  return valid_input == 0;
}
bool invariant_1(const CheckedModule&) { return seed_cfg(false, 0.5f).dropout >= 0.0f && seed_cfg(false, 0.5f).dropout < 1.0f; }
bool invariant_2(const CheckedModule&) { return seed_cfg(false, 0.0f).d_model == 4; }

/// Whether the module refuses configuration c (with q, k, v of `shapes`; default: three (3, d_model)).
bool refuses(const CheckedModule& m, const HeadsConfig& c, std::optional<HeadsShapes> shapes = std::nullopt) {
  try {
    m.check_config(c, shapes.value_or(HeadsShapes{{{3, c.d_model}, {3, c.d_model}, {3, c.d_model}}}));
    return false;
  } catch (const std::invalid_argument&) {
    return true;
  }
}

// A key of another length than the query: what _2's comment rules out.
const HeadsShapes kKeyOfAnotherLength{{{3, 4}, {2, 4}, {3, 4}}};

// Run the invariants against the seed's module and against one that checks nothing (it accepts
// d_model 10 over 4 heads and dropout 1.5, which the invariants' own comments rule out).
// Measured: how many (invariant, broken module) pairs the invariants reject; 0 shows that they
// cannot fail. The seed's module must hold them, and the broken one must indeed be broken.
Measurement invariants_reject(const std::vector<std::pair<std::string, Invariant>>& invariants) {
  // Our port's argument check (kernels/reference/heads_attention.hpp); the seed's forward checks nothing.
  const CheckedModule seed{"our port of seed 002's module", check_heads_config};
  const CheckedModule unchecked{"a module that checks nothing", [](const HeadsConfig&, const HeadsShapes&) {}};
  std::vector<std::string> unmet, verdicts;
  const bool broken = !refuses(unchecked, {10, 4, 0.0f, false}) && !refuses(unchecked, {4, 2, 1.5f, false}) &&
                      !refuses(unchecked, {4, 2, 0.0f, false}, kKeyOfAnotherLength);
  if (!broken) unmet.push_back("the unchecked module refused a bad configuration: it does not show what the invariants miss");
  int rejected = 0;
  for (const auto& [name, holds] : invariants) {
    if (!holds(seed)) unmet.push_back(fmt::format("invariant {} fails our port of seed 002's module", name));
    const bool rejects = !holds(unchecked);
    rejected += rejects;
    verdicts.push_back(fmt::format("{}: {} the module that checks nothing", name, rejects ? "rejects" : "holds for"));
  }
  return {double(rejected),
          fmt::format("{}; the module that checks nothing accepts d_model 10 over 4 heads, dropout 1.5 and a key of another length; "
                      "broken modules rejected: {}",
                      fmt::join(verdicts, "; "), rejected),
          {},
          unmet};
}

const std::vector<std::pair<std::string, Invariant>> kSeedInvariants = {{"_0", invariant_0}, {"_1", invariant_1}, {"_2", invariant_2}};

// The invariants as their comments state them ("d_model % num_heads == 0", "0 <= dropout < 1",
// "query.shape == key.shape == value.shape"): predicates on what the module accepts.
const std::vector<std::pair<std::string, Invariant>> kInvariantsAsCommented = {
    {"_0 as commented", [](const CheckedModule& m) { return refuses(m, {10, 4, 0.0f, false}); }},
    {"_1 as commented", [](const CheckedModule& m) { return refuses(m, {4, 2, 1.5f, false}); }},
    {"_2 as commented", [](const CheckedModule& m) { return refuses(m, {4, 2, 0.0f, false}, kKeyOfAnotherLength); }}};

// --- timings-vary ---------------------------------------------------------------------------

// Listing 6's timed step (the n × n scores formed, softmax, times V; n = 512, d = 64, float32)
// timed five times, each as the listing times it. Measured: how many distinct durations (in the
// clock's own ticks) the five runs gave. Printed to three decimals they may still coincide: the
// claim is about the durations, not one printed line. No duration is judged.
using Clock = std::function<double(const std::function<void()>&)>;

double wall_seconds(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Measurement distinct_timings(const Clock& clock) {
  numpy::Generator rng(0);
  const std::size_t n = 512, d = 64;
  const xt::xtensor<float, 2> q = xt::cast<float>(rng.standard_normal(n, d)), k = xt::cast<float>(rng.standard_normal(n, d)),
                              v = xt::cast<float>(rng.standard_normal(n, d));
  std::vector<double> seconds;
  for (int run = 0; run < 5; ++run) seconds.push_back(clock([&] { (void)attention_materialized<float>(q, k, v); }));
  const std::set<double> distinct(seconds.begin(), seconds.end());
  return {double(distinct.size()),
          fmt::format("listing 6's step at n = 512 read five times by the clock: {}; {} distinct", fmt::join(seconds, ", "), distinct.size()),
          {{"run", {1, 2, 3, 4, 5}, ""}, {"clock readings", seconds, ""}}};
}

// The world in which the sentence would hold: a "timing" that is a count (the cells formed),
// the same on every run.
double counted_cells(const std::function<void()>& f) {
  f();
  return 512.0 * 512.0;
}

}  // namespace

std::vector<ClaimCheck> refuted_checks() {
  return {{"attention.module-stores-weights", "bytes seed 002's module keeps per forward, n = 128 … 1024, d_model 4, 2 heads",
           [](const CheckContext&) { return stored_bytes(seed_module_on_plain); },
           {broken_code("a module that keeps only its output (the fused kernel per head): what the sentence describes",
                        [](const CheckContext&) { return stored_bytes(memory_efficient_module); })}},
          {"attention.seed-invariants-constant", "seed 002's invariants _0, _1, _2 against our port of its module and one that checks nothing",
           [](const CheckContext&) { return invariants_reject(kSeedInvariants); },
           {broken_code("the invariants as their comments state them (the module refuses d_model 10 over 4 heads, dropout 1.5, a key "
                        "of another length)",
                        [](const CheckContext&) { return invariants_reject(kInvariantsAsCommented); })}},
          {"attention.timings-vary", "listing 6's step timed five times: distinct durations",
           [](const CheckContext&) { return distinct_timings(wall_seconds); },
           {broken_code("a timing that is a count (cells formed): the same on every run",
                        [](const CheckContext&) { return distinct_timings(counted_cells); })}}};
}

}  // namespace vl::lessons::attention
