#include <boost/test/unit_test.hpp>

// The fused multi-head attention (src/kernels/fused/multi_head_attention_fused.hpp) against the
// reference module (kernels/reference/multi_head_attention.hpp), which the lesson's
// attention.mha-matches-torch claim judges against torch: self- and cross-attention, every mask the
// module takes (attn_mask of both ranks, attn_bias, key_padding_mask, causal in both alignments),
// head counts 1 … d, float64 to round-off and float32 within its bound of the float64 result. And
// its affine map Y = X Wᵀ + b alone: by hand, empty shapes, a NaN staying in its row. It refuses
// the per-head weights it never forms.
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <stdexcept>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/fused/multi_head_attention_fused.hpp"
#include "kernels/reference/multi_head_attention.hpp"
#include "random_tensors.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_multi_head_attention_fused).
BOOST_AUTO_TEST_SUITE(test_kernels_multi_head_attention_fused)

namespace {

namespace bdata = boost::unit_test::data;

using vl::verify::normal;

vl::MhaParameters<double> mha_parameters(std::mt19937_64& g, std::size_t d) {
  vl::MhaParameters<double> p;
  p.in_proj_weight = normal<double, 2>(g, {3 * d, d}, 1 / std::sqrt(double(d)));
  p.in_proj_bias = normal<double, 1>(g, {3 * d});
  p.out_proj_weight = normal<double, 2>(g, {d, d}, 1 / std::sqrt(double(d)));
  p.out_proj_bias = normal<double, 1>(g, {d});
  return p;
}

template <class T>
vl::MhaParameters<T> cast(const vl::MhaParameters<double>& p) {
  vl::MhaParameters<T> c;
  c.in_proj_weight = xt::cast<T>(p.in_proj_weight);
  c.in_proj_bias = xt::cast<T>(p.in_proj_bias);
  c.out_proj_weight = xt::cast<T>(p.out_proj_weight);
  c.out_proj_bias = xt::cast<T>(p.out_proj_bias);
  return c;
}

// The masks of one case: 0 none, 1 attn_mask (Sq, Sk), 2 attn_mask (B·H, Sq, Sk), 3 attn_bias,
// 4 key_padding_mask, 5 causal top-left, 6 causal bottom-right with key padding.
template <class T>
vl::MhaOptions<T> mha_options(std::mt19937_64& g, int kind, std::size_t B, std::size_t H, std::size_t sq, std::size_t sk) {
  vl::MhaOptions<T> o;
  o.need_weights = false;
  std::bernoulli_distribution hide(0.3);
  auto blocked = [&](std::vector<std::size_t> shape) {
    xt::xarray<bool> m = xt::xarray<bool>::from_shape(shape);
    for (auto& e : m) e = hide(g);
    return m;
  };
  if (kind == 1) o.attn_mask = blocked({sq, sk});
  if (kind == 2) o.attn_mask = blocked({B * H, sq, sk});
  if (kind == 3) {
    xt::xarray<T> bias = xt::cast<T>(normal<double, 2>(g, {sq, sk}));
    bias(0, 0) = -std::numeric_limits<T>::infinity();
    o.attn_bias = bias;
  }
  if (kind == 4 || kind == 6) o.key_padding_mask = blocked({B, sk});
  if (kind == 5 || kind == 6) o.causal = true;
  if (kind == 6) o.alignment = vl::CausalAlignment::bottom_right;
  return o;
}

struct MhaShape {
  std::size_t B, sq, sk, d, H;
};
std::ostream& operator<<(std::ostream& os, const MhaShape& s) {
  return os << "B=" << s.B << " Sq=" << s.sq << " Sk=" << s.sk << " d=" << s.d << " H=" << s.H;
}
// Self-attention (Sq = Sk) and cross-attention, head sizes 1 … 16 (none a vector width's multiple
// but 8 and 16), one row, one key.
const MhaShape kMhaShapes[] = {{1, 5, 5, 8, 2}, {2, 7, 7, 12, 3}, {2, 3, 9, 6, 6}, {1, 1, 1, 4, 1}, {1, 17, 4, 16, 1}, {2, 33, 33, 24, 4}};

}  // namespace

BOOST_DATA_TEST_CASE(matches_the_reference_module, bdata::make(kMhaShapes) * bdata::xrange(7), shape, kind) {
  std::mt19937_64 g(100 + 7 * shape.sq + kind);
  const auto p = mha_parameters(g, shape.d);
  const auto query = normal<double, 3>(g, {shape.B, shape.sq, shape.d});
  const auto key = shape.sq == shape.sk ? query : normal<double, 3>(g, {shape.B, shape.sk, shape.d});
  const auto o = mha_options<double>(g, kind, shape.B, shape.H, shape.sq, shape.sk);
  const auto want = vl::multi_head_attention<double>(query, key, key, p, shape.H, o).output;
  const auto got = vl::multi_head_attention_fused<double>(query, key, key, p, shape.H, o);
  BOOST_REQUIRE(got.shape() == want.shape());
  // |y| ≤ ~10 (unit biases, normal inputs). Each output goes through three chains of at most
  // d = 24 multiply-adds (a projection, the head's weighted sum, the output projection) and a
  // softmax: ~80 roundings of relative size u, so |error| ≲ 80·u·10. float64: 80·1.1·10⁻¹⁶·10 ≈
  // 10⁻¹³ (1e-12 leaves a margin of 10).
  BOOST_TEST(xt::amax(xt::abs(got - want))() <= 1e-12);
  // float32 against the float64 module: the same ~80 roundings at u = 2⁻²⁴ ≈ 6·10⁻⁸, the inputs'
  // own rounding to float32 (one each, carried through three products: ~3 more) and the vector
  // exp's 2 floats: 85·6·10⁻⁸·10 ≈ 5·10⁻⁵.
  const auto p32 = cast<float>(p);
  vl::MhaOptions<float> o32;
  o32.need_weights = false;
  o32.causal = o.causal;
  o32.alignment = o.alignment;
  o32.attn_mask = o.attn_mask;
  o32.key_padding_mask = o.key_padding_mask;
  if (o.attn_bias) o32.attn_bias = xt::xarray<float>(xt::cast<float>(*o.attn_bias));
  const xt::xtensor<float, 3> q32 = xt::cast<float>(query), k32 = xt::cast<float>(key);
  const auto got32 = vl::multi_head_attention_fused<float>(q32, k32, k32, p32, shape.H, o32);
  BOOST_TEST(xt::amax(xt::abs(xt::cast<double>(got32) - want))() <= 5e-5);
}

