#include <boost/test/unit_test.hpp>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>

// WeightsFromOutputs (backends/weights_from_outputs.hpp) over a backend that never forms the
// weights (plain here, with its weights refused): attention's weights read from ⌈Sk / Dv⌉ more
// calls with one-hot values, multi-head attention's per head with identity value and output
// projections. Over a kernel that forms W and outputs W·V the readout is exact (each output is
// one weight times 1 plus exact zeros), so the weights must equal the ones plain forms bit for
// bit, hidden keys +0; the y is the caller's V's, from one more call; a one-hot call answered
// with the wrong shape is an error that says so; what it supports and where it is used.
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include <xtensor/xtensor.hpp>

#include "backends/plain_backend.hpp"
#include "tensor_bits.hpp"
#include "backends/weights_from_outputs.hpp"
#include "numeric/torch_mha_init.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_backends_weights_from_outputs).
BOOST_AUTO_TEST_SUITE(test_backends_weights_from_outputs)

namespace vb = vl::backends;

// Plain without weights: asked for them it lacks them (as the fused kernel does); counts its calls.
// With `misshape_from` > 0, its calls from that one on answer one row too many.
class NoWeights : public vb::Decorator {
 public:
  explicit NoWeights(int misshape_from = 0) : Decorator(std::make_shared<vb::PlainBackend>(), "no-weights"), misshape_from_(misshape_from) {}
  bool supports(vb::Need need) const override { return need.option == vb::Option::weights ? false : Decorator::supports(need); }
  using Decorator::attention, Decorator::multi_head_attention;
  template <class T>
  vl::AttentionResult<T, 4> attention_as(const vb::Tensor4<T>& q, const vb::Tensor4<T>& k, const vb::Tensor4<T>& v,
                                         const vl::AttentionOptions<T>& o) const {
    ++calls;
    if (o.return_weights) lacks({vb::Op::attention, vb::Option::weights});
    auto r = base().attention(q, k, v, o);
    if (misshape_from_ > 0 && calls >= misshape_from_) r.output = xt::zeros<T>({q.shape(0) + 1, q.shape(1), q.shape(2), v.shape(3)});
    return r;
  }
  vl::AttentionResult<double, 4> attention(const vb::Tensor4<double>& q, const vb::Tensor4<double>& k, const vb::Tensor4<double>& v,
                                           const vl::AttentionOptions<double>& o) const override {
    return attention_as(q, k, v, o);
  }
  vl::AttentionResult<float, 4> attention(const vb::Tensor4<float>& q, const vb::Tensor4<float>& k, const vb::Tensor4<float>& v,
                                          const vl::AttentionOptions<float>& o) const override {
    return attention_as(q, k, v, o);
  }
  template <class T>
  vl::MhaResult<T, 3> mha_as(const vl::ops::Tensor3Of<T>& q, const vl::ops::Tensor3Of<T>& k, const vl::ops::Tensor3Of<T>& v,
                             const vl::MhaParameters<T>& p, std::size_t h, const vl::MhaOptions<T>& o) const {
    ++calls;
    if (o.need_weights) lacks({vb::Op::multi_head_attention, vb::Option::weights});
    auto r = base().multi_head_attention(q, k, v, p, h, o);
    if (misshape_from_ > 0 && calls >= misshape_from_) r.output = xt::zeros<T>({q.shape(0), q.shape(1) + 1, q.shape(2)});
    return r;
  }
  vl::MhaResult<double, 3> multi_head_attention(const vb::Tensor3& q, const vb::Tensor3& k, const vb::Tensor3& v,
                                                const vl::MhaParameters<double>& p, std::size_t h, const vl::MhaOptions<double>& o) const override {
    return mha_as(q, k, v, p, h, o);
  }
  vl::MhaResult<float, 3> multi_head_attention(const vl::ops::Tensor3Of<float>& q, const vl::ops::Tensor3Of<float>& k,
                                               const vl::ops::Tensor3Of<float>& v, const vl::MhaParameters<float>& p, std::size_t h,
                                               const vl::MhaOptions<float>& o) const override {
    return mha_as(q, k, v, p, h, o);
  }
  mutable int calls = 0;

 private:
  int misshape_from_;
};

using vl::verify::draw;
using vl::verify::same_bits;

