// Verification program of lesson linear-rnn (specs/linear_rnn.md): every claim with its
// negative controls, the listing against its documented output, traceability; and direct
// cases of the kernels small enough to check by hand.
#include <boost/test/unit_test.hpp>

#include <xtensor/xview.hpp>

#include "backends/registry.hpp"
#include "engine/audit.hpp"
#include "engine/spec.hpp"
#include "engine/verdict.hpp"
#include "kernels/reference/feature_map.hpp"
#include "kernels/reference/linear_attention.hpp"
#include "lesson_tests.hpp"
#include "lessons/linear_rnn/linear_rnn.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_lesson_linear_rnn).
BOOST_AUTO_TEST_SUITE(test_lesson_linear_rnn)

namespace {
struct Register {
  Register() { vl::verify::register_lesson(vl::lessons::linear_rnn::lesson()); }
} register_linear_rnn;
}  // namespace

using Matrix = xt::xtensor<double, 2>;

BOOST_AUTO_TEST_SUITE(kernels)

BOOST_AUTO_TEST_CASE(first_token_sees_only_itself) {
  // o_0 = (φq_0·φk_0) v_0 / (φq_0·φk_0) = v_0 exactly, in every form.
  const Matrix pq = {{1.5, 0.25}, {2.0, 1.0}}, pk = {{0.5, 3.0}, {1.0, 1.0}}, v = {{1.0, -2.0, 4.0}, {8.0, 16.0, 32.0}};
  for (const Matrix& o : {vl::linear_attention_parallel<double>(pq, pk, v), vl::linear_attention_recurrent<double>(pq, pk, v),
                          vl::linear_attention_chunked<double>(pq, pk, v, 2)}) {
    BOOST_TEST(o(0, 0) == 1.0);
    BOOST_TEST(o(0, 1) == -2.0);
    BOOST_TEST(o(0, 2) == 4.0);
  }
}

BOOST_AUTO_TEST_CASE(equal_keys_give_the_running_mean) {
  // With every φk equal, every weight of row t is the same: o_t = mean(v_0..v_t).
  const Matrix pq = {{1.0, 2.0}, {0.5, 0.5}, {3.0, 1.0}, {1.0, 1.0}};
  const Matrix pk = {{1.0, 1.0}, {1.0, 1.0}, {1.0, 1.0}, {1.0, 1.0}};
  const Matrix v = {{2.0}, {4.0}, {9.0}, {1.0}};
  const Matrix expected = {{2.0}, {3.0}, {5.0}, {4.0}};
  for (std::size_t b : {1, 2, 3, 4, 7}) {
    const Matrix o = vl::linear_attention_chunked<double>(pq, pk, v, b);
    for (std::size_t t = 0; t < 4; ++t) BOOST_TEST(o(t, 0) == expected(t, 0), "B=" << b << " t=" << t);
  }
  const Matrix o = vl::linear_attention_parallel<double>(pq, pk, v);
  for (std::size_t t = 0; t < 4; ++t) BOOST_TEST(o(t, 0) == expected(t, 0));
}

BOOST_AUTO_TEST_CASE(feature_map_values) {
  const xt::xtensor<double, 1> x = {-1.0, 0.0, 2.0};
  const auto phi = vl::elu_plus_one<double, 1>(x);
  BOOST_TEST(phi(0) == std::exp(-1.0));
  BOOST_TEST(phi(1) == 1.0);
  BOOST_TEST(phi(2) == 3.0);
}

BOOST_AUTO_TEST_CASE(float_forms_agree_within_float32_rounding) {
  // The same kernels in float: agreement to a few float32 ulps (2^-23 ≈ 1.2e-7) times n.
  const auto in = vl::lessons::linear_rnn::draw_inputs(32, 6, 5, 11);
  const xt::xtensor<float, 2> pq = xt::cast<float>(in.pq), pk = xt::cast<float>(in.pk), v = xt::cast<float>(in.v);
  const auto par = vl::linear_attention_parallel<float>(pq, pk, v);
  const auto rec = vl::linear_attention_recurrent<float>(pq, pk, v);
  const auto blk = vl::linear_attention_chunked<float>(pq, pk, v, 5);
  BOOST_TEST(xt::amax(xt::abs(par - rec))() < 32 * 1.2e-7 * 8);
  BOOST_TEST(xt::amax(xt::abs(blk - rec))() < 32 * 1.2e-7 * 8);
}

