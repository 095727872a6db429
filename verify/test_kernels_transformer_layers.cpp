#include <boost/test/unit_test.hpp>

// The Transformer's encoder and decoder layers (src/kernels/reference/encoder_layer.hpp,
// decoder_layer.hpp) on their own, in float and double. Each case gives the sub-layers parameters
// whose output is known in closed form, so that the layer's wiring can be checked by hand:
//   silent attention   W_o = 0, b_o = 0: SA(x) = 0 (a zero FFN likewise)
//   mean attention     W_q = W_k = 0, W_v = W_o = I, biases 0: every score is 0, so query i gets
//                      the mean of the value rows it may see (all, a causal prefix, the unmasked)
//   ReLU/GELU FFN      W₁ = W₂ = I, biases 0: FFN(z) = act(z)
// and rows such as (0, 0, 2, 2), whose layer norm with ε = 0 is exactly (−1, −1, 1, 1). Checked:
// post-norm LN(x + f(x)) against pre-norm x + f(LN(x)), which norm goes where, the masks of the
// self- and the cross-attention reaching the right one, memory as the cross-attention's keys and
// values, ε and the activation of LayerOptions, shapes over a grid (empty ones included), NaN kept
// to its batch, the width check, the stacks, and shift_right. These were otherwise reached only
// through the encoder-decoder lesson's claims.
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/decoder_layer.hpp"
#include "kernels/reference/encoder_layer.hpp"
#include "numeric/torch_random.hpp"
#include "numeric/torch_transformer_init.hpp"
#include "kernel_types.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_transformer_layers).
BOOST_AUTO_TEST_SUITE(test_kernels_transformer_layers)

// Every entry finite, by index: xt::all over an empty tensor offsets its null data pointer (UBSan).
inline bool all_finite(const xt::xtensor<double, 3>& y) {
  for (std::size_t i = 0; i < y.size(); ++i)
    if (!std::isfinite(y.data()[i])) return false;
  return true;
}

