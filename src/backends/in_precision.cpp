// A backend judged in float32, bfloat16 or float16 (see in_precision.hpp).
#include "backends/in_precision.hpp"

#include <algorithm>
#include <type_traits>

#include <fmt/format.h>
#include <xtensor/xarray.hpp>

namespace vl::backends {

namespace {

// Inputs into p: each double rounded once to p (for float32: the IEEE cast), then held as the
// float32 number it is (exact: every bfloat16 and float16 is a float).
template <class Doubles>
auto narrow(Precision p, const Doubles& x) {
  using Floats = std::conditional_t<std::is_same_v<Doubles, xt::xarray<double>>, xt::xarray<float>,
                                    xt::xtensor<float, Doubles::rank>>;
  return Floats(xt::cast<float>(rounded_to(p, x)));
}

// The options in p: the scale, additive mask and softcap rounded like the inputs.
AttentionOptions<float> narrow(Precision p, const Backend& b, Op op, const AttentionOptions<double>& o) {
  if (o.round) b.lacks(Need(op, Option::storage_rounding), "an emulated storage format runs in float64 only");
  AttentionOptions<float> f;
  if (o.scale) f.scale = float(round_to(p, *o.scale));
  f.causal = o.causal;
  f.alignment = o.alignment;
  f.allowed = o.allowed;
  if (o.bias) f.bias = narrow(p, xt::xarray<double>(*o.bias));
  f.softcap = float(round_to(p, o.softcap));
  f.return_weights = o.return_weights;
  f.kv_lengths = o.kv_lengths;
  f.left_window = o.left_window;
  f.right_window = o.right_window;
  f.first_query = o.first_query;
  f.return_scores = o.return_scores;
  return f;
}

// Parameters and options in p, rounded like the inputs (the ε of LayerNorm, a double in every
// signature, is the kernel's to round).
MhaParameters<float> narrow(Precision p, const MhaParameters<double>& m) {
  return {narrow(p, m.in_proj_weight), narrow(p, m.in_proj_bias), narrow(p, m.out_proj_weight), narrow(p, m.out_proj_bias)};
}
MhaOptions<float> narrow(Precision p, const MhaOptions<double>& o) {
  MhaOptions<float> f;
  f.attn_mask = o.attn_mask;
  if (o.attn_bias) f.attn_bias = narrow(p, xt::xarray<double>(*o.attn_bias));
  f.key_padding_mask = o.key_padding_mask;
  f.causal = o.causal;
  f.alignment = o.alignment;
  f.need_weights = o.need_weights;
  return f;
}
LayerNormParameters<float> narrow(Precision p, const LayerNormParameters<double>& n) { return {narrow(p, n.weight), narrow(p, n.bias)}; }
torch_rng::LinearParameters<float> narrow(Precision p, const torch_rng::LinearParameters<double>& l) {
  return {narrow(p, l.weight), narrow(p, l.bias)};
}
EncoderLayerParameters<float> narrow(Precision p, const EncoderLayerParameters<double>& e) {
  return {narrow(p, e.self_attn), narrow(p, e.linear1), narrow(p, e.linear2), narrow(p, e.norm1), narrow(p, e.norm2)};
}
DecoderLayerParameters<float> narrow(Precision p, const DecoderLayerParameters<double>& d) {
  return {narrow(p, d.self_attn), narrow(p, d.multihead_attn), narrow(p, d.linear1), narrow(p, d.linear2),
          narrow(p, d.norm1),     narrow(p, d.norm2),          narrow(p, d.norm3)};
}

template <class Floats>
auto as_double(const Floats& x) {
  using Doubles = std::conditional_t<std::is_same_v<Floats, xt::xarray<float>>, xt::xarray<double>, xt::xtensor<double, Floats::rank>>;
  return Doubles(xt::cast<double>(x));  // exact
}

// Outputs stored in p: each float32 result rounded once more, to p.
template <class Floats>
Floats stored(Precision p, Floats x) {
  for (float& e : x) e = float(round_to(p, e));
  return x;
}
float stored_in_bfloat16(float x) { return float(round_to(Precision::bfloat16, x)); }
float stored_in_float16(float x) { return float(round_to(Precision::float16, x)); }

}  // namespace

std::shared_ptr<const Backend> computing_in(Precision p, std::shared_ptr<const Backend> backend) {
  const auto has = backend->precisions();
  if (std::find(has.begin(), has.end(), p) == has.end()) return nullptr;
  if (p == Precision::float64) return backend;
  if (p == Precision::float32) return std::make_shared<InPrecision>(p, std::move(backend));
  auto stored = backend->stored_in(p, backend);
  return std::make_shared<InPrecision>(p, std::move(stored));
}

// --- StoredIn ---

StoredIn::StoredIn(Precision p, std::shared_ptr<const Backend> base) : Decorator(std::move(base), ""), p_(p) {}

AttentionResult<float, 4> StoredIn::attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                              const AttentionOptions<float>& o) const {
  AttentionOptions<float> s = o;
  if (!s.round && base().supports(Need(Op::attention, Option::storage_rounding))) {
    s.round = p_ == Precision::float16 ? &stored_in_float16 : &stored_in_bfloat16;
    s.round_through = ScoreStage::softmax;
  }
  // The inputs stored in p too: InPrecision rounded a check's double inputs already; a check's own
  // float32 fixture (seed 002's) reaches here as float32 numbers, and an implementation in p holds them so.
  AttentionResult<float, 4> r = base().attention(stored(p_, q), stored(p_, k), stored(p_, v), s);
  return {stored(p_, std::move(r.output)), stored(p_, std::move(r.weights)), stored(p_, std::move(r.scores))};
}
AttentionGradients<float, 4> StoredIn::attention_backward(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                                          const Tensor4<float>& d_out, const AttentionOptions<float>& o) const {
  AttentionGradients<float, 4> g = base().attention_backward(stored(p_, q), stored(p_, k), stored(p_, v), stored(p_, d_out), o);
  return {stored(p_, std::move(g.dq)), stored(p_, std::move(g.dk)), stored(p_, std::move(g.dv))};
}
ops::MhaResult3<float> StoredIn::multi_head_attention(const ops::Tensor3Of<float>& query, const ops::Tensor3Of<float>& key,
                                                      const ops::Tensor3Of<float>& value, const MhaParameters<float>& p,
                                                      std::size_t heads, const MhaOptions<float>& o) const {
  ops::MhaResult3<float> r = base().multi_head_attention(query, key, value, p, heads, o);
  return {stored(p_, std::move(r.output)), stored(p_, std::move(r.weights))};
}
ops::MatrixOf<float> StoredIn::positional_encoding(const std::vector<float>& positions, std::size_t d) const {
  return stored(p_, base().positional_encoding(positions, d));
}
ops::MatrixOf<float> StoredIn::linear_parallel(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk,
                                               const ops::MatrixOf<float>& v) const {
  return stored(p_, base().linear_parallel(pq, pk, v));
}
ops::MatrixOf<float> StoredIn::linear_recurrent(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk,
                                                const ops::MatrixOf<float>& v) const {
  return stored(p_, base().linear_recurrent(pq, pk, v));
}
ops::MatrixOf<float> StoredIn::linear_chunked(const ops::MatrixOf<float>& pq, const ops::MatrixOf<float>& pk,
                                              const ops::MatrixOf<float>& v, std::size_t chunk) const {
  return stored(p_, base().linear_chunked(pq, pk, v, chunk));
}
FamilyResult<float> StoredIn::linear_family(const FamilyInputs<float>& in, const FamilyOptions& o) const {
  FamilyResult<float> r = base().linear_family(in, o);
  return {stored(p_, std::move(r.o)), stored(p_, std::move(r.state))};
}
ops::Tensor3Of<float> StoredIn::layer_norm(const ops::Tensor3Of<float>& x, const LayerNormParameters<float>& p, double eps) const {
  return stored(p_, base().layer_norm(x, p, eps));
}
ops::Tensor3Of<float> StoredIn::encoder_layer(const ops::Tensor3Of<float>& x, const EncoderLayerParameters<float>& p,
                                              std::size_t heads, const LayerOptions& o, const MhaOptions<float>& self) const {
  return stored(p_, base().encoder_layer(x, p, heads, o, self));
}
ops::Tensor3Of<float> StoredIn::decoder_layer(const ops::Tensor3Of<float>& tgt, const ops::Tensor3Of<float>& memory,
                                              const DecoderLayerParameters<float>& p, std::size_t heads, const LayerOptions& o,
                                              const MhaOptions<float>& self, const MhaOptions<float>& cross) const {
  return stored(p_, base().decoder_layer(tgt, memory, p, heads, o, self, cross));
}
ops::Tensor3Of<float> StoredIn::decoder_step(const ops::Tensor3Of<float>& x_t, const ops::Tensor3Of<float>& memory,
                                             const DecoderLayerParameters<float>& p, std::size_t heads, const LayerOptions& o,
                                             LayerCache<float>& cache, const MhaOptions<float>& cross) const {
  // What a step appends to the cache is stored in p after the step: the step itself attends to its
  // own key and value as float32 computed them (a kernel that stores the cache first would round
  // them before). No claim judges decoding in bfloat16 or float16 yet (teacher-forcing is n/a there).
  ops::Tensor3Of<float> y = stored(p_, base().decoder_step(x_t, memory, p, heads, o, cache, cross));
  cache = {stored(p_, std::move(cache.keys)), stored(p_, std::move(cache.values))};
  return y;
}
ops::Tensor3Of<float> StoredIn::shift_right(const ops::Tensor3Of<float>& target, const xt::xtensor<float, 1>& start) const {
  return stored(p_, base().shift_right(target, start));
}

