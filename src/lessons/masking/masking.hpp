#pragma once
// Lesson masking: listings, claim predicates and negative controls (specs/masking.md).
//
// Each claim's check judges the backend it is given (CheckContext::backend) through its
// `attention` operation and that operation's own masks: `causal` with its `alignment`, and
// `allowed` (true = may attend) for the key-padding and other boolean masks. The broken
// variants it must reject are backends too (masking_broken_backends.hpp).
#include <cstdint>
#include <string>

#include <xtensor/xview.hpp>

#include "backends/backend.hpp"
#include "engine/lesson.hpp"

namespace vl::lessons::masking {

using backends::Tensor4;

/// Sequence positions [from, to) of a (B, H, S, ·) tensor, as a view.
template <class T>
auto positions(T&& t, std::size_t from, std::size_t to) {
  return xt::view(std::forward<T>(t), xt::all(), xt::all(), xt::range(from, to), xt::all());
}

/// Q, K, V (B, H, S, D) drawn from default_rng(seed), in that order.
struct Inputs {
  Tensor4<double> q, k, v;
};
Inputs draw_inputs(std::size_t b, std::size_t h, std::size_t sq, std::size_t sk, std::size_t d, std::uint64_t seed);

/// masking.one-pass-equals-decoding's, masking.alignment's and masking.cache-decoding's tolerance in
/// float64 (specs/masking.md; test_lesson_masking checks that the spec still says so).
inline constexpr double kFloat64Agreement = 1e-14;

/// What a difference between two of the backend's own results for the same rows (one causal pass,
/// and the same rows by decoding, by a query block, through a cache) is measured in, each result
/// within the derived bound of attention (lessons/attention_error_bound.hpp) of the exact rows, so
/// the two within twice it. In float64 the unit is 1 (the spec's absolute tolerance), which a
/// correct implementation is sure to meet only where twice the float64 bound of the inputs is at
/// most kFloat64Agreement: `v` is scaled by a power of two (exactly) until it is, and the factor
/// returned. Elsewhere the unit is twice the bound in that precision of the inputs rounded to it,
/// and `v` is left as it is. `o`: the options of the full pass (its masks, softcap, scale).
struct Agreement {
  double unit = 1;
  double value_scale = 1;
};
Agreement agreement_unit(const CheckContext& ctx, const Tensor4<double>& q, const Tensor4<double>& k, Tensor4<double>& v,
                         const AttentionOptions<double>& o);
/// "" in float64; " over twice its float32 bound" in another precision: what agreement_unit divides by.
inline std::string unit_words(const CheckContext& ctx) {
  return ctx.precision == Precision::float64 ? "" : " over twice its " + to_string(ctx.precision) + " bound";
}

/// Row i of (b, h) of a result, as masking.fully-masked-row-zero judges a row that sees no key: its
/// largest |weight| or |output| (a NaN read as ∞ by worse()), and whether a NaN was among them.
struct RowMagnitude {
  double largest = 0;
  bool nan = false;
};
RowMagnitude row_magnitude(const AttentionResult<double, 4>& r, std::size_t b, std::size_t h, std::size_t i);

/// The seed article's listing 5: its two printed lines, and the module's arrays (our kernels;
/// it reads no golden).
ListingOutput listing_main(const ListingContext& ctx);

// The claims' checks: each measures ctx.backend; the engine judges the value against the spec.
Measurement masked_weights_zero(const CheckContext& ctx);
Measurement first_position_self(const CheckContext& ctx);
Measurement prefix_unchanged(const CheckContext& ctx);
Measurement one_pass_equals_decoding(const CheckContext& ctx);
Measurement alignment(const CheckContext& ctx);
Measurement padding_ignored(const CheckContext& ctx);
Measurement fully_masked_row_zero(const CheckContext& ctx);
Measurement window_independent(const CheckContext& ctx);  // masking_window.cpp
Measurement cache_decoding(const CheckContext& ctx);       // masking_cache.cpp
Measurement float16_bound(const CheckContext& ctx);        // masking_float16.cpp
Measurement float16_generated(const CheckContext& ctx);    // masking_float16.cpp
Measurement mha_fully_masked_row(const CheckContext& ctx); // masking_mha.cpp
Measurement mha_fully_masked_row_generated(const CheckContext& ctx);
// The same claims over generated cases (masking_generated.cpp).
Measurement masked_weights_generated(const CheckContext& ctx);
Measurement window_generated(const CheckContext& ctx);
Measurement nan_generated(const CheckContext& ctx);
Measurement fully_masked_generated(const CheckContext& ctx);
Measurement padding_generated(const CheckContext& ctx);
// The claims about one causal pass over generated cases (masking_causal_generated.cpp).
Measurement first_position_generated(const CheckContext& ctx);
Measurement prefix_generated(const CheckContext& ctx);
Measurement one_pass_generated(const CheckContext& ctx);
Measurement alignment_generated(const CheckContext& ctx);
Measurement cache_generated(const CheckContext& ctx);
// Our float16 and bfloat16 storage rounds once (masking_rounds_once.cpp), and its control: through float.
Measurement narrow_formats_round_once(const CheckContext& ctx);
Measurement rounded_through_float(const CheckContext& ctx);

/// (B, Sq): which queries of an nn.MultiheadAttention call see no key under its options
/// (attn_mask (Sq, Sk) true = blocked, key_padding_mask (B, Sk), causal top-left): our truth.
template <class T>
xt::xtensor<bool, 2> mha_rows_without_key(const MhaOptions<T>& o, std::size_t B, std::size_t sq, std::size_t sk);

/// The lesson: listing and checks with their negative controls (masking_lesson.cpp).
Lesson lesson();

}  // namespace vl::lessons::masking
