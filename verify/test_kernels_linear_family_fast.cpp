#include <boost/test/unit_test.hpp>

// The fast chunked linear family (src/kernels/fused/linear_family_fast.hpp) against the reference's
// chunked and recurrent forms (kernels/reference/linear_family_heads.hpp), which the linear-family
// lesson's claims judge against ONNX's definition: every rule, GQA groups, n that no chunk divides,
// chunks of 1 token to longer than n, d_k ≠ d_v, a past state; float64 to round-off, float32 within
// its bound of the float64 result; the same bits on 1, 2 and 3 threads; what it refuses.
#include <cmath>
#include <cstddef>
#include <random>
#include <stdexcept>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/fused/linear_family_fast.hpp"
#include "kernels/reference/linear_family_heads.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_linear_family_fast).
BOOST_AUTO_TEST_SUITE(test_kernels_linear_family_fast)

namespace {

namespace bdata = boost::unit_test::data;

struct FamilyShape {
  std::size_t B, Hq, Hkv, n, dk, dv, chunk;
};
std::ostream& operator<<(std::ostream& os, const FamilyShape& s) {
  return os << "B=" << s.B << " Hq=" << s.Hq << " Hkv=" << s.Hkv << " n=" << s.n << " dk=" << s.dk << " dv=" << s.dv << " chunk=" << s.chunk;
}
const FamilyShape kFamilyShapes[] = {{1, 1, 1, 37, 8, 8, 8},  {2, 4, 2, 23, 5, 7, 4},  {1, 3, 1, 16, 6, 3, 1},
                         {1, 2, 2, 9, 4, 4, 64},  {1, 1, 1, 130, 16, 16, 64}, {2, 2, 1, 1, 3, 2, 5},
                         // more windows of chunks than the kernel keeps at once (8 chunks each, 3 kept)
                         {1, 2, 1, 100, 4, 5, 2}, {2, 2, 2, 70, 3, 4, 1}};
const vl::UpdateRule kFastRules[] = {vl::UpdateRule::linear, vl::UpdateRule::gated, vl::UpdateRule::delta, vl::UpdateRule::gated_delta};

// Unit keys and β in (0, 1) (the delta rule's state then stays bounded), log-decays ≤ 0, as the
// lesson's inputs; a past state of normals when `past`.
vl::FamilyInputs<double> family_inputs(const FamilyShape& s, unsigned seed, bool past) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  vl::FamilyInputs<double> in;
  in.q = xt::xtensor<double, 4>::from_shape({s.B, s.Hq, s.n, s.dk});
  in.k = xt::xtensor<double, 4>::from_shape({s.B, s.Hkv, s.n, s.dk});
  in.v = xt::xtensor<double, 4>::from_shape({s.B, s.Hkv, s.n, s.dv});
  for (auto* x : {&in.q, &in.k, &in.v})
    for (auto& e : *x) e = normal(gen);
  for (std::size_t b = 0; b < s.B; ++b)
    for (std::size_t h = 0; h < s.Hkv; ++h)
      for (std::size_t t = 0; t < s.n; ++t) {
        auto key = xt::view(in.k, b, h, t);
        key /= std::sqrt(xt::sum(key * key)());
      }
  in.g = xt::xtensor<double, 4>::from_shape({s.B, s.Hkv, s.n, 1});
  for (auto& e : in.g) e = -std::log1p(std::exp(-(normal(gen) + 2)));
  in.beta = xt::xtensor<double, 3>::from_shape({s.B, s.Hkv, s.n});
  for (auto& e : in.beta) e = 1 / (1 + std::exp(-normal(gen)));
  if (past) {
    xt::xtensor<double, 4> p = xt::xtensor<double, 4>::from_shape({s.B, s.Hkv, s.dk, s.dv});
    for (auto& e : p) e = normal(gen);
    in.past = p;
  }
  return in;
}

