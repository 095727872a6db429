#include <boost/test/unit_test.hpp>

// Backend `plain` (backends/plain_backend.hpp): every operation, in float and in double, is the
// reference kernel of the same name: the same result, bit for bit, as calling that kernel with the
// same arguments (options that change the result included: masks, scale, ε, norm placement, a
// cache). And a few results derived by hand, through the backend: equal scores average the
// values, a causal first query reads its own value, a query with no allowed key gets zeros, the
// linear forms on two tokens, a layer norm, position 0's encoding, a shifted target.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <tuple>

#include <xtensor/xtensor.hpp>

#include "backends/plain_backend.hpp"
#include "tensor_bits.hpp"
#include "kernels/reference/attention.hpp"
#include "kernels/reference/attention_backward.hpp"
#include "kernels/reference/decoder_layer.hpp"
#include "kernels/reference/decoder_step.hpp"
#include "kernels/reference/encoder_layer.hpp"
#include "kernels/reference/layer_norm.hpp"
#include "kernels/reference/linear_attention.hpp"
#include "kernels/reference/linear_family_heads.hpp"
#include "kernels/reference/multi_head_attention.hpp"
#include "kernels/reference/positional_encoding.hpp"
#include "numeric/torch_transformer_init.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_backends_plain).
BOOST_AUTO_TEST_SUITE(test_backends_plain)

namespace vb = vl::backends;
using Types = std::tuple<float, double>;

using vl::verify::draw;
using vl::verify::same_bits;

BOOST_AUTO_TEST_CASE(what_it_says_it_is) {
  const vb::PlainBackend plain;
  BOOST_TEST(plain.name() == "plain");
  BOOST_TEST(plain.ours());
  for (const vb::Need& need : vl::ops::all_needs()) BOOST_TEST(plain.supports(need), vb::to_string(need));
  const std::vector<vl::Precision> want{vl::Precision::float64, vl::Precision::float32, vl::Precision::bfloat16, vl::Precision::float16};
  BOOST_TEST((plain.precisions() == want));
}

// Grouped-query heads (4 query heads over 2), Sq ≠ Sk, Dv ≠ D; causal bottom-right with weights
// and the raw scores; then an explicit scale, a bool mask and an additive one.
BOOST_AUTO_TEST_CASE_TEMPLATE(attention_and_its_backward_are_the_reference, T, Types) {
  std::mt19937_64 gen(1);
  const auto q = draw<T, 4>(gen, {2, 4, 3, 4}), k = draw<T, 4>(gen, {2, 2, 5, 4}), v = draw<T, 4>(gen, {2, 2, 5, 3}),
             d_out = draw<T, 4>(gen, {2, 4, 3, 3});
  vl::AttentionOptions<T> causal;
  causal.causal = true;
  causal.alignment = vl::CausalAlignment::bottom_right;
  causal.return_weights = true;
  causal.return_scores = vl::ScoreStage::raw;
  vl::AttentionOptions<T> masked;
  masked.scale = T(0.3);
  masked.allowed = xt::xarray<bool>{{true, false, true, true, false}};
  masked.bias = xt::xarray<T>(draw<T, 2>(gen, {3, 5}));
  masked.return_weights = true;
  const vb::PlainBackend plain;
  for (const auto* o : {&causal, &masked}) {
    const auto got = plain.attention(q, k, v, *o), want = vl::attention<T>(q, k, v, *o);
    BOOST_TEST(same_bits(got.output, want.output));
    BOOST_TEST(same_bits(got.weights, want.weights));
    BOOST_TEST(same_bits(got.scores, want.scores));
    const auto g = plain.attention_backward(q, k, v, d_out, *o), gw = vl::attention_backward<T>(q, k, v, d_out, *o);
    BOOST_TEST(same_bits(g.dq, gw.dq));
    BOOST_TEST(same_bits(g.dk, gw.dk));
    BOOST_TEST(same_bits(g.dv, gw.dv));
  }
}