// B = 2, 4 query heads over 2 kv heads, Sq = 3, D = 4; causal bottom-right (Sq ≤ Sk: hidden keys
// in every row but the last) and an additive mask.
template <class T>
void weights_read_from_outputs(std::size_t sk, std::size_t dv) {
  std::mt19937_64 gen(10 * sk + dv);
  const auto q = draw<T, 4>(gen, {2, 4, 3, 4}), k = draw<T, 4>(gen, {2, 2, sk, 4}), v = draw<T, 4>(gen, {2, 2, sk, dv});
  vl::AttentionOptions<T> o;
  o.causal = true;
  o.alignment = vl::CausalAlignment::bottom_right;
  o.bias = xt::xarray<T>(draw<T, 2>(gen, {3, sk}));
  o.return_weights = true;
  const auto base = std::make_shared<NoWeights>();
  const vb::WeightsFromOutputs readout(base);
  const auto got = readout.attention(q, k, v, o);
  const auto want = vb::PlainBackend().attention(q, k, v, o);
  const char* type = sizeof(T) == 4 ? "float" : "double";
  BOOST_TEST(same_bits(got.weights, want.weights), type << " Sk=" << sk << " Dv=" << dv);
  BOOST_TEST(same_bits(got.output, want.output), type << " Sk=" << sk << " Dv=" << dv);
  BOOST_TEST(base->calls == int(1 + (sk + dv - 1) / dv), type << " Sk=" << sk << " Dv=" << dv << ": " << base->calls << " calls");
  // Query 0 sits at Sk − 3 (bottom-right; Sk ≥ 3 here): the keys after it read +0, bit for bit.
  for (std::size_t j = sk - 2; j < sk; ++j) {
    const T w = got.weights(1, 3, 0, j);
    BOOST_TEST((w == T(0) && !std::signbit(w)), type << " Sk=" << sk << " hidden key " << j);
  }
}

// Sk a multiple of Dv, not one, Dv > Sk, Dv = 1 (one call per key).
BOOST_DATA_TEST_CASE(attention_weights_equal_the_formed_ones,
                     boost::unit_test::data::make({3, 4, 5}) * boost::unit_test::data::make({1, 2, 3, 7}), sk, dv) {
  weights_read_from_outputs<float>(sk, dv);
  weights_read_from_outputs<double>(sk, dv);
}

// Values with no columns (Dv = 0) still have weights: read with one-hot values one column wide,
// one call per key; equal queries and keys give each of the 4 keys weight 1/4 exactly.
BOOST_AUTO_TEST_CASE(values_without_columns_still_have_weights) {
  const xt::xtensor<double, 4> q = xt::ones<double>({1, 1, 2, 3}), k = xt::ones<double>({1, 1, 4, 3});
  const xt::xtensor<double, 4> v = xt::zeros<double>({1, 1, 4, 0});
  vl::AttentionOptions<double> o;
  o.return_weights = true;
  const auto base = std::make_shared<NoWeights>();
  const auto r = vb::WeightsFromOutputs(base).attention(q, k, v, o);
  BOOST_TEST(base->calls == 1 + 4);
  BOOST_TEST(r.output.shape(3) == 0u);
  for (std::size_t j = 0; j < 4; ++j) BOOST_TEST(r.weights(0, 0, 1, j) == 0.25);
}

// Without weights asked for: one call, passed through.
BOOST_AUTO_TEST_CASE(without_weights_one_call_passes_through) {
  const xt::xtensor<double, 4> q = xt::ones<double>({1, 1, 2, 3}), kv = xt::ones<double>({1, 1, 5, 3});
  const auto base = std::make_shared<NoWeights>();
  const auto r = vb::WeightsFromOutputs(base).attention(q, kv, kv, {});
  BOOST_TEST(base->calls == 1);
  BOOST_TEST(r.weights.size() == 0u);
  BOOST_TEST(r.output(0, 0, 1, 2) == 1.0);
}

// By hand: scores ±10⁴ (q = 10⁴, keys ±1, scale 1): weights exactly (1, 0) (exp(−2·10⁴) is 0), so
// read back exactly; a NaN query reads back a NaN row (as the formed weights have), the other rows untouched.
BOOST_AUTO_TEST_CASE(huge_scores_and_nan_by_hand) {
  const xt::xtensor<double, 4> q{{{{1e4}, {1.0}}}}, k{{{{1.0}, {-1.0}}}}, v{{{{5.0, 6.0, 7.0}, {8.0, 9.0, 10.0}}}};
  vl::AttentionOptions<double> o;
  o.scale = 1.0;
  o.return_weights = true;
  const vb::WeightsFromOutputs readout(std::make_shared<NoWeights>());
  auto r = readout.attention(q, k, v, o);
  BOOST_TEST(r.weights(0, 0, 0, 0) == 1.0);
  BOOST_TEST(r.weights(0, 0, 0, 1) == 0.0);
  BOOST_TEST(r.output(0, 0, 0, 2) == 7.0);
  xt::xtensor<double, 4> nan_q = q;
  nan_q(0, 0, 1, 0) = std::numeric_limits<double>::quiet_NaN();
  r = readout.attention(nan_q, k, v, o);
  BOOST_TEST(std::isnan(r.weights(0, 0, 1, 0)));
  BOOST_TEST(std::isnan(r.weights(0, 0, 1, 1)));
  BOOST_TEST(r.weights(0, 0, 0, 0) == 1.0);
}