// --- InPrecision ---

InPrecision::InPrecision(Precision p, std::shared_ptr<const Backend> base) : Decorator(std::move(base), ""), p_(p) {}
std::string InPrecision::summary() const { return base().summary() + ", in " + to_string(p_); }

bool InPrecision::supports(Need need) const { return need.option != Option::storage_rounding && base().supports(need); }

std::string InPrecision::lacking(Need need, const std::string& why) const {
  return fmt::format("backend '{}' has no {} in {}{}", base().name(), to_string(need), to_string(p_), why.empty() ? "" : " (" + why + ")");
}

AttentionResult<double, 4> InPrecision::attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                                  const AttentionOptions<double>& o) const {
  const AttentionResult<float, 4> r = base().attention(narrow(p_, q), narrow(p_, k), narrow(p_, v), narrow(p_, *this, Op::attention, o));
  return {as_double(r.output), as_double(r.weights), as_double(r.scores)};
}

AttentionGradients<double, 4> InPrecision::attention_backward(const Tensor4<double>& q, const Tensor4<double>& k,
                                                              const Tensor4<double>& v, const Tensor4<double>& d_out,
                                                              const AttentionOptions<double>& o) const {
  const AttentionGradients<float, 4> g = base().attention_backward(narrow(p_, q), narrow(p_, k), narrow(p_, v), narrow(p_, d_out),
                                                                   narrow(p_, *this, Op::attention_backward, o));
  return {as_double(g.dq), as_double(g.dk), as_double(g.dv)};
}

