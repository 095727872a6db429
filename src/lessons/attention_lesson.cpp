// Lesson attention: the checks of its claims, each with the broken variants it must reject.
#include <cmath>
#include <limits>
#include <optional>

#include <xtensor/xbroadcast.hpp>
#include <xtensor/xview.hpp>

#include <fmt/format.h>

#include "kernels/feature_map.hpp"
#include "kernels/fused_attention.hpp"
#include "kernels/linear_attention.hpp"
#include "kernels/linear_attention_fast.hpp"
#include "kernels/matmul.hpp"
#include "lessons/attention.hpp"
#include "numeric/numpy_random.hpp"

namespace vl::lessons::attention {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// --- Broken variants. Each is one plausible bug, built from the kernels' own pieces.

// Softmaxes: the textbook one without the max subtraction (exp overflows for scores ~1e3 and
// the row becomes inf/inf = NaN), and one that forgets to divide by the row sum.
template <class T>
xt::xtensor<T, 2> softmax_without_max(const xt::xtensor<T, 2>& s) {
  xt::xtensor<T, 2> e = xt::exp(s);
  for (std::size_t i = 0; i < e.shape(0); ++i) {
    T sum = 0;
    for (std::size_t j = 0; j < e.shape(1); ++j) sum += e(i, j);
    for (std::size_t j = 0; j < e.shape(1); ++j) e(i, j) /= sum;
  }
  return e;
}
template <class T>
xt::xtensor<T, 2> softmax_not_normalised(const xt::xtensor<T, 2>& s) {
  xt::xtensor<T, 2> e = s;
  for (std::size_t i = 0; i < e.shape(0); ++i) {
    T m = -std::numeric_limits<T>::infinity();
    for (std::size_t j = 0; j < e.shape(1); ++j) m = std::max(m, e(i, j));
    for (std::size_t j = 0; j < e.shape(1); ++j) e(i, j) = std::exp(e(i, j) - m);
  }
  return e;
}

// Attention composed by hand from scores, a mask, a softmax and W V (no GQA: Hq = Hkv).
template <class T>
AttentionResult<T, 4> attention_with_softmax(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
                                             const AttentionOptions<T>& o,
                                             xt::xtensor<T, 2> (*softmax)(const xt::xtensor<T, 2>&)) {
  const std::size_t B = q.shape(0), H = q.shape(1), Sq = q.shape(2), Sk = k.shape(2);
  const T scale = o.scale.value_or(T(1) / std::sqrt(static_cast<T>(q.shape(3))));
  AttentionResult<T, 4> r{xt::zeros<T>({B, H, Sq, v.shape(3)}), xt::zeros<T>({B, H, Sq, Sk})};
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      xt::xtensor<T, 2> s = scale * matmul<T>(xt::view(q, b, h), xt::transpose(xt::view(k, b, h)));
      for (std::size_t i = 0; i < Sq; ++i)
        for (std::size_t j = 0; j < Sk; ++j) {
          bool hidden = o.causal && j > i;
          if (o.allowed) {
            const auto a = xt::broadcast(*o.allowed, std::array<std::size_t, 4>{B, H, Sq, Sk});
            hidden = hidden || !a(b, h, i, j);
          }
          if (hidden) s(i, j) = -std::numeric_limits<T>::infinity();
        }
      const xt::xtensor<T, 2> w = softmax(s);
      xt::view(r.weights, b, h) = w;
      xt::view(r.output, b, h) = matmul<T>(w, xt::view(v, b, h));
    }
  return r;
}

// Forward variants over the reference kernel.
template <class T>
Kernels<T>& kernels_of(Implementation& impl) {
  if constexpr (std::is_same_v<T, double>) return impl.f64; else return impl.f32;
}

template <class T>
Implementation with_forward(std::function<AttentionResult<T, 4>(const Tensor4<T>&, const Tensor4<T>&, const Tensor4<T>&,
                                                                const AttentionOptions<T>&)> f) {
  Implementation impl = reference_implementation();
  kernels_of<T>(impl).forward = std::move(f);
  return impl;
}

