#pragma once
// Lesson linear-family: the family of linear recurrences, ONNX's LinearAttention (spec:
// specs/linear_family.md). The claims' predicates, each a check over a backend's
// linear_family operation (backends/backend.hpp), and the inputs they draw.
#include <cstdint>
#include <functional>

#include "engine/lesson.hpp"
#include "kernels/reference/linear_family_heads.hpp"

namespace vl::lessons::linear_family {

/// A shape of the sweeps: batches, query and key/value heads, tokens, key and value widths,
/// per-key-dimension decay (else per head), a past state.
struct Shape {
  std::size_t B, Hq, Hkv, n, dk, dv;
  bool per_dimension, past;
};

/// Inputs in ONNX's 4-D layout drawn from default_rng(seed): q, k, v normal, each key of unit
/// length (as DeltaNet normalises them), log-decay log σ(x + 2), β = σ(x), a normal past state.
/// The decay and β are drawn for every rule and used only by the rules that read them.
template <class T>
FamilyInputs<T> draw(const Shape& s, std::uint64_t seed);

ListingOutput listing_main(const ListingContext& ctx);

Measurement forms_agree(const CheckContext& ctx);
Measurement forms_agree_float32(const CheckContext& ctx);
Measurement chunk_invariant(const CheckContext& ctx);
Measurement state_continuation(const CheckContext& ctx);
Measurement reductions(const CheckContext& ctx);
Measurement delta_overwrites(const CheckContext& ctx);
Measurement normalised_form(const CheckContext& ctx);

/// Our chunked kernel at a chunk size of its choosing for n tokens, its multiply-adds counted.
using ChunkFor = std::function<std::size_t(std::size_t n)>;
Measurement chunked_linear_cost(const ChunkFor& chunk_for, const CheckContext& ctx);

Lesson lesson();

}  // namespace vl::lessons::linear_family