MhaResult<double, 3> InPrecision::multi_head_attention(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                                                       const MhaParameters<double>& p, std::size_t heads,
                                                       const MhaOptions<double>& o) const {
  const MhaResult<float, 3> r =
      base().multi_head_attention(narrow(p_, query), narrow(p_, key), narrow(p_, value), narrow(p_, p), heads, narrow(p_, o));
  return {as_double(r.output), as_double(r.weights)};
}

Matrix InPrecision::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  std::vector<float> at;
  for (double x : positions) at.push_back(float(round_to(p_, x)));  // each rounded
  return as_double(base().positional_encoding(at, d));
}
Matrix InPrecision::linear_parallel(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  return as_double(base().linear_parallel(narrow(p_, pq), narrow(p_, pk), narrow(p_, v)));
}
Matrix InPrecision::linear_recurrent(const Matrix& pq, const Matrix& pk, const Matrix& v) const {
  return as_double(base().linear_recurrent(narrow(p_, pq), narrow(p_, pk), narrow(p_, v)));
}
Matrix InPrecision::linear_chunked(const Matrix& pq, const Matrix& pk, const Matrix& v, std::size_t chunk) const {
  return as_double(base().linear_chunked(narrow(p_, pq), narrow(p_, pk), narrow(p_, v), chunk));
}

FamilyResult<double> InPrecision::linear_family(const FamilyInputs<double>& in, const FamilyOptions& o) const {
  FamilyInputs<float> f{narrow(p_, in.q), narrow(p_, in.k), narrow(p_, in.v), narrow(p_, in.g), narrow(p_, in.beta), std::nullopt};
  if (in.past) f.past = narrow(p_, *in.past);
  const FamilyResult<float> r = base().linear_family(f, o);
  return {as_double(r.o), as_double(r.state)};
}

Tensor3 InPrecision::layer_norm(const Tensor3& x, const LayerNormParameters<double>& p, double eps) const {
  return as_double(base().layer_norm(narrow(p_, x), narrow(p_, p), eps));
}
Tensor3 InPrecision::encoder_layer(const Tensor3& x, const EncoderLayerParameters<double>& p, std::size_t heads, const LayerOptions& o,
                                   const MhaOptions<double>& self) const {
  return as_double(base().encoder_layer(narrow(p_, x), narrow(p_, p), heads, o, narrow(p_, self)));
}
Tensor3 InPrecision::decoder_layer(const Tensor3& tgt, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                                   const LayerOptions& o, const MhaOptions<double>& self, const MhaOptions<double>& cross) const {
  return as_double(
      base().decoder_layer(narrow(p_, tgt), narrow(p_, memory), narrow(p_, p), heads, o, narrow(p_, self), narrow(p_, cross)));
}
Tensor3 InPrecision::decoder_step(const Tensor3& x_t, const Tensor3& memory, const DecoderLayerParameters<double>& p, std::size_t heads,
                                  const LayerOptions& o, LayerCache<double>& cache, const MhaOptions<double>& cross) const {
  // The cache holds what the earlier steps appended (numbers of p, exactly as doubles): it goes
  // back and forth without rounding.
  LayerCache<float> c{narrow(p_, cache.keys), narrow(p_, cache.values)};
  const Tensor3 y = as_double(base().decoder_step(narrow(p_, x_t), narrow(p_, memory), narrow(p_, p), heads, o, c, narrow(p_, cross)));
  cache = {as_double(c.keys), as_double(c.values)};
  return y;
}
Tensor3 InPrecision::shift_right(const Tensor3& target, const xt::xtensor<double, 1>& start) const {
  return as_double(base().shift_right(narrow(p_, target), narrow(p_, start)));
}

}  // namespace vl::backends