template <class T>
Implementation scale_removed() {
  Implementation ref = reference_implementation();
  const auto fwd = kernels_of<T>(ref).forward;
  return with_forward<T>([fwd](const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) {
    AttentionOptions<T> broken = o;
    broken.scale = T(1);
    return fwd(q, k, v, broken);
  });
}

template <class T>
Implementation mask_ignored() {
  Implementation ref = reference_implementation();
  const auto fwd = kernels_of<T>(ref).forward;
  return with_forward<T>([fwd](const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) {
    AttentionOptions<T> broken = o;
    broken.causal = false;
    broken.allowed.reset();
    return fwd(q, k, v, broken);
  });
}

// A causal mask off by one: query i also sees key i + 1.
template <class T>
Implementation mask_one_future_key() {
  return with_forward<T>([](const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) {
    AttentionOptions<T> broken = o;
    if (o.causal) {
      broken.causal = false;
      xt::xarray<bool> allowed = xt::zeros<bool>({q.shape(2), k.shape(2)});
      for (std::size_t i = 0; i < q.shape(2); ++i)
        for (std::size_t j = 0; j < k.shape(2) && j <= i + 1; ++j) allowed(i, j) = true;
      broken.allowed = allowed;
    }
    broken.return_weights = true;
    return vl::attention<T>(q, k, v, broken);
  });
}

template <class T>
Implementation with_softmax(xt::xtensor<T, 2> (*softmax)(const xt::xtensor<T, 2>&)) {
  return with_forward<T>([softmax](const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) {
    return attention_with_softmax<T>(q, k, v, o, softmax);
  });
}

// Backward variants: the same equations with one piece wrong.
enum class BackwardBug { no_jacobian_term, dp_passed_straight, scale_dropped, mask_ignored };

template <class T>
AttentionGradients<T, 4> broken_backward(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const Tensor4<T>& d_out,
                                         AttentionOptions<T> o, BackwardBug bug) {
  const T scale = o.scale.value_or(T(1) / std::sqrt(static_cast<T>(q.shape(3))));
  if (bug == BackwardBug::mask_ignored) {
    o.causal = false;
    o.allowed.reset();
  }
  o.return_weights = true;
  const auto fwd = vl::attention<T>(q, k, v, o);
  AttentionGradients<T, 4> g{xt::zeros<T>(q.shape()), xt::zeros<T>(k.shape()), xt::zeros<T>(v.shape())};
  for (std::size_t b = 0; b < q.shape(0); ++b)
    for (std::size_t h = 0; h < q.shape(1); ++h) {
      const xt::xtensor<T, 2> p = xt::view(fwd.weights, b, h), qq = xt::view(q, b, h), kk = xt::view(k, b, h),
                              vv = xt::view(v, b, h), dO = xt::view(d_out, b, h);
      xt::view(g.dv, b, h) = matmul<T>(xt::transpose(p), dO);
      const xt::xtensor<T, 2> dp = matmul<T>(dO, xt::transpose(vv));
      xt::xtensor<T, 2> ds;
      switch (bug) {
        case BackwardBug::no_jacobian_term: ds = p * dp; break;  // dS = P ⊙ dP: the −rowsum(P ⊙ dP) term lost
        case BackwardBug::dp_passed_straight: ds = dp; break;     // dL/dP pushed into the scores unchanged
        default: ds = softmax_rows_backward<T>(p, dp);
      }
      const T s = bug == BackwardBug::scale_dropped ? T(1) : scale;
      xt::view(g.dq, b, h) = s * matmul<T>(ds, kk);
      xt::view(g.dk, b, h) = s * matmul<T>(xt::transpose(ds), qq);
    }
  return g;
}

template <class T>
Implementation with_backward_bug(BackwardBug bug) {
  Implementation impl = reference_implementation();
  kernels_of<T>(impl).backward = [bug](const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const Tensor4<T>& d_out,
                                       const AttentionOptions<T>& o) { return broken_backward<T>(q, k, v, d_out, o, bug); };
  return impl;
}

