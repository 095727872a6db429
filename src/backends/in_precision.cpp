// A backend judged in float32 (see in_precision.hpp).
#include "backends/in_precision.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <xtensor/xarray.hpp>

namespace vl::backends {

namespace {

template <class To, class From, std::size_t N>
xt::xtensor<To, N> as(const xt::xtensor<From, N>& x) {
  return xt::cast<To>(x);  // double → float: one IEEE rounding, to nearest even; float → double: exact
}

// The options in float32: the scale, additive mask and softcap rounded like the inputs.
AttentionOptions<float> in_float32(const Backend& b, Op op, const AttentionOptions<double>& o) {
  if (o.round) b.lacks(Need(op, Option::storage_rounding), "an emulated storage format runs in float64 only");
  AttentionOptions<float> f;
  if (o.scale) f.scale = float(*o.scale);
  f.causal = o.causal;
  f.alignment = o.alignment;
  f.allowed = o.allowed;
  if (o.bias) f.bias = xt::xarray<float>(xt::cast<float>(*o.bias));
  f.softcap = float(o.softcap);
  f.return_weights = o.return_weights;
  f.kv_lengths = o.kv_lengths;
  f.left_window = o.left_window;
  f.right_window = o.right_window;
  f.first_query = o.first_query;
  f.return_scores = o.return_scores;
  return f;
}

// Parameters and options in float32, rounded like the inputs (the ε of LayerNorm, a double in
// every signature, is the kernel's to round).
MhaParameters<float> in_float32(const MhaParameters<double>& p) {
  return {as<float>(p.in_proj_weight), as<float>(p.in_proj_bias), as<float>(p.out_proj_weight), as<float>(p.out_proj_bias)};
}
MhaOptions<float> in_float32(const MhaOptions<double>& o) {
  MhaOptions<float> f;
  f.attn_mask = o.attn_mask;
  if (o.attn_bias) f.attn_bias = xt::xarray<float>(xt::cast<float>(*o.attn_bias));
  f.key_padding_mask = o.key_padding_mask;
  f.causal = o.causal;
  f.alignment = o.alignment;
  f.need_weights = o.need_weights;
  return f;
}
LayerNormParameters<float> in_float32(const LayerNormParameters<double>& p) { return {as<float>(p.weight), as<float>(p.bias)}; }
torch_rng::LinearParameters<float> in_float32(const torch_rng::LinearParameters<double>& p) { return {as<float>(p.weight), as<float>(p.bias)}; }
EncoderLayerParameters<float> in_float32(const EncoderLayerParameters<double>& p) {
  return {in_float32(p.self_attn), in_float32(p.linear1), in_float32(p.linear2), in_float32(p.norm1), in_float32(p.norm2)};
}
DecoderLayerParameters<float> in_float32(const DecoderLayerParameters<double>& p) {
  return {in_float32(p.self_attn), in_float32(p.multihead_attn), in_float32(p.linear1), in_float32(p.linear2),
          in_float32(p.norm1),     in_float32(p.norm2),          in_float32(p.norm3)};
}

}  // namespace

std::shared_ptr<const Backend> computing_in(Precision p, std::shared_ptr<const Backend> backend) {
  const auto has = backend->precisions();
  if (std::find(has.begin(), has.end(), p) == has.end()) return nullptr;
  if (p == Precision::float64) return backend;
  if (p == Precision::float32) return std::make_shared<InFloat32>(std::move(backend));
  return nullptr;  // bfloat16, float16: not yet through this interface
}

InFloat32::InFloat32(std::shared_ptr<const Backend> base) : Decorator(std::move(base), "") {}
std::string InFloat32::summary() const { return base().summary() + ", in float32"; }

bool InFloat32::supports(Need need) const { return need.option != Option::storage_rounding && base().supports(need); }

std::string InFloat32::lacking(Need need, const std::string& why) const {
  return fmt::format("backend '{}' has no {} in float32{}", base().name(), to_string(need), why.empty() ? "" : " (" + why + ")");
}

AttentionResult<double, 4> InFloat32::attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                                const AttentionOptions<double>& o) const {
  const AttentionResult<float, 4> r = base().attention(as<float>(q), as<float>(k), as<float>(v), in_float32(*this, Op::attention, o));
  return {as<double>(r.output), as<double>(r.weights), as<double>(r.scores)};
}

