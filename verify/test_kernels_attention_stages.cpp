#include <boost/test/unit_test.hpp>

// The plain kernel's ONNX options (kernels/reference/attention.hpp): sliding windows, per-batch key
// lengths, the KV-cache query position, each stage of the score pipeline, and the storage
// rounding that emulates float16 — each against the same thing spelled out by hand.
#include <cmath>
#include <limits>
#include <random>

#include <xtensor/xview.hpp>

#include "random_tensors.hpp"
#include "kernels/reference/attention.hpp"
#include "numeric/float16.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_attention_stages).
BOOST_AUTO_TEST_SUITE(test_kernels_attention_stages)

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using vl::verify::normal4;

template <class A, class B>
double max_abs_diff(const A& a, const B& b) {
  return xt::amax(xt::abs(xt::cast<double>(a) - xt::cast<double>(b)))();
}

// allowed[b, 0, i, j] by the rule of attention.hpp, written out: query i at p = i + offset_b
// sees j iff j < L_b, j ≤ p (causal), p − left ≤ j, j ≤ p + right.
xt::xarray<bool> band(std::size_t B, std::size_t Sq, std::size_t Sk, const std::vector<std::ptrdiff_t>& offset,
                      const std::vector<std::ptrdiff_t>& L, bool causal, std::ptrdiff_t left, std::ptrdiff_t right) {
  xt::xarray<bool> a = xt::zeros<bool>({B, std::size_t(1), Sq, Sk});
  for (std::size_t b = 0; b < B; ++b)
    for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(Sq); ++i)
      for (std::ptrdiff_t j = 0; j < std::ptrdiff_t(Sk); ++j) {
        const std::ptrdiff_t p = i + offset[b];
        a(b, 0, i, j) = j < L[b] && (!causal || j <= p) && (left < 0 || j >= p - left) && (right < 0 || j <= p + right);
      }
  return a;
}

}  // namespace