// nn.MultiheadAttention composed by hand with a bug: heads reading interleaved columns
// (head h takes h, h + H, h + 2H, ...: a (S, dh, H) reshape in place of (S, H, dh)), or the
// 1/√dh scale dropped.
MhaResult<double, 2> mha_composed(const Matrix& x, const MhaParameters<double>& p, std::size_t heads, bool interleaved,
                                  std::optional<double> scale) {
  const std::size_t d = p.in_proj_weight.shape(1), dh = d / heads, S = x.shape(0);
  const Matrix Q = detail::mha_project<double>(x, p, 0, d), K = detail::mha_project<double>(x, p, 1, d),
               V = detail::mha_project<double>(x, p, 2, d);
  auto column = [&](std::size_t h, std::size_t c) { return interleaved ? c * heads + h : h * dh + c; };
  Tensor4<double> q4 = xt::zeros<double>({std::size_t(1), heads, S, dh}), k4 = q4, v4 = q4;
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t c = 0; c < dh; ++c) {
        q4(0, h, s, c) = Q(s, column(h, c));
        k4(0, h, s, c) = K(s, column(h, c));
        v4(0, h, s, c) = V(s, column(h, c));
      }
  AttentionOptions<double> o;
  o.scale = scale.value_or(1.0 / std::sqrt(double(dh)));
  o.return_weights = true;
  const auto r = vl::attention<double>(q4, k4, v4, o);
  Matrix concat = xt::zeros<double>({S, d});
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t c = 0; c < dh; ++c) concat(s, column(h, c)) = r.output(0, h, s, c);
  Matrix out = matmul<double>(concat, xt::transpose(p.out_proj_weight));
  out += xt::view(p.out_proj_bias, xt::newaxis(), xt::all());
  return {out, xt::view(r.weights, 0)};
}

Implementation heads_interleaved() {
  Implementation impl = reference_implementation();
  impl.mha = [](const Matrix& x, const MhaParameters<double>& p, std::size_t heads) { return mha_composed(x, p, heads, true, std::nullopt); };
  return impl;
}
Implementation mha_scale_removed() {
  Implementation impl = reference_implementation();
  impl.mha = [](const Matrix& x, const MhaParameters<double>& p, std::size_t heads) { return mha_composed(x, p, heads, false, 1.0); };
  return impl;
}

// Heads that multiply the parameters instead of dividing the dimension: a full-size
// attention (4d² + 4d) per head.
Implementation parameters_per_head() {
  Implementation impl = reference_implementation();
  const auto count = impl.mha_parameter_count;
  impl.mha_parameter_count = [count](std::size_t d, std::size_t heads) { return heads * count(d, 1); };
  return impl;
}

// Configuration checks that let bad input through.
Implementation head_size_floored() {
  Implementation impl = reference_implementation();
  impl.check_config = [](const HeadsConfig& c, const std::array<std::array<std::size_t, 2>, 3>& shapes) {
    HeadsConfig floored = c;  // d_model 10 with 4 heads "works" with heads of 2 columns, dropping 2
    floored.d_model = c.num_heads ? c.d_model / c.num_heads * c.num_heads : c.d_model;
    auto s = shapes;
    for (auto& x : s) x[1] = floored.d_model;
    check_heads_config(floored, s);
  };
  return impl;
}
Implementation dropout_unchecked() {
  Implementation impl = reference_implementation();
  impl.check_config = [](const HeadsConfig& c, const std::array<std::array<std::size_t, 2>, 3>& shapes) {
    HeadsConfig any = c;
    any.dropout = 0;
    check_heads_config(any, shapes);
  };
  return impl;
}

// Dropout left on at inference: inverted dropout's 1/(1 − p) scale on the weights, which scales
// the output and so every gradient by 1/(1 − p).
Implementation dropout_scaling_at_inference() {
  Implementation impl = reference_implementation();
  const auto ref = impl.heads_gradients_f32;
  impl.heads_gradients_f32 = [ref](const Kernels<float>& kernels, const xt::xtensor<float, 2>& q, const xt::xtensor<float, 2>& k,
                                   const xt::xtensor<float, 2>& v, const xt::xtensor<float, 2>& d_out, const HeadsConfig& c) {
    auto g = ref(kernels, q, k, v, d_out, c);
    const float s = 1.0f / (1.0f - c.dropout);
    g.dq *= s;
    g.dk *= s;
    g.dv *= s;
    return g;
  };
  return impl;
}

