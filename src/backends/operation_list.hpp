#pragma once
// Every backend operation's signature, written once (backend.hpp says what each computes).
// Backend declares them virtual, Backend's defaults throw Unsupported, the Decorator forwards
// them, ShapeChecked and PlainBackend override them all: each of those says "every operation"
// with one line, and an operation added here reaches all of them (the compiler then asks for
// the new overrides' bodies). An X-macro, because C++ has no other way to declare the same
// list of member functions in several classes.
//
//   X(R, NAME, PARAMETERS, ARGUMENTS)
//     R           the return type (an alias without a top-level comma)
//     NAME        the member function, and the Op a backend without it lacks (Op::NAME)
//     PARAMETERS  the parenthesised parameter list, names included
//     ARGUMENTS   the parenthesised names, as a forwarding call passes them
//
// The attention operations come first, in their own list: the candidate protocol
// (candidate_backend.hpp) carries exactly those; the layer operations follow.
#include <cstddef>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "kernels/reference/attention.hpp"
#include "kernels/reference/attention_backward.hpp"
#include "kernels/reference/decoder_step.hpp"
#include "kernels/reference/linear_family_heads.hpp"
#include "kernels/reference/multi_head_attention.hpp"

namespace vl::backends {

template <class T>
using Tensor4 = xt::xtensor<T, 4>;
using Matrix = xt::xtensor<double, 2>;
using Tensor3 = xt::xtensor<double, 3>;
template <class T>
using AttentionResult4 = AttentionResult<T, 4>;
template <class T>
using AttentionGradients4 = AttentionGradients<T, 4>;
using MhaResult3 = MhaResult<double, 3>;

}  // namespace vl::backends

// clang-format off
#define VL_ATTENTION_OPERATIONS(X)                                                                                              \
  X(AttentionResult4<double>, attention,                                                                                        \
    (const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v, const AttentionOptions<double>& o),          \
    (q, k, v, o))                                                                                                               \
  X(AttentionResult4<float>, attention,                                                                                         \
    (const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v, const AttentionOptions<float>& o),              \
    (q, k, v, o))                                                                                                               \
  X(AttentionGradients4<double>, attention_backward,                                                                            \
    (const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v, const Tensor4<double>& d_out,                \
     const AttentionOptions<double>& o),                                                                                        \
    (q, k, v, d_out, o))                                                                                                        \
  X(AttentionGradients4<float>, attention_backward,                                                                             \
    (const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v, const Tensor4<float>& d_out,                    \
     const AttentionOptions<float>& o),                                                                                         \
    (q, k, v, d_out, o))                                                                                                        \
  X(MhaResult3, multi_head_attention,                                                                                           \
    (const Tensor3& query, const Tensor3& key, const Tensor3& value, const MhaParameters<double>& p, std::size_t heads,         \
     const MhaOptions<double>& o),                                                                                              \
    (query, key, value, p, heads, o))                                                                                           \
  X(Matrix, positional_encoding, (const std::vector<double>& positions, std::size_t d), (positions, d))                         \
  X(Matrix, linear_parallel, (const Matrix& pq, const Matrix& pk, const Matrix& v), (pq, pk, v))                                \
  X(Matrix, linear_recurrent, (const Matrix& pq, const Matrix& pk, const Matrix& v), (pq, pk, v))                               \
  X(Matrix, linear_chunked, (const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk),                           \
    (pq, pk, v, chunk))

#define VL_LAYER_OPERATIONS(X)                                                                                                  \
  X(FamilyResult<double>, linear_family, (const FamilyInputs<double>& in, const FamilyOptions& o), (in, o))                     \
  X(FamilyResult<float>, linear_family, (const FamilyInputs<float>& in, const FamilyOptions& o), (in, o))                       \
  X(Tensor3, layer_norm, (const Tensor3& x, const LayerNormParameters<double>& p, double eps), (x, p, eps))                     \
  X(Tensor3, encoder_layer,                                                                                                     \
    (const Tensor3& x, const EncoderLayerParameters<double>& p, std::size_t heads, const LayerOptions& o,                       \
     const MhaOptions<double>& self),                                                                                           \
    (x, p, heads, o, self))                                                                                                     \
  X(Tensor3, decoder_layer,                                                                                                     \
    (const Tensor3& tgt, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,                     \
     const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross),                                   \
    (tgt, memory, p, heads, o, self, cross))                                                                                    \
  X(Tensor3, decoder_step,                                                                                                      \
    (const Tensor3& x_t, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,                     \
     const LayerOptions& o, LayerCache<double>& cache, const MhaOptions<double>& cross),                                        \
    (x_t, memory, p, heads, o, cache, cross))                                                                                   \
  X(Tensor3, shift_right, (const Tensor3& target, const xt::xtensor<double, 1>& start), (target, start))

#define VL_BACKEND_OPERATIONS(X) VL_ATTENTION_OPERATIONS(X) VL_LAYER_OPERATIONS(X)

/// In a class derived from Backend: one operation's `override` declaration.
#define VL_DECLARE_OVERRIDE(R, NAME, PARAMETERS, ARGUMENTS) R NAME PARAMETERS const override;
// clang-format on