// Multi-head attention (double): per-head weights (B, H, Sq, Sk), here 2 heads of width 2 over 5
// keys (⌈5 / 2⌉ = 3 one-hot calls), with biases and a key padding mask whose keys read +0.
BOOST_AUTO_TEST_CASE(multi_head_weights_equal_the_formed_ones) {
  std::mt19937_64 gen(4);
  vl::torch_rng::Generator init(5);
  auto p = vl::torch_rng::mha_init<double>(init, 4, 2);
  p.in_proj_bias = draw<double, 1>(gen, {12});
  p.out_proj_bias = draw<double, 1>(gen, {4});
  const auto query = draw<double, 3>(gen, {2, 3, 4}), key = draw<double, 3>(gen, {2, 5, 4}), value = draw<double, 3>(gen, {2, 5, 4});
  vl::MhaOptions<double> o;
  o.key_padding_mask = xt::xarray<bool>{{false, false, false, false, true}, {true, false, false, false, false}};
  const auto base = std::make_shared<NoWeights>();
  const auto got = vb::WeightsFromOutputs(base).multi_head_attention(query, key, value, p, 2, o);
  const auto want = vb::PlainBackend().multi_head_attention(query, key, value, p, 2, o);
  BOOST_TEST(same_bits(got.weights, want.weights));
  BOOST_TEST(same_bits(got.output, want.output));
  BOOST_TEST(base->calls == 1 + 3);
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t i = 0; i < 3; ++i) {
      BOOST_TEST((got.weights(0, h, i, 4) == 0.0 && !std::signbit(got.weights(0, h, i, 4))));
      BOOST_TEST((got.weights(1, h, i, 0) == 0.0 && !std::signbit(got.weights(1, h, i, 0))));
    }
  // The float32 call is forwarded as it is: asked for weights, the base's own answer (it lacks them).
  const xt::xtensor<float, 3> fq = xt::ones<float>({1, 2, 4});
  const auto fp = vl::torch_rng::mha_init<float>(init, 4, 2);
  vl::MhaOptions<float> fo;
  BOOST_CHECK_THROW(vb::WeightsFromOutputs(base).multi_head_attention(fq, fq, fq, fp, 2, fo), vb::Unsupported);
  fo.need_weights = false;
  BOOST_CHECK_NO_THROW(vb::WeightsFromOutputs(base).multi_head_attention(fq, fq, fq, fp, 2, fo));
}

// A one-hot call answered with the wrong shape: an error that says so (its second call on).
BOOST_AUTO_TEST_CASE(a_misshapen_one_hot_answer_is_an_error) {
  const xt::xtensor<double, 4> q = xt::ones<double>({1, 1, 2, 3}), kv = xt::ones<double>({1, 1, 5, 3});
  vl::AttentionOptions<double> o;
  o.return_weights = true;
  BOOST_CHECK_EXCEPTION(vb::WeightsFromOutputs(std::make_shared<NoWeights>(2)).attention(q, kv, kv, o), std::runtime_error,
                        [](const std::runtime_error& e) {
                          return std::string(e.what()) == "attention's output for one-hot values has the wrong shape";
                        });
  vl::torch_rng::Generator init(6);
  const auto p = vl::torch_rng::mha_init<double>(init, 4, 2);
  const xt::xtensor<double, 3> x = xt::ones<double>({1, 3, 4});
  BOOST_CHECK_EXCEPTION(vb::WeightsFromOutputs(std::make_shared<NoWeights>(2)).multi_head_attention(x, x, x, p, 2, {}), std::runtime_error,
                        [](const std::runtime_error& e) {
                          return std::string(e.what()) == "multi-head attention's output for one-hot values has the wrong shape";
                        });
}

// Weights become supported where the operation is; a backend with them is used as it is.
BOOST_AUTO_TEST_CASE(what_it_supports_and_where_it_is_used) {
  const auto base = std::make_shared<NoWeights>();
  const vb::WeightsFromOutputs readout(base);
  BOOST_TEST(!base->supports({vb::Op::attention, vb::Option::weights}));
  BOOST_TEST(readout.supports({vb::Op::attention, vb::Option::weights}));
  BOOST_TEST(readout.supports({vb::Op::multi_head_attention, vb::Option::weights}));
  BOOST_TEST(readout.supports(vb::Op::attention));
  BOOST_TEST(readout.name() == "no-weights, its weights read from its outputs");
  // Over a backend without attention at all, no weights either.
  class Empty : public vb::Backend {
   public:
    std::string name() const override { return "empty"; }
    std::string summary() const override { return "no operation"; }
    bool supports(vb::Need) const override { return false; }
  };
  const Empty empty;
  BOOST_TEST(!vb::WeightsFromOutputs::over(empty)->supports({vb::Op::attention, vb::Option::weights}));
  const vb::PlainBackend plain;
  BOOST_TEST(vb::WeightsFromOutputs::where_lacking(plain, vb::Op::attention).get() == &plain);
  const auto over = vb::WeightsFromOutputs::where_lacking(*base, vb::Op::attention);
  BOOST_TEST(over.get() != static_cast<const vb::Backend*>(base.get()));
  BOOST_TEST(dynamic_cast<const vb::WeightsFromOutputs*>(over.get()) != nullptr);
}

BOOST_AUTO_TEST_SUITE_END()  // test_backends_weights_from_outputs
