// Fused, blocked attention with the online softmax; see fused_attention.hpp.
#include "kernels/fused_attention.hpp"
#include "kernels/blas_gemm.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/core.h>
#include <fmt/ranges.h>

namespace vl {
namespace {

// OpenBLAS's own thread count, looked up at run time (absent with another BLAS: then nothing
// is changed). While our workers run, each BLAS call stays on its worker's thread, and
// OpenBLAS's idle pool is shut down: its workers otherwise spin (sched_yield) for 2^28 TSC
// ticks (~0.1 s here) after the library loads or after each threaded call, on the same cores as
// ours — 25 ms of an 85 ms `lessons eval attention` at n = 4096 on 2 cores. OpenBLAS starts its
// pool again at its next threaded call.
class BlasSingleThreaded {
 public:
  BlasSingleThreaded() {
    static const auto get = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    static const auto set = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    static const auto shutdown = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"));
    if (!get || !set) return;
    set_ = set;
    saved_ = get();
    if (saved_ != 1) set_(1);
    if (shutdown) shutdown();
  }
  ~BlasSingleThreaded() {
    if (set_ && saved_ != 1) set_(saved_);
  }
  BlasSingleThreaded(const BlasSingleThreaded&) = delete;
  BlasSingleThreaded& operator=(const BlasSingleThreaded&) = delete;