namespace {

namespace bdata = boost::unit_test::data;
using Types = vl::verify::FloatTypes;

using vl::verify::kEps;

constexpr std::size_t kD = 4, kHeads = 2;
constexpr double kPhi1 = 0.8413447460685429;  // Φ(1), the standard normal CDF, from its tables

template <class T>
xt::xtensor<T, 2> identity(std::size_t d) {
  xt::xtensor<T, 2> i = xt::zeros<T>({d, d});
  for (std::size_t r = 0; r < d; ++r) i(r, r) = T(1);
  return i;
}

// SA(x) = 0: every weight and bias 0.
template <class T>
vl::MhaParameters<T> silent_attention(std::size_t d = kD) {
  return {xt::zeros<T>({3 * d, d}), xt::zeros<T>({3 * d}), xt::zeros<T>({d, d}), xt::zeros<T>({d})};
}

// W_q = W_k = 0, W_v = W_o = I, b_o as given: query i gets b_o + the mean of the value rows it sees.
template <class T>
vl::MhaParameters<T> mean_attention(std::size_t d = kD, xt::xtensor<T, 1> out_bias = {}) {
  vl::MhaParameters<T> p = silent_attention<T>(d);
  xt::view(p.in_proj_weight, xt::range(2 * d, 3 * d), xt::all()) = identity<T>(d);
  p.out_proj_weight = identity<T>(d);
  if (out_bias.size() == d) p.out_proj_bias = out_bias;
  return p;
}

// FFN(z) = 0 (W₂ = 0, b₂ = 0), or the constant b₂.
template <class T>
std::pair<vl::LinearParameters<T>, vl::LinearParameters<T>> constant_ffn(xt::xtensor<T, 1> b2 = xt::zeros<T>({kD})) {
  return {{xt::ones<T>({std::size_t(3), kD}), xt::ones<T>({std::size_t(3)})}, {xt::zeros<T>({kD, std::size_t(3)}), b2}};
}

// FFN(z) = act(z): W₁ = W₂ = I, biases 0.
template <class T>
std::pair<vl::LinearParameters<T>, vl::LinearParameters<T>> activation_ffn() {
  return {{identity<T>(kD), xt::zeros<T>({kD})}, {identity<T>(kD), xt::zeros<T>({kD})}};
}

template <class T>
vl::LayerNormParameters<T> norm(xt::xtensor<T, 1> gamma = xt::ones<T>({kD}), xt::xtensor<T, 1> beta = xt::zeros<T>({kD})) {
  return {gamma, beta};
}

template <class T>
vl::EncoderLayerParameters<T> encoder_params(const vl::MhaParameters<T>& sa, const std::pair<vl::LinearParameters<T>, vl::LinearParameters<T>>& ffn,
                                      const vl::LayerNormParameters<T>& n1 = norm<T>(), const vl::LayerNormParameters<T>& n2 = norm<T>()) {
  return {sa, ffn.first, ffn.second, n1, n2};
}

template <class T>
vl::DecoderLayerParameters<T> decoder_params(const vl::MhaParameters<T>& sa, const vl::MhaParameters<T>& ca,
                                      const std::pair<vl::LinearParameters<T>, vl::LinearParameters<T>>& ffn,
                                      const vl::LayerNormParameters<T>& n3 = norm<T>()) {
  return {sa, ca, ffn.first, ffn.second, norm<T>(), norm<T>(), n3};
}

// The two rows most cases use, (1, 2, 4): x₀ = (0, 0, 2, 2), x₁ = (5, 3, 3, 5). Each has mean μ and
// deviations ±1 (biased variance 1), so with ε = 0 their layer norms are exact:
// p₀ = (−1, −1, 1, 1), p₁ = (1, −1, −1, 1).
template <class T>
xt::xtensor<T, 3> two_rows() {
  return {{{T(0), T(0), T(2), T(2)}, {T(5), T(3), T(3), T(5)}}};
}

vl::LayerOptions options(bool norm_first, vl::Activation a = vl::Activation::relu, double eps = 0) {
  vl::LayerOptions o;
  o.norm_first = norm_first;
  o.activation = a;
  o.eps = eps;
  return o;
}

// |got − want| ≤ tol at every element of (1, 2, 4).
template <class T>
void check_rows(const xt::xtensor<T, 3>& got, const double (&want)[2][4], double tol, const char* what) {
  BOOST_TEST_REQUIRE(got.shape(0) == 1u);
  BOOST_TEST_REQUIRE(got.shape(1) == 2u);
  BOOST_TEST_REQUIRE(got.shape(2) == 4u);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      BOOST_TEST(std::abs(double(got(0, i, j)) - want[i][j]) <= tol, what << ": (" << i << ", " << j << ") is " << got(0, i, j) << ", not " << want[i][j]);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(encoder)

BOOST_AUTO_TEST_CASE_TEMPLATE(silent_sublayers_leave_the_residuals_and_norms, T, Types) {
  // SA = 0, FFN = 0. Pre-norm: x + 0 + 0 = x exactly. Post-norm: LN₂(LN₁(x)); with γ₁ = 1, β₁ = 0
  // LN₁ gives p exactly, which LN₂ keeps (mean 0, variance 1): y = γ₂ ⊙ p + β₂, exact with
  //   γ₂ = (1, 2, 3, 4), β₂ = (0.5, 0.5, −0.5, 0): y₀ = (−0.5, −1.5, 2.5, 4), y₁ = (1.5, −1.5, −3.5, 4).
  const auto x = two_rows<T>();
  const auto p = encoder_params<T>(silent_attention<T>(), constant_ffn<T>(), norm<T>(), norm<T>({T(1), T(2), T(3), T(4)}, {T(0.5), T(0.5), T(-0.5), T(0)}));
  const auto pre = vl::encoder_layer<T>(x, p, kHeads, options(true));
  BOOST_TEST(pre == x, boost::test_tools::per_element());
  const double post[2][4] = {{-0.5, -1.5, 2.5, 4}, {1.5, -1.5, -3.5, 4}};
  check_rows<T>(vl::encoder_layer<T>(x, p, kHeads, options(false)), post, 0, "post-norm");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(pre_norm_self_attention_adds_the_mean_of_the_normalised_rows, T, Types) {
  // Pre-norm, mean attention, FFN = 0: y_i = x_i + mean of p_j over the keys i sees, exact (weights ½):
  //   all keys:     (p₀ + p₁)/2 = (0, −1, 0, 1): y₀ = (0, −1, 2, 3), y₁ = (5, 2, 3, 6)
  //   causal:       y₀ = x₀ + p₀ = (−1, −1, 3, 3), y₁ as above
  //   key 1 padded: both see p₀ only: y₀ = (−1, −1, 3, 3), y₁ = x₁ + p₀ = (4, 2, 4, 6)
  const auto x = two_rows<T>();
  const auto p = encoder_params<T>(mean_attention<T>(), constant_ffn<T>());
  const double all[2][4] = {{0, -1, 2, 3}, {5, 2, 3, 6}};
  check_rows<T>(vl::encoder_layer<T>(x, p, kHeads, options(true)), all, 0, "all keys");
  vl::MhaOptions<T> causal;
  causal.causal = true;
  const double prefix[2][4] = {{-1, -1, 3, 3}, {5, 2, 3, 6}};
  check_rows<T>(vl::encoder_layer<T>(x, p, kHeads, options(true), causal), prefix, 0, "causal");
  vl::MhaOptions<T> padded;
  padded.key_padding_mask = xt::xarray<bool>{{false, true}};
  const double first[2][4] = {{-1, -1, 3, 3}, {4, 2, 4, 6}};
  check_rows<T>(vl::encoder_layer<T>(x, p, kHeads, options(true), padded), first, 0, "key 1 padded");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(post_norm_normalises_the_residual_sum, T, Types) {
  // Post-norm, mean attention, FFN = 0, γ = 1, β = 0: y_i = LN₂(LN₁(x_i + m)), m = (x₀ + x₁)/2 =
  // (2.5, 1.5, 2.5, 3.5). x₀ + m = (2.5, 1.5, 4.5, 5.5): μ = 3.5, deviations (−1, −2, 1, 2), σ² = 2.5;
  // x₁ + m = (7.5, 4.5, 5.5, 8.5): μ = 6.5, deviations (1, −2, −1, 2), σ² = 2.5. So LN₁ gives the
  // deviations / √2.5, which LN₂ keeps. Error: LN₂ is scale-invariant, so the error of LN₁'s
  // common factor 1/√2.5 cancels; what remains is one rounding per element of LN₁'s product and
  // LN₂'s own (mean, variance, √, 1/·, product): ≤ ~6u = 3 eps relative on values ≤ 1.27: ≤ 4 eps.
  // Tolerance 8 eps absolute.
  const auto p = encoder_params<T>(mean_attention<T>(), constant_ffn<T>());
  const double r = std::sqrt(2.5);
  const double want[2][4] = {{-1 / r, -2 / r, 1 / r, 2 / r}, {1 / r, -2 / r, -1 / r, 2 / r}};
  check_rows<T>(vl::encoder_layer<T>(two_rows<T>(), p, kHeads, options(false)), want, 8 * kEps<T>, "post-norm");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(feed_forward_is_the_second_sublayer, T, Types) {
  // Silent attention, FFN(z) = act(z), norm₂'s γ = 2.
  //   pre-norm ReLU: y = x + ReLU(2p): y₀ = (0, 0, 2, 2) + (0, 0, 2, 2) = (0, 0, 4, 4),
  //                                    y₁ = (5, 3, 3, 5) + (2, 0, 0, 2) = (7, 3, 3, 7)   (exact)
  //   pre-norm GELU (γ₂ = 1): y = x + GELU(p), GELU(1) = Φ(1), GELU(−1) = Φ(1) − 1; GELU within
  //                                    3.5 eps relative (test_kernels_feed_forward) of ≤ 0.85, W = I
  //                                    exact, x + GELU one rounding at |y| < 8 (≤ 2 eps): ≤ 5 eps;
  //                                    tolerance 8 eps absolute
  //   post-norm, FFN = b₂ = (0, 0, 0, 4): y = LN₂(p + b₂); p₀ + b₂ = (−1, −1, 1, 5): μ = 1,
  //                                    deviations (−2, −2, 0, 4), σ² = 6 → (−2, −2, 0, 4)/√6;
  //                                    p₁ + b₂ = (1, −1, −1, 5) → μ = 1, (0, −2, −2, 4)/√6; √6, 1/·
  //                                    and the product round (≤ 1.5 eps relative of ≤ 1.64): 4 eps.
  const auto x = two_rows<T>();
  const auto relu = encoder_params<T>(silent_attention<T>(), activation_ffn<T>(), norm<T>(), norm<T>(xt::xtensor<T, 1>({T(2), T(2), T(2), T(2)})));
  const double want_relu[2][4] = {{0, 0, 4, 4}, {7, 3, 3, 7}};
  check_rows<T>(vl::encoder_layer<T>(x, relu, kHeads, options(true)), want_relu, 0, "ReLU");
  const auto gelu = encoder_params<T>(silent_attention<T>(), activation_ffn<T>());
  const double g1 = kPhi1, gm1 = kPhi1 - 1;
  const double want_gelu[2][4] = {{gm1, gm1, 2 + g1, 2 + g1}, {5 + g1, 3 + gm1, 3 + gm1, 5 + g1}};
  check_rows<T>(vl::encoder_layer<T>(x, gelu, kHeads, options(true, vl::Activation::gelu)), want_gelu, 8 * kEps<T>, "GELU");
  const auto bias = encoder_params<T>(silent_attention<T>(), constant_ffn<T>({T(0), T(0), T(0), T(4)}));
  const double s = std::sqrt(6.0);
  const double want_bias[2][4] = {{-2 / s, -2 / s, 0, 4 / s}, {0, -2 / s, -2 / s, 4 / s}};
  check_rows<T>(vl::encoder_layer<T>(x, bias, kHeads, options(false)), want_bias, 4 * kEps<T>, "post-norm FFN bias");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(eps_reaches_both_norms, T, Types) {
  // Post-norm, silent sub-layers, ε = 3: LN₁(x₀) = p₀ / √(1 + 3) = p₀/2; LN₂ of that row
  // (σ² = 1/4) = (p₀/2) / √(1/4 + 3) = p₀ / √13. Error: 1/√3.25 within 1.5 eps relative, the rest
  // exact: tolerance 2 eps relative of 1/√13.
  const auto p = encoder_params<T>(silent_attention<T>(), constant_ffn<T>());
  const double a = 1 / std::sqrt(13.0);
  const double want[2][4] = {{-a, -a, a, a}, {a, -a, -a, a}};
  check_rows<T>(vl::encoder_layer<T>(two_rows<T>(), p, kHeads, options(false, vl::Activation::relu, 3.0)), want, 2 * kEps<T> * a, "eps 3");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(post_norm_is_scale_invariant_for_large_inputs, T, Types) {
  // Silent sub-layers: y = LN₂(LN₁(x)); x · 2^k gives the same bits (powers of two commute with
  // rounding, ε = 0) as long as the deviations' squares stay finite: 2^60 in float, 2^500 in double.
  const int k = std::is_same_v<T, float> ? 60 : 500;
  const auto x = two_rows<T>();
  const xt::xtensor<T, 3> big = x * std::ldexp(T(1), k);
  const auto p = encoder_params<T>(silent_attention<T>(), constant_ffn<T>(), norm<T>(), norm<T>({T(1), T(2), T(3), T(4)}));
  BOOST_TEST(vl::encoder_layer<T>(big, p, kHeads, options(false)) == vl::encoder_layer<T>(x, p, kHeads, options(false)),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(nan_spreads_through_its_batch_only, T, Types) {
  // Pre-norm, mean attention: a NaN in batch 0 makes its row's norm NaN, hence every score and the
  // mean every query of batch 0 reads; batch 1 (the two rows) is as in the mean-attention case.
  xt::xtensor<T, 3> x = xt::xtensor<T, 3>::from_shape({2, 2, kD});
  xt::view(x, 0) = xt::view(two_rows<T>(), 0);
  xt::view(x, 1) = xt::view(two_rows<T>(), 0);
  x(0, 1, 2) = std::numeric_limits<T>::quiet_NaN();
  const auto y = vl::encoder_layer<T>(x, encoder_params<T>(mean_attention<T>(), constant_ffn<T>()), kHeads, options(true));
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < kD; ++j) BOOST_TEST(std::isnan(y(0, i, j)));
  const double want[2][4] = {{0, -1, 2, 3}, {5, 2, 3, 6}};
  check_rows<T>(xt::xtensor<T, 3>(xt::view(y, xt::range(1, 2))), want, 0, "batch 1");
}

BOOST_DATA_TEST_CASE(shapes_over_a_grid,
                     bdata::make(std::vector<std::size_t>{0, 1, 2}) * bdata::make(std::vector<std::size_t>{0, 1, 3}) *
                         (bdata::make(std::vector<std::size_t>{4, 4, 6}) ^ bdata::make(std::vector<std::size_t>{1, 2, 3})),
                     B, S, d, heads) {
  // torch's initial parameters (d_ff = 5): (B, S, d) → (B, S, d), finite, both norm placements.
  vl::torch_rng::Generator gen(7);
  const auto p = vl::torch_rng::encoder_layer_init<double>(gen, d, heads, 5);
  xt::xtensor<double, 3> x = xt::xtensor<double, 3>::from_shape({B, S, d});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = std::sin(double(i) + 0.5);
  for (const bool norm_first : {false, true}) {
    const auto y = vl::encoder_layer<double>(x, p, heads, options(norm_first, vl::Activation::relu, 1e-5));
    BOOST_TEST(y.shape() == x.shape(), boost::test_tools::per_element());
    BOOST_TEST(all_finite(y));
  }
}

BOOST_AUTO_TEST_CASE(a_sublayer_of_another_width_is_refused) {
  // FFN to d + 1 columns: the residual x + FFN(x) has no meaning and throws.
  auto ffn = constant_ffn<double>();
  ffn.second = {xt::zeros<double>({kD + 1, std::size_t(3)}), xt::zeros<double>({kD + 1})};
  const auto p = encoder_params<double>(silent_attention<double>(), ffn);
  BOOST_CHECK_THROW(vl::encoder_layer<double>(two_rows<double>(), p, kHeads, options(false)), std::invalid_argument);
  BOOST_CHECK_THROW(vl::encoder_layer<double>(two_rows<double>(), p, kHeads, options(true)), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(stack_applies_the_layers_in_turn, T, Types) {
  // No layers: x. Two pre-norm layers, a (mean attention, FFN = 0) then b (silent attention,
  // FFN = c = (1, 0, 0, 0)): a gives (0, −1, 2, 3), (5, 2, 3, 6) (above), b adds c. The other
  // order is a(b(x)), which differs.
  const auto x = two_rows<T>();
  const auto a = encoder_params<T>(mean_attention<T>(), constant_ffn<T>());
  const auto b = encoder_params<T>(silent_attention<T>(), constant_ffn<T>({T(1), T(0), T(0), T(0)}));
  BOOST_TEST(vl::encoder_stack<T>(x, {}, kHeads, options(true)) == x, boost::test_tools::per_element());
  // a then b: (0, −1, 2, 3) + c, (5, 2, 3, 6) + c; b then a: the mean-attention layer on x + c.
  const double ab[2][4] = {{1, -1, 2, 3}, {6, 2, 3, 6}};
  check_rows<T>(vl::encoder_stack<T>(x, {a, b}, kHeads, options(true)), ab, 0, "a then b");
  BOOST_TEST(vl::encoder_stack<T>(x, {b, a}, kHeads, options(true)) ==
                 vl::encoder_layer<T>(vl::encoder_layer<T>(x, b, kHeads, options(true)), a, kHeads, options(true)),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(decoder)

// Memory (1, 4, 4): rows (4, 0, 0, 0), (0, 4, 0, 0), (0, 0, 0, 4), (0, 0, 4, 4); mean (1, 1, 1, 2);
// the mean of the first two (2, 2, 0, 0).
template <class T>
xt::xtensor<T, 3> memory_rows() {
  return {{{T(4), T(0), T(0), T(0)}, {T(0), T(4), T(0), T(0)}, {T(0), T(0), T(0), T(4)}, {T(0), T(0), T(4), T(4)}}};
}

BOOST_AUTO_TEST_CASE_TEMPLATE(silent_sublayers_leave_the_residuals_and_norms, T, Types) {
  // Pre-norm: tgt exactly. Post-norm: LN₃(LN₂(LN₁(x))) = γ₃ ⊙ p + β₃ (norm₃'s parameters last), exact.
  const auto x = two_rows<T>();
  const auto p = decoder_params<T>(silent_attention<T>(), silent_attention<T>(), constant_ffn<T>(),
                            norm<T>({T(1), T(2), T(3), T(4)}, {T(0.5), T(0.5), T(-0.5), T(0)}));
  BOOST_TEST(vl::decoder_layer<T>(x, memory_rows<T>(), p, kHeads, options(true)) == x, boost::test_tools::per_element());
  const double post[2][4] = {{-0.5, -1.5, 2.5, 4}, {1.5, -1.5, -3.5, 4}};
  check_rows<T>(vl::decoder_layer<T>(x, memory_rows<T>(), p, kHeads, options(false)), post, 0, "post-norm");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(pre_norm_reads_the_memory_with_its_own_masks, T, Types) {
  // Pre-norm, mean self- and cross-attention, FFN = 0: y_i = x_i + (mean of p_j the self mask lets
  // i see) + (b_o + mean of the memory rows the cross mask lets it see). All exact (weights ½ or ¼).
  //   no masks:                       x + (0, −1, 0, 1) + (1, 1, 1, 2): (1, 0, 3, 5), (6, 3, 4, 8)
  //   self causal:                    y₀ = x₀ + p₀ + (1, 1, 1, 2) = (0, 0, 4, 5); y₁ as above
  //   self causal, memory 2, 3 padded: y₀ = x₀ + p₀ + (2, 2, 0, 0) = (1, 1, 3, 3);
  //                                    y₁ = x₁ + (0, −1, 0, 1) + (2, 2, 0, 0) = (7, 4, 3, 6)
  //   self causal, all memory padded, b_o = (0.5, 0, 0, 0): the cross-attention gives b_o alone
  //                                   (zero weights, a zero head output): (−0.5, −1, 3, 3), (5.5, 2, 3, 6)
  const auto x = two_rows<T>();
  const auto m = memory_rows<T>();
  const auto p = decoder_params<T>(mean_attention<T>(), mean_attention<T>(), constant_ffn<T>());
  const double open[2][4] = {{1, 0, 3, 5}, {6, 3, 4, 8}};
  check_rows<T>(vl::decoder_layer<T>(x, m, p, kHeads, options(true)), open, 0, "no masks");
  vl::MhaOptions<T> causal;
  causal.causal = true;
  const double prefix[2][4] = {{0, 0, 4, 5}, {6, 3, 4, 8}};
  check_rows<T>(vl::decoder_layer<T>(x, m, p, kHeads, options(true), causal), prefix, 0, "self causal");
  vl::MhaOptions<T> padded;
  padded.key_padding_mask = xt::xarray<bool>{{false, false, true, true}};
  const double half[2][4] = {{1, 1, 3, 3}, {7, 4, 3, 6}};
  check_rows<T>(vl::decoder_layer<T>(x, m, p, kHeads, options(true), causal, padded), half, 0, "memory 2, 3 padded");
  vl::MhaOptions<T> none;
  none.key_padding_mask = xt::xarray<bool>{{true, true, true, true}};
  const auto q = decoder_params<T>(mean_attention<T>(), mean_attention<T>(kD, {T(0.5), T(0), T(0), T(0)}), constant_ffn<T>());
  const double bias_only[2][4] = {{-0.5, -1, 3, 3}, {5.5, 2, 3, 6}};
  check_rows<T>(vl::decoder_layer<T>(x, m, q, kHeads, options(true), causal, none), bias_only, 0, "all memory padded");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(post_norm_cross_attention_sits_between_norm_one_and_three, T, Types) {
  // Post-norm, silent self-attention, mean cross-attention, FFN = 0, memory with mean c = (1, −1, −1, 1):
  // LN₁(x) = p; LN₂(p + c): p₀ + c = (0, −2, 0, 2) (μ = 0, σ² = 2) → (0, −√2, 0, √2);
  // p₁ + c = (2, −2, −2, 2) (σ² = 4) → (1, −1, −1, 1) exactly; LN₃ keeps them. Error: LN₃ is
  // scale-invariant, so only the per-element rounding of LN₂'s product and LN₃'s own roundings
  // remain: ≤ ~6u = 3 eps relative of ≤ 1.42: ≤ 4.3 eps. Tolerance 8 eps absolute.
  const xt::xtensor<T, 3> m = {{{T(2), T(-2), T(-2), T(2)}, {T(0), T(0), T(0), T(0)}, {T(2), T(-2), T(-2), T(2)}, {T(0), T(0), T(0), T(0)}}};
  const auto p = decoder_params<T>(silent_attention<T>(), mean_attention<T>(), constant_ffn<T>());
  const double r = std::sqrt(2.0);
  const double want[2][4] = {{0, -r, 0, r}, {1, -1, -1, 1}};
  check_rows<T>(vl::decoder_layer<T>(two_rows<T>(), m, p, kHeads, options(false)), want, 8 * kEps<T>, "post-norm");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(nan_in_memory_spreads_through_its_batch_only, T, Types) {
  // Pre-norm, mean attentions: a NaN memory value in batch 0 enters the cross-attention's mean for
  // every target row of batch 0; batch 1 is the no-mask case above.
  xt::xtensor<T, 3> x = xt::xtensor<T, 3>::from_shape({2, 2, kD}), m = xt::xtensor<T, 3>::from_shape({2, 4, kD});
  for (std::size_t b = 0; b < 2; ++b) {
    xt::view(x, b) = xt::view(two_rows<T>(), 0);
    xt::view(m, b) = xt::view(memory_rows<T>(), 0);
  }
  m(0, 3, 0) = std::numeric_limits<T>::quiet_NaN();
  const auto y = vl::decoder_layer<T>(x, m, decoder_params<T>(mean_attention<T>(), mean_attention<T>(), constant_ffn<T>()), kHeads, options(true));
  for (std::size_t i = 0; i < 2; ++i) BOOST_TEST(std::isnan(y(0, i, 0)));
  const double open[2][4] = {{1, 0, 3, 5}, {6, 3, 4, 8}};
  check_rows<T>(xt::xtensor<T, 3>(xt::view(y, xt::range(1, 2))), open, 0, "batch 1");
}

BOOST_DATA_TEST_CASE(shapes_over_a_grid,
                     bdata::make(std::vector<std::size_t>{0, 1, 2}) * bdata::make(std::vector<std::size_t>{0, 1, 3}) *
                         bdata::make(std::vector<std::size_t>{0, 1, 4}) *
                         (bdata::make(std::vector<std::size_t>{4, 6}) ^ bdata::make(std::vector<std::size_t>{2, 3})),
                     B, Tn, S, d, heads) {
  // torch's initial parameters (d_ff = 5): tgt (B, Tn, d), memory (B, S, d) → (B, Tn, d), finite.
  // With S = 0 no memory key exists and the cross-attention gives its b_o.
  vl::torch_rng::Generator gen(11);
  const auto p = vl::torch_rng::decoder_layer_init<double>(gen, d, heads, 5);
  xt::xtensor<double, 3> x = xt::xtensor<double, 3>::from_shape({B, Tn, d}), m = xt::xtensor<double, 3>::from_shape({B, S, d});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = std::sin(double(i) + 0.5);
  for (std::size_t i = 0; i < m.size(); ++i) m.data()[i] = std::cos(double(i));
  vl::MhaOptions<double> causal;
  causal.causal = true;
  for (const bool norm_first : {false, true}) {
    const auto y = vl::decoder_layer<double>(x, m, p, heads, options(norm_first, vl::Activation::gelu, 1e-5), causal);
    BOOST_TEST(y.shape() == x.shape(), boost::test_tools::per_element());
    BOOST_TEST(all_finite(y));
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(stack_applies_the_layers_in_turn_over_one_memory, T, Types) {
  // No layers: tgt. Two mean-attention layers: the second reads the first's output and the same memory.
  const auto x = two_rows<T>();
  const auto m = memory_rows<T>();
  const auto p = decoder_params<T>(mean_attention<T>(), mean_attention<T>(), constant_ffn<T>());
  BOOST_TEST(vl::decoder_stack<T>(x, m, {}, kHeads, options(true)) == x, boost::test_tools::per_element());
  BOOST_TEST(vl::decoder_stack<T>(x, m, {p, p}, kHeads, options(true)) ==
                 vl::decoder_layer<T>(vl::decoder_layer<T>(x, m, p, kHeads, options(true)), m, p, kHeads, options(true)),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(shift_right_by_hand, T, Types) {
  // target (2, 3, 2), start (9, 9): row 0 = start, row i = target row i − 1, the last row dropped.
  const xt::xtensor<T, 3> target = {{{T(1), T(2)}, {T(3), T(4)}, {T(5), T(6)}}, {{T(7), T(8)}, {T(9), T(10)}, {T(11), T(12)}}};
  const xt::xtensor<T, 1> start = {T(-1), T(-2)};
  const xt::xtensor<T, 3> want = {{{T(-1), T(-2)}, {T(1), T(2)}, {T(3), T(4)}}, {{T(-1), T(-2)}, {T(7), T(8)}, {T(9), T(10)}}};
  BOOST_TEST(vl::shift_right<T>(target, start) == want, boost::test_tools::per_element());
  // One row: the start alone; no rows: nothing.
  const xt::xtensor<T, 3> one = {{{T(1), T(2)}}};
  const xt::xtensor<T, 3> start_only = {{{T(-1), T(-2)}}};
  BOOST_TEST(vl::shift_right<T>(one, start) == start_only, boost::test_tools::per_element());
  const xt::xtensor<T, 3> empty = xt::zeros<T>({std::size_t(2), std::size_t(0), std::size_t(2)});
  BOOST_TEST(vl::shift_right<T>(empty, start).shape() == empty.shape(), boost::test_tools::per_element());
  BOOST_CHECK_THROW(vl::shift_right<T>(target, xt::xtensor<T, 1>{T(1), T(2), T(3)}), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()