BOOST_AUTO_TEST_CASE(windows_and_key_lengths_equal_their_boolean_masks) {
  std::mt19937_64 g(5);
  const std::size_t B = 2, Sq = 5, Sk = 9;
  const auto q = normal4(g, {B, 2, Sq, 4}), k = normal4(g, {B, 2, Sk, 4}), v = normal4(g, {B, 2, Sk, 3});
  struct Want {
    bool causal;
    vl::CausalAlignment align;
    std::ptrdiff_t left, right;
    std::vector<std::size_t> lengths;
    std::optional<std::ptrdiff_t> first;
  };
  using A = vl::CausalAlignment;
  for (const Want& w : {Want{true, A::top_left, 2, -1, {}, {}}, Want{false, A::top_left, 1, 2, {}, {}},
                        Want{true, A::bottom_right, 2, -1, {}, {}}, Want{true, A::bottom_right, -1, -1, {7, 3}, {}},
                        Want{true, A::bottom_right, 1, -1, {9, 6}, {}}, Want{false, A::bottom_right, -1, 0, {4, 8}, {}},
                        Want{true, A::top_left, 3, -1, {}, 2}}) {
    vl::AttentionOptions<double> o;
    o.causal = w.causal, o.alignment = w.align, o.left_window = w.left, o.right_window = w.right, o.first_query = w.first;
    std::vector<std::ptrdiff_t> L(B, Sk), offset(B, 0);
    if (!w.lengths.empty()) {
      o.kv_lengths = w.lengths;
      for (std::size_t b = 0; b < B; ++b) L[b] = std::ptrdiff_t(w.lengths[b]);
    }
    for (std::size_t b = 0; b < B; ++b)
      offset[b] = w.first ? *w.first : w.align == A::bottom_right ? L[b] - std::ptrdiff_t(Sq) : 0;
    vl::AttentionOptions<double> by_hand;
    by_hand.allowed = band(B, Sq, Sk, offset, L, w.causal, w.left, w.right);
    const auto r = vl::attention<double>(q, k, v, o), e = vl::attention<double>(q, k, v, by_hand);
    BOOST_TEST(max_abs_diff(r.output, e.output) == 0.0, "left " << w.left << " right " << w.right << " causal " << w.causal);
  }
  // A key length beyond Sk, or one per batch missing, is refused.
  vl::AttentionOptions<double> bad;
  bad.kv_lengths = std::vector<std::size_t>{10, 1};
  BOOST_CHECK_THROW(vl::attention<double>(q, k, v, bad), std::invalid_argument);
  bad.kv_lengths = std::vector<std::size_t>{1};
  BOOST_CHECK_THROW(vl::attention<double>(q, k, v, bad), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_window_hides_keys_far_back) {
  // left window 1, causal: query i sees keys i − 1 and i only; V = key index → mean (2i − 1)/2.
  const xt::xtensor<double, 2> q = xt::zeros<double>({4, 2}), k = xt::zeros<double>({4, 2});
  const xt::xtensor<double, 2> v = {{0.0}, {1.0}, {2.0}, {3.0}};
  const auto r = vl::attention<double>(q, k, v, {.causal = true, .left_window = 1});
  BOOST_TEST(r.output(0, 0) == 0.0);
  for (std::size_t i = 1; i < 4; ++i) BOOST_TEST(r.output(i, 0) == double(i) - 0.5, boost::test_tools::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(each_score_stage_is_the_pipeline_written_out) {
  std::mt19937_64 g(9);
  const auto q = normal4(g, {1, 2, 3, 4}), k = normal4(g, {1, 1, 5, 4}), v = normal4(g, {1, 1, 5, 2});
  xt::xarray<double> bias = xt::xarray<double>(normal4(g, {1, 1, 3, 5}));
  bias(0, 0, 1, 2) = -kInf;
  const double scale = 0.7, cap = 1.5;
  vl::AttentionOptions<double> o{.scale = scale, .causal = true, .bias = bias, .softcap = cap, .return_weights = true};
  for (int stage = 0; stage <= 3; ++stage) {
    o.return_scores = static_cast<vl::ScoreStage>(stage);
    const auto r = vl::attention<double>(q, k, v, o);
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 5; ++j) {
          double s = 0;
          for (std::size_t d = 0; d < 4; ++d) s += q(0, h, i, d) * k(0, 0, j, d);
          s *= scale;
          if (stage >= 1) s = cap * std::tanh(s / cap);
          if (stage >= 2) s += (j > i ? -kInf : bias(0, 0, i, j));
          const double want = stage == 3 ? r.weights(0, h, i, j) : s;
          const double got = r.scores(0, h, i, j);
          if (std::isinf(want)) {
            BOOST_TEST(got == want);
          } else {
            BOOST_TEST(std::abs(got - want) < 1e-13, "stage " << stage << " (" << h << ", " << i << ", " << j << ")");
          }
        }
  }
}

BOOST_AUTO_TEST_CASE(storage_rounding_stores_halves_up_to_its_stage) {
  std::mt19937_64 g(3);
  const auto q = normal4(g, {1, 1, 4, 8}), k = normal4(g, {1, 1, 6, 8}), v = normal4(g, {1, 1, 6, 8});
  auto is_half = [](double x) { return std::isinf(x) || vl::round_to_half(x) == x; };
  for (int through = 0; through <= 3; ++through) {
    vl::AttentionOptions<double> o{.causal = true, .softcap = 2.0, .return_weights = true};
    o.round = vl::round_to_half;
    o.round_through = static_cast<vl::ScoreStage>(through);
    o.return_scores = through == 3 ? vl::ScoreStage::masked : static_cast<vl::ScoreStage>(through);
    const auto r = vl::attention<double>(q, k, v, o);
    BOOST_TEST(std::all_of(r.scores.begin(), r.scores.end(), is_half), "stage " << through);
    const bool weights_half = std::all_of(r.weights.begin(), r.weights.end(), is_half);
    BOOST_TEST(weights_half == (through == 3), "weights rounded only through the softmax");
    // Rounding moves the result by float16 round-off, no more.
    const auto exact = vl::attention<double>(q, k, v, {.causal = true, .softcap = 2.0});
    BOOST_TEST(max_abs_diff(r.output, exact.output) < 40 * vl::kHalfUnitRoundoff);
    BOOST_TEST(max_abs_diff(r.output, exact.output) > 0.0);
  }
}

BOOST_AUTO_TEST_SUITE_END()  // test_kernels_attention_stages
