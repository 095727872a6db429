// The fast chunked linear family of linear_family_fast.hpp (its three passes), for float and double.
#include "kernels/fused/linear_family_fast.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "kernels/fused/block_gemm.hpp"
#include "kernels/fused/softmax_rows.hpp"  // row_exp_sum, exp_of: the fused attention's exp
#include "kernels/fused/work_items.hpp"  // worker_count
#include "kernels/platform/blas_threads.hpp"
#include "kernels/platform/parked_threads.hpp"
#include "kernels/platform/vector_path.hpp"
#include "kernels/reference/linear_family_heads.hpp"  // check_family_inputs

namespace vl {

// Named, not anonymous: the public template's lambdas capture these types.
namespace linear_family_fast_detail {

// Chunks are taken a window of kWindow at a time; what pass 1 and 2 leave for the passes after
// them is kept for three windows (the ones the three passes work on at once), in a ring.
constexpr std::size_t kWindow = 8;
constexpr std::size_t kRing = 3;

// The problem, its inputs, and the ring of what pass 1 and 2 leave.
template <class T>
struct Family {
  std::size_t heads, Hq, Hkv, G, n, dk, dv, c, chunks, windows;
  bool gated, delta;
  T scale;
  VectorPath path;
  const T *q, *k, *v, *g, *beta;
  std::vector<T> cum;  // G_t, from the chunk's start: (B·Hkv, n)
  std::vector<T> eg;   // e^{G_t}: (B·Hkv, n)
  std::vector<T> a;    // A_j: (ring, B·Hkv, window, G, c, c), each m × m with row stride m
  std::vector<T> w;    // −W: (ring, B·Hkv, window, c, d_k) (delta rules)
  std::vector<T> u;    // U₀, then U: (ring, B·Hkv, window, c, d_v)
  std::vector<T> sc;   // S_c, the state before the chunk: (ring, B·Hkv, window, d_k, d_v)