 private:
  void (*set_)(int) = nullptr;
  int saved_ = 1;
};

// ---------------------------------------------------------------------------------------------
// exp for float32 (Cephes' expf: range reduction by ln 2 in two parts, degree-5 polynomial;
// relative error ≤ 2 ulp on [−87.3, 88.7]); exactly 1 at 0, exactly 0 below −87.3 (and for
// −∞), NaN for NaN. Scores minus their maximum are ≤ 0, so no overflow handling. Written once
// for F = float and for F = a vector of floats (GCC vector extensions: every operation is
// lane-wise, so a lane gives the scalar's bits; with -ffp-contract=off nothing is fused).
// The result goes out through a reference: a 64-byte vector returned by value would have a
// different ABI in the baseline and AVX-512 clones (GCC's -Wpsabi).
template <class F, class I>
__attribute__((always_inline)) inline void exp_f32(const F& x, F& out) {
  const F lo = F{} - 87.3f;
  const F xc = x < lo ? lo : x;  // NaN stays NaN
  const F n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  F r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  F p = F{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const F y = p * r * r + r + 1.0f;
  I e;
  if constexpr (std::is_same_v<F, float>) e = static_cast<I>(n);
  else e = __builtin_convertvector(n, I);
  const F pow2 = __builtin_bit_cast(F, (e + 127) << 23);
  const F result = y * pow2;
  out = x < lo ? F{} : (x != x ? x : result);
}

// 16 floats: one AVX-512 register, two AVX2 registers or four SSE registers, as the clone's
// target has them.
using f32x16 = float __attribute__((vector_size(64)));
using i32x16 = std::int32_t __attribute__((vector_size(64)));
constexpr std::size_t kLanes = 16;

// One row of the online softmax over a key block, float32. s: the row's scores (in: scores,
// out: p_j = exp(s_j − m_new)); returns the row sum of p, sets m_new. Compiled for AVX-512,
// AVX2 and the baseline, chosen at run time (target_clones, by CPU features).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define VL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define VL_CLONES
#endif

// The reductions keep 16 partial results, lane t taking elements j ≡ t (mod 16) in order, and
// combine them in lane order: the same order in every clone, so every machine gets the same bits.
VL_CLONES float row_max_f32(const float* s, std::size_t n) {
  f32x16 part = f32x16{} - std::numeric_limits<float>::infinity();
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    f32x16 x;
    std::memcpy(&x, s + j, sizeof x);
    part = x > part ? x : part;
  }
  float m = part[0];
  for (; j < n; ++j) m = s[j] > m ? s[j] : m;
  for (std::size_t t = 1; t < kLanes; ++t) m = part[t] > m ? part[t] : m;
  return m;
}
VL_CLONES float row_exp_sum_f32(float* s, std::size_t n, float m) {
  f32x16 part{};
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    f32x16 x;
    std::memcpy(&x, s + j, sizeof x);
    f32x16 p;
    exp_f32<f32x16, i32x16>(x - m, p);
    std::memcpy(s + j, &p, sizeof p);
    part += p;
  }
  float tail = part[0];
  for (; j < n; ++j) {
    float p;
    exp_f32<float, std::int32_t>(s[j] - m, p);
    s[j] = p;
    tail += p;
  }
  float sum = tail;
  for (std::size_t t = 1; t < kLanes; ++t) sum += part[t];
  return sum;
}
VL_CLONES void row_scale_f32(float* a, std::size_t n, float f) {
  for (std::size_t j = 0; j < n; ++j) a[j] *= f;
}

template <class T>
T row_max(const T* s, std::size_t n) {
  if constexpr (std::is_same_v<T, float>) {
    return row_max_f32(s, n);
  } else {
    T m = -std::numeric_limits<T>::infinity();
    for (std::size_t j = 0; j < n; ++j) m = s[j] > m ? s[j] : m;
    return m;
  }
}
template <class T>
T row_exp_sum(T* s, std::size_t n, T m) {
  if constexpr (std::is_same_v<T, float>) {
    return row_exp_sum_f32(s, n, m);
  } else {
    T sum = 0;
    for (std::size_t j = 0; j < n; ++j) {
      s[j] = std::exp(s[j] - m);
      sum += s[j];
    }
    return sum;
  }
}
template <class T>
void row_scale(T* a, std::size_t n, T f) {
  if constexpr (std::is_same_v<T, float>) {
    row_scale_f32(a, n, f);
  } else {
    for (std::size_t j = 0; j < n; ++j) a[j] *= f;
  }
}
inline float exp_of(float x) {
  float y;
  exp_f32<float, std::int32_t>(x, y);
  return y;
}
inline double exp_of(double x) { return std::exp(x); }

// ---------------------------------------------------------------------------------------------
// A mask broadcast NumPy-style to (B, Hq, Sq, Sk) without copying it: element strides, 0 on a
// broadcast dimension.
using Shape4 = std::array<std::size_t, 4>;

template <class M>
struct BroadcastView {
  const M* data = nullptr;
  std::array<std::size_t, 4> stride{};
  const M* row(std::size_t b, std::size_t h, std::size_t i) const { return data + b * stride[0] + h * stride[1] + i * stride[2]; }
  M at(const M* row, std::size_t j) const { return row[j * stride[3]]; }
};

template <class M>
BroadcastView<M> broadcast_view(const xt::xarray<M>& mask, const Shape4& target, const char* what) {
  const auto& s = mask.shape();
  check_mask_broadcasts(std::vector<std::size_t>(s.begin(), s.end()), target, what);
  BroadcastView<M> view;
  view.data = mask.data();
  // Row-major strides of the mask, aligned to the trailing dimensions.
  std::size_t stride = 1;
  for (std::size_t i = s.size(); i-- > 0;) {
    view.stride[4 - s.size() + i] = s[i] == 1 ? 0 : stride;
    stride *= s[i];
  }
  return view;
}

// ---------------------------------------------------------------------------------------------
template <class T>
struct Problem {
  std::size_t B, Hq, Sq, D, Hkv, Sk, Dv, group;
  T scale, softcap;
  bool causal;
  std::ptrdiff_t offset;  // query i sees key j iff j ≤ i + offset (causal)
  const T* q;
  const T* k;
  const T* v;
  T* out;
  std::optional<BroadcastView<bool>> allowed;
  std::optional<BroadcastView<T>> bias;
  FusedConfig config;
};

// One thread's buffers: S block (block_q × block_k), accumulator (block_q × Dv), m and l.
template <class T>
struct Workspace {
  std::vector<T> s, acc, m, l;
  Workspace(std::size_t bq, std::size_t bk, std::size_t dv) : s(bq * bk), acc(bq * dv), m(bq), l(bq) {}
  std::size_t bytes() const { return (s.capacity() + acc.capacity() + m.capacity() + l.capacity()) * sizeof(T); }
};

struct Counters {
  std::size_t computed = 0, skipped = 0;
};

// One work item: batch b, query head h, query rows [i0, i1).
template <class T>
void query_block(const Problem<T>& p, Workspace<T>& w, std::size_t b, std::size_t h, std::size_t i0, std::size_t i1,
                 Counters& counters) {
  constexpr T neg_inf = -std::numeric_limits<T>::infinity();
  const FusedConfig& c = p.config;
  const std::size_t rows = i1 - i0, hkv = h / p.group, D = p.D, Dv = p.Dv, Sk = p.Sk;
  const T* q = p.q + ((b * p.Hq + h) * p.Sq + i0) * D;
  const T* k = p.k + (b * p.Hkv + hkv) * Sk * D;
  const T* v = p.v + (b * p.Hkv + hkv) * Sk * Dv;
  T* acc = w.acc.data();
  std::fill(acc, acc + rows * Dv, T(0));
  std::fill(w.m.begin(), w.m.begin() + rows, neg_inf);
  std::fill(w.l.begin(), w.l.begin() + rows, T(0));

  const std::size_t bk = c.block_k;
  const std::size_t n_blocks = c.fault == FusedFault::drop_last_partial_key_block ? Sk / bk : (Sk + bk - 1) / bk;
  // The last key any row of this block may see (causal): (i1 − 1) + offset.
  const std::ptrdiff_t last_visible = std::ptrdiff_t(i1) - 1 + p.offset;
  const std::ptrdiff_t first_row_limit = std::ptrdiff_t(i0) + p.offset;  // keys ≤ this are seen by every row
  for (std::size_t kb = 0; kb < n_blocks; ++kb) {
    const std::size_t j0 = kb * bk, j1 = std::min(j0 + bk, Sk), cols = j1 - j0;
    if (p.causal) {
      std::ptrdiff_t limit = last_visible;
      if (c.fault == FusedFault::causal_skip_off_by_one_block) limit -= std::ptrdiff_t(bk);
      if (std::ptrdiff_t(j0) > limit) {  // this block and every later one are hidden from all rows
        counters.skipped += n_blocks - kb;
        break;
      }
    }
    ++counters.computed;
    T* s = w.s.data();
    // S_blk = scale · Q_blk K_blkᵀ   (rows × cols, leading dimension cols)
    blas::gemm(false, true, rows, cols, D, p.scale, q, D, k + j0 * D, D, T(0), s, cols);
    const bool causal_partial = p.causal && std::ptrdiff_t(j1) - 1 > first_row_limit;
    for (std::size_t r = 0; r < rows; ++r) {
      T* srow = s + r * cols;
      const std::size_t i = i0 + r;
      if (p.softcap > 0)
        for (std::size_t j = 0; j < cols; ++j) srow[j] = p.softcap * std::tanh(srow[j] / p.softcap);
      if (p.bias) {
        const T* brow = p.bias->row(b, h, i);
        for (std::size_t j = 0; j < cols; ++j) srow[j] += p.bias->at(brow, j0 + j);
      }
      if (p.allowed) {
        const bool* arow = p.allowed->row(b, h, i);
        for (std::size_t j = 0; j < cols; ++j)
          if (!p.allowed->at(arow, j0 + j)) srow[j] = neg_inf;
      }
      if (causal_partial) {
        // keys j > i + offset are hidden: local columns from max(0, i + offset + 1 − j0)
        const std::ptrdiff_t first_hidden = std::ptrdiff_t(i) + p.offset + 1 - std::ptrdiff_t(j0);
        for (std::size_t j = std::size_t(std::clamp<std::ptrdiff_t>(first_hidden, 0, std::ptrdiff_t(cols))); j < cols; ++j)
          srow[j] = neg_inf;
      }
      // Online softmax for this row.
      const T m_old = w.m[r];
      const T m_new = std::max(m_old, row_max(srow, cols));
      if (m_new == neg_inf) {  // nothing visible yet: the block adds nothing
        std::fill(srow, srow + cols, T(0));
        continue;
      }
      const T sum = row_exp_sum(srow, cols, m_new);
      const T alpha = exp_of(m_old - m_new);  // 0 when m_old = −∞; 1 when the maximum did not move
      if (c.fault == FusedFault::no_rescale) {
        w.l[r] += sum;
      } else {
        w.l[r] = w.l[r] * alpha + sum;
        if (alpha != T(1)) row_scale(acc + r * Dv, Dv, alpha);
      }
      w.m[r] = m_new;
    }
    // acc += P_blk V_blk
    blas::gemm(false, false, rows, Dv, cols, T(1), s, cols, v + j0 * Dv, Dv, T(1), acc, Dv);
  }
  T* out = p.out + ((b * p.Hq + h) * p.Sq + i0) * Dv;
  for (std::size_t r = 0; r < rows; ++r) {
    const T l = w.l[r];
    if (l > T(0)) {
      const T inv = T(1) / l;
      for (std::size_t j = 0; j < Dv; ++j) out[r * Dv + j] = acc[r * Dv + j] * inv;
    } else if (std::isnan(l)) {  // NaN or overflowing scores (inf − inf): NaN, as vl::attention, never a silent zero
      std::fill(out + r * Dv, out + (r + 1) * Dv, std::numeric_limits<T>::quiet_NaN());
    } else {  // no visible key: zeros, as vl::attention
      std::fill(out + r * Dv, out + (r + 1) * Dv, T(0));
    }
  }
}

// The kernel on contiguous row-major buffers (no copy of the inputs): q (B, Hq, Sq, D),
// k (B, Hkv, Sk, D), v (B, Hkv, Sk, Dv) → out (B, Hq, Sq, Dv), already allocated.
template <class T>
void fused_core(const std::array<std::size_t, 4>& qs, const std::array<std::size_t, 4>& ks, const std::array<std::size_t, 4>& vs,
                const T* qd, const T* kd, const T* vd, T* outd, const AttentionOptions<T>& options, const FusedConfig& config,
                FusedStats* stats) {
  const std::size_t B = qs[0], Hq = qs[1], Sq = qs[2], D = qs[3];
  const std::size_t Hkv = ks[1], Sk = ks[2], Dv = vs[3];
  if (ks[0] != B || vs[0] != B || ks[3] != D || vs[1] != Hkv || vs[2] != Sk) {
    throw std::invalid_argument(fmt::format(
        "attention: inconsistent shapes Q ({}), K ({}), V ({}); expected Q (B, Hq, Sq, D), "
        "K (B, Hkv, Sk, D), V (B, Hkv, Sk, Dv)",
        fmt::join(qs, ", "), fmt::join(ks, ", "), fmt::join(vs, ", ")));
  }
  if (Hkv == 0 || Hq % Hkv != 0) {
    throw std::invalid_argument(fmt::format("attention: {} query heads is not a multiple of {} key/value heads", Hq, Hkv));
  }
  if (options.return_weights) throw std::invalid_argument("fused_attention: the weights are never formed (use vl::attention)");
  if (config.block_q == 0 || config.block_k == 0) throw std::invalid_argument("fused_attention: block sizes must be >= 1");

  Problem<T> p{};
  p.B = B, p.Hq = Hq, p.Sq = Sq, p.D = D, p.Hkv = Hkv, p.Sk = Sk, p.Dv = Dv, p.group = Hq / Hkv;
  p.scale = options.scale.value_or(T(1) / std::sqrt(static_cast<T>(D)));
  p.softcap = options.softcap;
  p.causal = options.causal;
  p.offset = options.alignment == CausalAlignment::bottom_right ? std::ptrdiff_t(Sk) - std::ptrdiff_t(Sq) : 0;
  p.q = qd, p.k = kd, p.v = vd;
  p.config = config;
  const Shape4 target{B, Hq, Sq, Sk};
  if (options.allowed) p.allowed = broadcast_view(*options.allowed, target, "boolean");
  if (options.bias) p.bias = broadcast_view(*options.bias, target, "additive");

  p.out = outd;

  const std::size_t q_blocks = (Sq + config.block_q - 1) / config.block_q;
  const std::size_t items = B * Hq * q_blocks;
  std::size_t threads = config.threads ? config.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = std::max<std::size_t>(1, std::min(threads, items));
  const std::size_t bq = std::min(config.block_q, Sq), bk = std::min(config.block_k, Sk);

  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> workspace_bytes{0};
  std::mutex m;
  Counters total;
  auto worker = [&] {
    Workspace<T> w(bq, bk, Dv);
    workspace_bytes += w.bytes();
    Counters counters;
    for (std::size_t item = next++; item < items; item = next++) {
      const std::size_t qb = item % q_blocks, bh = item / q_blocks;
      const std::size_t i0 = qb * config.block_q, i1 = std::min(i0 + config.block_q, Sq);
      query_block(p, w, bh / Hq, bh % Hq, i0, i1, counters);
    }
    std::lock_guard lock(m);
    total.computed += counters.computed;
    total.skipped += counters.skipped;
  };
  if (items > 0) {
    BlasSingleThreaded single;
    if (threads == 1) {
      worker();
    } else {
      std::vector<std::thread> pool;
      pool.reserve(threads - 1);
      for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
      worker();
      for (auto& t : pool) t.join();
    }
  }
  if (stats) {
    stats->workspace_bytes = workspace_bytes;
    stats->output_bytes = B * Hq * Sq * Dv * sizeof(T);
    stats->key_blocks_computed = total.computed;
    stats->key_blocks_skipped = total.skipped;
    stats->threads = items > 0 ? threads : 0;
  }
}

}  // namespace

