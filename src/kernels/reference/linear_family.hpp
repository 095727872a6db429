#pragma once
// The family of linear recurrences, as ONNX's LinearAttention (opset 27) defines it, for one
// key/value head and the G query heads that read it (GQA). Per token t, with the state
// S (d_k × d_v), log-decay g_t (d_k, or one number per head), β_t, scale s:
//
//   S ← diag(exp g_t) S                      gated, gated_delta: the decay forgets, before the write
//   u_t = β_t (v_t − Sᵀ k_t)                  delta, gated_delta: write only what S does not yet say
//   u_t = v_t                                 linear, gated
//   S ← S + k_t u_tᵀ                          the write
//   o_t = s · Sᵀ q_t                          the read, for each of the G query heads
//
// Three forms (Katharopoulos et al. 2020; Dao & Gu 2024; Yang et al. 2024):
//   recurrent  the loop above, token by token                                      O(n·d²)
//   parallel   with G_t = Σ_{r≤t} g_r, the n×n segment-sum mask D_ts = exp(G_t − G_s) (s ≤ t):
//              (I + tril(diag β (K Kᵀ ⊙ D), −1)) U = diag β (V − (K ⊙ e^G) S₀),
//              O = s · ((Q ⊙ e^G) S₀ + tril(Q Kᵀ ⊙ D) U)                          O(n²·d)
//   chunked    the parallel form inside chunks of c tokens, the state between them; the delta
//              rules through the UT transform T = (I + tril(diag β (K Kᵀ ⊙ D), −1))⁻¹ diag β,
//              W = T (K ⊙ e^G), U = T V − W S                                      O(n·c·d + n·d² + n·c²)
// Every multiply-add is tallied in the counter of work_counters.hpp (matmul's, and the loops' own
// beside them); the lesson linear-family's cost claim compares the tallies with the formulas.
// With per-key-dimension decay the mask is per dimension: (Q Kᵀ ⊙ D)_ts = Σ_d q_td k_sd e^{G_td − G_sd}.
// Every exponent G_t − G_s with s ≤ t is ≤ 0 for g ≤ 0, so no factor overflows.
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/matmul.hpp"
#include "ops/linear_family.hpp"  // UpdateRule

