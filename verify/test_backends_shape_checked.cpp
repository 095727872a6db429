#include <boost/test/unit_test.hpp>

// ShapeChecked (backends/shape_checked.hpp): a result whose shape is not the one its operation
// defines is a WrongShape naming the backend, the result (its op header's words: "an attention
// output", "a layer-norm output", …) and both shapes, for every kind of result; a result of the
// right shape comes back untouched; the checked backend in bfloat16 is checked too.
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <tuple>

#include <xtensor/xtensor.hpp>

#include "backends/plain_backend.hpp"
#include "backends/shape_checked.hpp"
#include "numeric/torch_transformer_init.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_backends_shape_checked).
BOOST_AUTO_TEST_SUITE(test_backends_shape_checked)

namespace vb = vl::backends;
using Types = std::tuple<float, double>;

// One row too many along the first axis.
template <class T, std::size_t N>
xt::xtensor<T, N> one_more(const xt::xtensor<T, N>& x) {
  auto shape = x.shape();
  ++shape[0];
  xt::xtensor<T, N> y = xt::zeros<T>(shape);
  std::copy(x.begin(), x.end(), y.begin());
  return y;
}

// Plain's results, but the one named by `wrong` with a row too many.
class Misshapen : public vb::Decorator {
 public:
  explicit Misshapen(std::string wrong) : Decorator(std::make_shared<vb::PlainBackend>(), "misshapen"), wrong_(std::move(wrong)) {}
  using Decorator::attention, Decorator::attention_backward, Decorator::multi_head_attention, Decorator::positional_encoding,
      Decorator::linear_chunked, Decorator::linear_family, Decorator::layer_norm, Decorator::decoder_step, Decorator::shift_right;