// By hand, one query over two keys, values 4 and 8 (exact in both types): equal scores give
// weights ½, ½ and the output 6; causal, query 0 sees key 0 only: weight 1, output 4; no allowed
// key: zero weights and a zero output, never NaN (kernels/reference/attention.hpp's rule).
BOOST_AUTO_TEST_CASE_TEMPLATE(attention_by_hand, T, Types) {
  const vb::PlainBackend plain;
  const vl::ops::Tensor4<T> q{{{{1}}}}, k{{{{2}, {2}}}}, v{{{{4}, {8}}}};
  vl::AttentionOptions<T> o;
  o.return_weights = true;
  auto r = plain.attention(q, k, v, o);
  BOOST_TEST(r.weights(0, 0, 0, 0) == T(0.5));
  BOOST_TEST(r.weights(0, 0, 0, 1) == T(0.5));
  BOOST_TEST(r.output(0, 0, 0, 0) == T(6));
  o.causal = true;
  r = plain.attention(q, k, v, o);
  BOOST_TEST(r.weights(0, 0, 0, 1) == T(0));
  BOOST_TEST(r.output(0, 0, 0, 0) == T(4));
  o.causal = false;
  o.allowed = xt::xarray<bool>{false, false};
  r = plain.attention(q, k, v, o);
  BOOST_TEST(r.weights(0, 0, 0, 0) == T(0));
  BOOST_TEST(r.weights(0, 0, 0, 1) == T(0));
  BOOST_TEST(r.output(0, 0, 0, 0) == T(0));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(multi_head_attention_and_positions_are_the_reference, T, Types) {
  std::mt19937_64 gen(2);
  vl::torch_rng::Generator init(3);
  auto p = vl::torch_rng::mha_init<T>(init, 4, 2);
  p.in_proj_bias = draw<T, 1>(gen, {12});
  p.out_proj_bias = draw<T, 1>(gen, {4});
  const auto query = draw<T, 3>(gen, {2, 3, 4}), key = draw<T, 3>(gen, {2, 5, 4}), value = draw<T, 3>(gen, {2, 5, 4});
  vl::MhaOptions<T> o;
  o.key_padding_mask = xt::xarray<bool>{{false, false, false, true, true}, {false, false, false, false, false}};
  const vb::PlainBackend plain;
  const auto got = plain.multi_head_attention(query, key, value, p, 2, o), want = vl::multi_head_attention<T>(query, key, value, p, 2, o);
  BOOST_TEST(same_bits(got.output, want.output));
  BOOST_TEST(same_bits(got.weights, want.weights));
  const std::vector<T> positions{0, 1, 2.5, 7, 100};
  BOOST_TEST(same_bits(plain.positional_encoding(positions, 6), vl::positional_encoding_at<T>(positions, 6)));
  // Position 0: sin 0 = 0 in the even columns, cos 0 = 1 in the odd ones.
  const auto pe = plain.positional_encoding(std::vector<T>{0}, 4);
  BOOST_TEST(pe(0, 0) == T(0));
  BOOST_TEST(pe(0, 1) == T(1));
  BOOST_TEST(pe(0, 2) == T(0));
  BOOST_TEST(pe(0, 3) == T(1));
}

// The three forms, each its own kernel (their bits differ: each sums in its own order), and by
// hand on two tokens: φq = (1, 1), φk = (1, 3), v = (2, 6) → o = (2, (2 + 18) / 4 = 5).
BOOST_AUTO_TEST_CASE_TEMPLATE(linear_attention_forms_are_the_reference, T, Types) {
  std::mt19937_64 gen(4);
  auto pq = draw<T, 2>(gen, {9, 3}), pk = draw<T, 2>(gen, {9, 3});
  pq = pq + T(2), pk = pk + T(2);  // positive features
  const auto v = draw<T, 2>(gen, {9, 2});
  const vb::PlainBackend plain;
  BOOST_TEST(same_bits(plain.linear_parallel(pq, pk, v), vl::linear_attention_parallel<T>(pq, pk, v)));
  BOOST_TEST(same_bits(plain.linear_recurrent(pq, pk, v), vl::linear_attention_recurrent<T>(pq, pk, v)));
  BOOST_TEST(same_bits(plain.linear_chunked(pq, pk, v, 4), vl::linear_attention_chunked<T>(pq, pk, v, 4)));
  const xt::xtensor<T, 2> hq{{1}, {1}}, hk{{1}, {3}}, hv{{2}, {6}};
  for (const auto& o : {plain.linear_parallel(hq, hk, hv), plain.linear_recurrent(hq, hk, hv), plain.linear_chunked(hq, hk, hv, 1)}) {
    BOOST_TEST(o(0, 0) == T(2));
    BOOST_TEST(o(1, 0) == T(5));
  }
}

// Two rules (linear; gated delta, with a per-channel decay and β) in the three forms.
BOOST_AUTO_TEST_CASE_TEMPLATE(linear_family_is_the_reference, T, Types) {
  std::mt19937_64 gen(5);
  vl::FamilyInputs<T> in;
  in.q = draw<T, 4>(gen, {1, 2, 6, 3});
  in.k = draw<T, 4>(gen, {1, 1, 6, 3});
  in.v = draw<T, 4>(gen, {1, 1, 6, 2});
  in.g = draw<T, 4>(gen, {1, 1, 6, 3}) * T(0.1) - T(0.2);  // log-decays < 0
  in.beta = draw<T, 3>(gen, {1, 1, 6}) * T(0.25) + T(0.5);
  const vb::PlainBackend plain;
  for (auto rule : {vl::UpdateRule::linear, vl::UpdateRule::gated_delta})
    for (auto form : {vl::FamilyForm::recurrent, vl::FamilyForm::parallel, vl::FamilyForm::chunked}) {
      vl::FamilyOptions o;
      o.rule = rule, o.form = form, o.chunk = 4;
      const auto got = plain.linear_family(in, o), want = vl::linear_family<T>(in, o);
      BOOST_TEST(same_bits(got.o, want.o), vl::to_string(rule) << " form " << int(form));
      BOOST_TEST(same_bits(got.state, want.state), vl::to_string(rule) << " form " << int(form));
    }
}

// The layers with settings away from the defaults (pre-norm, GELU, ε = 0.25), so that a backend
// passing the defaults instead is seen; the decoder step twice over one cache.
BOOST_AUTO_TEST_CASE_TEMPLATE(layers_are_the_reference, T, Types) {
  std::mt19937_64 gen(6);
  vl::torch_rng::Generator init(7);
  const auto enc = vl::torch_rng::encoder_layer_init<T>(init, 4, 2, 8);
  const auto dec = vl::torch_rng::decoder_layer_init<T>(init, 4, 2, 8);
  const auto x = draw<T, 3>(gen, {2, 3, 4}), memory = draw<T, 3>(gen, {2, 5, 4});
  vl::LayerOptions lo;
  lo.norm_first = true, lo.activation = vl::Activation::gelu, lo.eps = 0.25;
  const vb::PlainBackend plain;
  vl::LayerNormParameters<T> norm{draw<T, 1>(gen, {4}), draw<T, 1>(gen, {4})};
  BOOST_TEST(same_bits(plain.layer_norm(x, norm, 0.25), vl::layer_norm<T>(x, norm, 0.25)));
  vl::MhaOptions<T> self;
  self.causal = true;
  self.need_weights = false;
  BOOST_TEST(same_bits(plain.encoder_layer(x, enc, 2, lo, self), vl::encoder_layer<T>(x, enc, 2, lo, self)));
  BOOST_TEST(same_bits(plain.decoder_layer(x, memory, dec, 2, lo, self, {}), vl::decoder_layer<T>(x, memory, dec, 2, lo, self, {})));
  vl::LayerCache<T> ours, theirs;
  for (std::size_t t = 0; t < 2; ++t) {
    const xt::xtensor<T, 3> x_t = xt::view(x, xt::all(), xt::range(t, t + 1), xt::all());
    BOOST_TEST(same_bits(plain.decoder_step(x_t, memory, dec, 2, lo, ours, {}), vl::decoder_layer_step<T>(x_t, memory, dec, 2, lo, theirs, {})));
    BOOST_TEST(same_bits(ours.keys, theirs.keys));
    BOOST_TEST(ours.keys.shape(1) == t + 1);  // the cache grew by the one position
  }
  const xt::xtensor<T, 1> start{9, 9, 9, 9};
  BOOST_TEST(same_bits(plain.shift_right(x, start), vl::shift_right<T>(x, start)));
}

// By hand: LayerNorm of (1, 3) with γ = 1, β = 0, ε = 0: mean 2, variance 1 → (−1, 1); shifting
// ((1, 2), (3, 4)) right with start (0, 0) gives ((0, 0), (1, 2)).
BOOST_AUTO_TEST_CASE_TEMPLATE(layer_norm_and_shift_by_hand, T, Types) {
  const vb::PlainBackend plain;
  const xt::xtensor<T, 3> x{{{1, 3}}};
  const vl::LayerNormParameters<T> unit{xt::xtensor<T, 1>{1, 1}, xt::xtensor<T, 1>{0, 0}};
  const auto y = plain.layer_norm(x, unit, 0.0);
  BOOST_TEST(y(0, 0, 0) == T(-1));
  BOOST_TEST(y(0, 0, 1) == T(1));
  const xt::xtensor<T, 3> target{{{1, 2}, {3, 4}}};
  const auto s = plain.shift_right(target, xt::xtensor<T, 1>{0, 0});
  BOOST_TEST(same_bits(s, xt::xtensor<T, 3>{{{0, 0}, {1, 2}}}));
}

BOOST_AUTO_TEST_SUITE_END()  // test_backends_plain
