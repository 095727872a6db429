// Verification program of lesson positions (specs/positions.md): every claim with its negative
// controls, the listing against its documented output and PyTorch's/NumPy's arrays,
// traceability; direct cases of the encoding, the rotation, the permutation utility and the
// permutations other than the identity; the broken tables of the negative controls; and the claims
// judged under the fused backend.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <numbers>

#include <xtensor/xview.hpp>

#include "backends/registry.hpp"
#include "kernels/reference/positional_encoding.hpp"
#include "lesson_tests.hpp"
#include "lessons/permutations.hpp"
#include "lessons/positions/positions.hpp"
#include "lessons/positions/positions_broken_backends.hpp"
#include "numeric/torch_mha_init.hpp"
#include "numeric/torch_random.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_lesson_positions).
BOOST_AUTO_TEST_SUITE(test_lesson_positions)

namespace {
struct Register {
  Register() { vl::verify::register_lesson(vl::lessons::positions::lesson()); }
} register_positions;
}  // namespace

BOOST_AUTO_TEST_SUITE(kernels)

BOOST_AUTO_TEST_CASE(first_rows_by_hand) {
  // pos 0: (sin 0, cos 0) = (0, 1) in every pair; pos 1, pair 0: (sin 1, cos 1).
  const auto pe = vl::positional_encoding<double>(2, 4);
  BOOST_TEST(pe(0, 0) == 0.0);
  BOOST_TEST(pe(0, 1) == 1.0);
  BOOST_TEST(pe(0, 3) == 1.0);
  BOOST_TEST(pe(1, 0) == std::sin(1.0));
  BOOST_TEST(pe(1, 1) == std::cos(1.0));
  BOOST_TEST(pe(1, 2) == std::sin(1.0 / 100.0));  // 10000^(2/4) = 100
}

BOOST_AUTO_TEST_CASE(odd_d_ends_with_a_sin) {
  // d = 5: pairs 0, 1 complete, column 4 = sin(pos / 10000^(4/5)); no cos column for it.
  const auto pe = vl::positional_encoding<double>(3, 5);
  BOOST_TEST(pe.shape(1) == 5u);
  BOOST_TEST(pe(2, 4) == std::sin(2.0 / std::pow(10000.0, 4.0 / 5.0)));
  const auto w = vl::pe_frequencies<double>(5);
  BOOST_TEST(w.size() == 3u);
}

BOOST_AUTO_TEST_CASE(float_table_close_to_double) {
  const auto pd = vl::positional_encoding<double>(64, 16);
  const auto pf = vl::positional_encoding<float>(64, 16);
  BOOST_TEST(xt::amax(xt::abs(xt::cast<double>(pf) - pd))() < 64 * 1.2e-7);
}

BOOST_AUTO_TEST_CASE(rotation_matrix_is_orthogonal) {
  const auto R = vl::pe_rotation<double>(0.3, 5.0);
  BOOST_TEST(std::fabs(R(0, 0) * R(0, 0) + R(0, 1) * R(0, 1) - 1.0) < 1e-15);
  BOOST_TEST(R(0, 1) == -R(1, 0));
  const auto lam = vl::pe_wavelengths<double>(16);
  BOOST_TEST(lam(0) == 2 * std::numbers::pi);
}

BOOST_AUTO_TEST_CASE(permutation_utility) {
  const xt::xtensor<double, 2> x = {{0.0}, {1.0}, {2.0}};
  const std::vector<std::int64_t> perm = {2, 0, 1};
  const auto y = vl::permute_rows(x, perm);
  BOOST_TEST(y(0, 0) == 2.0);
  BOOST_TEST(y(1, 0) == 0.0);
  const auto back = vl::permute_rows(y, vl::inverse_permutation(perm));
  BOOST_TEST((back == x));
  BOOST_CHECK_THROW((vl::permute_rows(x, std::vector<std::int64_t>{0, 0, 1})), std::invalid_argument);
  BOOST_CHECK_THROW((vl::permute_rows(x, std::vector<std::int64_t>{0, 1})), std::invalid_argument);
}