template <class T>
xt::xtensor<T, 4> fused_attention(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                  const AttentionOptions<T>& options, const FusedConfig& config, FusedStats* stats) {
  auto shape = [](const auto& x) { return std::array<std::size_t, 4>{x.shape(0), x.shape(1), x.shape(2), x.shape(3)}; };
  xt::xtensor<T, 4> out = xt::xtensor<T, 4>::from_shape({q.shape(0), q.shape(1), q.shape(2), v.shape(3)});
  fused_core<T>(shape(q), shape(k), shape(v), q.data(), k.data(), v.data(), out.data(), options, config, stats);
  return out;
}

template <class T>
xt::xtensor<T, 2> fused_attention(const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k, const xt::xtensor<T, 2>& v,
                                  const AttentionOptions<T>& options, const FusedConfig& config, FusedStats* stats) {
  // The same buffers seen as (1, 1, S, D): no copy.
  xt::xtensor<T, 2> out = xt::xtensor<T, 2>::from_shape({q.shape(0), v.shape(1)});
  fused_core<T>({1, 1, q.shape(0), q.shape(1)}, {1, 1, k.shape(0), k.shape(1)}, {1, 1, v.shape(0), v.shape(1)}, q.data(), k.data(),
                v.data(), out.data(), options, config, stats);
  return out;
}

