#include <boost/test/unit_test.hpp>

// CandidateBackend (backends/candidate_backend.hpp), what it makes of a candidate's answers, with
// the candidates the CLI tests use: the NumPy reference adapter (adapters/numpy_reference.py)
// answers as plain does, within rounding bounds derived below, in float64 and float32; what the
// protocol or the hello lacks is refused without a request; verify/candidates/misbehaving.py's
// garbage, wrong id, wrong output shape and wrong dtype are errors naming the request, and the
// next request is served. The three kinds of "ok": false need replies no existing candidate gives
// on demand: a one-line /bin/sh candidate written here. Every case ends with no process of its
// candidates running and no temporary folder left (candidate_tests.hpp). Crashes and hangs:
// test_backends_candidate_failures.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "backends/candidate_backend.hpp"
#include "backends/plain_backend.hpp"
#include "candidate_tests.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_backends_candidate).
BOOST_AUTO_TEST_SUITE(test_backends_candidate)

namespace vb = vl::backends;
using std::chrono::milliseconds;

using vl::verify::error_of;
using vl::verify::has;
using vl::verify::IsolatedCandidates;
using vl::verify::start_candidate;

template <class T, std::size_t N>
xt::xtensor<T, N> draw(std::mt19937_64& gen, const std::array<std::size_t, N>& shape) {
  xt::xtensor<T, N> x = xt::xtensor<T, N>::from_shape(shape);
  for (auto& e : x) e = static_cast<T>(static_cast<double>(gen() >> 11) * 0x1p-53 * 2 - 1);
  return x;
}

template <class T, std::size_t N>
double max_difference(const xt::xtensor<T, N>& a, const xt::xtensor<T, N>& b) {
  BOOST_REQUIRE((a.shape() == b.shape()));
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a.flat(i)) - double(b.flat(i))));
  return worst;
}

// Attention with |q|, |k|, |v|, |bias| ≤ 1, D = 4 (scale ½), Sk = 5, u = 2⁻²⁴ or 2⁻⁵³. Each
// implementation's scores are within Δ = (D + 2)·u·(scale·D + 1) = 18u of the exact ones, so a
// weight moves by at most 4Δ relative (differences of two scores, in numerator and sum), plus its
// exp (≤ 4 u allowed, NumPy's float32 exp included) and the sum's exps (≤ 4u), the sum (Sk − 1)·u
// and the division u: ρ = 4Δ + 8u + Sk·u = 85u. The output Σ w v adds Sk·u (|v| ≤ 1): 90u. Two
// implementations, each within that of the exact values: weights 170u apart, outputs 180u.
template <class T>
void attention_as_plain(const vb::CandidateBackend& candidate) {
  std::mt19937_64 gen(sizeof(T));
  const auto q = draw<T, 4>(gen, {2, 4, 3, 4}), k = draw<T, 4>(gen, {2, 2, 5, 4}), v = draw<T, 4>(gen, {2, 2, 5, 3});
  vl::AttentionOptions<T> o;
  o.causal = true;
  o.alignment = vl::CausalAlignment::bottom_right;
  o.bias = xt::xarray<T>(draw<T, 2>(gen, {3, 5}));
  o.return_weights = true;
  const auto got = candidate.attention(q, k, v, o), want = vb::PlainBackend().attention(q, k, v, o);
  const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  BOOST_TEST(max_difference(got.weights, want.weights) <= 170 * u, (sizeof(T) == 4 ? "float32" : "float64"));
  BOOST_TEST(max_difference(got.output, want.output) <= 180 * u, (sizeof(T) == 4 ? "float32" : "float64"));
  BOOST_TEST(got.weights(0, 0, 0, 4) == T(0));  // query 0 sits at key 2: keys 3 and 4 hidden
}