  std::size_t rows(std::size_t ci) const { return std::min(c, n - ci * c); }
  std::size_t chunks_in(std::size_t window) const { return std::min(kWindow, chunks - window * kWindow); }
  const T* query(std::size_t bh, std::size_t j, std::size_t a0) const {
    return q + (((bh / Hkv) * Hq + (bh % Hkv) * G + j) * n + a0) * dk;
  }
  // Chunk ci of head bh: its place in the ring.
  std::size_t slot(std::size_t bh, std::size_t ci) const { return ((ci / kWindow) % kRing * heads + bh) * kWindow + ci % kWindow; }
  T* a_block(std::size_t bh, std::size_t ci, std::size_t j) { return a.data() + (slot(bh, ci) * G + j) * c * c; }
  T* w_rows(std::size_t bh, std::size_t ci) { return w.data() + slot(bh, ci) * c * dk; }
  T* u_rows(std::size_t bh, std::size_t ci) { return u.data() + slot(bh, ci) * c * dv; }
  T* s_before(std::size_t bh, std::size_t ci) { return sc.data() + slot(bh, ci) * dk * dv; }
};

// A thread's workspace: pass 1's D (all ones for the ungated rules, never written then), Kᵀ, K Kᵀ, T and K ⊙ e^G; pass 2's K̃; pass 3's Q ⊙ e^G.
template <class T>
struct ChunkWork {
  std::vector<T> d, kt, m, t, kd, kl, qd;
  explicit ChunkWork(const Family<T>& f)
      : d(f.c * f.c, T(1)), kt(f.dk * f.c), m(f.c * f.c), t(f.c * f.c), kd(f.c * f.dk), kl(f.c * f.dk), qd(f.c * f.dk) {}
};

// Pass 1 for chunk ci of head bh (see the file comment).
template <class T>
void chunk_products(Family<T>& f, ChunkWork<T>& w, std::size_t bh, std::size_t ci) {
  const std::size_t a0 = ci * f.c, m = f.rows(ci), dk = f.dk, dv = f.dv, c = f.c;
  const T* K = f.k + (bh * f.n + a0) * dk;
  const T* V = f.v + (bh * f.n + a0) * dv;
  T* eg = f.eg.data() + bh * f.n + a0;
  T* cum = f.cum.data() + bh * f.n + a0;
  // G_t, e^{G_t}, and D_ts = exp(G_t − G_s) for s ≤ t (row t computed as exp((−G_s) − (−G_t)));
  // the ungated rules keep the workspace's D = 1.
  if (f.gated) {
    const T* g = f.g + bh * f.n + a0;
    for (std::size_t t = 0; t < m; ++t) {
      cum[t] = (t ? cum[t - 1] : T(0)) + g[t];
      eg[t] = exp_of(cum[t]);
    }
    for (std::size_t t = 0; t < m; ++t) {
      T* row = w.d.data() + t * c;
      for (std::size_t s = 0; s <= t; ++s) row[s] = -cum[s];
      row_exp_sum(row, t + 1, -cum[t]);
    }
  } else {
    std::fill(cum, cum + m, T(0));
    std::fill(eg, eg + m, T(1));
  }
  // Kᵀ packed (d_k × m), so that Q Kᵀ and K Kᵀ are block_gemm's A·B with B row-major.
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t x = 0; x < dk; ++x) w.kt[x * m + j] = K[j * dk + x];
  // A_j = s · tril(Q_j Kᵀ ⊙ D)
  for (std::size_t j = 0; j < f.G; ++j) {
    T* A = f.a_block(bh, ci, j);
    block_gemm(f.path, false, false, m, m, dk, f.query(bh, j, a0), dk, w.kt.data(), m, A, m);
    for (std::size_t t = 0; t < m; ++t) {
      T* row = A + t * m;
      const T* drow = w.d.data() + t * c;
      for (std::size_t s = 0; s <= t; ++s) row[s] = f.scale * (row[s] * drow[s]);
      std::fill(row + t + 1, row + m, T(0));
    }
  }
  T* U = f.u_rows(bh, ci);
  if (f.delta) {
    // T by forward substitution, row by row: T_t· = −β_t Σ_{s<t} M_ts T_s·, T_tt = β_t, with
    // M_ts = (K Kᵀ)_ts D_ts (T_s· is zero right of s). Each T_tx sums its terms in ascending s.
    block_gemm(f.path, false, false, m, m, dk, K, dk, w.kt.data(), m, w.m.data(), m);
    const T* beta = f.beta + bh * f.n + a0;
    for (std::size_t t = 0; t < m; ++t) {
      T* __restrict row = w.t.data() + t * m;
      std::fill(row, row + m, T(0));
      for (std::size_t s = 0; s < t; ++s) {
        const T coef = w.m[t * m + s] * w.d[t * c + s];
        const T* __restrict rs = w.t.data() + s * m;
        for (std::size_t x = 0; x <= s; ++x) row[x] += coef * rs[x];
      }
      for (std::size_t x = 0; x < t; ++x) row[x] = -beta[t] * row[x];
      row[t] = beta[t];
    }
    // −W = −T (K ⊙ e^G), U₀ = T V
    for (std::size_t t = 0; t < m; ++t)
      for (std::size_t x = 0; x < dk; ++x) w.kd[t * dk + x] = K[t * dk + x] * eg[t];
    T* W = f.w_rows(bh, ci);
    block_gemm(f.path, false, false, m, dk, m, w.t.data(), m, w.kd.data(), dk, W, dk);
    for (std::size_t x = 0; x < m * dk; ++x) W[x] = -W[x];
    block_gemm(f.path, false, false, m, dv, m, w.t.data(), m, V, dv, U, dv);
  } else {
    std::copy(V, V + m * dv, U);
  }
}

// Pass 2 for head bh over the chunks of one window, in order: the state S carried through them.
template <class T>
void carry_state(Family<T>& f, std::vector<T>& kl, std::size_t bh, std::size_t window, T* state) {
  const std::size_t dk = f.dk, dv = f.dv;
  for (std::size_t ci = window * kWindow; ci < window * kWindow + f.chunks_in(window); ++ci) {
    const std::size_t a0 = ci * f.c, m = f.rows(ci);
    std::copy(state, state + dk * dv, f.s_before(bh, ci));
    T* U = f.u_rows(bh, ci);
    if (f.delta) block_gemm(f.path, false, true, m, dv, dk, f.w_rows(bh, ci), dk, state, dv, U, dv);  // U = U₀ − W S
    const T* K = f.k + (bh * f.n + a0) * dk;
    if (f.gated) {  // S ← e^{G_last} S;  K̃ = K ⊙ e^{G_last − G}
      const T last = f.eg[bh * f.n + a0 + m - 1];
      for (std::size_t x = 0; x < dk * dv; ++x) state[x] *= last;
      const T* cum = f.cum.data() + bh * f.n + a0;
      for (std::size_t t = 0; t < m; ++t) {
        const T factor = exp_of(cum[m - 1] - cum[t]);
        for (std::size_t x = 0; x < dk; ++x) kl[t * dk + x] = K[t * dk + x] * factor;
      }
      K = kl.data();
    }
    block_gemm(f.path, true, true, dk, dv, m, K, dk, U, dv, state, dv);  // S += K̃ᵀ U
  }
}

// Pass 3 for chunk ci of head bh: O_j = (s · Q_j ⊙ e^G) S_c + A_j U.
template <class T>
void chunk_outputs(Family<T>& f, std::vector<T>& qd, std::size_t bh, std::size_t ci, T* out) {
  const std::size_t a0 = ci * f.c, m = f.rows(ci), dk = f.dk, dv = f.dv;
  const T* eg = f.eg.data() + bh * f.n + a0;
  const T* S = f.s_before(bh, ci);
  const T* U = f.u_rows(bh, ci);
  for (std::size_t j = 0; j < f.G; ++j) {
    const T* Q = f.query(bh, j, a0);
    for (std::size_t t = 0; t < m; ++t)
      for (std::size_t x = 0; x < dk; ++x) qd[t * dk + x] = f.scale * (Q[t * dk + x] * eg[t]);
    T* O = out + (((bh / f.Hkv) * f.Hq + (bh % f.Hkv) * f.G + j) * f.n + a0) * dv;
    block_gemm(f.path, false, false, m, dv, dk, qd.data(), dk, S, dv, O, dv);
    block_gemm(f.path, false, true, m, dv, m, f.a_block(bh, ci, j), m, U, dv, O, dv);
  }
}

}  // namespace linear_family_fast_detail

