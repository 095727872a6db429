#pragma once
// Every operation a backend can have, listed once. Each has its header (ops/<operation>.hpp:
// inputs, outputs, result shapes, options, vl-candidate/1 encoding); this list names each one
// with its member-function signature, once per precision it is declared in. From it come the
// `Op` enum and its names, the backend interface (backends/backend.hpp: one virtual member per
// row, default "lacks it"), the forwarding decorator, the shape checker, the candidate backend
// and `lessons backends`. Adding an operation: its header, a row here, its kernel, the plain
// backend's body (specs/README.md, "Adding an operation").
//
//   O(OP, NAME)  once per operation, before its signatures
//   X(OP, R, NAME, PARAMETERS, ARGUMENTS)  once per signature (a precision)
//     OP          the op header's descriptor (ops::Attention): name, request, options, result_shapes
//     R           the return type (an alias without a top-level comma)
//     NAME        the member function, and the Op a backend without it lacks (Op::NAME)
//     PARAMETERS  the parenthesised parameter list, names included
//     ARGUMENTS   the parenthesised names, as a forwarding call passes them
//
// An X-macro, because C++ has no other way to declare the same list of member functions in
// several classes.
#include <cstddef>
#include <string>
#include <vector>

#include "ops/attention.hpp"
#include "ops/attention_backward.hpp"
#include "ops/decoder_layer.hpp"
#include "ops/decoder_step.hpp"
#include "ops/encoder_layer.hpp"
#include "ops/layer_norm.hpp"
#include "ops/linear_attention.hpp"
#include "ops/linear_family.hpp"
#include "ops/multi_head_attention.hpp"
#include "ops/option.hpp"
#include "ops/positional_encoding.hpp"
#include "ops/shift_right.hpp"
#include "ops/tensors.hpp"

namespace vl::ops {

template <class T>
using AttentionResult4 = AttentionResult<T, 4>;
template <class T>
using AttentionGradients4 = AttentionGradients<T, 4>;
template <class T>
using MhaResult3 = MhaResult<T, 3>;

}  // namespace vl::ops