BOOST_AUTO_TEST_CASE(refuses_the_weights_and_what_the_module_refuses) {
  std::mt19937_64 g(7);
  const auto p = mha_parameters(g, 6);
  const auto x = normal<double, 3>(g, {1, 3, 6});
  vl::MhaOptions<double> o;  // need_weights defaults to true: the module's default
  BOOST_CHECK_THROW(vl::multi_head_attention_fused<double>(x, x, x, p, 2, o), std::invalid_argument);
  o.need_weights = false;
  BOOST_CHECK_THROW(vl::multi_head_attention_fused<double>(x, x, x, p, 4, o), std::invalid_argument);  // 4 heads do not divide d = 6
  BOOST_CHECK_THROW(vl::multi_head_attention_fused<double>(x, x, x, p, 0, o), std::invalid_argument);
  o.attn_mask = xt::xarray<bool>::from_shape({2, 2});
  BOOST_CHECK_THROW(vl::multi_head_attention_fused<double>(x, x, x, p, 2, o), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_query_that_sees_no_key_gives_the_output_bias) {
  // The module's convention (multi_head_attention.hpp): zero weights, a zero head output, so that
  // row's output is b_o; the other rows are the reference's.
  std::mt19937_64 g(8);
  const auto p = mha_parameters(g, 8);
  const auto x = normal<double, 3>(g, {1, 4, 8});
  vl::MhaOptions<double> o;
  o.need_weights = false;
  xt::xarray<bool> blocked = xt::zeros<bool>({std::size_t(4), std::size_t(4)});
  xt::view(blocked, 2, xt::all()) = true;
  o.attn_mask = blocked;
  const auto got = vl::multi_head_attention_fused<double>(x, x, x, p, 2, o);
  for (std::size_t j = 0; j < 8; ++j) BOOST_TEST(got(0, 2, j) == p.out_proj_bias(j));
  BOOST_TEST(xt::amax(xt::abs(got - vl::multi_head_attention<double>(x, x, x, p, 2, o).output))() <= 1e-12);
}

BOOST_AUTO_TEST_CASE(affine_map_by_hand_empty_and_nan) {
  // Y = X Wᵀ + b: [[1, 2], [3, 4]] · [[1, 0], [1, 1], [0, 2]]ᵀ + [10, 20, 30].
  const xt::xtensor<double, 2> x = {{1, 2}, {3, 4}}, w = {{1, 0}, {1, 1}, {0, 2}};
  const xt::xtensor<double, 1> b = {10, 20, 30};
  const xt::xtensor<double, 2> want = {{11, 23, 34}, {13, 27, 38}};
  BOOST_TEST((vl::affine_block_gemm<double>(x, w, b) == want));
  const xt::xtensor<float, 2> xf = xt::cast<float>(x), wf = xt::cast<float>(w);
  const xt::xtensor<float, 1> bf = xt::cast<float>(b);
  const xt::xtensor<float, 2> want_f = xt::cast<float>(want);
  BOOST_TEST((vl::affine_block_gemm<float>(xf, wf, bf) == want_f));
  // No rows; no inputs (Y = b in every row); no outputs.
  BOOST_TEST(vl::affine_block_gemm<double>(xt::xtensor<double, 2>::from_shape({0, 2}), w, b).shape(0) == 0u);
  const auto only_bias = vl::affine_block_gemm<double>(xt::xtensor<double, 2>::from_shape({2, 0}), xt::xtensor<double, 2>::from_shape({3, 0}), b);
  const xt::xtensor<double, 2> bias_rows = {{10, 20, 30}, {10, 20, 30}};
  BOOST_TEST((only_bias == bias_rows));
  BOOST_TEST(vl::affine_block_gemm<double>(x, xt::xtensor<double, 2>::from_shape({0, 2}), xt::xtensor<double, 1>::from_shape({0})).size() == 0u);
  // A NaN in one input row makes that row NaN and leaves the other exact.
  xt::xtensor<double, 2> xn = x;
  xn(0, 1) = std::nan("");
  const auto yn = vl::affine_block_gemm<double>(xn, w, b);
  BOOST_TEST(std::isnan(yn(0, 0)));
  BOOST_TEST(std::isnan(yn(0, 1)));
  BOOST_TEST(std::isnan(yn(0, 2)));
  BOOST_TEST((xt::view(yn, 1) == xt::view(want, 1)));
  // Shapes that do not agree.
  BOOST_CHECK_THROW(vl::affine_block_gemm<double>(x, xt::xtensor<double, 2>::from_shape({3, 3}), b), std::invalid_argument);
  BOOST_CHECK_THROW(vl::affine_block_gemm<double>(x, w, xt::xtensor<double, 1>::from_shape({2})), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
