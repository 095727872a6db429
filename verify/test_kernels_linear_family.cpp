#include <boost/test/unit_test.hpp>

// The linear-recurrence family (src/kernels/reference/linear_family.hpp) on one key/value head, in
// float and double: each rule (linear, gated with one decay per head or per key dimension, delta,
// gated_delta) on a two-token case worked out by hand from the recurrence, in each form
// (recurrent, parallel, chunked with chunks shorter than, equal to and longer than the sequence);
// the forms agreeing over a grid of rules, lengths and chunk sizes; the empty sequence; decays so
// strong that exp(G_t) underflows, where the parallel form must not form exp(−G_s); NaN; the
// shape checks; and the work counted (multiply-adds and state updates). The header was otherwise
// reached only through the linear-family lesson's claims.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/linear_family.hpp"
#include "kernels/reference/work_counters.hpp"
#include "kernel_types.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_linear_family).
BOOST_AUTO_TEST_SUITE(test_kernels_linear_family)

namespace {

namespace bdata = boost::unit_test::data;
using Types = vl::verify::FloatTypes;
using vl::UpdateRule;

using vl::verify::kEps;

// A form to run: chunk 0 = recurrent, chunk SIZE_MAX = parallel, else chunked with that chunk.
struct Form {
  const char* name;
  std::size_t chunk;
};
constexpr std::size_t kParallel = std::numeric_limits<std::size_t>::max();
// For the two-token hand cases: chunks of 1 (the state between every token), 2 (= n: one chunk)
// and 3 (> n).
const std::vector<Form> kForms = {{"recurrent", 0}, {"parallel", kParallel}, {"chunked 1", 1}, {"chunked 2", 2}, {"chunked 3", 3}};

template <class T>
vl::FamilyHeadResult<T> run(UpdateRule rule, const vl::FamilyHead<T>& h, T scale, std::size_t chunk) {
  if (chunk == 0) return vl::family_recurrent<T>(rule, h, scale);
  if (chunk == kParallel) return vl::family_parallel<T>(rule, h, scale);
  return vl::family_chunked<T>(rule, h, scale, chunk);
}

// The hand cases' head: G = 2 query heads (the second reads 2q, so its outputs double),
// n = 2 tokens, d_k = 2, d_v = 1.
template <class T>
vl::FamilyHead<T> two_tokens(const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k, const xt::xtensor<T, 2>& v,
                             const xt::xtensor<T, 2>& s0) {
  vl::FamilyHead<T> h;
  h.q = xt::xtensor<T, 3>::from_shape({2, q.shape(0), q.shape(1)});
  xt::view(h.q, 0) = q;
  xt::view(h.q, 1) = T(2) * q;
  h.k = k;
  h.v = v;
  h.s0 = s0;
  return h;
}

// o (2, 2, 1) = (o₀, o₁) for head 0 and twice that for head 1; the state (2, 1).
template <class T>
void check_two_tokens(const vl::FamilyHeadResult<T>& r, double o0, double o1, double s0, double s1, double tol, const std::string& what) {
  BOOST_TEST_REQUIRE(r.o.shape(0) == 2u);
  BOOST_TEST_REQUIRE(r.o.shape(1) == 2u);
  BOOST_TEST_REQUIRE(r.o.shape(2) == 1u);
  BOOST_TEST_REQUIRE(r.state.shape(0) == 2u);
  BOOST_TEST_REQUIRE(r.state.shape(1) == 1u);
  for (std::size_t j = 0; j < 2; ++j) {
    BOOST_TEST(std::abs(r.o(j, 0, 0) - double(j + 1) * o0) <= tol, what << ": head " << j << " o₀ = " << r.o(j, 0, 0));
    BOOST_TEST(std::abs(r.o(j, 1, 0) - double(j + 1) * o1) <= tol, what << ": head " << j << " o₁ = " << r.o(j, 1, 0));
  }
  BOOST_TEST(std::abs(r.state(0, 0) - s0) <= tol, what << ": S(0) = " << r.state(0, 0));
  BOOST_TEST(std::abs(r.state(1, 0) - s1) <= tol, what << ": S(1) = " << r.state(1, 0));
}

// Deterministic values in [−1, 1] (no RNG: sin of distinct arguments).
template <class T>
void fill(xt::xtensor<T, 2>& a, double seed) {
  for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = T(std::sin(seed + 1.7 * double(i)));
}

// A head for the agreement grid: G = 2, d_k = 3, d_v = 2; keys scaled to norm ≤ 1, β ∈ (0, 1),
// log-decays in [−1, 0] (per dimension or one per head).
vl::FamilyHead<double> grid_head(std::size_t n, bool per_dimension) {
  const std::size_t G = 2, dk = 3, dv = 2;
  vl::FamilyHead<double> h;
  xt::xtensor<double, 2> q = xt::xtensor<double, 2>::from_shape({G * n, dk});
  fill(q, 0.3);
  h.q = xt::xtensor<double, 3>(xt::reshape_view(q, std::array<std::size_t, 3>{G, n, dk}));
  h.k = xt::xtensor<double, 2>::from_shape({n, dk});
  fill(h.k, 1.1);
  h.k /= std::sqrt(double(dk));
  h.v = xt::xtensor<double, 2>::from_shape({n, dv});
  fill(h.v, 2.3);
  h.g = xt::xtensor<double, 2>::from_shape({n, per_dimension ? dk : std::size_t(1)});
  fill(h.g, 0.7);
  h.g = -xt::abs(h.g);
  h.beta = xt::xtensor<double, 1>::from_shape({n});
  for (std::size_t t = 0; t < n; ++t) h.beta(t) = 0.25 + 0.5 * std::abs(std::sin(3.1 * double(t)));
  h.s0 = xt::xtensor<double, 2>::from_shape({dk, dv});
  fill(h.s0, 4.2);
  return h;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(by_hand)

BOOST_AUTO_TEST_CASE_TEMPLATE(linear_rule, T, Types) {
  // S ← S + k_t v_tᵀ, o_t = s Sᵀ q_t. k₀ = (1, 0), k₁ = (0, 1), v = (2, 3), q₀ = (1, 1), q₁ = (1, 2):
  //   S₀ = 0:        S = (2, 0) → o₀ = 2;   S = (2, 3) → o₁ = 2 + 6 = 8;   state (2, 3)
  //   S₀ = (1, 1):   S = (3, 1) → o₀ = 4;   S = (3, 4) → o₁ = 3 + 8 = 11;  state (3, 4)
  //   scale ½ halves the outputs, not the state. Small integers and halves: exact in every form.
  const xt::xtensor<T, 2> q = {{T(1), T(1)}, {T(1), T(2)}}, k = {{T(1), T(0)}, {T(0), T(1)}}, v = {{T(2)}, {T(3)}};
  for (const Form& f : kForms) {
    check_two_tokens(run<T>(UpdateRule::linear, two_tokens<T>(q, k, v, xt::zeros<T>({2, 1})), T(1), f.chunk), 2, 8, 2, 3, 0, f.name);
    check_two_tokens(run<T>(UpdateRule::linear, two_tokens<T>(q, k, v, xt::ones<T>({2, 1})), T(1), f.chunk), 4, 11, 3, 4, 0, f.name);
    check_two_tokens(run<T>(UpdateRule::linear, two_tokens<T>(q, k, v, xt::ones<T>({2, 1})), T(0.5), f.chunk), 2, 5.5, 3, 4, 0,
                     std::string(f.name) + ", scale ½");
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(gated_rule, T, Types) {
  // S ← diag(exp g_t) S before the write. Same q, k, v as the linear case, S₀ = (4, 8).
  //   one decay per head, g = (ln ½, ln ¼):
  //     t = 0: S = (2, 4) + (2, 0) = (4, 4) → o₀ = 8;   t = 1: S = (1, 1) + (0, 3) = (1, 4) → o₁ = 1 + 8 = 9
  //   per key dimension, g₀ = (ln ½, 0), g₁ = (0, ln ¼):
  //     t = 0: S = (2, 8) + (2, 0) = (4, 8) → o₀ = 12;  t = 1: S = (4, 2) + (0, 3) = (4, 5) → o₁ = 4 + 10 = 14
  // Error: exp(ln ½), exp(ln ¼) within ~2u relative (ln rounded, then exp); the parallel form's
  // exp(G_t − G_s) and products add a few roundings: each value ≤ 28 (head 1) gathers ≤ 8u
  // relative: ≤ 112 eps. Tolerance 128 eps absolute.
  const xt::xtensor<T, 2> q = {{T(1), T(1)}, {T(1), T(2)}}, k = {{T(1), T(0)}, {T(0), T(1)}}, v = {{T(2)}, {T(3)}};
  const xt::xtensor<T, 2> s0 = {{T(4)}, {T(8)}};
  const T half = T(std::log(0.5)), quarter = T(std::log(0.25));
  for (const Form& f : kForms) {
    auto per_head = two_tokens<T>(q, k, v, s0);
    per_head.g = {{half}, {quarter}};
    check_two_tokens(run<T>(UpdateRule::gated, per_head, T(1), f.chunk), 8, 9, 1, 4, 128 * kEps<T>, std::string(f.name) + ", per head");
    auto per_dim = two_tokens<T>(q, k, v, s0);
    per_dim.g = {{half, T(0)}, {T(0), quarter}};
    check_two_tokens(run<T>(UpdateRule::gated, per_dim, T(1), f.chunk), 12, 14, 4, 5, 128 * kEps<T>, std::string(f.name) + ", per dimension");
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(delta_rule, T, Types) {
  // u_t = β_t (v_t − Sᵀ k_t), S ← S + k_t u_tᵀ: the same key twice, k₀ = k₁ = (1, 0), v = (2, 5),
  // q₀ = q₁ = (1, 1), S₀ = 0:
  //   β = 1:  u₀ = 2, S = (2, 0), o₀ = 2;  u₁ = 5 − 2 = 3, S = (5, 0), o₁ = 5  (the key now says 5;
  //           the linear rule would say 7)
  //   β = ½:  u₀ = 1, S = (1, 0), o₀ = 1;  u₁ = ½ (5 − 1) = 2, S = (3, 0), o₁ = 3.   Exact.
  const xt::xtensor<T, 2> q = {{T(1), T(1)}, {T(1), T(1)}}, k = {{T(1), T(0)}, {T(1), T(0)}}, v = {{T(2)}, {T(5)}};
  for (const Form& f : kForms) {
    auto h = two_tokens<T>(q, k, v, xt::zeros<T>({2, 1}));
    h.beta = {T(1), T(1)};
    check_two_tokens(run<T>(UpdateRule::delta, h, T(1), f.chunk), 2, 5, 5, 0, 0, std::string(f.name) + ", β = 1");
    h.beta = {T(0.5), T(0.5)};
    check_two_tokens(run<T>(UpdateRule::delta, h, T(1), f.chunk), 1, 3, 3, 0, 0, std::string(f.name) + ", β = ½");
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(gated_delta_rule, T, Types) {
  // Decay, then the delta write. S₀ = (4, 0), g = ln ½ per head at both tokens, k₀ = k₁ = (1, 0),
  // v = (6, 1), β = 1, q = (1, 1):
  //   t = 0: S = (2, 0); u = 6 − 2 = 4; S = (6, 0); o₀ = 6
  //   t = 1: S = (3, 0); u = 1 − 3 = −2; S = (1, 0); o₁ = 1
  // Error as in the gated case (values ≤ 12): tolerance 128 eps absolute.
  const xt::xtensor<T, 2> q = {{T(1), T(1)}, {T(1), T(1)}}, k = {{T(1), T(0)}, {T(1), T(0)}}, v = {{T(6)}, {T(1)}};
  const T half = T(std::log(0.5));
  for (const Form& f : kForms) {
    auto h = two_tokens<T>(q, k, v, xt::xtensor<T, 2>{{T(4)}, {T(0)}});
    h.g = {{half}, {half}};
    h.beta = {T(1), T(1)};
    check_two_tokens(run<T>(UpdateRule::gated_delta, h, T(1), f.chunk), 6, 1, 1, 0, 128 * kEps<T>, f.name);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(forms)

BOOST_DATA_TEST_CASE(parallel_and_chunked_agree_with_the_recurrence,
                     bdata::make(std::vector<int>{0, 1, 2, 3}) * bdata::make(std::vector<std::size_t>{1, 5, 8}) *
                         bdata::make(std::vector<std::size_t>{1, 3, 8, 9}) * bdata::make(std::vector<int>{0, 1}),
                     rule_index, n, chunk, per_dimension) {
  // The recurrence is the definition; the parallel form and the chunked form (chunks of 1, 3, 8,
  // 9 over 1, 5, 8 tokens: one chunk, several, a short last one) must give its outputs and final
  // state. Error: n ≤ 8 tokens, d ≤ 3, values O(1): ≤ ~50 roundings per value, magnified at most
  // 2^n = 256 by the unit triangular solve of the delta rules: ≤ 50 · 256 · u ≈ 1.4e-12.
  // Tolerance 1e-11.
  const auto rule = static_cast<UpdateRule>(rule_index);
  const auto h = grid_head(n, per_dimension != 0);
  const auto ref = vl::family_recurrent<double>(rule, h, 0.5);
  for (const std::size_t c : {kParallel, chunk}) {
    const auto r = run<double>(rule, h, 0.5, c);
    BOOST_TEST(r.o.shape() == ref.o.shape(), boost::test_tools::per_element());
    BOOST_TEST(xt::amax(xt::abs(r.o - ref.o))() <= 1e-11, vl::to_string(rule) << (c == kParallel ? " parallel" : " chunked"));
    BOOST_TEST(xt::amax(xt::abs(r.state - ref.state))() <= 1e-11, vl::to_string(rule) << (c == kParallel ? " parallel" : " chunked"));
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(an_empty_sequence_leaves_the_state, T, Types) {
  // n = 0: no outputs (G, 0, d_v) and the state S₀, in every form and rule.
  vl::FamilyHead<T> h;
  h.q = xt::zeros<T>({std::size_t(2), std::size_t(0), std::size_t(3)});
  h.k = xt::zeros<T>({std::size_t(0), std::size_t(3)});
  h.v = xt::zeros<T>({std::size_t(0), std::size_t(2)});
  h.g = xt::zeros<T>({std::size_t(0), std::size_t(1)});
  h.beta = xt::zeros<T>({std::size_t(0)});
  h.s0 = {{T(1), T(2)}, {T(3), T(4)}, {T(5), T(6)}};
  for (const UpdateRule rule : {UpdateRule::linear, UpdateRule::gated, UpdateRule::delta, UpdateRule::gated_delta})
    for (const Form& f : kForms) {
      const auto r = run<T>(rule, h, T(1), f.chunk);
      const std::array<std::size_t, 3> shape{2, 0, 2};
      BOOST_TEST(r.o.shape() == shape, boost::test_tools::per_element());
      BOOST_TEST(r.state == h.s0, boost::test_tools::per_element());
    }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(strong_decay_underflows_instead_of_overflowing, T, Types) {
  // g = −100 at each of 10 tokens: G_t reaches −1000, so exp(−G_s) would overflow (and ∞ · 0 make
  // NaN); the forms use only exp(G_t − G_s) ≤ 1. Each token then forgets everything before it
  // (e^{−100} ≈ 3.7e-44 is below either type's resolution next to O(1) values): o_t = s (q_t · k_t) v_t,
  // the state k_last v_lastᵀ. q_t = (1, 1), k_t = (1, t mod 2), v_t = t + 1, S₀ = 1, s = 1:
  // o_t = (1 + t mod 2)(t + 1). Error: the decayed terms (≤ 1e-43 · 20) and ≤ 4 roundings of values
  // ≤ 20: tolerance 64 eps absolute. Both decay shapes, gated and gated_delta (β = 1: the delta
  // read of a decayed state is ~0, so u_t = v_t).
  const std::size_t n = 10;
  for (const bool per_dimension : {false, true})
    for (const UpdateRule rule : {UpdateRule::gated, UpdateRule::gated_delta}) {
      vl::FamilyHead<T> h;
      h.q = xt::ones<T>({std::size_t(1), n, std::size_t(2)});
      h.k = xt::ones<T>({n, std::size_t(2)});
      h.v = xt::xtensor<T, 2>::from_shape({n, std::size_t(1)});
      for (std::size_t t = 0; t < n; ++t) {
        h.k(t, 1) = T(t % 2);
        h.v(t, 0) = T(t + 1);
      }
      h.g = xt::xtensor<T, 2>::from_shape({n, per_dimension ? std::size_t(2) : std::size_t(1)});
      h.g.fill(T(-100));
      h.beta = xt::ones<T>({n});
      h.s0 = xt::ones<T>({std::size_t(2), std::size_t(1)});
      for (const Form& f : {Form{"recurrent", 0}, Form{"parallel", kParallel}, Form{"chunked 4", 4}}) {
        const auto r = run<T>(rule, h, T(1), f.chunk);
        for (std::size_t t = 0; t < n; ++t)
          BOOST_TEST(std::abs(r.o(0, t, 0) - T((1 + t % 2) * (t + 1))) <= 64 * kEps<T>,
                     vl::to_string(rule) << " " << f.name << (per_dimension ? " per dimension" : " per head") << " t = " << t);
        BOOST_TEST(std::abs(r.state(0, 0) - T(n)) <= 64 * kEps<T>);  // k_9 = (1, 1), v_9 = 10
        BOOST_TEST(std::abs(r.state(1, 0) - T(n)) <= 64 * kEps<T>);
      }
    }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(nan_reaches_every_later_output_and_the_state, T, Types) {
  // Linear rule, v₂(0) = NaN among 5 tokens (keys all ones): the write at t = 2 makes column 0 of
  // the state NaN, so o_t(0) is NaN for t ≥ 2 and the final state's column 0 too, in every form;
  // column 1 never meets it. The recurrence is causal: o₀, o₁ stay finite. (The parallel and chunked
  // forms also spoil o₀(0), o₁(0) when they share token 2's block: their masked products multiply
  // a NaN by the mask's zeros, 0 · NaN = NaN. That is not asserted here.)
  const std::size_t n = 5;
  vl::FamilyHead<T> h;
  h.q = xt::ones<T>({std::size_t(1), n, std::size_t(2)});
  h.k = xt::ones<T>({n, std::size_t(2)});
  h.v = xt::ones<T>({n, std::size_t(2)});
  h.v(2, 0) = std::numeric_limits<T>::quiet_NaN();
  h.s0 = xt::zeros<T>({std::size_t(2), std::size_t(2)});
  for (const Form& f : {Form{"recurrent", 0}, Form{"parallel", kParallel}, Form{"chunked 2", 2}}) {
    const auto r = run<T>(UpdateRule::linear, h, T(1), f.chunk);
    for (std::size_t t = 2; t < n; ++t) BOOST_TEST(std::isnan(r.o(0, t, 0)), f.name << " t = " << t);
    for (std::size_t t = 0; t < n; ++t) BOOST_TEST(r.o(0, t, 1) == T(2 * (t + 1)), f.name << " t = " << t);  // Σ_{s≤t} (q·k) · 1
    BOOST_TEST(std::isnan(r.state(0, 0)));
    BOOST_TEST(r.state(0, 1) == T(n));
    if (f.chunk == 0)
      for (std::size_t t = 0; t < 2; ++t) BOOST_TEST(r.o(0, t, 0) == T(2 * (t + 1)), "recurrent t = " << t);
    if (f.chunk == 2)  // chunk [0, 2) comes before the NaN's chunk
      for (std::size_t t = 0; t < 2; ++t) BOOST_TEST(r.o(0, t, 0) == T(2 * (t + 1)), "chunked 2 t = " << t);
  }
}

BOOST_AUTO_TEST_CASE(shapes_that_do_not_fit_are_refused) {
  auto good = [] {
    vl::FamilyHead<double> h;
    h.q = xt::zeros<double>({1, 3, 2});
    h.k = xt::zeros<double>({3, 2});
    h.v = xt::zeros<double>({3, 4});
    h.g = xt::zeros<double>({3, 1});
    h.beta = xt::zeros<double>({3});
    h.s0 = xt::zeros<double>({2, 4});
    return h;
  };
  BOOST_CHECK_NO_THROW(vl::family_recurrent<double>(UpdateRule::gated_delta, good(), 1.0));
  auto q = good();
  q.q = xt::zeros<double>({1, 2, 2});  // 2 tokens, k has 3
  auto v = good();
  v.v = xt::zeros<double>({2, 4});
  auto s = good();
  s.s0 = xt::zeros<double>({4, 2});  // (d_v, d_k), not (d_k, d_v)
  auto g = good();
  g.g = xt::zeros<double>({3, 3});  // neither 1 nor d_k = 2 columns
  auto b = good();
  b.beta = xt::zeros<double>({2});
  for (const auto& h : {q, v, s}) BOOST_CHECK_THROW(vl::family_parallel<double>(UpdateRule::linear, h, 1.0), std::invalid_argument);
  BOOST_CHECK_THROW(vl::family_recurrent<double>(UpdateRule::gated, g, 1.0), std::invalid_argument);
  BOOST_CHECK_NO_THROW(vl::family_recurrent<double>(UpdateRule::delta, g, 1.0));  // g is not read by delta
  BOOST_CHECK_THROW(vl::family_chunked<double>(UpdateRule::delta, b, 1.0, 2), std::invalid_argument);
  BOOST_CHECK_NO_THROW(vl::family_chunked<double>(UpdateRule::gated, b, 1.0, 2));  // nor β by gated
  BOOST_CHECK_THROW(vl::family_chunked<double>(UpdateRule::linear, good(), 1.0, 0), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(ut_transform_inverts_the_unit_triangular_system) {
  // T = (I + tril(diag β M, −1))⁻¹ diag β with M_ts = Σ_d k_td k_sd exp(G_td − G_sd): so
  // (I + tril(diag β M, −1)) T = diag β, checked with M built here from that definition. m = 5,
  // d_k = 3, keys of norm ≤ 1, β ∈ (0, 1), G ≤ 0 per dimension (and G = 0). Error: |M| ≤ 1 and
  // entries of T are O(1); each checked sum has ≤ 5 terms of products carrying ≤ ~20 roundings
  // (the substitution, exp, the dot products): ≤ 500u ≈ 5.6e-14. Tolerance 1e-13.
  const std::size_t m = 5, dk = 3;
  xt::xtensor<double, 2> k = xt::xtensor<double, 2>::from_shape({m, dk}), g = k;
  fill(k, 0.9);
  k /= std::sqrt(double(dk));
  fill(g, 2.6);
  g = -xt::abs(g);
  xt::xtensor<double, 2> G = g;  // cumulative over the block, as the chunked form passes it
  for (std::size_t t = 1; t < m; ++t) xt::row(G, t) += xt::row(G, t - 1);
  const xt::xtensor<double, 1> beta = {0.3, 0.9, 0.5, 0.7, 0.4};
  for (const bool per_dimension : {false, true}) {
    const xt::xtensor<double, 2> Gd = per_dimension ? G : xt::xtensor<double, 2>(xt::zeros<double>({m, dk}));
    const auto Tm = vl::UtTransform::transform<double>(k, Gd, beta, per_dimension);
    for (std::size_t t = 0; t < m; ++t)
      for (std::size_t c = 0; c < m; ++c) {
        double lt = Tm(t, c);  // row t of (I + tril(diag β M, −1)) times column c of T
        for (std::size_t s = 0; s < t; ++s) {
          double mts = 0;
          for (std::size_t d = 0; d < dk; ++d) mts += k(t, d) * k(s, d) * std::exp(Gd(t, d) - Gd(s, d));
          lt += beta(t) * mts * Tm(s, c);
        }
        BOOST_TEST(std::abs(lt - (t == c ? beta(t) : 0.0)) <= 1e-13, (per_dimension ? "per dimension" : "G = 0") << " (" << t << ", " << c << ")");
      }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(work)

BOOST_DATA_TEST_CASE(multiply_adds_and_state_updates,
                     bdata::make(std::vector<std::size_t>{1, 4, 7}) * bdata::make(std::vector<std::size_t>{1, 3}),
                     n, G) {
  // d_k = 3, d_v = 2. Per the equations:
  //   recurrent, linear:  per token the write k uᵀ (d_k d_v) and G reads Sᵀq (G d_k d_v): n (1 + G) d_k d_v;
  //                       delta adds the read Sᵀk (d_k d_v) per token. n state updates.
  //   parallel, linear:   per query head Q Kᵀ (n² d_k), (Q ⊙ e^G) S₀ (n d_k d_v), the masked product
  //                       times U (n² d_v); then the state Kᵀ U (d_k n d_v). One state update.
  //   chunked:            one state update per chunk: ⌈n / c⌉.
  // (More below, beside the cases they count.)
  const std::size_t dk = 3, dv = 2;
  vl::FamilyHead<double> h;
  h.q = xt::ones<double>({G, n, dk});
  h.k = xt::ones<double>({n, dk});
  h.v = xt::ones<double>({n, dv});
  h.beta = xt::ones<double>({n});
  h.s0 = xt::zeros<double>({dk, dv});
  const auto linear_rec = vl::count_work([&] { vl::family_recurrent<double>(UpdateRule::linear, h, 1.0); });
  BOOST_TEST(linear_rec.multiply_adds == n * (1 + G) * dk * dv);
  BOOST_TEST(linear_rec.state_updates == n);
  const auto delta_rec = vl::count_work([&] { vl::family_recurrent<double>(UpdateRule::delta, h, 1.0); });
  BOOST_TEST(delta_rec.multiply_adds == n * (2 + G) * dk * dv);
  BOOST_TEST(delta_rec.state_updates == n);
  const auto linear_par = vl::count_work([&] { vl::family_parallel<double>(UpdateRule::linear, h, 1.0); });
  BOOST_TEST(linear_par.multiply_adds == G * (n * n * dk + n * dk * dv + n * n * dv) + dk * n * dv);
  BOOST_TEST(linear_par.state_updates == 1u);
  //   parallel, gated per key dimension: the masked product Σ_d q_td k_sd e^{G_td − G_sd} for each
  //                       s ≤ t, d_k each (n(n + 1)/2 pairs) in place of Q Kᵀ's n² d_k.
  h.g = -xt::ones<double>({n, dk});
  const auto gated_par = vl::count_work([&] { vl::family_parallel<double>(UpdateRule::gated, h, 1.0); });
  BOOST_TEST(gated_par.multiply_adds == G * (n * (n + 1) / 2 * dk + n * dk * dv + n * n * dv) + dk * n * dv);
  //   UT transform of the n tokens: K Kᵀ (n² d_k; per dimension the n(n − 1)/2 pairs s < t, d_k
  //                       each), then T(t, c) = −β_t Σ_{c≤s<t} M_ts T(s, c), t − c each:
  //                       Σ_{t<n} t(t + 1)/2 = (n − 1) n (n + 1)/6.
  const xt::xtensor<double, 2> zero_g = xt::zeros<double>({n, dk});
  BOOST_TEST(vl::count_multiply_adds([&] { vl::UtTransform::transform<double>(h.k, zero_g, h.beta, false); }) ==
             n * n * dk + (n - 1) * n * (n + 1) / 6);
  BOOST_TEST(vl::count_multiply_adds([&] { vl::UtTransform::transform<double>(h.k, zero_g, h.beta, true); }) ==
             n * (n - 1) / 2 * dk + (n - 1) * n * (n + 1) / 6);
  for (const std::size_t c : {std::size_t(1), std::size_t(2), std::size_t(3), n, n + 1})
    BOOST_TEST(vl::count_work([&] { vl::family_chunked<double>(UpdateRule::linear, h, 1.0, c); }).state_updates == (n + c - 1) / c,
               "chunk " << c);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()