// The √d_k experiment's bugs.
Implementation scale_variant(const std::function<void(ScaleVariant&)>& edit) {
  Implementation impl = reference_implementation();
  edit(impl.scale);
  return impl;
}
Implementation experiment_scale_removed() {
  return scale_variant([](ScaleVariant& v) { v.scaled_divisor = [](std::size_t) { return 1.0; }; });
}
Implementation experiment_divides_by_d_k() {
  return scale_variant([](ScaleVariant& v) { v.scaled_divisor = [](std::size_t d_k) { return double(d_k); }; });
}
Implementation experiment_both_branches_scaled() {
  return scale_variant([](ScaleVariant& v) { v.raw_divisor = [](std::size_t d_k) { return std::sqrt(double(d_k)); }; });
}
Implementation jacobian_without_outer_product() {
  return scale_variant([](ScaleVariant& v) {
    v.jacobian_norm = [](const double* p, std::size_t n) {  // ‖diag(p)‖_F: the −p pᵀ term lost
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += p[i] * p[i];
      return std::sqrt(s);
    };
  });
}

// A kernel that scores each query against a window of 256 keys only: n·256 cells.
Implementation windowed_scores() {
  Implementation impl = reference_implementation();
  impl.f32_attention_2d = [](const xt::xtensor<float, 2>& q, const xt::xtensor<float, 2>& k, const xt::xtensor<float, 2>& v) {
    const std::size_t w = std::min<std::size_t>(256, k.shape(0));
    AttentionOptions<float> o;
    o.return_weights = true;
    return vl::attention<float>(q, xt::xtensor<float, 2>(xt::view(k, xt::range(0, w), xt::all())),
                                xt::xtensor<float, 2>(xt::view(v, xt::range(0, w), xt::all())), o);
  };
  return impl;
}

// --- The fused kernel and the fast chunked linear attention (the cost section's claims).
// Their "implementation" is the kernel with a configuration; the broken ones carry a FusedFault
// (or a LinearFastFault) or a block size that materialises scores.

template <class T>
Tensor4<T> draw_t4(numpy::Generator& rng, std::array<std::size_t, 4> s) {
  xt::xtensor<double, 2> flat = rng.standard_normal(s[0] * s[1] * s[2], s[3]);
  return xt::cast<T>(xt::reshape_view(flat, s));
}

struct FusedCase {
  std::array<std::size_t, 4> q, k, v;
  bool causal = false;
  CausalAlignment alignment = CausalAlignment::top_left;
  bool allowed = false, bias = false;
  double softcap = 0;
};

// Shapes, masks and alignments for the float64 agreement: n not a multiple of the blocks, Sq < Sk
// and Sq > Sk in both alignments, GQA and MQA, a bool mask with a fully masked row, an additive
// mask with −∞, softcap.
std::vector<FusedCase> fused_cases_f64() {
  using A = CausalAlignment;
  return {
      {{1, 1, 300, 16}, {1, 1, 300, 16}, {1, 1, 300, 8}},
      {{2, 2, 129, 8}, {2, 2, 129, 8}, {2, 2, 129, 8}, true},
      {{1, 2, 70, 8}, {1, 2, 130, 8}, {1, 2, 130, 5}, true, A::top_left},
      {{1, 2, 70, 8}, {1, 2, 130, 8}, {1, 2, 130, 5}, true, A::bottom_right},
      {{1, 2, 130, 8}, {1, 2, 70, 8}, {1, 2, 70, 5}, true, A::bottom_right},
      {{1, 2, 130, 8}, {1, 2, 70, 8}, {1, 2, 70, 5}, true, A::top_left},
      {{2, 4, 65, 8}, {2, 2, 97, 8}, {2, 2, 97, 8}, false, A::top_left, true},
      {{1, 3, 50, 8}, {1, 1, 77, 8}, {1, 1, 77, 4}, true, A::bottom_right, true, true},
      {{1, 1, 90, 8}, {1, 1, 90, 8}, {1, 1, 90, 8}, true, A::top_left, false, true, 5.0},
  };
}