// lessons/permutations.hpp: n = 2, where half of torch's draws are the identity; each draw kept is
// the other order, and they are the draws in turn (the same generator, identities skipped). n = 1
// has no other permutation: refused by name.
BOOST_AUTO_TEST_CASE(permutations_other_than_the_identity) {
  vl::torch_rng::Generator gen(7), again(7);
  const auto perms = vl::lessons::non_identity_permutations(gen, 2, 20, "test");
  BOOST_TEST(perms.size() == 20u);
  std::size_t kept = 0, identities = 0;
  while (kept < perms.size()) {
    const auto p = vl::torch_rng::randperm(again, 2);
    if (p == std::vector<std::int64_t>{0, 1}) {
      ++identities;
      continue;
    }
    BOOST_TEST((perms[kept++] == p));
  }
  for (const auto& p : perms) BOOST_TEST((p == std::vector<std::int64_t>{1, 0}));
  BOOST_TEST(identities > 0u);  // the draws did hold identities to skip
  vl::torch_rng::Generator one(1);
  BOOST_CHECK_EXCEPTION(vl::lessons::non_identity_permutations(one, 1, 1, "a module of one token"), std::logic_error,
                        [](const std::logic_error& e) { return std::string(e.what()).find("a module of one token") != std::string::npos; });
}

BOOST_AUTO_TEST_SUITE_END()

// The broken tables the controls hand out, against their formulas.
BOOST_AUTO_TEST_SUITE(broken_tables)

BOOST_AUTO_TEST_CASE(exponent_i_over_d) {
  // d = 5: column 2i = sin(pos / 10000^(i/5)), column 2i+1 = cos of it; the last column a sin.
  const vl::lessons::positions::ExponentIOverD wrong(vl::backends::plain(), "wrong");
  const auto pe = wrong.positional_encoding(std::vector<double>{0.0, 3.0}, 5);
  BOOST_REQUIRE(pe.shape(0) == 2u);
  BOOST_REQUIRE(pe.shape(1) == 5u);
  for (std::size_t i = 0; 2 * i < 5; ++i) {
    const double div = std::pow(10000.0, double(i) / 5.0);
    BOOST_TEST(pe(1, 2 * i) == std::sin(3.0 / div));
    if (2 * i + 1 < 5) BOOST_TEST(pe(1, 2 * i + 1) == std::cos(3.0 / div));
  }
}

BOOST_AUTO_TEST_CASE(positions_after_the_attention) {
  // The layer's output moves by the table; its weights are those without positions.
  vl::torch_rng::Generator gen(0);
  const auto p = vl::torch_rng::mha_init<double>(gen, 8, 2);
  const xt::xtensor<double, 2> x = vl::torch_rng::randn<double>(gen, {5, 8});
  const auto plain = vl::backends::plain();
  const vl::lessons::positions::PositionsAfterAttention after(plain, "after");
  BOOST_TEST(xt::amax(xt::abs(vl::backends::positional_encoding_table(after, 5, 8)))() == 0.0);
  const auto r = vl::backends::multi_head_attention_2d(after, x, x, x, p, 2);
  const auto expected = vl::backends::multi_head_attention_2d(*plain, x, x, x, p, 2);
  BOOST_TEST(xt::amax(xt::abs(r.output - (expected.output + vl::positional_encoding<double>(5, 8))))() == 0.0);
  BOOST_TEST(xt::amax(xt::abs(r.weights - expected.weights))() == 0.0);
}

BOOST_AUTO_TEST_SUITE_END()

// The claims judge any backend through its positional_encoding and multi_head_attention; the
// fused one has neither, so every claim is not applicable to it, never passed.
BOOST_AUTO_TEST_SUITE(any_backend)

BOOST_AUTO_TEST_CASE(audit_under_fused) {
  vl::AuditOptions options;
  options.root = VL_SOURCE_DIR;
  options.backend = vl::backends::find("fused");
  BOOST_REQUIRE(options.backend);
  options.select = {"positions"};
  const vl::AuditReport report = vl::run_audit({vl::lessons::positions::lesson()}, options);
  BOOST_REQUIRE_EQUAL(report.lessons.size(), 1u);
  for (const auto& c : report.lessons[0].claims) {
    BOOST_TEST((c.status == vl::Status::not_applicable), c.claim.id << ": " << vl::to_string(c.status) << ": " << c.why);
    for (const auto& check : c.checks)
      for (const auto& control : check.controls) BOOST_TEST(control.rejected, c.claim.id << ": " << control.name);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // test_lesson_positions