AttentionGradients<double, 4> InFloat32::attention_backward(const Tensor4<double>& q, const Tensor4<double>& k,
                                                            const Tensor4<double>& v, const Tensor4<double>& d_out,
                                                            const AttentionOptions<double>& o) const {
  const AttentionGradients<float, 4> g =
      base().attention_backward(as<float>(q), as<float>(k), as<float>(v), as<float>(d_out), in_float32(*this, Op::attention_backward, o));
  return {as<double>(g.dq), as<double>(g.dk), as<double>(g.dv)};
}

MhaResult<double, 3> InFloat32::multi_head_attention(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                                                     const MhaParameters<double>& p, std::size_t heads,
                                                     const MhaOptions<double>& o) const {
  const MhaResult<float, 3> r =
      base().multi_head_attention(as<float>(query), as<float>(key), as<float>(value), in_float32(p), heads, in_float32(o));
  return {as<double>(r.output), as<double>(r.weights)};
}

Matrix InFloat32::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  return as<double>(base().positional_encoding(std::vector<float>(positions.begin(), positions.end()), d));  // each rounded
}
Matrix InFloat32::linear_parallel(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  return as<double>(base().linear_parallel(as<float>(pq), as<float>(pk), as<float>(v)));
}
Matrix InFloat32::linear_recurrent(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  return as<double>(base().linear_recurrent(as<float>(pq), as<float>(pk), as<float>(v)));
}
Matrix InFloat32::linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const {
  return as<double>(base().linear_chunked(as<float>(pq), as<float>(pk), as<float>(v), chunk));
}

FamilyResult<double> InFloat32::linear_family(const FamilyInputs<double>& in, const FamilyOptions& o) const {
  FamilyInputs<float> f{as<float>(in.q), as<float>(in.k), as<float>(in.v), as<float>(in.g), as<float>(in.beta), std::nullopt};
  if (in.past) f.past = as<float>(*in.past);
  const FamilyResult<float> r = base().linear_family(f, o);
  return {as<double>(r.o), as<double>(r.state)};
}

Tensor3 InFloat32::layer_norm(const Tensor3& x, const LayerNormParameters<double>& p, double eps) const {
  return as<double>(base().layer_norm(as<float>(x), in_float32(p), eps));
}
Tensor3 InFloat32::encoder_layer(const Tensor3& x, const EncoderLayerParameters<double>& p, std::size_t heads, const LayerOptions& o,
                                 const MhaOptions<double>& self) const {
  return as<double>(base().encoder_layer(as<float>(x), in_float32(p), heads, o, in_float32(self)));
}
Tensor3 InFloat32::decoder_layer(const Tensor3& tgt, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                                 const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross) const {
  return as<double>(base().decoder_layer(as<float>(tgt), as<float>(memory), in_float32(p), heads, o, in_float32(self), in_float32(cross)));
}
Tensor3 InFloat32::decoder_step(const Tensor3& x_t, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                                const LayerOptions& o, LayerCache<double>& cache, const MhaOptions<double>& cross) const {
  // The cache holds what the float32 steps appended (float32 numbers, exactly as doubles): it
  // goes back and forth without rounding.
  LayerCache<float> c{as<float>(cache.keys), as<float>(cache.values)};
  const Tensor3 y = as<double>(base().decoder_step(as<float>(x_t), as<float>(memory), in_float32(p), heads, o, c, in_float32(cross)));
  cache = {as<double>(c.keys), as<double>(c.values)};
  return y;
}
Tensor3 InFloat32::shift_right(const Tensor3& target, const xt::xtensor<double, 1>& start) const {
  return as<double>(base().shift_right(as<float>(target), as<float>(start)));
}

}  // namespace vl::backends