// max |fused − plain| over the cases for one block configuration; and max |v| seen.
// max |fused − plain| for each configuration (the plain kernel run once), and max |v|.
template <class T>
std::pair<std::vector<double>, double> fused_vs_plain_all(const FusedCase& c, const std::vector<FusedConfig>& configs,
                                                          std::uint64_t seed) {
  numpy::Generator rng(seed);
  const auto q = draw_t4<T>(rng, c.q), k = draw_t4<T>(rng, c.k), v = draw_t4<T>(rng, c.v);
  AttentionOptions<T> o;
  o.causal = c.causal;
  o.alignment = c.alignment;
  o.softcap = T(c.softcap);
  if (c.allowed) {
    xt::xarray<bool> a = xt::xarray<bool>::from_shape({c.q[2], c.k[2]});
    for (auto& e : a) e = rng.random() < 0.7;
    xt::view(a, 1, xt::all()) = false;  // a query that may see nothing: zeros
    o.allowed = a;
  }
  if (c.bias) {
    xt::xarray<T> b = xt::cast<T>(xt::view(rng.standard_normal(1, c.k[2]), 0, xt::all()));
    b(0) = -std::numeric_limits<T>::infinity();
    o.bias = b;
  }
  const auto ref = vl::attention<T>(q, k, v, o).output;
  std::vector<double> diffs;
  for (const auto& config : configs) {
    const auto got = vl::fused_attention<T>(q, k, v, o, config);
    double worst = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const double d = std::fabs(double(ref.flat(i)) - double(got.flat(i)));
      worst = std::isnan(d) ? kInfinity : std::max(worst, d);
    }
    diffs.push_back(worst);
  }
  return {diffs, double(xt::amax(xt::abs(v))())};
}

Measurement fused_matches_plain(FusedFault fault, double tolerance) {
  double worst = 0;
  std::size_t runs = 0;
  std::uint64_t seed = 40;
  std::vector<FusedConfig> configs;
  for (std::size_t bq : {16, 33, 128})
    for (std::size_t bk : {7, 32, 64, 256}) configs.push_back({bq, bk, 2, fault});  // 7: never divides; 64, 256: sometimes
  for (const auto& c : fused_cases_f64())
    for (double d : fused_vs_plain_all<double>(c, configs, seed++).first) {
      worst = std::max(worst, d);
      ++runs;
    }
  return {worst, worst < tolerance,
          fmt::format("largest |fused − plain| over {} runs (9 cases × block_q 16, 33, 128 × block_k 7, 32, 64, 256): {:.3g}", runs,
                      worst)};
}

// float32: |fused − plain| / ((√n + d) · u₃₂ · max|v|), the bound derived in the spec.
Measurement fused_float32_bound(FusedFault fault, double tolerance) {
  using A = CausalAlignment;
  const std::vector<FusedCase> cases = {
      {{1, 1, 300, 64}, {1, 1, 300, 64}, {1, 1, 300, 64}},
      {{1, 1, 1000, 64}, {1, 1, 1000, 64}, {1, 1, 1000, 64}, true},
      {{1, 1, 2048, 64}, {1, 1, 2048, 64}, {1, 1, 2048, 64}},
      {{1, 4, 700, 64}, {1, 2, 1100, 64}, {1, 2, 1100, 64}, true, A::bottom_right},
      {{1, 1, 600, 16}, {1, 1, 600, 16}, {1, 1, 600, 16}, false, A::top_left, true, true},
  };
  constexpr double u32 = 5.9604644775390625e-08;  // 2⁻²⁴
  double worst = 0, worst_abs = 0;
  std::uint64_t seed = 60;
  for (const auto& c : cases) {
    const auto [diffs, vmax] = fused_vs_plain_all<float>(c, {FusedConfig{128, 100, 2, fault}, FusedConfig{128, 256, 2, fault}}, seed++);
    const double bound = (std::sqrt(double(c.k[2])) + double(c.q[3])) * u32 * vmax;
    for (double d : diffs) {
      worst = std::max(worst, d / bound);
      worst_abs = std::max(worst_abs, d);
    }
  }
  return {worst, worst <= tolerance,
          fmt::format("largest |fused − plain| / ((√n + d)·u·max|v|) over 5 cases × block_k 100, 256: {:.3g} (largest |Δ| {:.3g})",
                      worst, worst_abs)};
}