template <class T>
AttentionResult<T, 2> attention_materialized(const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k, const xt::xtensor<T, 2>& v) {
  const std::size_t n = q.shape(0), D = q.shape(1), Sk = k.shape(0), Dv = v.shape(1);
  if (k.shape(1) != D || v.shape(0) != Sk) throw std::invalid_argument("attention_materialized: inconsistent shapes");
  AttentionResult<T, 2> r;
  r.weights = xt::xtensor<T, 2>::from_shape({n, Sk});
  r.output = xt::xtensor<T, 2>::from_shape({n, Dv});
  const T scale = T(1) / std::sqrt(static_cast<T>(D));
  T* s = r.weights.data();
  blas::gemm(false, true, n, Sk, D, scale, q.data(), D, k.data(), D, T(0), s, Sk);
  for (std::size_t i = 0; i < n; ++i) {
    T* row = s + i * Sk;
    const T m = row_max(row, Sk);
    const T sum = row_exp_sum(row, Sk, m);
    row_scale(row, Sk, T(1) / sum);
  }
  blas::gemm(false, false, n, Dv, Sk, T(1), s, Sk, v.data(), Dv, T(0), r.output.data(), Dv);
  return r;
}

template xt::xtensor<float, 4> fused_attention(const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&,
                                               const AttentionOptions<float>&, const FusedConfig&, FusedStats*);
template xt::xtensor<double, 4> fused_attention(const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&,
                                                const xt::xtensor<double, 4>&, const AttentionOptions<double>&, const FusedConfig&,
                                                FusedStats*);
template xt::xtensor<float, 2> fused_attention(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&,
                                               const AttentionOptions<float>&, const FusedConfig&, FusedStats*);
template xt::xtensor<double, 2> fused_attention(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&,
                                                const xt::xtensor<double, 2>&, const AttentionOptions<double>&, const FusedConfig&,
                                                FusedStats*);
template AttentionResult<float, 2> attention_materialized(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&,
                                                          const xt::xtensor<float, 2>&);
template AttentionResult<double, 2> attention_materialized(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&,
                                                           const xt::xtensor<double, 2>&);

}  // namespace vl
