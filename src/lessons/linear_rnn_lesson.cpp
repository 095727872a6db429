// Lesson linear-rnn: the checks of its claims, each with the broken variants it must reject.
#include <algorithm>

#include <xtensor/xview.hpp>

#include "kernels/feature_map.hpp"
#include "kernels/linear_attention.hpp"
#include "lessons/linear_rnn.hpp"

namespace vl::lessons::linear_rnn {

namespace {

// --- Broken variants. Each is one plausible bug, built from the kernels' own pieces.

// The chunked form with a fresh state in every chunk: each chunk forgets the chunks before it.
Matrix chunked_state_not_carried(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) {
  const std::size_t n = pq.shape(0);
  Matrix out = xt::zeros<double>({n, v.shape(1)});
  for (std::size_t c = 0; c < n; c += chunk) {
    auto rows = xt::range(c, std::min(c + chunk, n));
    const LinearAttentionState<double> fresh(pk.shape(1), v.shape(1));
    xt::view(out, rows, xt::all()) = chunk_output<double>(xt::view(pq, rows, xt::all()), xt::view(pk, rows, xt::all()),
                                                          xt::view(v, rows, xt::all()), fresh);
  }
  return out;
}

// The chunked form that only runs whole chunks: the short last chunk is left at zero.
Matrix chunked_short_last_chunk_skipped(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) {
  const std::size_t n = pq.shape(0);
  LinearAttentionState<double> state(pk.shape(1), v.shape(1));
  Matrix out = xt::zeros<double>({n, v.shape(1)});
  for (std::size_t c = 0; c + chunk <= n; c += chunk) {
    auto rows = xt::range(c, c + chunk);
    const auto k = xt::view(pk, rows, xt::all());
    const auto vv = xt::view(v, rows, xt::all());
    xt::view(out, rows, xt::all()) = chunk_output<double>(xt::view(pq, rows, xt::all()), k, vv, state);
    state.absorb(k, vv);
  }
  return out;
}

// The parallel form without the division by the row sums: a sum, not a weighted mean.
Matrix parallel_normaliser_dropped(const Matrix& pq, const Matrix& pk, const Matrix& v) {
  return matmul<double>(causal_affinities<double>(pq, pk), v);
}

// The parallel form whose mask lets one future token through (tril with diagonal 1).
Matrix parallel_one_future_token(const Matrix& pq, const Matrix& pk, const Matrix& v) {
  const Matrix a = causal_affinities<double>(pq, pk, 1);
  return divide_rows<double>(matmul<double>(a, v), xt::sum(a, {1}));
}

// The recurrent form that absorbs token t+1 before it answers token t.
Matrix recurrent_reads_ahead(const Matrix& pq, const Matrix& pk, const Matrix& v) {
  const std::size_t n = pq.shape(0);
  LinearAttentionState<double> state(pk.shape(1), v.shape(1));
  Matrix out = xt::zeros<double>({n, v.shape(1)});
  state.absorb(xt::view(pk, xt::range(0, 1), xt::all()), xt::view(v, xt::range(0, 1), xt::all()));
  for (std::size_t t = 0; t < n; ++t) {
    if (t + 1 < n) state.absorb(xt::view(pk, xt::range(t + 1, t + 2), xt::all()), xt::view(v, xt::range(t + 1, t + 2), xt::all()));
    const auto q = xt::view(pq, xt::range(t, t + 1), xt::all());
    xt::view(out, xt::range(t, t + 1), xt::all()) = divide_rows<double>(state.numerators(q), state.normalisers(q));
  }
  return out;
}

// "Chunked" in name only: builds the whole n×n table, as the parallel form does.
Matrix chunked_full_table(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t) {
  return linear_attention_parallel<double>(pq, pk, v);
}

// φ = elu without the +1: negative for x < 0, so weights can be negative.
Matrix phi_elu(const Matrix& x) { return xt::where(x > 0.0, x, xt::exp(x) - 1.0); }

Forms with_parallel(decltype(Forms::parallel) f) { Forms forms = reference_forms(); forms.parallel = std::move(f); return forms; }
Forms with_recurrent(decltype(Forms::recurrent) f) { Forms forms = reference_forms(); forms.recurrent = std::move(f); return forms; }
Forms with_chunked(decltype(Forms::chunked) f) { Forms forms = reference_forms(); forms.chunked = std::move(f); return forms; }
Forms with_phi(decltype(Forms::phi) f) { Forms forms = reference_forms(); forms.phi = std::move(f); return forms; }

// The predicate run on the reference forms, or on broken ones.
template <class Predicate, class Impl>
CheckFn on(Predicate predicate, Impl impl) {
  return [predicate, impl](double tolerance) { return predicate(impl, tolerance); };
}

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

}  // namespace

Lesson lesson() {
  Lesson l;
  l.id = "linear-rnn";
  l.spec_file = "specs/linear_rnn.md";
  l.listings.push_back({"linear-rnn.main", "vl::lessons::linear_rnn::listing_main", listing_main});
  const Forms ref = reference_forms();

  l.checks.push_back({"linear-rnn.forms-agree", "parallel, recurrent and chunked forms over 9 shapes and every chunk size",
                      on(forms_agree, ref),
                      {{"state not carried across chunks", on(forms_agree, with_chunked(chunked_state_not_carried))},
                       {"short last chunk skipped", on(forms_agree, with_chunked(chunked_short_last_chunk_skipped))},
                       {"normaliser dropped", on(forms_agree, with_parallel(parallel_normaliser_dropped))},
                       {"mask lets one future token through", on(forms_agree, with_parallel(parallel_one_future_token))}}});

  l.checks.push_back({"linear-rnn.state-size", "state elements after 1, 16, 256, 4096 tokens",
                      on(state_size_fixed, StateSizeAfter(recurrent_state_size)),
                      {{"a KV cache instead of a state", on(state_size_fixed, StateSizeAfter(kv_cache_size))}}});

  l.checks.push_back({"linear-rnn.phi-positive", "φ over a grid of [-700, 700] and normal draws", on(phi_positive, ref),
                      {{"φ = elu, without the +1", on(phi_positive, with_phi(phi_elu))}}});

  l.checks.push_back({"linear-rnn.convex-combination", "outputs inside the running min/max of the values, three forms",
                      on(convex_combination, ref),
                      {{"normaliser dropped", on(convex_combination, with_parallel(parallel_normaliser_dropped))},
                       {"φ = elu, without the +1", on(convex_combination, with_phi(phi_elu))}}});

  l.checks.push_back({"linear-rnn.causal", "tokens after t replaced: outputs up to t bit for bit, three forms",
                      on(causal, ref),
                      {{"mask lets one future token through", on(causal, with_parallel(parallel_one_future_token))},
                       {"recurrent form reads one token ahead", on(causal, with_recurrent(recurrent_reads_ahead))}}});

  l.checks.push_back({"linear-rnn.chunked-linear-cost", "multiply-adds counted at n = 256 … 4096",
                      on(chunked_cost_linear, ref),
                      {{"chunked form that builds the full n×n table", on(chunked_cost_linear, with_chunked(chunked_full_table))}}});
  return l;
}

}  // namespace vl::lessons::linear_rnn