// clang-format off
#define VL_OPERATIONS(O, X)                                                                                                        \
  O(ops::Attention, attention)                                                                                                 \
  X(ops::Attention, ops::AttentionResult4<double>, attention,                                                                  \
    (const ops::Tensor4<double>& q, const ops::Tensor4<double>& k, const ops::Tensor4<double>& v,                              \
     const AttentionOptions<double>& o),                                                                                        \
    (q, k, v, o))                                                                                                               \
  X(ops::Attention, ops::AttentionResult4<float>, attention,                                                                   \
    (const ops::Tensor4<float>& q, const ops::Tensor4<float>& k, const ops::Tensor4<float>& v,                                 \
     const AttentionOptions<float>& o),                                                                                         \
    (q, k, v, o))                                                                                                               \
  O(ops::AttentionBackward, attention_backward)                                                                                \
  X(ops::AttentionBackward, ops::AttentionGradients4<double>, attention_backward,                                              \
    (const ops::Tensor4<double>& q, const ops::Tensor4<double>& k, const ops::Tensor4<double>& v,                              \
     const ops::Tensor4<double>& d_out, const AttentionOptions<double>& o),                                                     \
    (q, k, v, d_out, o))                                                                                                        \
  X(ops::AttentionBackward, ops::AttentionGradients4<float>, attention_backward,                                               \
    (const ops::Tensor4<float>& q, const ops::Tensor4<float>& k, const ops::Tensor4<float>& v,                                 \
     const ops::Tensor4<float>& d_out, const AttentionOptions<float>& o),                                                       \
    (q, k, v, d_out, o))                                                                                                        \
  O(ops::MultiHeadAttention, multi_head_attention)                                                                             \
  X(ops::MultiHeadAttention, ops::MhaResult3<double>, multi_head_attention,                                                    \
    (const ops::Tensor3& query, const ops::Tensor3& key, const ops::Tensor3& value, const MhaParameters<double>& p,            \
     std::size_t heads, const MhaOptions<double>& o),                                                                           \
    (query, key, value, p, heads, o))                                                                                           \
  X(ops::MultiHeadAttention, ops::MhaResult3<float>, multi_head_attention,                                                     \
    (const ops::Tensor3Of<float>& query, const ops::Tensor3Of<float>& key, const ops::Tensor3Of<float>& value,                  \
     const MhaParameters<float>& p, std::size_t heads, const MhaOptions<float>& o),                                             \
    (query, key, value, p, heads, o))                                                                                           \
  O(ops::PositionalEncoding, positional_encoding)                                                                              \
  X(ops::PositionalEncoding, ops::Matrix, positional_encoding, (const std::vector<double>& positions, std::size_t d),          \
    (positions, d))                                                                                                             \
  X(ops::PositionalEncoding, ops::MatrixOf<float>, positional_encoding, (const std::vector<float>& positions, std::size_t d), \
    (positions, d))                                                                                                             \
  O(ops::LinearParallel, linear_parallel)                                                                                     \
  X(ops::LinearParallel, ops::Matrix, linear_parallel, (const ops::Matrix& pq, const ops::Matrix& pk, const ops::Matrix& v),  \
    (pq, pk, v))                                                                                                                \
  X(ops::LinearParallel, ops::MatrixOf<float>, linear_parallel,                                                               \
    (const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk, const ops::MatrixOf<float>& v), (pq, pk, v))            \
  O(ops::LinearRecurrent, linear_recurrent)                                                                                   \
  X(ops::LinearRecurrent, ops::Matrix, linear_recurrent, (const ops::Matrix& pq, const ops::Matrix& pk, const ops::Matrix& v),\
    (pq, pk, v))                                                                                                                \
  X(ops::LinearRecurrent, ops::MatrixOf<float>, linear_recurrent,                                                             \
    (const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk, const ops::MatrixOf<float>& v), (pq, pk, v))            \
  O(ops::LinearChunked, linear_chunked)                                                                                        \
  X(ops::LinearChunked, ops::Matrix, linear_chunked,                                                                           \
    (const ops::Matrix& pq, const ops::Matrix& pk, const ops::Matrix& v, std::size_t chunk), (pq, pk, v, chunk))              \
  X(ops::LinearChunked, ops::MatrixOf<float>, linear_chunked,                                                                  \
    (const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk, const ops::MatrixOf<float>& v, std::size_t chunk),       \
    (pq, pk, v, chunk))                                                                                                         \
  O(ops::LinearFamily, linear_family)                                                                                         \
  X(ops::LinearFamily, FamilyResult<double>, linear_family, (const FamilyInputs<double>& in, const FamilyOptions& o), (in, o))\
  X(ops::LinearFamily, FamilyResult<float>, linear_family, (const FamilyInputs<float>& in, const FamilyOptions& o), (in, o))  \
  O(ops::LayerNorm, layer_norm)                                                                                                \
  X(ops::LayerNorm, ops::Tensor3, layer_norm, (const ops::Tensor3& x, const LayerNormParameters<double>& p, double eps),       \
    (x, p, eps))                                                                                                                \
  X(ops::LayerNorm, ops::Tensor3Of<float>, layer_norm,                                                                         \
    (const ops::Tensor3Of<float>& x, const LayerNormParameters<float>& p, double eps), (x, p, eps))                           \
  O(ops::EncoderLayer, encoder_layer)                                                                                          \
  X(ops::EncoderLayer, ops::Tensor3, encoder_layer,                                                                            \
    (const ops::Tensor3& x, const EncoderLayerParameters<double>& p, std::size_t heads, const LayerOptions& o,                 \
     const MhaOptions<double>& self),                                                                                           \
    (x, p, heads, o, self))                                                                                                     \
  X(ops::EncoderLayer, ops::Tensor3Of<float>, encoder_layer,                                                                   \
    (const ops::Tensor3Of<float>& x, const EncoderLayerParameters<float>& p, std::size_t heads, const LayerOptions& o,         \
     const MhaOptions<float>& self),                                                                                            \
    (x, p, heads, o, self))                                                                                                     \
  O(ops::DecoderLayer, decoder_layer)                                                                                          \
  X(ops::DecoderLayer, ops::Tensor3, decoder_layer,                                                                            \
    (const ops::Tensor3& tgt, const ops::Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,          \
     const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross),                                   \
    (tgt, memory, p, heads, o, self, cross))                                                                                    \
  X(ops::DecoderLayer, ops::Tensor3Of<float>, decoder_layer,                                                                   \
    (const ops::Tensor3Of<float>& tgt, const ops::Tensor3Of<float>& memory, const DecoderLayerParameters<float>& p,            \
     std::size_t heads, const LayerOptions& o, const MhaOptions<float>& self, const MhaOptions<float>& cross),                  \
    (tgt, memory, p, heads, o, self, cross))                                                                                    \
  O(ops::DecoderStep, decoder_step)                                                                                            \
  X(ops::DecoderStep, ops::Tensor3, decoder_step,                                                                              \
    (const ops::Tensor3& x_t, const ops::Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,          \
     const LayerOptions& o, LayerCache<double>& cache, const MhaOptions<double>& cross),                                        \
    (x_t, memory, p, heads, o, cache, cross))                                                                                   \
  X(ops::DecoderStep, ops::Tensor3Of<float>, decoder_step,                                                                     \
    (const ops::Tensor3Of<float>& x_t, const ops::Tensor3Of<float>& memory, const DecoderLayerParameters<float>& p,            \
     std::size_t heads, const LayerOptions& o, LayerCache<float>& cache, const MhaOptions<float>& cross),                       \
    (x_t, memory, p, heads, o, cache, cross))                                                                                   \
  O(ops::ShiftRight, shift_right)                                                                                              \
  X(ops::ShiftRight, ops::Tensor3, shift_right, (const ops::Tensor3& target, const xt::xtensor<double, 1>& start),             \
    (target, start))                                                                                                            \
  X(ops::ShiftRight, ops::Tensor3Of<float>, shift_right, (const ops::Tensor3Of<float>& target, const xt::xtensor<float, 1>& start), \
    (target, start))