BOOST_AUTO_TEST_CASE(a_correct_candidate_answers_as_plain_does) {
  const IsolatedCandidates isolated;
  auto candidate = start_candidate(vl::verify::kNumpyReference);
  BOOST_TEST(candidate->name() == "numpy-reference");
  BOOST_TEST(candidate->supports({vb::Op::attention, vb::Option::weights}));
  BOOST_TEST(!candidate->supports({vb::Op::attention, vb::Option::storage_rounding}));
  BOOST_TEST(!candidate->supports(vb::Op::decoder_step));
  const std::vector<vl::Precision> dtypes{vl::Precision::float64, vl::Precision::float32, vl::Precision::float16};
  BOOST_TEST((candidate->precisions() == dtypes));
  attention_as_plain<double>(*candidate);
  attention_as_plain<float>(*candidate);
  // Chunked linear attention, φ > 0: each implementation within 1.01·(d_k + n + 4)·u·(max|v| + |o|)
  // of the definition (test_kernels_linear_attention_fast derives it), so twice that apart.
  std::mt19937_64 gen(3);
  xt::xtensor<double, 2> pq = draw<double, 2>(gen, {7, 3}), pk = draw<double, 2>(gen, {7, 3});
  pq += 2.0, pk += 2.0;
  const auto v = draw<double, 2>(gen, {7, 2});
  const auto y = candidate->linear_chunked(pq, pk, v, 3), y_plain = vb::PlainBackend().linear_chunked(pq, pk, v, 3);
  BOOST_TEST(max_difference(y, y_plain) <= 2 * 1.01 * (3 + 7 + 4) * 0x1p-53 * 2);  // |o| ≤ max|v| = 1
  // Positions 0 … 3, d = 6: each implementation's frequency within 16u relative (a power or an
  // exp of a logarithm), so its angle (≤ 3) within 48u + u, and sin, cos within 50u: 100u apart.
  const std::vector<double> positions{0, 1, 2, 3};
  BOOST_TEST(max_difference(candidate->positional_encoding(positions, 6), vb::PlainBackend().positional_encoding(positions, 6)) <= 100 * 0x1p-53);
  BOOST_TEST(candidate->requests() == 4);
  // What vl-candidate/1 cannot carry is refused before anything is sent: not applicable, never an error.
  vl::AttentionOptions<double> rounded;
  rounded.round = [](double x) { return x; };
  const xt::xtensor<double, 4> ones = xt::ones<double>({1, 1, 2, 2});
  BOOST_CHECK_THROW(candidate->attention(ones, ones, ones, rounded), vb::CandidateRefused);
  const std::string why = error_of<vb::Unsupported>([&] {
    vl::LayerCache<double> cache;
    candidate->decoder_step(xt::ones<double>({1, 1, 4}), xt::ones<double>({1, 2, 4}), {}, 2, {}, cache, {});
  });
  BOOST_TEST(has(why, "vl-candidate/1 has no request for decoder-step"), why);
}

// misbehaving.py MODE 1: its first request answered wrongly, the next ones right.
BOOST_AUTO_TEST_CASE(garbage_and_lies_are_errors_naming_the_request) {
  const IsolatedCandidates isolated;
  const xt::xtensor<double, 4> q = xt::ones<double>({1, 1, 3, 4}), k = xt::ones<double>({1, 1, 5, 4}), v = xt::ones<double>({1, 1, 5, 2});
  const std::vector<std::pair<std::string, std::string>> modes{
      {"garbage", "the reply is not a JSON object: 'this is not JSON'"},
      {"wrong-id", "the reply answers id 1001, not 1"},
      {"wrong-shape", "output 'y' has shape (2, 1, 3, 2); the operation defines (1, 1, 3, 2)"},
      {"wrong-dtype", "output 'y' is float32; the inputs are float64"}};
  for (const auto& [mode, says] : modes) {
    auto candidate = start_candidate(vl::verify::misbehaving(mode + " 1"));
    const std::string e = error_of([&] { candidate->attention(q, k, v, {}); });
    BOOST_TEST(has(e, "candidate 'misbehaving " + mode + "', request 1 (attention): " + says), e);
    const auto next = candidate->attention(q, k, v, {});  // served: equal values average to 1
    BOOST_TEST(next.output(0, 0, 2, 1) == 1.0, mode);
  }
}

// The replies' "ok": false: "unsupported: …" is a refusal (not applicable), "invalid: …" a refused
// input, anything else the candidate's error, each naming the request.
BOOST_AUTO_TEST_CASE(refusals_and_errors_by_their_reply) {
  const IsolatedCandidates isolated;
  auto candidate = start_candidate(
      "read l; echo '{\"id\": 0, \"ok\": true, \"name\": \"refuses\", \"ops\": [\"attention\"]}'; "
      "read l; echo '{\"id\": 1, \"ok\": false, \"error\": \"unsupported: no such mask\"}'; "
      "read l; echo '{\"id\": 2, \"ok\": false, \"error\": \"invalid: widths differ\"}'; "
      "read l; echo '{\"id\": 3, \"ok\": false, \"error\": \"boom\"}'; exec cat >/dev/null",
      milliseconds(5'000));  // a guard: every reply is immediate
  const xt::xtensor<double, 4> x = xt::ones<double>({1, 1, 2, 2});
  std::string e = error_of<vb::CandidateRefused>([&] { candidate->attention(x, x, x, {}); });
  BOOST_TEST(e == "candidate 'refuses' answered request 1 (attention): unsupported: no such mask");
  e = error_of<vb::CandidateInvalidInput>([&] { candidate->attention(x, x, x, {}); });
  BOOST_TEST(e == "candidate 'refuses', request 2 (attention): the candidate refused the input: invalid: widths differ");
  e = error_of([&] { candidate->attention(x, x, x, {}); });
  BOOST_TEST(e == "candidate 'refuses', request 3 (attention): the candidate's error: boom");
  BOOST_TEST(candidate->requests() == 3);
  // An operation its hello did not list is refused, not sent (it would block: the candidate reads no more).
  const xt::xtensor<double, 2> m = xt::ones<double>({2, 2});
  BOOST_CHECK_THROW(candidate->linear_parallel(m, m, m), vb::CandidateRefused);
  BOOST_TEST(candidate->requests() == 3);  // refused before it was sent: not counted as sent
}

BOOST_AUTO_TEST_SUITE_END()  // test_backends_candidate