BOOST_AUTO_TEST_CASE(chunk_size_zero_is_refused) {
  const Matrix m = xt::ones<double>({2, 2});
  BOOST_CHECK_THROW(vl::linear_attention_chunked<double>(m, m, m, 0), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

// The claims about the computation judge any backend, form by form where they can: a backend
// with only some forms is judged on those, one with none is not applicable, never passed.
BOOST_AUTO_TEST_SUITE(any_backend)

namespace {

// A backend with no operation at all.
struct NoOperation : vl::backends::Backend {
  std::string name() const override { return "none"; }
  std::string summary() const override { return "no operation"; }
  bool supports(vl::backends::Need) const override { return false; }
};

vl::CheckContext context(const vl::backends::Backend& b) { return {b, std::filesystem::path(VL_SOURCE_DIR) / "reference_outputs"}; }

// The engine's verdict on a measurement of a linear-rnn claim, against the spec's tolerance.
bool passes(const std::string& claim_id, const vl::Measurement& m) {
  static const vl::Spec spec = vl::parse_spec(std::filesystem::path(VL_SOURCE_DIR) / "specs" / "linear_rnn.md");
  const vl::Claim* claim = spec.find_claim(claim_id);
  BOOST_REQUIRE(claim);
  return vl::passes(*claim, m);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_backend_without_the_forms_is_not_applicable) {
  const NoOperation none;
  namespace lr = vl::lessons::linear_rnn;
  BOOST_CHECK_THROW(lr::forms_agree(context(none)), vl::backends::Unsupported);
  BOOST_CHECK_THROW(lr::convex_combination(context(none)), vl::backends::Unsupported);
  BOOST_CHECK_THROW(lr::causal(context(none)), vl::backends::Unsupported);
}

BOOST_AUTO_TEST_CASE(the_chunked_only_backend_is_judged_on_its_chunked_form) {
  const auto fused = vl::backends::find("fused");
  BOOST_REQUIRE(fused);
  namespace lr = vl::lessons::linear_rnn;
  BOOST_CHECK_THROW(lr::forms_agree(context(*fused)), vl::backends::Unsupported);
  const std::pair<std::string, vl::Measurement> judged[] = {{"linear-rnn.convex-combination", lr::convex_combination(context(*fused))},
                                                              {"linear-rnn.causal", lr::causal(context(*fused))}};
  for (const auto& [id, m] : judged) {
    BOOST_TEST(passes(id, m), id << ": " << m.detail);
    BOOST_TEST(m.detail.find("forms checked: chunked") != std::string::npos, m.detail);
    BOOST_TEST(m.detail.find("not available") != std::string::npos, m.detail);
  }
}

BOOST_AUTO_TEST_CASE(audit_under_fused) {
  // Under the fused backend: forms-agree needs all three forms (not applicable); everything
  // else passes, with every control rejected.
  vl::AuditOptions options;
  options.root = VL_SOURCE_DIR;
  options.backend = vl::backends::find("fused");
  options.select = {"linear-rnn"};
  const vl::AuditReport report = vl::run_audit({vl::lessons::linear_rnn::lesson()}, options);
  BOOST_REQUIRE_EQUAL(report.lessons.size(), 1u);
  for (const auto& c : report.lessons[0].claims) {
    const vl::Status expected = c.claim.id == "linear-rnn.forms-agree" ? vl::Status::not_applicable : vl::Status::passed;
    BOOST_TEST((c.status == expected), c.claim.id << ": " << vl::to_string(c.status) << ": " << c.why);
    for (const auto& check : c.checks)
      for (const auto& control : check.controls) BOOST_TEST(control.rejected, c.claim.id << ": " << control.name);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // test_lesson_linear_rnn