// The kernel's own workspace count at n = 512, 1024, 2048 (d = 64, float32, causal, 2 threads),
// extrapolated to n = 65536.
Measurement fused_workspace(std::size_t block_q, std::size_t block_k_or_n, double tolerance) {
  numpy::Generator rng(70);
  std::vector<double> w;
  for (std::size_t n : {512, 1024, 2048}) {
    const auto q = draw_t4<float>(rng, {1, 1, n, 64}), k = draw_t4<float>(rng, {1, 1, n, 64}), v = draw_t4<float>(rng, {1, 1, n, 64});
    AttentionOptions<float> o;
    o.causal = true;
    FusedStats stats;
    const std::size_t bq = block_q ? block_q : n, bk = block_k_or_n ? block_k_or_n : n;
    vl::fused_attention<float>(q, k, v, o, FusedConfig{bq, bk, 2}, &stats);
    w.push_back(double(stats.workspace_bytes));
  }
  // The quadratic a + b·n + c·n² through the three points (exact for a workspace that is
  // constant, a strip of n keys, or n × n scores), evaluated at n = 65536.
  const double x0 = 512, x1 = 1024, x2 = 2048, x = 65536;
  const double at_65536 = w[0] * (x - x1) * (x - x2) / ((x0 - x1) * (x0 - x2)) + w[1] * (x - x0) * (x - x2) / ((x1 - x0) * (x1 - x2)) +
                          w[2] * (x - x0) * (x - x1) / ((x2 - x0) * (x2 - x1));
  return {at_65536, at_65536 < tolerance,
          fmt::format("workspace {:.0f}, {:.0f}, {:.0f} bytes at n = 512, 1024, 2048; through them, at n = 65536: {:.2f} MiB "
                      "(the score matrix: {:.0f} MiB)",
                      w[0], w[1], w[2], at_65536 / (1 << 20), 65536.0 * 65536.0 * 4 / (1 << 20))};
}

// The fast chunked linear attention against the three reference forms (float64).
Measurement linear_fast_matches(LinearFastFault fault, double tolerance) {
  numpy::Generator rng(80);
  double worst = 0;
  std::size_t runs = 0;
  for (auto [n, dk, dv] : {std::array<std::size_t, 3>{1, 4, 3}, {37, 8, 5}, {200, 16, 16}, {513, 32, 8}}) {
    const auto pq = elu_plus_one<double, 2>(rng.standard_normal(n, dk)), pk = elu_plus_one<double, 2>(rng.standard_normal(n, dk));
    const xt::xtensor<double, 2> v = rng.standard_normal(n, dv);
    const auto parallel = linear_attention_parallel<double>(pq, pk, v);
    const auto recurrent = linear_attention_recurrent<double>(pq, pk, v);
    for (std::size_t chunk : {1, 3, 16, 64, 1000}) {
      const auto chunked = linear_attention_chunked<double>(pq, pk, v, chunk);
      const auto fast = linear_attention_chunked_fast<double>(pq, pk, v, chunk, fault);
      for (const auto* ref : {&parallel, &recurrent, &chunked}) {
        double d = 0;
        for (std::size_t i = 0; i < fast.size(); ++i) d = std::max(d, std::fabs(fast.flat(i) - ref->flat(i)));
        worst = std::isnan(d) ? kInfinity : std::max(worst, d);
        ++runs;
      }
    }
  }
  return {worst, worst < tolerance,
          fmt::format("largest |fast − reference| over {} comparisons (4 shapes × chunk 1, 3, 16, 64, 1000 × parallel, recurrent, "
                      "chunked): {:.3g}",
                      runs, worst)};
}

// The predicate run on an implementation.
template <class Predicate>
CheckFn on(Predicate predicate, Implementation impl) {
  return [predicate, impl](double tolerance) { return predicate(impl, tolerance); };
}

}  // namespace