// clang-format on

/// `VL_UNPACK ARGUMENTS` → the names without their parentheses (to pass them after another argument).
#define VL_UNPACK(...) __VA_ARGS__

namespace vl::ops {

#define VL_NO_OP(OP, NAME)
#define VL_NO_SIGNATURE(OP, R, NAME, PARAMETERS, ARGUMENTS)

/// The operations: what a backend has or lacks.
enum class Op {
#define VL_OP_ENUM(OP, NAME) NAME,
  VL_OPERATIONS(VL_OP_ENUM, VL_NO_SIGNATURE)
#undef VL_OP_ENUM
};

inline constexpr Op kAllOps[] = {
#define VL_OP_LIST(OP, NAME) Op::NAME,
    VL_OPERATIONS(VL_OP_LIST, VL_NO_SIGNATURE)
#undef VL_OP_LIST
};

/// Its name in reports, `lessons backends` and Unsupported's messages: "linear-chunked".
std::string to_string(Op op);

/// The options an operation has (its header's `options`): none for most.
std::vector<Option> options_of(Op op);

/// What a claim needs of a backend: an operation, or one option of it.
struct Need {
  Need(Op o, Option opt = Option::none) : op(o), option(opt) {}  // implicit: an Op is the need of itself
  Op op;
  Option option;
  bool operator==(const Need&) const = default;
};

/// "attention", "attention-weights".
std::string to_string(Need need);

/// Every need, in the list's order: each operation, then each of its options.
std::vector<Need> all_needs();

}  // namespace vl::ops
