// Lesson linear-rnn: the checks of its claims, each with the broken variants it must reject.
//
// The claims about the computation (forms-agree, convex-combination, causal) judge the backend
// they are given; their controls are broken backends (linear_rnn_broken_backends.hpp). The
// claims about our own code (state-size, phi-positive, chunked-linear-cost) run on our code,
// and their controls break one piece of it.
#include <memory>
#include <vector>

#include <xtensor/xview.hpp>

#include "backends/registry.hpp"
#include "kernels/reference/linear_attention.hpp"
#include "lessons/linear_rnn/linear_rnn.hpp"
#include "lessons/linear_rnn/linear_rnn_broken_backends.hpp"

namespace vl::lessons::linear_rnn {

namespace {

// --- Our code with one piece broken, for the claims about our code.

// φ = elu without the +1: negative for x < 0, so weights can be negative.
Matrix phi_elu(const Matrix& x) { return xt::where(x > 0.0, x, xt::exp(x) - 1.0); }
// elu(x) + 1 as written, not piecewise: (eˣ − 1) + 1 rounds to 0 once eˣ ≤ 2⁻⁵⁴ (x < −37.4).
Matrix phi_elu_then_one(const Matrix& x) { return xt::where(x > 0.0, x, xt::expm1(x)) + 1.0; }

std::size_t recurrent_state_size(std::size_t n, std::size_t d_k, std::size_t d_v) {
  LinearAttentionState<double> state(d_k, d_v);
  const Matrix pk = xt::ones<double>({std::size_t(1), d_k}), v = xt::ones<double>({std::size_t(1), d_v});
  for (std::size_t t = 0; t < n; ++t) state.absorb(pk, v);
  return state.size();
}

// A KV cache, as softmax attention keeps: every key and value seen so far.
std::size_t kv_cache_size(std::size_t n, std::size_t d_k, std::size_t d_v) {
  std::vector<double> cache;
  for (std::size_t t = 0; t < n; ++t) cache.insert(cache.end(), d_k + d_v, 1.0);
  return cache.size();
}

Matrix our_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) {
  return linear_attention_chunked<double>(pq, pk, v, chunk);
}

// "Chunked" in name only: builds the whole n×n table, as the parallel form does.
Matrix chunked_full_table(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t) {
  return linear_attention_parallel<double>(pq, pk, v);
}

// A claim about the computation's control: our plain backend with one operation broken.
template <class BrokenBackend>
NegativeControl broken(std::string what) {
  return broken_backend(what, std::make_shared<BrokenBackend>(backends::plain(), what));
}

}  // namespace

Lesson lesson() {
  Lesson l;
  l.id = "linear-rnn";
  l.spec_file = "specs/linear_rnn.md";
  l.listings.push_back({"linear-rnn.main", "vl::lessons::linear_rnn::listing_main", listing_main,
                        {backends::Op::linear_parallel, backends::Op::linear_recurrent, backends::Op::linear_chunked}});

  // Each claim's controls, shared by its fixed sweep and its generated cases.
  const std::vector<NegativeControl> forms_controls = {broken<ChunkedStateNotCarried>("state not carried across chunks"),
                                                       broken<ChunkedShortLastChunkSkipped>("short last chunk skipped"),
                                                       broken<ParallelNormaliserDropped>("normaliser dropped"),
                                                       broken<ParallelOneFutureToken>("mask lets one future token through")};
  const std::vector<NegativeControl> convex_controls = {broken<ParallelNormaliserDropped>("normaliser dropped"),
                                                        broken<RecurrentNormaliserNotUpdated>("recurrent normaliser z not updated"),
                                                        broken<ChunkedNormaliserDropped>("chunked normaliser dropped")};
  const std::vector<NegativeControl> causal_controls = {broken<ParallelOneFutureToken>("mask lets one future token through"),
                                                        broken<RecurrentReadsAhead>("recurrent form reads one token ahead"),
                                                        broken<ChunkedOneFutureToken>("chunk's table lets one future token through")};
  l.checks.push_back({"linear-rnn.forms-agree", "parallel, recurrent and chunked forms over 9 shapes and every chunk size",
                      forms_agree,
                      forms_controls});
  l.checks.push_back({"linear-rnn.forms-agree", "generated cases: n ≤ 64, d_k ≤ 16, d_v, any chunk size",
                      forms_agree_generated,
                      forms_controls});

  l.checks.push_back({"linear-rnn.state-size", "state elements after 1, 16, 256, 4096 tokens",
                      [](const CheckContext&) { return state_size_fixed(recurrent_state_size); },
                      {broken_code("a KV cache instead of a state",
                                   [](const CheckContext&) { return state_size_fixed(kv_cache_size); })}});

  l.checks.push_back({"linear-rnn.phi-positive", "φ over a grid of [-700, 700] and normal draws",
                      [](const CheckContext&) { return phi_positive(feature_map); },
                      {broken_code("φ = elu, without the +1", [](const CheckContext&) { return phi_positive(phi_elu); }),
                       broken_code("φ computed as elu(x) + 1, not piecewise", [](const CheckContext&) { return phi_positive(phi_elu_then_one); })}});

  l.checks.push_back({"linear-rnn.convex-combination", "outputs inside the running min/max of the values, each form",
                      convex_combination,
                      convex_controls});
  l.checks.push_back({"linear-rnn.convex-combination", "generated cases: n ≤ 64, d_k ≤ 16, d_v, any chunk size, each form",
                      convex_combination_generated,
                      convex_controls});

  l.checks.push_back({"linear-rnn.causal", "tokens after t replaced: outputs up to t bit for bit, each form", causal,
                      causal_controls});
  l.checks.push_back({"linear-rnn.causal", "generated cases: tokens after a drawn t redrawn, any chunk size, each form", causal_generated,
                      causal_controls});

  l.checks.push_back({"linear-rnn.chunked-linear-cost", "multiply-adds counted at n = 256 … 4096",
                      [](const CheckContext&) { return chunked_cost_linear(our_chunked); },
                      {broken_code("chunked form that builds the full n×n table", [](const CheckContext&) {
                        return chunked_cost_linear(chunked_full_table);
                      })}});

  l.checks.push_back({"linear-rnn.cost-counted", "multiply-adds of the three forms against their formulas, 5 shapes",
                      [](const CheckContext&) { return cost_counted(our_forms()); },
                      {broken_code("chunked form that builds the full n×n table", [](const CheckContext&) {
                        Forms f = our_forms();
                        f.chunked = chunked_full_table;
                        return cost_counted(f);
                      })}});

  l.checks.push_back({"linear-rnn.generation-step-cost", "multiply-adds of each of 1024 generation steps",
                      [](const CheckContext&) { return generation_step_cost(recurrent_step); },
                      {broken_code("a cache of every key and value in place of the state",
                                   [](const CheckContext&) { return generation_step_cost(cache_step); })}});
  return l;
}

}  // namespace vl::lessons::linear_rnn