template <class T>
std::optional<std::string> linear_family_fast_declines(const FamilyInputs<T>& in, const FamilyOptions& o) {
  if (o.form != FamilyForm::chunked) return "the chunked form only";
  if (!gated(o.rule)) return std::nullopt;
  if (in.g.shape(3) != 1) return "a per-key-dimension decay (g of shape (B, Hkv, n, d_k)) is the reference's";
  // Every exponent the kernel takes is ≤ 0 when every log-decay is, the range the vector exp is
  // checked on (softmax_rows.hpp); a growing state (g > 0), or a NaN g, is the reference's.
  bool at_most_zero = true;
  for (const T x : in.g) at_most_zero &= x <= T(0);
  if (!at_most_zero) return "a log-decay above 0 (or NaN) is the reference's";
  return std::nullopt;
}

template <class T>
FamilyResult<T> linear_family_chunked_fast(const FamilyInputs<T>& in, const FamilyOptions& o, std::size_t threads) {
  using namespace linear_family_fast_detail;
  if (o.form == FamilyForm::chunked) check_family_inputs(in, o);
  if (const auto why = linear_family_fast_declines(in, o)) throw std::invalid_argument("linear_family_chunked_fast: " + *why);
  Family<T> f;
  const std::size_t B = in.q.shape(0);
  f.Hq = in.q.shape(1), f.Hkv = in.k.shape(1), f.G = f.Hq / f.Hkv, f.n = in.q.shape(2), f.dk = in.q.shape(3), f.dv = in.v.shape(3);
  f.gated = gated(o.rule), f.delta = delta(o.rule);
  f.c = std::min(o.chunk, std::max<std::size_t>(f.n, 1));
  f.chunks = (f.n + f.c - 1) / f.c;
  f.scale = static_cast<T>(o.scale && *o.scale != 0 ? *o.scale : 1 / std::sqrt(static_cast<double>(f.dk)));
  f.path = selected_vector_path();
  f.q = in.q.data(), f.k = in.k.data(), f.v = in.v.data(), f.g = f.gated ? in.g.data() : nullptr, f.beta = f.delta ? in.beta.data() : nullptr;
  const std::size_t heads = f.heads = B * f.Hkv;
  FamilyResult<T> r{xt::xtensor<T, 4>::from_shape({B, f.Hq, f.n, f.dv}), xt::zeros<T>({B, f.Hkv, f.dk, f.dv})};
  if (in.past) std::copy(in.past->begin(), in.past->end(), r.state.begin());
  if (f.n == 0 || heads == 0) return r;
  f.windows = (f.chunks + kWindow - 1) / kWindow;
  const std::size_t ring = kRing * heads * kWindow;
  f.cum.resize(heads * f.n);
  f.eg.resize(heads * f.n);
  f.a.resize(ring * f.G * f.c * f.c);
  f.u.resize(ring * f.c * f.dv);
  f.sc.resize(ring * f.dk * f.dv);
  if (f.delta) f.w.resize(ring * f.c * f.dk);
  // A pipeline over the windows: in step s, pass 1 of window s, pass 2 of window s − 1 and pass 3
  // of window s − 2, which touch different slots of the ring and depend only on earlier steps;
  // the threads share each step's items (pass 2's first: one item per head, the longest) and
  // wait for each other at its end. Each item writes only its own chunk's part.
  const std::size_t steps = f.windows + 2;
  auto items_of = [&](std::size_t step, std::size_t& carry, std::size_t& first, std::size_t& last) {
    carry = step >= 1 && step <= f.windows ? heads : 0;
    first = step < f.windows ? heads * f.chunks_in(step) : 0;
    last = step >= 2 ? heads * f.chunks_in(step - 2) : 0;
    return carry + first + last;
  };
  std::size_t most = 1;
  for (std::size_t step = 0, c2, c1, c3; step < steps; ++step) most = std::max(most, items_of(step, c2, c1, c3));
  // Its multiply-adds, per token: Q Kᵀ and A U for each query head, K Kᵀ, W and T V (delta rules),
  // Q S, the state's update and W S.
  const std::size_t work =
      heads * f.n * (f.G * f.c * (f.dk + f.dv) + (f.delta ? f.c * (2 * f.dk + f.dv) : 0) + (1 + f.G + (f.delta ? 1 : 0)) * f.dk * f.dv);
  const std::size_t workers = worker_count(threads, most, work);
  std::vector<std::atomic<std::size_t>> next(steps);
  std::barrier<> step_done{std::ptrdiff_t(workers)};
  std::vector<ChunkWork<T>> spaces(workers, ChunkWork<T>(f));  // allocated here: nothing in the threads allocates
  // OpenBLAS (when some caller opened it) single-threaded and its pool stopped for the whole call:
  // restored between passes, its threads would wake and spin beside ours.
  blas::SingleThreaded single(false);
  auto worker = [&](ChunkWork<T>& w) {
    for (std::size_t step = 0; step < steps; ++step) {
      std::size_t n2, n1, n3;
      const std::size_t total = items_of(step, n2, n1, n3);
      for (std::size_t i = next[step]++; i < total; i = next[step]++) {
        if (i < n2) {
          carry_state(f, w.kl, i, step - 1, r.state.data() + i * f.dk * f.dv);
        } else if (i < n2 + n1) {
          const std::size_t k = i - n2, per = f.chunks_in(step);
          chunk_products(f, w, k / per, step * kWindow + k % per);
        } else {
          const std::size_t k = i - n2 - n1, per = f.chunks_in(step - 2);
          chunk_outputs(f, w.qd, k / per, (step - 2) * kWindow + k % per, r.o.data());
        }
      }
      step_done.arrive_and_wait();
    }
  };
  run_on_threads(workers, [&](std::size_t index, std::size_t count) {  // kernels/platform/parked_threads.hpp
    if (index == 0)  // fewer threads than asked could be started: the barrier waits for those there are
      for (std::size_t missing = count; missing < workers; ++missing) step_done.arrive_and_drop();
    worker(spaces[index]);
  });
  return r;
}

template std::optional<std::string> linear_family_fast_declines<float>(const FamilyInputs<float>&, const FamilyOptions&);
template std::optional<std::string> linear_family_fast_declines<double>(const FamilyInputs<double>&, const FamilyOptions&);
template FamilyResult<float> linear_family_chunked_fast<float>(const FamilyInputs<float>&, const FamilyOptions&, std::size_t);
template FamilyResult<double> linear_family_chunked_fast<double>(const FamilyInputs<double>&, const FamilyOptions&, std::size_t);

}  // namespace vl
