// Each operation's result shape, checked (shape_checked.hpp).
#include "backends/shape_checked.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace vl::backends {

namespace {

// Throws WrongShape unless `got` has the `want` shape.
template <class E>
void expect(const Backend& b, const char* what, const E& got, const std::vector<std::size_t>& want) {
  const std::vector<std::size_t> shape(got.shape().begin(), got.shape().end());
  if (shape != want)
    throw WrongShape(fmt::format("backend '{}' returned {} of shape ({}); the operation defines ({})", b.name(), what,
                                         fmt::join(shape, ", "), fmt::join(want, ", ")));
}

template <class T>
AttentionResult<T, 4> checked_attention(const Backend& self, const AttentionResult<T, 4>& r, const Tensor4<T>& q, const Tensor4<T>& k,
                                        const Tensor4<T>& v, const AttentionOptions<T>& o) {
  expect(self, "an attention output", r.output, {q.shape(0), q.shape(1), q.shape(2), v.shape(3)});
  if (o.return_weights) expect(self, "attention weights", r.weights, {q.shape(0), q.shape(1), q.shape(2), k.shape(2)});
  return r;
}

template <class T>
AttentionGradients<T, 4> checked_gradients(const Backend& self, const AttentionGradients<T, 4>& g, const Tensor4<T>& q,
                                           const Tensor4<T>& k, const Tensor4<T>& v) {
  expect(self, "dQ", g.dq, {q.shape().begin(), q.shape().end()});
  expect(self, "dK", g.dk, {k.shape().begin(), k.shape().end()});
  expect(self, "dV", g.dv, {v.shape().begin(), v.shape().end()});
  return g;
}

}  // namespace

ShapeChecked::ShapeChecked(std::shared_ptr<const Backend> base) : Decorator(base, base->name()) {}

AttentionResult<double, 4> ShapeChecked::attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                                   const AttentionOptions<double>& o) const {
  return checked_attention(*this, base().attention(q, k, v, o), q, k, v, o);
}
AttentionResult<float, 4> ShapeChecked::attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                  const AttentionOptions<float>& o) const {
  return checked_attention(*this, base().attention(q, k, v, o), q, k, v, o);
}
AttentionGradients<double, 4> ShapeChecked::attention_backward(const Tensor4<double>& q, const Tensor4<double>& k,
                                                               const Tensor4<double>& v, const Tensor4<double>& d_out,
                                                               const AttentionOptions<double>& o) const {
  return checked_gradients(*this, base().attention_backward(q, k, v, d_out, o), q, k, v);
}
AttentionGradients<float, 4> ShapeChecked::attention_backward(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                              const Tensor4<float>& d_out, const AttentionOptions<float>& o) const {
  return checked_gradients(*this, base().attention_backward(q, k, v, d_out, o), q, k, v);
}
MhaResult<double, 3> ShapeChecked::multi_head_attention(const xt::xtensor<double, 3>& query, const xt::xtensor<double, 3>& key,
                                                        const xt::xtensor<double, 3>& value, const MhaParameters<double>& p,
                                                        std::size_t heads, const MhaOptions<double>& o) const {
  MhaResult<double, 3> r = base().multi_head_attention(query, key, value, p, heads, o);
  expect(*this, "a multi-head attention output", r.output, {query.shape(0), query.shape(1), query.shape(2)});
  if (o.need_weights) expect(*this, "multi-head attention weights", r.weights, {query.shape(0), heads, query.shape(1), key.shape(1)});
  return r;
}
Matrix ShapeChecked::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  Matrix pe = base().positional_encoding(positions, d);
  expect(*this, "a positional-encoding table", pe, {positions.size(), d});
  return pe;
}
Matrix ShapeChecked::linear_parallel(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  Matrix o = base().linear_parallel(pq, pk, v);
  expect(*this, "a linear-attention output", o, {pq.shape(0), v.shape(1)});
  return o;
}
Matrix ShapeChecked::linear_recurrent(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  Matrix o = base().linear_recurrent(pq, pk, v);
  expect(*this, "a linear-attention output", o, {pq.shape(0), v.shape(1)});
  return o;
}
Matrix ShapeChecked::linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const {
  Matrix o = base().linear_chunked(pq, pk, v, chunk);
  expect(*this, "a linear-attention output", o, {pq.shape(0), v.shape(1)});
  return o;
}
template <class T>
FamilyResult<T> checked_family(const ShapeChecked& self, FamilyResult<T> r, const FamilyInputs<T>& in) {
  expect(self, "a linear-family output", r.o, {in.q.shape(0), in.q.shape(1), in.q.shape(2), in.v.shape(3)});
  expect(self, "a linear-family state", r.state, {in.k.shape(0), in.k.shape(1), in.k.shape(3), in.v.shape(3)});
  return r;
}
FamilyResult<double> ShapeChecked::linear_family(const FamilyInputs<double>& in, const FamilyOptions& o) const {
  return checked_family(*this, base().linear_family(in, o), in);
}
FamilyResult<float> ShapeChecked::linear_family(const FamilyInputs<float>& in, const FamilyOptions& o) const {
  return checked_family(*this, base().linear_family(in, o), in);
}

// The Transformer layers keep their input's shape: (B, S, d) in, (B, S, d) out.
namespace {
Tensor3 same_shape(const Backend& self, const char* what, Tensor3 y, const Tensor3& x) {
  expect(self, what, y, {x.shape().begin(), x.shape().end()});
  return y;
}
}  // namespace

Tensor3 ShapeChecked::layer_norm(const Tensor3& x, const LayerNormParameters<double>& p, double eps) const {
  return same_shape(*this, "a layer-norm output", base().layer_norm(x, p, eps), x);
}
Tensor3 ShapeChecked::encoder_layer(const Tensor3& x, const EncoderLayerParameters<double>& p, std::size_t heads,
                                    const LayerOptions& o, const MhaOptions<double>& self) const {
  return same_shape(*this, "an encoder-layer output", base().encoder_layer(x, p, heads, o, self), x);
}
Tensor3 ShapeChecked::decoder_layer(const Tensor3& tgt, const Tensor3& memory, const DecoderLayerParameters<double>& p,
                                    std::size_t heads, const LayerOptions& o, const MhaOptions<double>& self,
                                    const MhaOptions<double>& cross) const {
  return same_shape(*this, "a decoder-layer output", base().decoder_layer(tgt, memory, p, heads, o, self, cross), tgt);
}
// One position out. The cache is the backend's own state between steps (how it keeps keys and
// values is its business), so only the output is checked; a cache that forgets is the
// teacher-forcing claim's to find.
Tensor3 ShapeChecked::decoder_step(const Tensor3& x_t, const Tensor3& memory, const DecoderLayerParameters<double>& p,
                                   std::size_t heads, const LayerOptions& o, LayerCache<double>& cache,
                                   const MhaOptions<double>& cross) const {
  return same_shape(*this, "a decoder-step output", base().decoder_step(x_t, memory, p, heads, o, cache, cross), x_t);
}
Tensor3 ShapeChecked::shift_right(const Tensor3& target, const xt::xtensor<double, 1>& start) const {
  return same_shape(*this, "a shifted target", base().shift_right(target, start), target);
}

}  // namespace vl::backends