Lesson lesson() {
  Lesson l;
  l.id = "attention";
  l.spec_file = "specs/attention.md";
  l.listings.push_back({"attention.lookup", "vl::lessons::attention::listing_lookup", listing_lookup});
  l.listings.push_back({"attention.scale", "vl::lessons::attention::listing_scale", listing_scale});
  l.listings.push_back({"attention.heads", "vl::lessons::attention::listing_heads", listing_heads});
  l.listings.push_back({"attention.cost", "vl::lessons::attention::listing_cost", listing_cost});
  const Implementation ref = reference_implementation();

  l.checks.push_back({"attention.weights-distribution", "weight rows over 4 float64 cases and seed 002's float32 fixture",
                      on(weights_distribution, ref),
                      {{"softmax without the max subtraction, scores ~1e3", on(weights_distribution, with_softmax<double>(softmax_without_max<double>))},
                       {"softmax not divided by the row sum", on(weights_distribution, with_softmax<double>(softmax_not_normalised<double>))}}});

  l.checks.push_back({"attention.convex-combination", "outputs within the visible values' min/max, 6 cases",
                      on(convex_combination, ref),
                      {{"softmax not divided by the row sum", on(convex_combination, with_softmax<double>(softmax_not_normalised<double>))},
                       {"mask ignored", on(convex_combination, mask_ignored<double>())}}});

  l.checks.push_back({"attention.matches-torch", "output and weights vs torch, 4 cases (listing 1, mask, causal, scores ~1e3)",
                      on(matches_torch, ref),
                      {{"scale removed", on(matches_torch, scale_removed<double>())},
                       {"mask ignored", on(matches_torch, mask_ignored<double>())},
                       {"softmax without the max subtraction", on(matches_torch, with_softmax<double>(softmax_without_max<double>))}}});

  l.checks.push_back({"attention.mha-matches-torch", "nn.MultiheadAttention(16, 4): parameters, output, per-head weights",
                      on(mha_matches_torch, ref),
                      {{"heads sliced wrongly (interleaved columns)", on(mha_matches_torch, heads_interleaved())},
                       {"scale removed", on(mha_matches_torch, mha_scale_removed())}}});

  l.checks.push_back({"attention.score-std", "std of raw and scaled scores, d_k = 4 … 1024, seeds 1 and 2", on(score_std, ref),
                      {{"scale removed", on(score_std, experiment_scale_removed())},
                       {"divided by d_k instead of √d_k", on(score_std, experiment_divides_by_d_k())}}});

  l.checks.push_back({"attention.unscaled-saturates", "max weight and |J| without the scale, d_k = 4 … 1024, seeds 1 and 2",
                      on(unscaled_saturates, ref),
                      {{"Jacobian without the −p pᵀ term", on(unscaled_saturates, jacobian_without_outer_product())},
                       {"the 'without' branch scaled too", on(unscaled_saturates, experiment_both_branches_scaled())}}});

  l.checks.push_back({"attention.scaled-flat", "max weight and |J| with the scale, d_k = 4 … 1024, seeds 1 and 2",
                      on(scaled_flat, ref),
                      {{"scale removed", on(scaled_flat, experiment_scale_removed())},
                       {"divided by d_k instead of √d_k", on(scaled_flat, experiment_divides_by_d_k())}}});

  l.checks.push_back({"attention.parameter-count", "nn.MultiheadAttention parameters, d = 16, 64, 512, h = 1 … 16",
                      on(parameter_count, ref),
                      {{"a full-size attention per head", on(parameter_count, parameters_per_head())}}});

  l.checks.push_back({"attention.config-checked", "bad d_model/heads, dropout and shapes refused with a clear message",
                      on(config_checked, ref),
                      {{"head size floored (d_model % heads not checked)", on(config_checked, head_size_floored())},
                       {"dropout range not checked", on(config_checked, dropout_unchecked())}}});

  const std::vector<std::pair<std::string, BackwardBug>> bugs = {
      {"backward without the Jacobian term (dS = P ⊙ dP)", BackwardBug::no_jacobian_term},
      {"dP passed straight to the scores (dS = dP)", BackwardBug::dp_passed_straight},
      {"scale removed from dQ, dK", BackwardBug::scale_dropped},
      {"mask ignored in the backward", BackwardBug::mask_ignored}};
  std::vector<NegativeControl> fd_controls, torch_controls, f32_controls;
  for (const auto& [name, bug] : bugs) {
    fd_controls.push_back({name, on(backward_finite_differences, with_backward_bug<double>(bug))});
    torch_controls.push_back({name, on(backward_matches_torch, with_backward_bug<double>(bug))});
    if (bug != BackwardBug::mask_ignored) f32_controls.push_back({name, on(fixture_gradient_float32, with_backward_bug<float>(bug))});
  }
  l.checks.push_back({"attention.backward-fd", "dQ, dK, dV vs central differences, 3 float64 cases (plain, causal, mask)",
                      on(backward_finite_differences, ref), fd_controls});
  l.checks.push_back({"attention.backward-matches-torch", "dQ, dK, dV vs torch autograd (causal)", on(backward_matches_torch, ref),
                      torch_controls});
  l.checks.push_back({"attention.fixture-gradient", "seed 002: 36 gradient entries vs central differences in float32",
                      on(fixture_gradient_float32, ref), f32_controls});

  l.checks.push_back({"attention.dropout-inference", "seed 002: gradients with dropout 0.1/0.5/0.9 vs 0", on(dropout_inference, ref),
                      {{"inverted-dropout scaling applied at inference", on(dropout_inference, dropout_scaling_at_inference())}}});

  l.checks.push_back({"attention.fixture-causal", "seed 002: causal weights and output[0]", on(fixture_causal, ref),
                      {{"mask ignored", on(fixture_causal, mask_ignored<float>())},
                       {"causal mask lets key i + 1 through", on(fixture_causal, mask_one_future_key<float>())}}});

  l.checks.push_back({"attention.score-cells", "weights of float32 attention at n = 512 … 4096, d = 64", on(score_cells, ref),
                      {{"keys cut to a window of 256", on(score_cells, windowed_scores())}}});

  auto fixed = [](auto f, auto... args) -> CheckFn { return [=](double tolerance) { return f(args..., tolerance); }; };
  l.checks.push_back({"attention.fused-matches-plain", "fused vs plain kernel, float64, 9 cases × 12 block shapes",
                      fixed(fused_matches_plain, FusedFault::none),
                      {{"running sum and accumulator not rescaled by exp(m_old − m_new)", fixed(fused_matches_plain, FusedFault::no_rescale)},
                       {"last partial key block dropped", fixed(fused_matches_plain, FusedFault::drop_last_partial_key_block)},
                       {"causal block skip off by one block", fixed(fused_matches_plain, FusedFault::causal_skip_off_by_one_block)}}});
  l.checks.push_back({"attention.fused-float32", "fused vs plain kernel, float32, against (√n + d)·u·max|v|",
                      fixed(fused_float32_bound, FusedFault::none),
                      {{"running sum and accumulator not rescaled", fixed(fused_float32_bound, FusedFault::no_rescale)},
                       {"last partial key block dropped", fixed(fused_float32_bound, FusedFault::drop_last_partial_key_block)},
                       {"causal block skip off by one block", fixed(fused_float32_bound, FusedFault::causal_skip_off_by_one_block)}}});
  l.checks.push_back({"attention.fused-workspace", "the fused kernel's workspace count at n = 512 … 2048, extrapolated to 65536",
                      fixed(fused_workspace, std::size_t(128), std::size_t(256)),
                      {{"one key block spanning all n keys (a strip of 256 × n scores per thread)", fixed(fused_workspace, std::size_t(256), std::size_t(0))},
                       {"one block for everything: the n × n scores materialised", fixed(fused_workspace, std::size_t(0), std::size_t(0))}}});
  l.checks.push_back({"attention.linear-fast-matches", "BLAS chunked linear attention vs the parallel, recurrent and chunked forms",
                      fixed(linear_fast_matches, LinearFastFault::none),
                      {{"state not carried across chunks", fixed(linear_fast_matches, LinearFastFault::state_not_carried)},
                       {"diagonal dropped (a token does not see itself)", fixed(linear_fast_matches, LinearFastFault::diagonal_dropped)}}});
  return l;
}

}  // namespace vl::lessons::attention