  template <class T>
  vl::AttentionResult<T, 4> attention_as(const vb::Tensor4<T>& q, const vb::Tensor4<T>& k, const vb::Tensor4<T>& v,
                                         const vl::AttentionOptions<T>& o) const {
    auto r = base().attention(q, k, v, o);
    if (wrong_ == "y") r.output = one_more(r.output);
    if (wrong_ == "weights") r.weights = one_more(r.weights);
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
  vl::AttentionGradients<double, 4> attention_backward(const vb::Tensor4<double>& q, const vb::Tensor4<double>& k, const vb::Tensor4<double>& v,
                                                       const vb::Tensor4<double>& d, const vl::AttentionOptions<double>& o) const override {
    auto g = base().attention_backward(q, k, v, d, o);
    if (wrong_ == "dk") g.dk = one_more(g.dk);
    return g;
  }
  vl::MhaResult<double, 3> multi_head_attention(const vb::Tensor3& q, const vb::Tensor3& k, const vb::Tensor3& v,
                                                const vl::MhaParameters<double>& p, std::size_t h, const vl::MhaOptions<double>& o) const override {
    auto r = base().multi_head_attention(q, k, v, p, h, o);
    if (wrong_ == "mha weights") r.weights = one_more(r.weights);
    return r;
  }
  vb::Matrix positional_encoding(const std::vector<double>& positions, std::size_t d) const override {
    auto pe = base().positional_encoding(positions, d);
    return wrong_ == "pe" ? one_more(pe) : pe;
  }
  template <class T>
  vl::ops::MatrixOf<T> linear_chunked_as(const vl::ops::MatrixOf<T>& q, const vl::ops::MatrixOf<T>& k, const vl::ops::MatrixOf<T>& v,
                                         std::size_t c) const {
    auto y = base().linear_chunked(q, k, v, c);
    return wrong_ == "linear" ? one_more(y) : y;
  }
  vb::Matrix linear_chunked(const vb::Matrix& q, const vb::Matrix& k, const vb::Matrix& v, std::size_t c) const override {
    return linear_chunked_as(q, k, v, c);
  }
  vl::ops::MatrixOf<float> linear_chunked(const vl::ops::MatrixOf<float>& q, const vl::ops::MatrixOf<float>& k,
                                          const vl::ops::MatrixOf<float>& v, std::size_t c) const override {
    return linear_chunked_as(q, k, v, c);
  }
  vl::FamilyResult<double> linear_family(const vl::FamilyInputs<double>& in, const vl::FamilyOptions& o) const override {
    auto r = base().linear_family(in, o);
    if (wrong_ == "state") r.state = one_more(r.state);
    return r;
  }
  template <class T>
  vl::ops::Tensor3Of<T> layer_norm_as(const vl::ops::Tensor3Of<T>& x, const vl::LayerNormParameters<T>& p, double eps) const {
    auto y = base().layer_norm(x, p, eps);
    return wrong_ == "layer norm" ? one_more(y) : y;
  }
  vb::Tensor3 layer_norm(const vb::Tensor3& x, const vl::LayerNormParameters<double>& p, double eps) const override {
    return layer_norm_as(x, p, eps);
  }
  vl::ops::Tensor3Of<float> layer_norm(const vl::ops::Tensor3Of<float>& x, const vl::LayerNormParameters<float>& p, double eps) const override {
    return layer_norm_as(x, p, eps);
  }
  vb::Tensor3 decoder_step(const vb::Tensor3& x, const vb::Tensor3& m, const vl::DecoderLayerParameters<double>& p, std::size_t h,
                           const vl::LayerOptions& o, vl::LayerCache<double>& cache, const vl::MhaOptions<double>& cross) const override {
    auto y = base().decoder_step(x, m, p, h, o, cache, cross);
    return wrong_ == "step" ? one_more(y) : y;
  }
  vb::Tensor3 shift_right(const vb::Tensor3& target, const xt::xtensor<double, 1>& start) const override {
    auto y = base().shift_right(target, start);
    return wrong_ == "shift" ? one_more(y) : y;
  }

 private:
  std::string wrong_;
};

// The WrongShape `call` throws: its message names the backend, `what` and both shapes.
template <class F>
void rejects(F call, const std::string& what, const std::string& got, const std::string& want) {
  try {
    call();
    BOOST_ERROR("no WrongShape for " << what);
  } catch (const vb::WrongShape& e) {
    const std::string m = e.what();
    BOOST_TEST(m.find("backend 'misshapen'") != std::string::npos, m);
    BOOST_TEST(m.find("returned " + what + " of shape " + got) != std::string::npos, m);
    BOOST_TEST(m.find("the operation defines " + want) != std::string::npos, m);
  }
}

template <class T, std::size_t N>
bool same_bits(const xt::xtensor<T, N>& a, const xt::xtensor<T, N>& b) {
  return a.shape() == b.shape() && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_wrong_attention_shape_is_named, T, Types) {
  const xt::xtensor<T, 4> q = xt::ones<T>({1, 1, 2, 3}), kv = xt::ones<T>({1, 1, 4, 3});
  vl::AttentionOptions<T> o;
  o.return_weights = true;
  const vb::ShapeChecked wrong_y(std::make_shared<Misshapen>("y")), wrong_w(std::make_shared<Misshapen>("weights"));
  rejects([&] { wrong_y.attention(q, kv, kv, o); }, "an attention output", "(2, 1, 2, 3)", "(1, 1, 2, 3)");
  rejects([&] { wrong_w.attention(q, kv, kv, o); }, "attention weights", "(2, 1, 2, 4)", "(1, 1, 2, 4)");
  // Without weights asked for, the misshapen weights are not looked at (an empty array is right).
  o.return_weights = false;
  BOOST_CHECK_NO_THROW(wrong_w.attention(q, kv, kv, o));
  const xt::xtensor<T, 2> pq = xt::ones<T>({5, 2}), v = xt::ones<T>({5, 3});
  rejects([&] { vb::ShapeChecked(std::make_shared<Misshapen>("linear")).linear_chunked(pq, pq, v, 2); }, "a linear-attention output", "(6, 3)",
          "(5, 3)");
  const xt::xtensor<T, 3> x = xt::ones<T>({2, 3, 4});
  const vl::LayerNormParameters<T> norm{xt::ones<T>({4}), xt::zeros<T>({4})};
  rejects([&] { vb::ShapeChecked(std::make_shared<Misshapen>("layer norm")).layer_norm(x, norm, 1e-5); }, "a layer-norm output", "(3, 3, 4)",
          "(2, 3, 4)");
}

BOOST_AUTO_TEST_CASE(every_kind_of_result_is_checked) {
  const xt::xtensor<double, 4> q = xt::ones<double>({1, 2, 2, 3}), kv = xt::ones<double>({1, 2, 4, 3});
  rejects([&] { vb::ShapeChecked(std::make_shared<Misshapen>("dk")).attention_backward(q, kv, kv, q, {}); }, "dK", "(2, 2, 4, 3)", "(1, 2, 4, 3)");
  vl::torch_rng::Generator init(1);
  const auto mha = vl::torch_rng::mha_init<double>(init, 4, 2);
  const xt::xtensor<double, 3> x = xt::ones<double>({1, 3, 4}), memory = xt::ones<double>({1, 2, 4});
  rejects([&] { vb::ShapeChecked(std::make_shared<Misshapen>("mha weights")).multi_head_attention(x, memory, memory, mha, 2, {}); },
          "multi-head attention weights", "(2, 2, 3, 2)", "(1, 2, 3, 2)");
  rejects([&] { vb::ShapeChecked(std::make_shared<Misshapen>("pe")).positional_encoding(std::vector<double>{0, 1, 2}, 4); },
          "a positional-encoding table", "(4, 4)", "(3, 4)");
  vl::FamilyInputs<double> in;
  in.q = xt::ones<double>({1, 1, 3, 2}), in.k = in.q, in.v = xt::ones<double>({1, 1, 3, 5});
  rejects([&] { vb::ShapeChecked(std::make_shared<Misshapen>("state")).linear_family(in, {}); }, "a linear-family state", "(2, 1, 2, 5)",
          "(1, 1, 2, 5)");
  const auto dec = vl::torch_rng::decoder_layer_init<double>(init, 4, 2, 8);
  vl::LayerCache<double> cache;
  const xt::xtensor<double, 3> x_t = xt::ones<double>({1, 1, 4});
  rejects([&] { vb::ShapeChecked(std::make_shared<Misshapen>("step")).decoder_step(x_t, memory, dec, 2, {}, cache, {}); },
          "a decoder-step output", "(2, 1, 4)", "(1, 1, 4)");
  rejects([&] { vb::ShapeChecked(std::make_shared<Misshapen>("shift")).shift_right(x, xt::xtensor<double, 1>{0, 0, 0, 0}); },
          "a shifted target", "(2, 3, 4)", "(1, 3, 4)");
}

// Right shapes pass through untouched, and the decorator speaks for its base.
BOOST_AUTO_TEST_CASE(right_shapes_come_back_untouched) {
  const auto plain = std::make_shared<vb::PlainBackend>();
  const vb::ShapeChecked checked(plain);
  BOOST_TEST(checked.name() == "plain");
  BOOST_TEST(checked.summary() == plain->summary());
  BOOST_TEST(checked.ours());
  std::mt19937_64 gen(3);
  xt::xtensor<double, 4> q = xt::xtensor<double, 4>::from_shape({2, 2, 3, 4}), kv = xt::xtensor<double, 4>::from_shape({2, 1, 5, 4});
  for (auto* t : {&q, &kv})
    for (auto& e : *t) e = double(gen() % 1000) / 500 - 1;
  vl::AttentionOptions<double> o;
  o.return_weights = true;
  o.causal = true;
  const auto got = checked.attention(q, kv, kv, o), want = plain->attention(q, kv, kv, o);
  BOOST_TEST(same_bits(got.output, want.output));
  BOOST_TEST(same_bits(got.weights, want.weights));
  const xt::xtensor<double, 3> x = xt::ones<double>({1, 3, 4});
  BOOST_TEST(same_bits(checked.shift_right(x, xt::xtensor<double, 1>{1, 2, 3, 4}), plain->shift_right(x, xt::xtensor<double, 1>{1, 2, 3, 4})));
}

// In bfloat16 (a candidate speaking it, StoredIn over plain here): the float32 results, rounded,
// are checked as well.
BOOST_AUTO_TEST_CASE(stored_in_another_precision_is_checked_too) {
  const auto checked = std::make_shared<vb::ShapeChecked>(std::make_shared<Misshapen>("y"));
  const auto bf16 = checked->stored_in(vl::Precision::bfloat16, checked);
  const xt::xtensor<float, 4> q = xt::ones<float>({1, 1, 2, 3}), kv = xt::ones<float>({1, 1, 4, 3});
  rejects([&] { bf16->attention(q, kv, kv, {}); }, "an attention output", "(2, 1, 2, 3)", "(1, 1, 2, 3)");
  const auto right = std::make_shared<vb::ShapeChecked>(std::make_shared<vb::PlainBackend>());
  const auto ok = right->stored_in(vl::Precision::bfloat16, right)->attention(q, kv, kv, {});
  BOOST_TEST(ok.output.shape(2) == 2u);
  BOOST_TEST(ok.output(0, 0, 1, 2) == 1.0f);  // equal keys: the mean of values that are all 1, exact in bfloat16
}

BOOST_AUTO_TEST_SUITE_END()  // test_backends_shape_checked
