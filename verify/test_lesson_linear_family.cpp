// Verification program of lesson linear-family (specs/linear_family.md): every claim with its
// negative controls, traceability; and direct cases of the family's kernels small enough to
// check by hand.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "kernels/reference/linear_family_heads.hpp"
#include "lesson_tests.hpp"
#include "lessons/linear_family/linear_family.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_lesson_linear_family).
BOOST_AUTO_TEST_SUITE(test_lesson_linear_family)

namespace {
struct Register {
  Register() { vl::verify::register_lesson(vl::lessons::linear_family::lesson()); }
} register_linear_family;

using vl::FamilyForm;
using vl::UpdateRule;

// One head, d_k = 2, d_v = 1: q, k, v given row by row, decay per head, β per token.
vl::FamilyInputs<double> one_head(const xt::xtensor<double, 2>& q, const xt::xtensor<double, 2>& k, const xt::xtensor<double, 2>& v,
                                  const xt::xtensor<double, 1>& g, const xt::xtensor<double, 1>& beta) {
  const std::size_t n = q.shape(0);
  vl::FamilyInputs<double> in;
  in.q = xt::reshape_view(q, std::array<std::size_t, 4>{1, 1, n, q.shape(1)});
  in.k = xt::reshape_view(k, std::array<std::size_t, 4>{1, 1, n, k.shape(1)});
  in.v = xt::reshape_view(v, std::array<std::size_t, 4>{1, 1, n, v.shape(1)});
  in.g = xt::reshape_view(g, std::array<std::size_t, 4>{1, 1, n, 1});
  in.beta = xt::reshape_view(beta, std::array<std::size_t, 3>{1, 1, n});
  return in;
}

const FamilyForm kForms[] = {FamilyForm::recurrent, FamilyForm::parallel, FamilyForm::chunked};
}  // namespace

BOOST_AUTO_TEST_SUITE(kernels)

BOOST_AUTO_TEST_CASE(two_tokens_by_hand) {
  // k_0 = k_1 = e_0, v = (2, 4), q = e_0, scale 1, g = log ½, β = ½, all forms and chunk sizes 1, 2.
  //   linear:      S = 2 then 6: o = (2, 6)
  //   gated:       S = 2 then ½·2 + 4 = 5: o = (2, 5)
  //   delta:       u_0 = ½(2 − 0) = 1, S = 1; u_1 = ½(4 − 1) = 1.5, S = 2.5: o = (1, 2.5)
  //   gated_delta: u_0 = 1, S = 1; S = ½, u_1 = ½(4 − ½) = 1.75, S = 2.25: o = (1, 2.25)
  const xt::xtensor<double, 2> e0 = {{1.0, 0.0}, {1.0, 0.0}}, v = {{2.0}, {4.0}};
  const auto in = one_head(e0, e0, v, {std::log(0.5), std::log(0.5)}, {0.5, 0.5});
  const std::pair<UpdateRule, std::array<double, 2>> expected[] = {{UpdateRule::linear, {2, 6}},
                                                                   {UpdateRule::gated, {2, 5}},
                                                                   {UpdateRule::delta, {1, 2.5}},
                                                                   {UpdateRule::gated_delta, {1, 2.25}}};
  for (const auto& [rule, o] : expected)
    for (FamilyForm form : kForms)
      for (std::size_t chunk : {1, 2}) {
        const auto r = vl::linear_family<double>(in, {rule, form, chunk, 1.0});
        const std::string at = std::string(vl::to_string(rule)) + " " + vl::to_string(form) + " c=" + std::to_string(chunk);
        BOOST_TEST(std::abs(r.o(0, 0, 0, 0) - o[0]) < 1e-14, at);
        BOOST_TEST(std::abs(r.o(0, 0, 1, 0) - o[1]) < 1e-14, at);
        BOOST_TEST(std::abs(r.state(0, 0, 0, 0) - o[1]) < 1e-14, at);
        BOOST_TEST(r.state(0, 0, 1, 0) == 0.0, at);
      }
}

BOOST_AUTO_TEST_CASE(default_scale_is_one_over_root_dk) {
  const xt::xtensor<double, 2> q = {{1.0, 1.0, 1.0, 1.0}}, k = {{1.0, 0.0, 0.0, 0.0}}, v = {{3.0}};
  const auto in = one_head(q, k, v, {0.0}, {1.0});
  for (const auto& scale : {std::optional<double>{}, std::optional<double>{0.0}}) {
    const auto r = vl::linear_family<double>(in, {UpdateRule::linear, FamilyForm::recurrent, 1, scale});
    BOOST_TEST(r.o(0, 0, 0, 0) == 1.5);  // (1/√4)·(q·k)·v = ½·1·3
  }
}

BOOST_AUTO_TEST_CASE(bad_shapes_and_chunk_are_refused) {
  const xt::xtensor<double, 2> q = {{1.0, 0.0}}, v = {{1.0}};
  auto in = one_head(q, q, v, {0.0}, {1.0});
  BOOST_CHECK_THROW(vl::linear_family<double>(in, {UpdateRule::linear, FamilyForm::chunked, 0, {}}), std::invalid_argument);
  auto wrong_past = in;
  wrong_past.past = xt::xtensor<double, 4>(xt::zeros<double>({1, 1, 3, 1}));
  BOOST_CHECK_THROW(vl::linear_family<double>(wrong_past, {UpdateRule::linear, FamilyForm::recurrent, 1, {}}), std::invalid_argument);
  auto no_beta = in;
  no_beta.beta = xt::zeros<double>({1, 1, 2});
  BOOST_CHECK_THROW(vl::linear_family<double>(no_beta, {UpdateRule::delta, FamilyForm::parallel, 1, {}}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(rule_names_round_trip) {
  for (UpdateRule r : {UpdateRule::linear, UpdateRule::gated, UpdateRule::delta, UpdateRule::gated_delta})
    BOOST_TEST((vl::parse_update_rule(vl::to_string(r)) == r));
  BOOST_TEST(!vl::parse_update_rule("mamba"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // test_lesson_linear_family
