// Verification program of lesson encoder-decoder (specs/encoder_decoder.md): every claim with its
// negative controls, the listing against its documented output and torch's arrays,
// traceability; direct cases of the new kernels (LayerNorm, FFN, the layers, the KV-cache step,
// shift_right) and of the torch-compatible initialisation; float32 against float64.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "kernels/reference/decoder_step.hpp"
#include "lesson_tests.hpp"
#include "lessons/encoder_decoder/encoder_decoder.hpp"
#include "numeric/torch_transformer_init.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_lesson_encoder_decoder).
BOOST_AUTO_TEST_SUITE(test_lesson_encoder_decoder)

namespace {
struct Register {
  Register() { vl::verify::register_lesson(vl::lessons::encoder_decoder::lesson()); }
} register_encoder_decoder;

using T3 = xt::xtensor<double, 3>;
}  // namespace

BOOST_AUTO_TEST_SUITE(kernels)

BOOST_AUTO_TEST_CASE(layer_norm_by_hand) {
  // x = (1, 2, 3, 6): μ = 3, σ² = (4 + 1 + 0 + 9)/4 = 3.5; γ = 2, β = 1.
  T3 x = xt::zeros<double>({std::size_t(1), std::size_t(1), std::size_t(4)});
  x(0, 0, 0) = 1, x(0, 0, 1) = 2, x(0, 0, 2) = 3, x(0, 0, 3) = 6;
  vl::LayerNormParameters<double> p{xt::ones<double>({4}) * 2.0, xt::ones<double>({4})};
  const T3 y = vl::layer_norm<double>(x, p);
  const double inv = 1.0 / std::sqrt(3.5 + 1e-5);
  for (std::size_t c = 0; c < 4; ++c) BOOST_TEST(std::fabs(y(0, 0, c) - ((x(0, 0, c) - 3.0) * inv * 2.0 + 1.0)) < 1e-15);
  vl::LayerNormParameters<double> wrong{xt::ones<double>({3}), xt::zeros<double>({3})};
  BOOST_CHECK_THROW(vl::layer_norm<double>(x, wrong), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(activations_by_hand) {
  BOOST_TEST(vl::activate(-2.0, vl::Activation::relu) == 0.0);
  BOOST_TEST(vl::activate(1.5, vl::Activation::relu) == 1.5);
  // GELU(1) = Φ(1) = 0.841344746068543 (the normal CDF at 1)
  BOOST_TEST(std::fabs(vl::activate(1.0, vl::Activation::gelu) - 0.8413447460685429) < 1e-15);
  BOOST_TEST(vl::activate(0.0, vl::Activation::gelu) == 0.0);
}

BOOST_AUTO_TEST_CASE(shift_right_moves_one_position) {
  T3 t = xt::zeros<double>({std::size_t(2), std::size_t(3), std::size_t(2)});
  for (std::size_t i = 0; i < t.size(); ++i) t.flat(i) = double(i + 1);
  const xt::xtensor<double, 1> start = {-1.0, -2.0};
  const T3 s = vl::shift_right<double>(t, start);
  BOOST_TEST(s(1, 0, 0) == -1.0);
  BOOST_TEST(s(1, 0, 1) == -2.0);
  BOOST_TEST(s(1, 2, 1) == t(1, 1, 1));
  BOOST_TEST(s(0, 1, 0) == t(0, 0, 0));
}

BOOST_AUTO_TEST_CASE(residual_names_the_widths) {
  vl::torch_rng::Generator gen(3);
  auto p = vl::torch_rng::encoder_layer_init<double>(gen, 8, 2, 16);
  p.linear2 = vl::torch_rng::linear_init<double>(gen, 16, 9);
  const T3 x = vl::torch_rng::randn<double>(gen, {1, 3, 8});
  vl::LayerOptions o;
  o.norm_first = true;
  try {
    vl::encoder_layer<double>(x, p, 2, o);
    BOOST_FAIL("a width-changing FFN was accepted");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("(1, 3, 9)") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(step_kernel_equals_the_masked_layer) {
  // The KV-cache step, position by position, against one causal pass: both orders.
  for (bool norm_first : {false, true}) {
    vl::torch_rng::Generator gen(21);
    const auto p = vl::torch_rng::decoder_layer_init<double>(gen, 12, 3, 20);
    const T3 tgt = vl::torch_rng::randn<double>(gen, {2, 5, 12}), memory = vl::torch_rng::randn<double>(gen, {2, 4, 12});
    vl::LayerOptions o;
    o.norm_first = norm_first;
    vl::MhaOptions<double> causal;
    causal.causal = true;
    const T3 full = vl::decoder_layer<double>(tgt, memory, p, 3, o, causal);
    vl::LayerCache<double> cache;
    double worst = 0;
    for (std::size_t t = 0; t < 5; ++t) {
      const T3 row = xt::view(tgt, xt::all(), xt::range(t, t + 1));
      const T3 y = vl::decoder_layer_step<double>(row, memory, p, 3, o, cache);
      worst = std::max(worst, double(xt::amax(xt::abs(y - xt::view(full, xt::all(), xt::range(t, t + 1))))()));
    }
    BOOST_TEST(cache.keys.shape(1) == 5u);
    BOOST_TEST(worst < 1e-13);
  }
}

BOOST_AUTO_TEST_CASE(float32_layer_close_to_float64) {
  // The float64 layer's weights and input rounded to float32 (torch's float32 draws are another
  // stream): the float32 kernel agrees to float32 round-off, about 1e-6 on outputs of order 1.
  vl::torch_rng::Generator gen(8);
  const auto p = vl::torch_rng::encoder_layer_init<double>(gen, 16, 4, 32);
  const T3 x = vl::torch_rng::randn<double>(gen, {1, 6, 16});
  vl::torch_rng::EncoderLayerParameters<float> pf;
  vl::torch_rng::state_entries(pf, [&](const std::string& name, auto& t) {
    vl::torch_rng::state_entries(p, [&](const std::string& n, const auto& src) {
      if (n == name) t = xt::cast<float>(src);
    });
  });
  for (bool norm_first : {false, true}) {
    vl::LayerOptions o;
    o.norm_first = norm_first;
    const auto y64 = vl::encoder_layer<double>(x, p, 4, o);
    const auto y32 = vl::encoder_layer<float>(xt::xtensor<float, 3>(xt::cast<float>(x)), pf, 4, o);
    BOOST_TEST(double(xt::amax(xt::abs(xt::cast<double>(y32) - y64))()) < 1e-5);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(torch_init)

BOOST_AUTO_TEST_CASE(state_dict_names_in_torch_order) {
  vl::torch_rng::Generator gen(0);
  const auto p = vl::torch_rng::decoder_layer_init<double>(gen, 8, 2, 16);
  std::vector<std::string> names;
  vl::torch_rng::state_entries(p, [&](const std::string& n, const auto&) { names.push_back(n); });
  const std::vector<std::string> want = {"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                                         "self_attn.out_proj.bias", "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
                                         "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias", "linear1.weight",
                                         "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias",
                                         "norm2.weight", "norm2.bias", "norm3.weight", "norm3.bias"};
  BOOST_TEST(names == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bad_sizes_refused) {
  vl::torch_rng::Generator gen(0);
  BOOST_CHECK_THROW(vl::torch_rng::encoder_layer_init<double>(gen, 10, 3, 16), std::invalid_argument);
  BOOST_CHECK_THROW(vl::torch_rng::decoder_layer_init<double>(gen, 8, 2, 0), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // test_lesson_encoder_decoder