vl::FamilyInputs<float> family_as_float(const vl::FamilyInputs<double>& in) {
  vl::FamilyInputs<float> f;
  f.q = xt::cast<float>(in.q), f.k = xt::cast<float>(in.k), f.v = xt::cast<float>(in.v);
  f.g = xt::cast<float>(in.g), f.beta = xt::cast<float>(in.beta);
  if (in.past) f.past = xt::xtensor<float, 4>(xt::cast<float>(*in.past));
  return f;
}

double largest_abs(const xt::xtensor<double, 4>& x) { return xt::amax(xt::abs(x))(); }

}  // namespace

BOOST_DATA_TEST_CASE(matches_the_reference, bdata::make(kFamilyShapes) * bdata::xrange(4) * bdata::xrange(2), shape, rule_index, past) {
  const vl::UpdateRule rule = kFastRules[rule_index];
  const auto in = family_inputs(shape, 31 + unsigned(shape.n) + 7 * unsigned(rule), past == 1);
  const vl::FamilyOptions o{rule, vl::FamilyForm::chunked, shape.chunk, {}};
  const auto want = vl::linear_family<double>(in, o);
  const auto recurrent = vl::linear_family<double>(in, {rule, vl::FamilyForm::recurrent, shape.chunk, {}});
  const auto got = vl::linear_family_chunked_fast<double>(in, o, 1);
  BOOST_REQUIRE(got.o.shape() == want.o.shape());
  BOOST_REQUIRE(got.state.shape() == want.state.shape());
  // Sums of up to n·(d_k + c) terms, each at most max|o|: γ ≈ 130·80·1.1·10⁻¹⁶ ≈ 1.2·10⁻¹²
  // relative in the largest case; 10⁻¹¹ is that with a margin of 8.
  const double scale_o = std::max(1.0, largest_abs(want.o)), scale_s = std::max(1.0, largest_abs(want.state));
  BOOST_TEST(largest_abs(got.o - want.o) <= 1e-11 * scale_o);
  BOOST_TEST(largest_abs(got.state - want.state) <= 1e-11 * scale_s);
  BOOST_TEST(largest_abs(got.o - recurrent.o) <= 1e-11 * scale_o);  // and the recurrence itself, token by token
  // Threads change nothing: 2 and 3 give the bits of 1.
  for (std::size_t threads : {2, 3}) {
    const auto again = vl::linear_family_chunked_fast<double>(in, o, threads);
    BOOST_TEST((again.o == got.o));
    BOOST_TEST((again.state == got.state));
  }
  // float32 against the float64 reference: the lesson's float32 bound (specs/linear_family.md,
  // forms-agree's tolerance-float32): each output a sum of at most n·d terms no larger than the
  // largest output, so at most 2·n·d·u relative, d = max(d_k, d_v), u = 2⁻²⁴ (seen: ~10⁻⁶).
  const double bound = 2.0 * double(shape.n) * double(std::max(shape.dk, shape.dv)) * std::ldexp(1.0, -24);
  const auto f32 = vl::linear_family_chunked_fast<float>(family_as_float(in), o);
  BOOST_TEST(largest_abs(xt::cast<double>(f32.o) - want.o) <= bound * scale_o);
  BOOST_TEST(largest_abs(xt::cast<double>(f32.state) - want.state) <= bound * scale_s);
}

