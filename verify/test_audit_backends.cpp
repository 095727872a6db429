// The audit against backends other than our default: a claim whose operation the backend lacks
// is not applicable (never passed), a claim about our code and a listing that is our code
// throughout are not applicable to a backend that is not ours, a listing computed by backend
// operations runs through the audited backend (and is not applicable where it lacks them), an audit where nothing ran is not a pass, a control that
// cannot run is an error, and a claim about the computation accepts only broken backends as
// controls. Uses the real attention lesson and small backends made here.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <xtensor/xmath.hpp>
#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include "backends/fused_backend.hpp"
#include "backends/in_precision.hpp"
#include "backends/registry.hpp"
#include "engine/audit.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/encoder_decoder/encoder_decoder.hpp"
#include "lessons/masking/masking.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_audit_backends).
BOOST_AUTO_TEST_SUITE(test_audit_backends)

namespace {

// Our plain kernels, presented as someone else's implementation.
class Foreign : public vl::backends::Decorator {
 public:
  Foreign() : Decorator(vl::backends::plain(), "foreign") {}
  bool ours() const override { return false; }
};

// A backend with no operation at all.
class Empty : public vl::backends::Backend {
 public:
  std::string name() const override { return "empty"; }
  std::string summary() const override { return "no operation"; }
  bool supports(vl::backends::Need) const override { return false; }
};

vl::AuditReport audit(std::shared_ptr<const vl::backends::Backend> backend, std::vector<std::string> select,
                      const vl::Lesson& lesson = vl::lessons::attention::lesson()) {
  vl::AuditOptions options;
  options.root = VL_SOURCE_DIR;
  options.select = std::move(select);
  options.backend = std::move(backend);
  return vl::run_audit({lesson}, options);
}

const vl::ClaimResult& claim(const vl::AuditReport& report, const std::string& id) {
  for (const auto& c : report.lessons.at(0).claims)
    if (c.claim.id == id) return c;
  throw std::runtime_error("claim not in report: " + id);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_foreign_backend_runs_the_computation_claims_only) {
  const auto report = audit(std::make_shared<Foreign>(),
                            {"attention.convex-combination", "attention.score-std", "attention.lookup", "attention.scale"});
  const auto& convex = claim(report, "attention.convex-combination");
  BOOST_TEST((convex.status == vl::Status::passed), convex.why);
  const auto& ours = claim(report, "attention.score-std");
  BOOST_TEST((ours.status == vl::Status::not_applicable));
  BOOST_TEST(ours.why.find("about our own code") != std::string::npos, ours.why);
  // Listing 1 computes through the foreign attention (and passes: it is ours underneath); listing 2
  // is our experiment's arithmetic throughout.
  const auto& lookup = report.lessons[0].listings.at(0);
  BOOST_TEST(lookup.id == "attention.lookup");
  BOOST_TEST((lookup.status == vl::Status::passed), lookup.why);
  const auto& scale = report.lessons[0].listings.at(1);
  BOOST_TEST((scale.status == vl::Status::not_applicable));
  BOOST_TEST(scale.why.find("our own code") != std::string::npos, scale.why);
  // The controls still run, against our broken variants, and are rejected.
  for (const auto& c : ours.checks)
    for (const auto& ctl : c.controls) BOOST_TEST(ctl.rejected, ctl.name);
  BOOST_TEST(report.passed() == 2);
  BOOST_TEST(report.not_applicable() == 2);
  BOOST_TEST(report.ok());
}

BOOST_AUTO_TEST_CASE(the_fused_backend_is_judged_through_its_outputs) {
  // It forms no weights: the check that reads them is not applicable, the one that reads them from
  // the outputs (lessons/outputs_only.hpp) judges the claim; listing 1 prints weights read so too.
  const auto report = audit(vl::backends::find("fused"),
                            {"attention.matches-torch", "attention.convex-combination", "attention.lookup", "attention.score-cells"});
  const auto& torch = claim(report, "attention.matches-torch");
  BOOST_TEST((torch.status == vl::Status::passed), torch.why);
  BOOST_REQUIRE_EQUAL(torch.checks.size(), 2u);
  BOOST_TEST(torch.checks[0].not_applicable.find("attention-weights") != std::string::npos, torch.checks[0].not_applicable);
  BOOST_TEST(torch.checks[1].not_applicable.empty());
  BOOST_TEST(torch.checks[1].name.find("read from the outputs") != std::string::npos, torch.checks[1].name);
  for (const auto& ctl : torch.checks[1].controls) BOOST_TEST(ctl.rejected, ctl.name);
  const auto& lookup = report.lessons[0].listings.at(0);
  BOOST_TEST((lookup.status == vl::Status::passed), lookup.why);
  // The cost of the formed score matrix is a claim about a matrix the fused kernel never forms.
  const auto& cells = claim(report, "attention.score-cells");
  BOOST_TEST((cells.status == vl::Status::not_applicable));
  BOOST_TEST(cells.why.find("attention-weights") != std::string::npos, cells.why);
  BOOST_TEST((claim(report, "attention.convex-combination").status == vl::Status::passed));
  BOOST_TEST(report.ok());
  BOOST_TEST(report.failed() == 0);
}

BOOST_AUTO_TEST_CASE(a_backend_without_weights_fails_through_its_outputs) {
  // A fused backend whose outputs are off by 1e-6: the weights check cannot run, the outputs-only
  // one can and fails, so the claim fails (one check not applicable never makes a claim N/A).
  class Drifting : public vl::backends::Decorator {
   public:
    Drifting() : Decorator(vl::backends::find("fused"), "fused, outputs off by 1e-6") {}
    using Decorator::attention;
    vl::AttentionResult<double, 4> attention(const vl::backends::Tensor4<double>& q, const vl::backends::Tensor4<double>& k,
                                             const vl::backends::Tensor4<double>& v, const vl::AttentionOptions<double>& o) const override {
      auto r = base().attention(q, k, v, o);
      r.output += 1e-6;
      return r;
    }
  };
  const auto report = audit(std::make_shared<Drifting>(), {"attention.matches-torch"});
  const auto& torch = claim(report, "attention.matches-torch");
  BOOST_TEST((torch.status == vl::Status::failed), vl::to_string(torch.status) << ": " << torch.why);
  BOOST_TEST(torch.why.find("read from the outputs") != std::string::npos, torch.why);
}

BOOST_AUTO_TEST_CASE(a_precision_judges_the_backend_computing_in_it) {
  // Plain's float64 attention, and a float32 attention whose outputs are 1.5 times too large:
  // the float64 audit passes it, the float32 audit fails it (InFloat32 runs the float32 operation).
  class Float32Unnormalised : public vl::backends::Decorator {
   public:
    Float32Unnormalised() : Decorator(vl::backends::plain(), "float32 unnormalised") {}
    bool ours() const override { return false; }
    using Decorator::attention;
    vl::AttentionResult<float, 4> attention(const vl::backends::Tensor4<float>& q, const vl::backends::Tensor4<float>& k,
                                            const vl::backends::Tensor4<float>& v, const vl::AttentionOptions<float>& o) const override {
      auto r = base().attention(q, k, v, o);
      r.output *= 1.5f;
      r.weights *= 1.5f;
      return r;
    }
  };
  const auto backend = std::make_shared<Float32Unnormalised>();
  vl::AuditOptions options;
  options.root = VL_SOURCE_DIR;
  options.select = {"attention.convex-combination", "attention.matches-torch", "attention.backward-matches-torch",
                    "attention.score-std"};
  options.backend = backend;
  options.precisions = {vl::Precision::float64, vl::Precision::float32};
  const auto report = vl::run_audit({vl::lessons::attention::lesson()}, options);
  std::map<std::pair<std::string, vl::Precision>, const vl::ClaimResult*> by;
  for (const auto& c : report.lessons.at(0).claims) by[{c.claim.id, c.precision}] = &c;
  const auto* f64 = by.at({"attention.convex-combination", vl::Precision::float64});
  const auto* f32 = by.at({"attention.convex-combination", vl::Precision::float32});
  BOOST_TEST((f64->status == vl::Status::passed), f64->why);
  BOOST_TEST((f32->status == vl::Status::failed), f32->why);
  BOOST_TEST(f32->claim.stated_bound() == "<= 1.1e-6");
  // In float32 matches-torch compares with our float64 kernel on the rounded inputs, within its bound.
  const auto* torch32 = by.at({"attention.matches-torch", vl::Precision::float32});
  BOOST_TEST((torch32->status == vl::Status::failed), torch32->why);
  BOOST_TEST(torch32->why.find("over its bound") != std::string::npos, torch32->why);
  // The backward, whose float32 operation this backend does not break, passes within its own bound.
  const auto* backward32 = by.at({"attention.backward-matches-torch", vl::Precision::float32});
  BOOST_TEST((backward32->status == vl::Status::passed), backward32->why);
  // A claim about our code is judged once, as our code runs, not per precision.
  BOOST_TEST(by.count({"attention.score-std", vl::Precision::float32}) == 0u);
  BOOST_TEST(!report.ok());
}

BOOST_AUTO_TEST_CASE(ours_in_a_storage_format_round_inputs_and_outputs_to_it) {
  // Plain in float16: the inputs rounded once to float16, float32 arithmetic (the attention's
  // stages stored in float16 too), every output a float16 number; in bfloat16 likewise.
  const xt::xtensor<double, 4> q = {{{{0.1, 0.2}, {0.3, -0.7}}}}, v = {{{{1.0 / 3, 2.0 / 7}, {5.0 / 9, -1.0 / 11}}}};
  for (vl::Precision p : {vl::Precision::bfloat16, vl::Precision::float16}) {
    const auto in_p = vl::backends::computing_in(p, vl::backends::plain());
    BOOST_REQUIRE(in_p);
    vl::AttentionOptions<double> o;
    o.return_weights = true;
    const auto r = in_p->attention(q, q, v, o);
    for (double y : r.output) BOOST_TEST(vl::round_to(p, y) == y);
    for (double w : r.weights) BOOST_TEST(vl::round_to(p, w) == w);
    // The output is that of the rounded inputs, within the precision's rounding of the stages.
    const auto exact = vl::backends::plain()->attention(vl::rounded_to(p, q), vl::rounded_to(p, q), vl::rounded_to(p, v), {});
    BOOST_TEST(xt::amax(xt::abs(r.output - exact.output))() <= 8 * vl::working_roundoff(p));
    BOOST_TEST(xt::amax(xt::abs(r.output - exact.output))() > 0);  // rounded, not computed in float64
  }
  // A backend that does not declare the precision is not run in it.
  struct Float32Only : vl::backends::Decorator {
    Float32Only() : Decorator(vl::backends::plain(), "float32 only") {}
    std::vector<vl::Precision> precisions() const override { return {vl::Precision::float64, vl::Precision::float32}; }
  };
  BOOST_TEST(!vl::backends::computing_in(vl::Precision::float16, std::make_shared<Float32Only>()));
}

BOOST_AUTO_TEST_CASE(a_backend_that_computes_in_float64_only_is_not_applicable_in_float32) {
  vl::AuditOptions options;
  options.root = VL_SOURCE_DIR;
  options.select = {"attention.weights-distribution"};
  options.backend = std::make_shared<Foreign>();  // plain underneath, but declaring float64 only
  struct Float64Only : vl::backends::Decorator {
    Float64Only() : Decorator(std::make_shared<Foreign>(), "float64 only") {}
    std::vector<vl::Precision> precisions() const override { return {vl::Precision::float64}; }
  };
  options.backend = std::make_shared<Float64Only>();
  options.precisions = {vl::Precision::float32};
  const auto report = vl::run_audit({vl::lessons::attention::lesson()}, options);
  const auto& c = report.lessons.at(0).claims.at(0);
  BOOST_TEST((c.status == vl::Status::not_applicable), c.why);
  BOOST_TEST(c.why.find("does not compute in float32") != std::string::npos, c.why);
  BOOST_TEST(report.lessons.at(0).listings.empty());  // listings print what the lesson's program did: float64 audits only
}

BOOST_AUTO_TEST_CASE(an_audit_where_nothing_ran_is_not_a_pass) {
  const auto report = audit(std::make_shared<Empty>(), {"attention.convex-combination", "attention.matches-torch"});
  BOOST_TEST(report.not_applicable() == 2);
  BOOST_TEST(report.failed() == 0);
  BOOST_TEST(report.passed() == 0);
  BOOST_TEST(!report.ok());
}

BOOST_AUTO_TEST_CASE(a_control_that_cannot_run_is_an_error) {
  vl::Lesson lesson = vl::lessons::attention::lesson();
  for (auto& c : lesson.checks)
    if (c.claim_id == "attention.convex-combination") c.controls[0].backend = std::make_shared<Empty>();
  const auto report = audit(vl::backends::plain(), {"attention.convex-combination"}, lesson);
  const auto& c = claim(report, "attention.convex-combination");
  BOOST_TEST((c.status == vl::Status::error));
  BOOST_TEST(c.why.find("could not run") != std::string::npos, c.why);
  BOOST_TEST(!report.ok());
}

BOOST_AUTO_TEST_CASE(a_computation_claim_takes_only_broken_backends) {
  vl::Lesson lesson = vl::lessons::attention::lesson();
  for (auto& c : lesson.checks)
    if (c.claim_id == "attention.convex-combination") {
      const vl::CheckFn real = c.run;
      c.controls.push_back(vl::broken_code("a check on code the backend does not run", [real](const vl::CheckContext& ctx) {
        vl::Measurement m = real(ctx);
        return m.require(false, "broken");
      }));
    }
  const auto report = audit(vl::backends::plain(), {"attention.convex-combination"}, lesson);
  BOOST_TEST(!report.ok());
  const auto& problems = report.lessons.at(0).problems;
  BOOST_TEST(std::any_of(problems.begin(), problems.end(), [](const std::string& p) {
    return p.find("'a check on code the backend does not run' of 'attention.convex-combination', a claim about the computation, "
                  "must be a broken backend") != std::string::npos;
  }));
}

// A backend that says it has an operation and then refuses it.
class Inconsistent : public vl::backends::Decorator {
 public:
  Inconsistent() : Decorator(vl::backends::plain(), "inconsistent") {}
  using Decorator::attention;
  vl::AttentionResult<double, 4> attention(const vl::backends::Tensor4<double>&, const vl::backends::Tensor4<double>&,
                                           const vl::backends::Tensor4<double>&, const vl::AttentionOptions<double>&) const override {
    lacks(vl::backends::Op::attention);
  }
};

BOOST_AUTO_TEST_CASE(refusing_an_operation_it_claims_is_an_error) {
  const auto report = audit(std::make_shared<Inconsistent>(), {"attention.convex-combination"});
  const auto& c = claim(report, "attention.convex-combination");
  BOOST_TEST((c.status == vl::Status::error));
  BOOST_TEST(c.why.find("says it has attention") != std::string::npos, c.why);
}

// A backend whose attention drops the last query row.
class WrongShape : public vl::backends::Decorator {
 public:
  WrongShape() : Decorator(vl::backends::plain(), "wrong shape") {}
  using Decorator::attention;
  vl::AttentionResult<double, 4> attention(const vl::backends::Tensor4<double>& q, const vl::backends::Tensor4<double>& k,
                                           const vl::backends::Tensor4<double>& v, const vl::AttentionOptions<double>& o) const override {
    auto r = base().attention(q, k, v, o);
    r.output = xt::view(r.output, xt::all(), xt::all(), xt::range(0, q.shape(2) - 1), xt::all());
    return r;
  }
};

BOOST_AUTO_TEST_CASE(a_result_of_the_wrong_shape_is_an_error_not_a_read_out_of_bounds) {
  const auto report = audit(std::make_shared<WrongShape>(), {"attention.convex-combination"});
  const auto& c = claim(report, "attention.convex-combination");
  BOOST_TEST((c.status == vl::Status::error));
  BOOST_TEST(c.why.find("backend 'wrong shape' returned an attention output of shape (1, 1, 4, 4); the operation defines (1, 1, 5, 4)") !=
                 std::string::npos,
             c.why);
}

BOOST_AUTO_TEST_CASE(the_backends_say_what_they_have) {
  const auto& all = vl::backends::shipped();
  BOOST_REQUIRE(all.size() == 2u);
  BOOST_TEST(all[0]->name() == "plain");
  for (auto op : vl::backends::kAllOps) BOOST_TEST(all[0]->supports(op));
  const auto fused = vl::backends::find("fused");
  BOOST_TEST(fused->supports(vl::backends::Op::attention));
  BOOST_TEST(!fused->supports({vl::backends::Op::attention, vl::backends::Option::weights}));
  BOOST_TEST(fused->supports(vl::backends::Op::linear_chunked));
  BOOST_TEST(!fused->supports(vl::backends::Op::linear_parallel));
  const vl::backends::Matrix none;
  BOOST_CHECK_THROW(fused->linear_parallel(none, none, none), vl::backends::Unsupported);
  try {
    fused->linear_parallel(none, none, none);
  } catch (const vl::backends::Unsupported& e) {
    BOOST_TEST((e.need == vl::backends::Need(vl::backends::Op::linear_parallel)));
  }
  BOOST_TEST(vl::backends::find("nope") == nullptr);
}

// A backend whose layer norm drops the last position: the Transformer operations' results are
// shape-checked like attention's.
class WrongLayerNormShape : public vl::backends::Decorator {
 public:
  WrongLayerNormShape() : Decorator(vl::backends::plain(), "wrong layer-norm shape") {}
  using Decorator::layer_norm;
  vl::backends::Tensor3 layer_norm(const vl::backends::Tensor3& x, const vl::LayerNormParameters<double>& p,
                                   double eps) const override {
    vl::backends::Tensor3 y = base().layer_norm(x, p, eps);
    return xt::view(y, xt::all(), xt::range(0, x.shape(1) - 1), xt::all());
  }
};

BOOST_AUTO_TEST_CASE(a_layer_result_of_the_wrong_shape_is_an_error) {
  const auto report = audit(std::make_shared<WrongLayerNormShape>(), {"encoder-decoder.layer-norm-standardises"},
                            vl::lessons::encoder_decoder::lesson());
  const auto& c = claim(report, "encoder-decoder.layer-norm-standardises");
  BOOST_TEST((c.status == vl::Status::error));
  BOOST_TEST(c.why.find("returned a layer-norm output of shape") != std::string::npos, c.why);
}

// An implementation that returns NaN everywhere, the same NaN in every run, is not judged equal
// to itself: attention.convex-combination and the masking lesson's identities (one pass against
// decoding, the two alignments) compare two of its outputs, and each fails (numeric/compare.hpp:
// a value that is not finite is infinitely far from every value, itself included).
namespace {
class NanEverywhere : public vl::backends::Decorator {
 public:
  NanEverywhere() : Decorator(vl::backends::plain(), "nan everywhere") {}
  bool ours() const override { return false; }
  vl::AttentionResult<double, 4> attention(const vl::backends::Tensor4<double>& q, const vl::backends::Tensor4<double>& k,
                                           const vl::backends::Tensor4<double>& v, const vl::AttentionOptions<double>& o) const override {
    vl::AttentionResult<double, 4> r = base().attention(q, k, v, o);
    r.output.fill(std::numeric_limits<double>::quiet_NaN());
    if (o.return_weights) r.weights.fill(std::numeric_limits<double>::quiet_NaN());
    return r;
  }
  using Decorator::attention;
};
}  // namespace

BOOST_AUTO_TEST_CASE(the_same_nan_twice_is_not_a_match) {
  const auto report = audit(std::make_shared<NanEverywhere>(), {"masking.one-pass-equals-decoding", "masking.alignment"},
                            vl::lessons::masking::lesson());
  BOOST_REQUIRE_EQUAL(report.lessons.size(), 1u);
  BOOST_REQUIRE_EQUAL(report.lessons[0].claims.size(), 2u);
  for (const auto& c : report.lessons[0].claims) {
    BOOST_TEST((c.status == vl::Status::failed), c.claim.id << ": " << vl::to_string(c.status) << ": " << c.why);
    for (const auto& ch : c.checks) BOOST_TEST(std::isinf(ch.measured.value), c.claim.id << " measured " << ch.measured.value);
  }
}

// A claim of "at least t" is not passed by NaN: an encoder whose every output is NaN "moves" by
// ∞ when an input changes, which the influence check's value reads as ≥ 1e-3; the check's
// condition that every output be finite fails it (it passed before that condition).
namespace {
class NanEncoder : public vl::backends::Decorator {
 public:
  NanEncoder() : Decorator(vl::backends::plain(), "nan encoder") {}
  bool ours() const override { return false; }
  vl::backends::Tensor3 encoder_layer(const vl::backends::Tensor3& x, const vl::EncoderLayerParameters<double>& p, std::size_t heads,
                                      const vl::LayerOptions& o, const vl::MhaOptions<double>& self) const override {
    vl::backends::Tensor3 y = base().encoder_layer(x, p, heads, o, self);
    y.fill(std::numeric_limits<double>::quiet_NaN());
    return y;
  }
};
}  // namespace

BOOST_AUTO_TEST_CASE(nan_does_not_pass_an_at_least_claim) {
  const auto report = audit(std::make_shared<NanEncoder>(), {"encoder-decoder.encoder-sees-every-position"},
                            vl::lessons::encoder_decoder::lesson());
  BOOST_REQUIRE_EQUAL(report.lessons.at(0).claims.size(), 1u);
  const auto& c = report.lessons[0].claims[0];
  BOOST_TEST((c.status == vl::Status::failed), vl::to_string(c.status) << ": " << c.why);
  BOOST_REQUIRE_EQUAL(c.checks.size(), 1u);
  BOOST_TEST(c.checks[0].measured.unmet.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()  // test_audit_backends