namespace vl {

inline bool gated(UpdateRule r) { return r == UpdateRule::gated || r == UpdateRule::gated_delta; }
inline bool delta(UpdateRule r) { return r == UpdateRule::delta || r == UpdateRule::gated_delta; }

/// One key/value head's sequence and the query heads that read it.
///   q (G, n, d_k), k (n, d_k), v (n, d_v), g (n, d_k) or (n, 1) [gated rules], beta (n) [delta
///   rules], s0 (d_k, d_v): the state before the first token.
template <class T>
struct FamilyHead {
  xt::xtensor<T, 3> q;
  xt::xtensor<T, 2> k, v, g;
  xt::xtensor<T, 1> beta;
  xt::xtensor<T, 2> s0;
};

/// Outputs o (G, n, d_v) and the state after the last token (d_k, d_v).
template <class T>
struct FamilyHeadResult {
  xt::xtensor<T, 3> o;
  xt::xtensor<T, 2> state;
};

/// g_t for key dimension d: per dimension, or the head's one number.
template <class T>
T log_decay(const xt::xtensor<T, 2>& g, std::size_t t, std::size_t d) {
  return g.shape(1) == 1 ? g(t, 0) : g(t, d);
}

/// The recurrence's step at token t (the ONNX definition): decay, correction, write.
struct OnnxStep {
  template <class T>
  static void update(UpdateRule rule, xt::xtensor<T, 2>& S, const FamilyHead<T>& h, std::size_t t) {
    const std::size_t dk = S.shape(0), dv = S.shape(1);
    if (gated(rule))
      for (std::size_t d = 0; d < dk; ++d) xt::row(S, d) *= std::exp(log_decay(h.g, t, d));
    xt::xtensor<T, 1> u = xt::row(h.v, t);
    if (delta(rule)) {
      for (std::size_t m = 0; m < dv; ++m) {
        T read = 0;
        for (std::size_t d = 0; d < dk; ++d) read += S(d, m) * h.k(t, d);
        u(m) = h.beta(t) * (u(m) - read);
      }
      multiply_adds() += std::uint64_t(dk) * dv;  // the read Sᵀk_t: the d_k × d_v loop above
    }
    for (std::size_t d = 0; d < dk; ++d)
      for (std::size_t m = 0; m < dv; ++m) S(d, m) += h.k(t, d) * u(m);
    multiply_adds() += std::uint64_t(dk) * dv;  // the write k_t u_tᵀ: the d_k × d_v loop above
  }
};

/// Throws std::invalid_argument when the head's shapes do not fit together or the rule.
template <class T>
void check_family_head(UpdateRule rule, const FamilyHead<T>& h) {
  const std::size_t n = h.k.shape(0), dk = h.k.shape(1), dv = h.v.shape(1);
  auto bad = [](const std::string& what) { throw std::invalid_argument("linear family: " + what); };
  if (h.q.shape(1) != n || h.q.shape(2) != dk) bad(fmt::format("q is ({}, {}, {}), expected (G, {}, {})", h.q.shape(0), h.q.shape(1), h.q.shape(2), n, dk));
  if (h.v.shape(0) != n) bad(fmt::format("v has {} tokens, k has {}", h.v.shape(0), n));
  if (h.s0.shape(0) != dk || h.s0.shape(1) != dv) bad(fmt::format("the state is ({}, {}), expected ({}, {})", h.s0.shape(0), h.s0.shape(1), dk, dv));
  if (gated(rule) && (h.g.shape(0) != n || (h.g.shape(1) != 1 && h.g.shape(1) != dk)))
    bad(fmt::format("the log-decay is ({}, {}), expected ({}, 1) or ({}, {})", h.g.shape(0), h.g.shape(1), n, n, dk));
  if (delta(rule) && h.beta.size() != n) bad(fmt::format("beta has {} entries, expected {}", h.beta.size(), n));
}

/// Recurrent form: the state updated token by token (Step: OnnxStep; the lessons' controls
/// instantiate it with a broken step).
template <class T, class Step = OnnxStep>
FamilyHeadResult<T> family_recurrent(UpdateRule rule, const FamilyHead<T>& h, T scale) {
  check_family_head(rule, h);
  const std::size_t G = h.q.shape(0), n = h.k.shape(0), dk = h.k.shape(1), dv = h.v.shape(1);
  FamilyHeadResult<T> r{xt::zeros<T>({G, n, dv}), h.s0};
  for (std::size_t t = 0; t < n; ++t) {
    Step::update(rule, r.state, h, t);
    ++state_updates();
    for (std::size_t j = 0; j < G; ++j)
      for (std::size_t m = 0; m < dv; ++m) {
        T acc = 0;
        for (std::size_t d = 0; d < dk; ++d) acc += h.q(j, t, d) * r.state(d, m);
        r.o(j, t, m) = scale * acc;
      }
    multiply_adds() += std::uint64_t(G) * dk * dv;  // the reads Sᵀq_t: the G × d_v × d_k loop above
  }
  return r;
}

// ---- the pieces the parallel and chunked forms share, over rows [a, b) of a head.

/// G_t − G_{a−1} = Σ_{a≤r≤t} g_r for t in [a, b): the cumulative log-decay from the block's
/// start, (b − a, d_k) (zeros for the ungated rules).
template <class T>
xt::xtensor<T, 2> cumulative_log_decay(UpdateRule rule, const FamilyHead<T>& h, std::size_t a, std::size_t b) {
  const std::size_t dk = h.k.shape(1);
  xt::xtensor<T, 2> G = xt::zeros<T>({b - a, dk});
  if (!gated(rule)) return G;
  for (std::size_t t = a; t < b; ++t)
    for (std::size_t d = 0; d < dk; ++d) G(t - a, d) = (t > a ? G(t - a - 1, d) : T(0)) + log_decay(h.g, t, d);
  return G;
}

/// P_ts = Σ_d x_td k_sd exp(G_td − G_sd) for s ≤ t (s < t when strict), 0 above: X Kᵀ under
/// the segment-sum mask. X (m, d_k), K (m, d_k), G (m, d_k) → (m, m). A per-head decay is the
/// mask exp(G_t − G_s) on one product X Kᵀ; a per-dimension one is summed per dimension.
template <class T, class EX, class EK>
xt::xtensor<T, 2> masked_products(const EX& x, const EK& k, const xt::xtensor<T, 2>& G, bool per_dimension, bool strict) {
  const std::size_t m = G.shape(0), dk = G.shape(1);
  xt::xtensor<T, 2> P;
  if (!per_dimension) {
    P = matmul<T>(x, xt::transpose(k));
    for (std::size_t t = 0; t < m; ++t)
      for (std::size_t s = 0; s < m; ++s)
        P(t, s) = (s < t || (s == t && !strict)) ? P(t, s) * std::exp(G(t, 0) - G(s, 0)) : T(0);
    return P;
  }
  P = xt::zeros<T>({m, m});
  std::uint64_t done = 0;  // the loop's multiply-adds, tallied as it runs
  for (std::size_t t = 0; t < m; ++t)
    for (std::size_t s = 0; s < (strict ? t : t + 1); ++s) {
      T acc = 0;
      for (std::size_t d = 0; d < dk; ++d) acc += x(t, d) * k(s, d) * std::exp(G(t, d) - G(s, d));
      P(t, s) = acc;
      done += dk;
    }
  multiply_adds() += done;
  return P;
}

/// X ⊙ exp(G): (m, d_k).
template <class T, class EX>
xt::xtensor<T, 2> decayed(const EX& x, const xt::xtensor<T, 2>& G) {
  return x * xt::exp(G);
}

/// The state after the block: diag(exp G_last) S + Σ_s (k_s ⊙ exp(G_last − G_s)) u_sᵀ (one state update).
template <class T, class EK>
xt::xtensor<T, 2> state_after(const xt::xtensor<T, 2>& S, const EK& k, const xt::xtensor<T, 2>& U, const xt::xtensor<T, 2>& G) {
  const std::size_t m = G.shape(0), dk = G.shape(1);
  ++state_updates();
  if (m == 0) return S;
  xt::xtensor<T, 2> kd = k;
  xt::xtensor<T, 2> out = S;
  for (std::size_t d = 0; d < dk; ++d) {
    xt::row(out, d) *= std::exp(G(m - 1, d));
    for (std::size_t s = 0; s < m; ++s) kd(s, d) *= std::exp(G(m - 1, d) - G(s, d));
  }
  return out + matmul<T>(xt::transpose(kd), U);
}

/// O = s · ((Q ⊙ e^G) S + tril(Q Kᵀ ⊙ D) U) for each query head, into rows [a, b) of `o`.
template <class T>
void read_block(UpdateRule, const FamilyHead<T>& h, std::size_t a, std::size_t b, const xt::xtensor<T, 2>& S,
                const xt::xtensor<T, 2>& U, const xt::xtensor<T, 2>& G, bool per_dimension, T scale, xt::xtensor<T, 3>& o) {
  auto rows = xt::range(a, b);
  const auto k = xt::view(h.k, rows, xt::all());
  for (std::size_t j = 0; j < h.q.shape(0); ++j) {
    const auto q = xt::view(h.q, j, rows, xt::all());
    const xt::xtensor<T, 2> A = masked_products<T>(q, k, G, per_dimension, false);
    xt::view(o, j, rows, xt::all()) = scale * (matmul<T>(decayed<T>(q, G), S) + matmul<T>(A, U));
  }
}

/// Parallel form over the whole sequence: the n×n masks, and for the delta rules the unit lower
/// triangular system (I + tril(diag β (K Kᵀ ⊙ D), −1)) U = diag β (V − (K ⊙ e^G) S₀) solved by
/// forward substitution.
template <class T>
FamilyHeadResult<T> family_parallel(UpdateRule rule, const FamilyHead<T>& h, T scale) {
  check_family_head(rule, h);
  const std::size_t G = h.q.shape(0), n = h.k.shape(0), dv = h.v.shape(1);
  const bool per_dimension = gated(rule) && h.g.shape(1) != 1;
  const xt::xtensor<T, 2> Gc = cumulative_log_decay(rule, h, 0, n);
  xt::xtensor<T, 2> U = h.v;
  if (delta(rule)) {
    const xt::xtensor<T, 2> M = masked_products<T>(h.k, h.k, Gc, per_dimension, true);
    U -= matmul<T>(decayed<T>(h.k, Gc), h.s0);
    std::uint64_t done = 0;  // the substitution's multiply-adds, tallied as it runs
    for (std::size_t t = 0; t < n; ++t)
      for (std::size_t m = 0; m < dv; ++m) {
        T acc = U(t, m);  // row t: U_t = β_t (R_t − Σ_{s<t} M_ts U_s)
        for (std::size_t s = 0; s < t; ++s) acc -= M(t, s) * U(s, m);
        U(t, m) = h.beta(t) * acc;
        done += t;
      }
    multiply_adds() += done;
  }
  FamilyHeadResult<T> r{xt::zeros<T>({G, n, dv}), {}};
  read_block(rule, h, 0, n, h.s0, U, Gc, per_dimension, scale, r.o);
  r.state = state_after<T>(h.s0, h.k, U, Gc);
  return r;
}

/// The UT transform of a chunk (Yang et al. 2024, §3): T = (I + tril(diag β M, −1))⁻¹ diag β,
/// M = K Kᵀ ⊙ D strictly below the diagonal, by forward substitution on the columns.
/// K (m, d_k), G (m, d_k), beta (m) → (m, m)
struct UtTransform {
  template <class T, class EK, class EB>
  static xt::xtensor<T, 2> transform(const EK& k, const xt::xtensor<T, 2>& G, const EB& beta, bool per_dimension) {
    const xt::xtensor<T, 2> M = masked_products<T>(k, k, G, per_dimension, true);
    const std::size_t m = M.shape(0);
    xt::xtensor<T, 2> Tm = xt::zeros<T>({m, m});
    std::uint64_t done = 0;  // the substitution's multiply-adds, tallied as it runs
    for (std::size_t t = 0; t < m; ++t) {
      Tm(t, t) = beta(t);
      for (std::size_t c = 0; c < t; ++c) {
        T acc = 0;
        for (std::size_t s = c; s < t; ++s) acc += M(t, s) * Tm(s, c);
        Tm(t, c) = -beta(t) * acc;
        done += t - c;
      }
    }
    multiply_adds() += done;
    return Tm;
  }
};

/// Chunked form, chunks of `chunk` ≥ 1 tokens (the last one shorter when chunk does not divide
/// n): the parallel form inside each chunk from the state the chunks before it left, the UT
/// transform per chunk for the delta rules (Ut: UtTransform; the controls break it).
template <class T, class Ut = UtTransform>
FamilyHeadResult<T> family_chunked(UpdateRule rule, const FamilyHead<T>& h, T scale, std::size_t chunk) {
  check_family_head(rule, h);
  if (chunk == 0) throw std::invalid_argument("linear family: the chunk size must be >= 1");
  const std::size_t G = h.q.shape(0), n = h.k.shape(0), dv = h.v.shape(1);
  const bool per_dimension = gated(rule) && h.g.shape(1) != 1;
  FamilyHeadResult<T> r{xt::zeros<T>({G, n, dv}), h.s0};
  for (std::size_t a = 0; a < n; a += chunk) {
    const std::size_t b = std::min(n, a + chunk);
    auto rows = xt::range(a, b);
    const auto k = xt::view(h.k, rows, xt::all());
    const xt::xtensor<T, 2> Gc = cumulative_log_decay(rule, h, a, b);
    xt::xtensor<T, 2> U = xt::view(h.v, rows, xt::all());
    if (delta(rule)) {
      const xt::xtensor<T, 2> Tm = Ut::template transform<T>(k, Gc, xt::view(h.beta, rows), per_dimension);
      const xt::xtensor<T, 2> W = matmul<T>(Tm, decayed<T>(k, Gc));
      U = matmul<T>(Tm, U) - matmul<T>(W, r.state);
    }
    read_block(rule, h, a, b, r.state, U, Gc, per_dimension, scale, r.o);
    r.state = state_after<T>(r.state, k, U, Gc);
  }
  return r;
}

// Instantiated once, for float and double with the usual steps, in linear_family.cpp: a file that calls
// them compiles none of their bodies. Other steps (a negative control's broken one) instantiate
// from the definitions above where they are used.
extern template FamilyHeadResult<float> family_recurrent<float, OnnxStep>(UpdateRule, const FamilyHead<float>&, float);
extern template FamilyHeadResult<float> family_parallel<float>(UpdateRule, const FamilyHead<float>&, float);
extern template FamilyHeadResult<float> family_chunked<float, UtTransform>(UpdateRule, const FamilyHead<float>&, float, std::size_t);
extern template FamilyHeadResult<double> family_recurrent<double, OnnxStep>(UpdateRule, const FamilyHead<double>&, double);
extern template FamilyHeadResult<double> family_parallel<double>(UpdateRule, const FamilyHead<double>&, double);
extern template FamilyHeadResult<double> family_chunked<double, UtTransform>(UpdateRule, const FamilyHead<double>&, double, std::size_t);

}  // namespace vl