BOOST_AUTO_TEST_CASE(an_explicit_scale_and_empty_widths) {
  const FamilyShape s{2, 4, 2, 19, 5, 3, 4};
  const auto in = family_inputs(s, 12, true);
  for (vl::UpdateRule rule : kFastRules) {
    const vl::FamilyOptions o{rule, vl::FamilyForm::chunked, 4, 0.3};
    const auto want = vl::linear_family<double>(in, o), got = vl::linear_family_chunked_fast<double>(in, o);
    BOOST_TEST(largest_abs(got.o - want.o) <= 1e-11 * std::max(1.0, largest_abs(want.o)));
  }
  // No value width: nothing to return, as the reference. No key width: refused by both (the
  // reference read a decay column that was not there before it said so).
  const auto no_values = family_inputs(FamilyShape{1, 2, 1, 6, 3, 0, 4}, 13, true);
  const vl::FamilyOptions o{vl::UpdateRule::gated_delta, vl::FamilyForm::chunked, 4, 1.0};
  const auto want = vl::linear_family<double>(no_values, o), got = vl::linear_family_chunked_fast<double>(no_values, o);
  BOOST_TEST((got.o == want.o));
  BOOST_TEST((got.state == want.state));
  const auto no_keys = family_inputs(FamilyShape{1, 2, 1, 6, 0, 3, 4}, 13, false);
  BOOST_CHECK_THROW(vl::linear_family<double>(no_keys, o), std::invalid_argument);
  BOOST_CHECK_THROW(vl::linear_family_chunked_fast<double>(no_keys, o), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(refusals) {
  const FamilyShape s{1, 1, 1, 8, 4, 4, 4};
  auto in = family_inputs(s, 5, false);
  BOOST_CHECK_THROW(vl::linear_family_chunked_fast<double>(in, {vl::UpdateRule::gated, vl::FamilyForm::recurrent, 4, {}}), std::invalid_argument);
  BOOST_CHECK_THROW(vl::linear_family_chunked_fast<double>(in, {vl::UpdateRule::gated, vl::FamilyForm::chunked, 0, {}}), std::invalid_argument);
  in.g(0, 0, 3, 0) = 0.25;  // a growing state: the reference's
  BOOST_CHECK_THROW(vl::linear_family_chunked_fast<double>(in, {vl::UpdateRule::gated, vl::FamilyForm::chunked, 4, {}}), std::invalid_argument);
  in.g(0, 0, 3, 0) = std::nan("");
  BOOST_CHECK_THROW(vl::linear_family_chunked_fast<double>(in, {vl::UpdateRule::gated_delta, vl::FamilyForm::chunked, 4, {}}), std::invalid_argument);
  in.g = xt::zeros<double>({std::size_t(1), std::size_t(1), std::size_t(8), std::size_t(4)});  // per key dimension
  BOOST_CHECK_THROW(vl::linear_family_chunked_fast<double>(in, {vl::UpdateRule::gated, vl::FamilyForm::chunked, 4, {}}), std::invalid_argument);
  // ... which the ungated rules never read.
  BOOST_CHECK_NO_THROW(vl::linear_family_chunked_fast<double>(in, {vl::UpdateRule::delta, vl::FamilyForm::chunked, 4, {}}));
  in.v = xt::zeros<double>({std::size_t(1), std::size_t(1), std::size_t(7), std::size_t(4)});
  BOOST_CHECK_THROW(vl::linear_family_chunked_fast<double>(in, {vl::UpdateRule::linear, vl::FamilyForm::chunked, 4, {}}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(no_tokens_keeps_the_past_state) {
  const FamilyShape s{1, 2, 1, 0, 3, 2, 4};
  const auto in = family_inputs(s, 6, true);
  const auto r = vl::linear_family_chunked_fast<double>(in, {vl::UpdateRule::gated_delta, vl::FamilyForm::chunked, 4, {}});
  BOOST_TEST(r.o.size() == 0u);
  BOOST_TEST((r.state == *in.past));
}

BOOST_AUTO_TEST_CASE(a_nan_stays_in_its_head) {
  // A NaN in head 0's values reaches head 0's outputs from its token on, and nothing of head 1.
  const FamilyShape s{1, 2, 2, 12, 4, 4, 4};
  auto in = family_inputs(s, 7, false);
  in.v(0, 0, 5, 1) = std::nan("");
  const auto r = vl::linear_family_chunked_fast<double>(in, {vl::UpdateRule::gated_delta, vl::FamilyForm::chunked, 4, {}});
  BOOST_TEST(std::isnan(r.o(0, 0, 11, 1)));
  BOOST_TEST(!std::isnan(r.o(0, 0, 3, 1)));  // tokens before it, in an earlier chunk
  BOOST_TEST(xt::all(xt::isfinite(xt::view(r.o, 0, 1))));
  BOOST_TEST(xt::all(xt::isfinite(xt::view(r.state, 0, 1))));
}

BOOST_AUTO_TEST_SUITE_END()
