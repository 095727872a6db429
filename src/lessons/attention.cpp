// Lesson attention: scaled dot-product attention (spec: specs/attention.md).
//
// The listings are the C++ twins of listings 1, 2, 3 and 6 of seed article 001: the same
// inputs (default_rng, torch.manual_seed), the same printed lines. The checks verify the
// lesson's claims, and seed 002's tests and invariants, each against broken variants it must
// reject (attention_lesson.cpp).
#include "lessons/attention.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xadapt.hpp>
#include <xtensor/xbroadcast.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "core/errors.hpp"
#include "kernels/fused_attention.hpp"
#include "numeric/npy.hpp"
#include "numeric/numpy_compare.hpp"
#include "numeric/numpy_format.hpp"
#include "numeric/numpy_random.hpp"
#include "numeric/torch_mha_init.hpp"
#include "numeric/torch_random.hpp"

namespace vl::lessons::attention {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// max |a − b| over two arrays of any shape with the same number of elements; ∞ on a size
// mismatch or a NaN (so that a broken variant producing NaN never passes).
template <class A, class B>
double max_diff(const A& a, const B& b) {
  if (a.size() != b.size()) return kInf;
  double worst = 0;
  auto ib = b.begin();
  for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib) {
    const double d = std::fabs(double(*ia) - double(*ib));
    if (std::isnan(d)) return kInf;
    worst = std::max(worst, d);
  }
  return worst;
}

Tensor4<double> draw4(numpy::Generator& rng, std::array<std::size_t, 4> shape) {
  return rng.standard_normal(std::vector<std::size_t>(shape.begin(), shape.end()));
}

template <class T>
Tensor4<T> as4(const xt::xtensor<T, 2>& x) {
  return xt::reshape_view(x, std::array<std::size_t, 4>{1, 1, x.shape(0), x.shape(1)});
}

// (seq, d_model) → (1, heads, seq, hd): head h takes columns h·hd … (h+1)·hd.
template <class T>
Tensor4<T> split_columns(const xt::xtensor<T, 2>& x, std::size_t heads) {
  const std::size_t s = x.shape(0), hd = x.shape(1) / heads;
  Tensor4<T> out = Tensor4<T>::from_shape({1, heads, s, hd});
  for (std::size_t h = 0; h < heads; ++h)
    xt::view(out, 0, h) = xt::view(x, xt::all(), xt::range(h * hd, (h + 1) * hd));
  return out;
}

// The inverse: (1, heads, seq, hd) → (seq, heads·hd).
template <class T>
xt::xtensor<T, 2> merge_columns(const Tensor4<T>& x) {
  const std::size_t heads = x.shape(1), s = x.shape(2), hd = x.shape(3);
  xt::xtensor<T, 2> out = xt::xtensor<T, 2>::from_shape({s, heads * hd});
  for (std::size_t h = 0; h < heads; ++h)
    xt::view(out, xt::all(), xt::range(h * hd, (h + 1) * hd)) = xt::view(x, 0, h);
  return out;
}

}  // namespace

std::filesystem::path golden(const std::string& name) {
  return reference_outputs_dir() / "attention" / name;
}

// ---------------------------------------------------------------------------------------------
// Seed 002's module and fixture.

void check_heads_config(const HeadsConfig& c, const std::array<std::array<std::size_t, 2>, 3>& shapes) {
  if (c.num_heads == 0 || c.d_model % c.num_heads != 0)
    throw std::invalid_argument(fmt::format("attention: d_model = {} is not divisible by num_heads = {} "
                                            "(each head reads d_model / num_heads columns)", c.d_model, c.num_heads));
  if (!(c.dropout >= 0.0f && c.dropout < 1.0f))
    throw std::invalid_argument(fmt::format("attention: dropout = {} is outside [0, 1)", c.dropout));
  for (std::size_t i = 0; i < 3; ++i)
    if (shapes[i] != shapes[0] || shapes[i][1] != c.d_model)
      throw std::invalid_argument(fmt::format("attention: query ({}), key ({}) and value ({}) must all be (seq, d_model = {})",
                                              fmt::join(shapes[0], ", "), fmt::join(shapes[1], ", "),
                                              fmt::join(shapes[2], ", "), c.d_model));
}

template <class T>
AttentionOptions<T> heads_options(const HeadsConfig& c) {
  AttentionOptions<T> o;
  o.causal = c.causal;
  o.return_weights = true;
  o.scale = T(1) / std::sqrt(static_cast<T>(c.d_model / c.num_heads));  // the seed's scale_of, in T
  return o;
}

template <class T>
std::array<std::array<std::size_t, 2>, 3> shapes_of(const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k,
                                                    const xt::xtensor<T, 2>& v) {
  return {{{q.shape(0), q.shape(1)}, {k.shape(0), k.shape(1)}, {v.shape(0), v.shape(1)}}};
}

template <class T>
HeadsOutput<T> heads_forward(const Kernels<T>& kernels, const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k,
                             const xt::xtensor<T, 2>& v, const HeadsConfig& c) {
  check_heads_config(c, shapes_of(q, k, v));
  const std::size_t H = c.num_heads;
  const AttentionResult<T, 4> r =
      kernels.forward(split_columns(q, H), split_columns(k, H), split_columns(v, H), heads_options<T>(c));
  return {merge_columns(r.output), xt::view(r.weights, 0)};
}

template <class T>
HeadsGradients<T> heads_backward(const Kernels<T>& kernels, const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k,
                                 const xt::xtensor<T, 2>& v, const xt::xtensor<T, 2>& d_out, const HeadsConfig& c) {
  check_heads_config(c, shapes_of(q, k, v));
  const std::size_t H = c.num_heads;
  // c.dropout is deliberately unused: the module computes inference, where dropout is the identity.
  const AttentionGradients<T, 4> g = kernels.backward(split_columns(q, H), split_columns(k, H), split_columns(v, H),
                                                      split_columns(d_out, H), heads_options<T>(c));
  return {merge_columns(g.dq), merge_columns(g.dk), merge_columns(g.dv)};
}

template HeadsOutput<float> heads_forward(const Kernels<float>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&,
                                          const xt::xtensor<float, 2>&, const HeadsConfig&);
template HeadsOutput<double> heads_forward(const Kernels<double>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&,
                                           const xt::xtensor<double, 2>&, const HeadsConfig&);
template HeadsGradients<float> heads_backward(const Kernels<float>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&,
                                              const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const HeadsConfig&);
template HeadsGradients<double> heads_backward(const Kernels<double>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&,
                                               const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const HeadsConfig&);

Fixture seed_fixture() {
  Fixture f{xt::xtensor<float, 2>::from_shape({3, 4}), xt::xtensor<float, 2>::from_shape({3, 4}),
            xt::xtensor<float, 2>::from_shape({3, 4})};
  for (std::size_t x = 0; x < 12; ++x) {
    f.q.flat(x) = static_cast<float>(x + 1) / 10.0f;
    f.k.flat(x) = static_cast<float>(x / 4 + 1) / 4.0f - static_cast<float>(x % 2) / 3.0f;
    f.v.flat(x) = static_cast<float>(x + 1) / 10.0f;
  }
  return f;
}

xt::xtensor<float, 2> fixture_loss_gradient() {
  xt::xtensor<float, 2> g = xt::xtensor<float, 2>::from_shape({3, 4});
  for (std::size_t x = 0; x < 12; ++x) g.flat(x) = static_cast<float>(x + 1) / 10.0f;
  return g;
}

// ---------------------------------------------------------------------------------------------
// The reference implementation: our kernels.

Implementation reference_implementation() {
  Implementation impl;
  impl.f64.forward = [](const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                        const AttentionOptions<double>& o) {
    AttentionOptions<double> with_weights = o;
    with_weights.return_weights = true;
    return vl::attention<double>(q, k, v, with_weights);
  };
  impl.f64.backward = [](const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                         const Tensor4<double>& d_out, const AttentionOptions<double>& o) {
    return attention_backward<double>(q, k, v, d_out, o);
  };
  impl.f32.forward = [](const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                        const AttentionOptions<float>& o) {
    AttentionOptions<float> with_weights = o;
    with_weights.return_weights = true;
    return vl::attention<float>(q, k, v, with_weights);
  };
  impl.f32.backward = [](const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                         const Tensor4<float>& d_out, const AttentionOptions<float>& o) {
    return attention_backward<float>(q, k, v, d_out, o);
  };
  impl.check_config = check_heads_config;
  impl.heads_gradients_f32 = [](const Kernels<float>& kernels, const xt::xtensor<float, 2>& q, const xt::xtensor<float, 2>& k,
                                const xt::xtensor<float, 2>& v, const xt::xtensor<float, 2>& d_out, const HeadsConfig& c) {
    return heads_backward<float>(kernels, q, k, v, d_out, c);
  };
  impl.mha = [](const Matrix& x, const MhaParameters<double>& p, std::size_t heads) {
    return multi_head_self_attention<double, 2>(x, p, heads);
  };
  impl.mha_parameter_count = [](std::size_t d, std::size_t heads) {
    torch_rng::Generator gen(0);
    const auto p = torch_rng::mha_init<float>(gen, d, heads);
    return p.in_proj_weight.size() + p.in_proj_bias.size() + p.out_proj_weight.size() + p.out_proj_bias.size();
  };
  impl.scale = reference_scale_variant();
  // Listing 6's computation: S = QKᵀ/√d, the stable softmax in place, S V — on one n × n buffer
  // (the n² matrix is formed, as in the listing), the fast way (BLAS, vectorised softmax).
  impl.f32_attention_2d = [](const xt::xtensor<float, 2>& q, const xt::xtensor<float, 2>& k, const xt::xtensor<float, 2>& v) {
    return vl::attention_materialized<float>(q, k, v);
  };
  return impl;
}

// ---------------------------------------------------------------------------------------------
// Listing 1: attention as a soft dictionary lookup (n = 5, d_k = 8, d_v = 4, default_rng(0)).

// [attention.lookup]
ListingOutput listing_lookup() {
  numpy::Generator rng(0);
  const Matrix Q = rng.standard_normal(5, 8), K = rng.standard_normal(5, 8), V = rng.standard_normal(5, 4);
  AttentionOptions<double> o;
  o.return_weights = true;
  const auto r = vl::attention<double>(Q, K, V, o);
  const Matrix& w = r.weights;

  xt::xarray<double> row_sums = xt::zeros<double>({w.shape(0)});
  for (std::size_t i = 0; i < w.shape(0); ++i) {
    double s = 0;  // w.sum(axis=1): five terms, NumPy adds them left to right
    for (std::size_t j = 0; j < w.shape(1); ++j) s += w(i, j);
    row_sums(i) = numpy::round_half_even(s, 12);
  }
  const xt::xarray<double> ref = npy::load_double(golden("lookup.out_torch.npy"));
  xt::xarray<double> first_row = xt::zeros<double>({w.shape(1)});
  for (std::size_t j = 0; j < w.shape(1); ++j) first_row(j) = numpy::round_half_even(w(0, j), 3);

  ListingOutput out;
  out.lines.push_back(fmt::format("forma dei pesi: {} - somma di ogni riga: {}", numpy::format_shape({w.shape(0), w.shape(1)}),
                                  numpy::format_array(row_sums)));
  out.lines.push_back(fmt::format("differenza massima con torch: {:.2e}", max_diff(r.output, ref)));
  out.lines.push_back(fmt::format("pesi della prima riga: {}", numpy::format_array(first_row)));
  out.arrays["O"] = r.output;
  out.arrays["W"] = r.weights;
  return out;
}
// [attention.lookup]

// ---------------------------------------------------------------------------------------------
// Listing 2: why divide by √d_k (default_rng(1), 4000 trials, 16 keys, d_k = 4 … 1024).

// [attention.scale]
ListingOutput listing_scale() {
  const auto rows = scale_experiment(1, reference_scale_variant());
  ListingOutput out;
  out.lines.push_back(scale_table_header());
  xt::xtensor<double, 2> table = xt::zeros<double>({rows.size(), std::size_t(5)});
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ScaleRow& r = rows[i];
    out.lines.push_back(format_scale_row(r));
    table(i, 0) = r.score_std;
    table(i, 1) = r.raw_max_weight;
    table(i, 2) = r.raw_jacobian;
    table(i, 3) = r.scaled_max_weight;
    table(i, 4) = r.scaled_jacobian;
  }
  out.arrays["table"] = table;
  return out;
}
// [attention.scale]

// ---------------------------------------------------------------------------------------------
// Listing 3: nn.MultiheadAttention(16, 4) by hand (torch.manual_seed(0), n = 6), parameters.

namespace {
struct HeadsInputs {
  MhaParameters<double> p;
  Matrix x;
};
HeadsInputs heads_inputs() {
  torch_rng::Generator gen(0);
  HeadsInputs in{torch_rng::mha_init<double>(gen, 16, 4), {}};
  const xt::xarray<double> x = torch_rng::randn<double>(gen, {1, 6, 16});
  in.x = xt::reshape_view(x, std::array<std::size_t, 2>{6, 16});
  return in;
}
}  // namespace

// [attention.heads]
ListingOutput listing_heads() {
  const Implementation impl = reference_implementation();
  const std::size_t d = 16, h = 4;
  const HeadsInputs in = heads_inputs();
  const MhaResult<double, 2> r = impl.mha(in.x, in.p, h);
  const auto ref = npy::load_double(golden("heads.out_torch.npy"));
  const auto ref_w = npy::load_double(golden("heads.w_torch.npy"));
  ListingOutput out;
  out.lines.push_back(fmt::format("differenza massima sull'uscita: {:.2e}", max_diff(r.output, ref)));
  out.lines.push_back(fmt::format("differenza massima sui pesi:    {:.2e}", max_diff(r.weights, ref_w)));
  for (std::size_t heads : {1, 4, 16})
    out.lines.push_back(fmt::format("{:>2} teste -> parametri: {}", heads, impl.mha_parameter_count(d, heads)));
  out.lines.push_back(fmt::format("formula 4*d*d + 4*d = {}", 4 * d * d + 4 * d));
  out.arrays["in_proj_weight"] = in.p.in_proj_weight;
  out.arrays["in_proj_bias"] = in.p.in_proj_bias;
  out.arrays["out_proj_weight"] = in.p.out_proj_weight;
  out.arrays["out_proj_bias"] = in.p.out_proj_bias;
  out.arrays["x"] = in.x;
  out.arrays["output"] = r.output;
  out.arrays["weights"] = r.weights;
  return out;
}
// [attention.heads]

// ---------------------------------------------------------------------------------------------
// Listing 6: the n × n score matrix (d = 64, float32, default_rng(0)), mean of five timings.

// [attention.cost]
ListingOutput listing_cost() {
  const Implementation impl = reference_implementation();
  numpy::Generator rng(0);
  const std::size_t d = 64;
  ListingOutput out;
  out.lines.push_back(fmt::format("{:>5} {:>12} {:>14} {:>16}", "n", "entrate n*n", "MiB (float32)", "tempo medio (s)"));
  for (std::size_t n : {512, 1024, 2048, 4096}) {
    const xt::xtensor<float, 2> Q = xt::cast<float>(rng.standard_normal(n, d));
    const xt::xtensor<float, 2> K = xt::cast<float>(rng.standard_normal(n, d));
    const xt::xtensor<float, 2> V = xt::cast<float>(rng.standard_normal(n, d));
    double total = 0;
    std::size_t cells = 0;
    for (int run = 0; run < 5; ++run) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto r = impl.f32_attention_2d(Q, K, V);
      total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      cells = r.weights.size();
    }
    const double mib = double(cells) * sizeof(float) / double(1 << 20);
    out.lines.push_back(fmt::format("{:>5} {:>12} {:>14.1f} {:>16.3f}", n, cells, mib, total / 5));
  }
  return out;
}
// [attention.cost]

// ---------------------------------------------------------------------------------------------
// The claims' predicates.

namespace {

// The cases of the forward claims, drawn as verify/reference/attention_goldens.py draws them.
struct SdpaCase {
  std::string name;
  Tensor4<double> q, k, v;
  AttentionOptions<double> options;
  std::string out_golden, w_golden;
};

const std::vector<SdpaCase>& sdpa_cases() {
  static const std::vector<SdpaCase> cases = [] {
    std::vector<SdpaCase> c;
    {
      numpy::Generator rng(0);
      const Matrix q = rng.standard_normal(5, 8), k = rng.standard_normal(5, 8), v = rng.standard_normal(5, 4);
      c.push_back({"listing 1 (n=5, d_k=8)", as4(q), as4(k), as4(v), {}, "lookup.out_torch.npy", "lookup.w_torch.npy"});
    }
    {
      numpy::Generator rng(10);
      SdpaCase s{"batched, 3 heads, boolean mask, Sq=5 Sk=7", draw4(rng, {2, 3, 5, 4}), draw4(rng, {2, 3, 7, 4}),
                 draw4(rng, {2, 3, 7, 6}), {}, "sdpa_masked.out.npy", "sdpa_masked.w.npy"};
      const xt::xarray<double> u = rng.random({5, 7});
      xt::xarray<bool> allowed = u < 0.6;
      xt::view(allowed, xt::all(), 0) = true;
      s.options.allowed = allowed;
      c.push_back(s);
    }
    {
      numpy::Generator rng(11);
      SdpaCase s{"causal, 2 heads, n=6", draw4(rng, {1, 2, 6, 8}), draw4(rng, {1, 2, 6, 8}), draw4(rng, {1, 2, 6, 8}),
                 {}, "sdpa_causal.out.npy", "sdpa_causal.w.npy"};
      s.options.causal = true;
      c.push_back(s);
    }
    {
      numpy::Generator rng(12);
      SdpaCase s{"scores around 1e3 (q, k times 32, d=16)", draw4(rng, {1, 1, 6, 16}), draw4(rng, {1, 1, 6, 16}),
                 draw4(rng, {1, 1, 6, 5}), {}, "sdpa_large.out.npy", "sdpa_large.w.npy"};
      s.q *= 32.0;
      s.k *= 32.0;
      c.push_back(s);
    }
    return c;
  }();
  return cases;
}

// May query i of (b, h) see key j under the case's options?
bool visible(const AttentionOptions<double>& o, std::size_t i, std::size_t j) {
  if (o.causal && j > i) return false;
  if (o.allowed) {
    const auto& a = *o.allowed;
    return a(i % a.shape(0), j % a.shape(1));  // our cases' masks are (Sq, Sk)
  }
  return true;
}

// The seed fixture in double (the same float values, widened).
struct FixtureD {
  Matrix q, k, v;
};
FixtureD fixture_double() {
  const Fixture f = seed_fixture();
  return {xt::cast<double>(f.q), xt::cast<double>(f.k), xt::cast<double>(f.v)};
}

}  // namespace

Measurement weights_distribution(const Implementation& impl, double tolerance) {
  // Every weight in [0, 1] and every row summing to 1: measured as the largest of |Σ_j w_ij − 1|
  // and the distance of a weight outside [0, 1].
  double worst = 0;
  std::string where = "every row a distribution";
  auto judge = [&](double dev, const std::string& at) {
    if (std::isnan(dev)) dev = kInf;
    if (dev > worst) { worst = dev; where = at; }
  };
  for (const SdpaCase& c : sdpa_cases()) {
    const auto r = impl.f64.forward(c.q, c.k, c.v, c.options);
    const auto& w = r.weights;
    for (std::size_t b = 0; b < w.shape(0); ++b)
      for (std::size_t h = 0; h < w.shape(1); ++h)
        for (std::size_t i = 0; i < w.shape(2); ++i) {
          double sum = 0, outside = 0;
          for (std::size_t j = 0; j < w.shape(3); ++j) {
            const double x = w(b, h, i, j);
            sum += x;
            outside = std::isnan(x) ? kInf : std::max({outside, -x, x - 1.0});
          }
          judge(std::max(std::fabs(sum - 1.0), outside), fmt::format("{}, b={} h={} row {}", c.name, b, h, i));
        }
  }
  const Fixture f = seed_fixture();
  for (bool causal : {false, true}) {
    const auto r = heads_forward<float>(impl.f32, f.q, f.k, f.v, HeadsConfig{4, 2, 0.0f, causal});
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t i = 0; i < 3; ++i) {
        float sum = 0;
        double outside = 0;
        for (std::size_t j = 0; j < 3; ++j) {
          sum += r.weights(h, i, j);
          outside = std::isnan(r.weights(h, i, j)) ? kInf : std::max({outside, -double(r.weights(h, i, j)), double(r.weights(h, i, j)) - 1.0});
        }
        judge(std::max(std::fabs(double(sum) - 1.0), outside),
              fmt::format("seed 002 fixture (float32{}), head {} row {}", causal ? ", causal" : "", h, i));
      }
  }
  return {worst, worst <= tolerance,
          fmt::format("largest |row sum − 1| or weight outside [0, 1]: {:.2e} ({}); {} float64 cases incl. scores ~1e3, "
                      "seed 002's float32 fixture with and without the causal mask",
                      worst, where, sdpa_cases().size())};
}

Measurement convex_combination(const Implementation& impl, double tolerance) {
  // o_i must lie, column by column, between the min and max of the values of the keys query i
  // may see (the mask's keys, not the weights'), up to tolerance · max |v|.
  double worst = 0;
  std::string where = "inside";
  std::vector<std::pair<std::string, SdpaCase>> cases;
  for (const SdpaCase& c : sdpa_cases()) cases.push_back({c.name, c});
  const FixtureD fd = fixture_double();
  for (bool causal : {false, true}) {
    SdpaCase s{"seed 002 fixture", {}, {}, {}, {}, "", ""};
    s.q = split_columns(fd.q, 2);
    s.k = split_columns(fd.k, 2);
    s.v = split_columns(fd.v, 2);
    s.options.causal = causal;
    s.options.scale = 1.0 / std::sqrt(2.0);
    cases.push_back({causal ? "seed 002 fixture, causal" : "seed 002 fixture", s});
  }
  for (const auto& [name, c] : cases) {
    const auto r = impl.f64.forward(c.q, c.k, c.v, c.options);
    const double scale = xt::amax(xt::abs(c.v))();
    for (std::size_t b = 0; b < r.output.shape(0); ++b)
      for (std::size_t h = 0; h < r.output.shape(1); ++h)
        for (std::size_t i = 0; i < r.output.shape(2); ++i)
          for (std::size_t col = 0; col < r.output.shape(3); ++col) {
            double lo = kInf, hi = -kInf;
            for (std::size_t j = 0; j < c.v.shape(2); ++j)
              if (visible(c.options, i, j)) {
                lo = std::min(lo, c.v(b, h, j, col));
                hi = std::max(hi, c.v(b, h, j, col));
              }
            const double o = r.output(b, h, i, col);
            const double excess = std::isnan(o) ? kInf : std::max({0.0, lo - o, o - hi}) / scale;
            if (excess > worst) { worst = excess; where = fmt::format("{}, b={} h={} query {} column {}", name, b, h, i, col); }
          }
  }
  return {worst, worst <= tolerance,
          fmt::format("largest excursion outside the min/max of the visible values, relative to max|v|: {:.2e} ({})", worst, where)};
}

Measurement matches_torch(const Implementation& impl, double tolerance) {
  double worst = 0;
  std::vector<std::string> parts;
  for (const SdpaCase& c : sdpa_cases()) {
    const auto r = impl.f64.forward(c.q, c.k, c.v, c.options);
    const double o = max_diff(r.output, npy::load_double(golden(c.out_golden)));
    const double w = max_diff(r.weights, npy::load_double(golden(c.w_golden)));
    worst = std::max({worst, o, w});
    parts.push_back(fmt::format("{}: output {:.2e}, weights {:.2e}", c.name, o, w));
  }
  return {worst, worst <= tolerance,
          fmt::format("max |ours − torch| {:.2e}; {}", worst, fmt::join(parts, "; "))};
}

Measurement mha_matches_torch(const Implementation& impl, double tolerance) {
  const HeadsInputs in = heads_inputs();
  // Our torch streams must give torch's parameters and input bit for bit.
  const double params = std::max({max_diff(in.p.in_proj_weight, npy::load_double(golden("heads.in_proj_weight.npy"))),
                                  max_diff(in.p.in_proj_bias, npy::load_double(golden("heads.in_proj_bias.npy"))),
                                  max_diff(in.p.out_proj_weight, npy::load_double(golden("heads.out_proj_weight.npy"))),
                                  max_diff(in.p.out_proj_bias, npy::load_double(golden("heads.out_proj_bias.npy"))),
                                  max_diff(in.x, npy::load_double(golden("heads.x.npy")))});
  const MhaResult<double, 2> r = impl.mha(in.x, in.p, 4);
  const double o = max_diff(r.output, npy::load_double(golden("heads.out_torch.npy")));
  const double w = max_diff(r.weights, npy::load_double(golden("heads.w_torch.npy")));
  const double worst = std::max({params, o, w});
  return {worst, worst <= tolerance && params == 0,
          fmt::format("nn.MultiheadAttention(16, 4), n=6: output {:.2e}, per-head weights {:.2e}; parameters and input "
                      "from our torch streams vs torch's: {:.2e} (must be 0)", o, w, params)};
}

Measurement score_std(const Implementation& impl, double tolerance) {
  double worst = 0;
  std::vector<std::string> parts;
  for (std::uint64_t seed : {1, 2}) {
    for (const ScaleRow& r : scale_experiment(seed, impl.scale)) {
      const double raw = std::fabs(r.score_std / std::sqrt(double(r.d_k)) - 1.0);
      const double scaled = std::fabs(r.scaled_std - 1.0);
      worst = std::max({worst, raw, scaled});
      if (seed == 1) parts.push_back(fmt::format("d_k={}: std {:.3f} vs √d_k {:.3f}, scaled std {:.3f}", r.d_k, r.score_std,
                                                 std::sqrt(double(r.d_k)), r.scaled_std));
    }
  }
  if (std::isnan(worst)) worst = kInf;
  return {worst, worst <= tolerance,
          fmt::format("largest |std(q·k)/√d_k − 1| or |std(q·k/√d_k) − 1| over seeds 1, 2: {:.4f}; seed 1: {}", worst,
                      fmt::join(parts, "; "))};
}

Measurement unscaled_saturates(const Implementation& impl, double tolerance) {
  // Without the scale, the mean max weight must rise and the mean Jacobian norm fall at every
  // step of d_k, and at d_k = 1024 the norm must be below `tolerance` times the scaled one.
  double worst_ratio = 0;
  bool monotone = true;
  std::string detail;
  for (std::uint64_t seed : {1, 2}) {
    const auto rows = scale_experiment(seed, impl.scale);
    for (std::size_t i = 1; i < rows.size(); ++i)
      monotone = monotone && rows[i].raw_max_weight > rows[i - 1].raw_max_weight && rows[i].raw_jacobian < rows[i - 1].raw_jacobian;
    const double ratio = rows.back().raw_jacobian / rows.back().scaled_jacobian;
    worst_ratio = std::max(worst_ratio, std::isnan(ratio) ? kInf : ratio);
    detail += fmt::format("seed {}: max weight {:.3f} → {:.3f}, |J| {:.4f} → {:.4f} (scaled at d_k=1024: {:.4f}); ", seed,
                          rows.front().raw_max_weight, rows.back().raw_max_weight, rows.front().raw_jacobian,
                          rows.back().raw_jacobian, rows.back().scaled_jacobian);
  }
  return {worst_ratio, monotone && worst_ratio <= tolerance,
          fmt::format("{}unscaled/scaled |J| at d_k=1024: {:.3f}; max weight rising and |J| falling at every step: {}", detail,
                      worst_ratio, monotone ? "yes" : "NO")};
}

Measurement scaled_flat(const Implementation& impl, double tolerance) {
  double worst = 0;
  std::string detail;
  for (std::uint64_t seed : {1, 2}) {
    const auto rows = scale_experiment(seed, impl.scale);
    double wmin = kInf, wmax = -kInf, jmin = kInf, jmax = -kInf;
    for (const ScaleRow& r : rows) {
      wmin = std::min(wmin, r.scaled_max_weight);
      wmax = std::max(wmax, r.scaled_max_weight);
      jmin = std::min(jmin, r.scaled_jacobian);
      jmax = std::max(jmax, r.scaled_jacobian);
    }
    double spread = std::max(wmax - wmin, jmax - jmin);
    if (std::isnan(spread)) spread = kInf;
    worst = std::max(worst, spread);
    detail += fmt::format("seed {}: max weight {:.3f}…{:.3f}, |J| {:.4f}…{:.4f}; ", seed, wmin, wmax, jmin, jmax);
  }
  return {worst, worst <= tolerance,
          fmt::format("{}largest spread over d_k = 4…1024 with the scale: {:.4f}", detail, worst)};
}

Measurement parameter_count(const Implementation& impl, double tolerance) {
  double worst = 0;
  std::vector<std::string> parts;
  for (std::size_t d : {16, 64, 512}) {
    std::vector<std::string> counts;
    for (std::size_t h : {1, 2, 4, 8, 16}) {
      const std::size_t n = impl.mha_parameter_count(d, h);
      worst = std::max(worst, std::fabs(double(n) - double(4 * d * d + 4 * d)));
      counts.push_back(fmt::format("h={}: {}", h, n));
    }
    parts.push_back(fmt::format("d={} (4d²+4d = {}): {}", d, 4 * d * d + 4 * d, fmt::join(counts, ", ")));
  }
  return {worst, worst <= tolerance, fmt::format("largest |count − (4d² + 4d)|: {}; {}", worst, fmt::join(parts, "; "))};
}

Measurement config_checked(const Implementation& impl, double) {
  // Each bad configuration must be refused with a message that names the offending numbers;
  // the seed's own configuration must be accepted.
  std::vector<std::string> failures, seen;
  auto must_refuse = [&](const std::string& what, const std::vector<std::string>& mentions, const std::function<void()>& f) {
    try {
      f();
      failures.push_back(what + ": accepted");
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      for (const auto& m : mentions)
        if (msg.find(m) == std::string::npos) failures.push_back(fmt::format("{}: message '{}' does not name {}", what, msg, m));
      seen.push_back(what);
    }
  };
  using Shapes = std::array<std::array<std::size_t, 2>, 3>;
  const Shapes ok_shapes{{{3, 4}, {3, 4}, {3, 4}}};
  must_refuse("d_model 10, 4 heads (seed module)", {"10", "4"}, [&] { impl.check_config({10, 4, 0.0f, false}, {{{3, 10}, {3, 10}, {3, 10}}}); });
  must_refuse("d_model 10, 4 heads (nn.MultiheadAttention init)", {"10", "4"}, [&] { impl.mha_parameter_count(10, 4); });
  must_refuse("d_model 10, 4 heads (multi-head forward)", {"10", "4"}, [&] {
    MhaParameters<double> p{xt::zeros<double>({30, 10}), xt::zeros<double>({30}), xt::zeros<double>({10, 10}), xt::zeros<double>({10})};
    impl.mha(xt::zeros<double>({3, 10}), p, 4);
  });
  must_refuse("dropout 1", {"1"}, [&] { impl.check_config({4, 2, 1.0f, false}, ok_shapes); });
  must_refuse("dropout -0.1", {"-0.1"}, [&] { impl.check_config({4, 2, -0.1f, false}, ok_shapes); });
  must_refuse("key of another length", {"(3, 4)", "(2, 4)"}, [&] { impl.check_config({4, 2, 0.0f, false}, {{{3, 4}, {2, 4}, {3, 4}}}); });
  must_refuse("rows of 6 columns for d_model 4", {"6"}, [&] { impl.check_config({4, 2, 0.0f, false}, {{{3, 6}, {3, 6}, {3, 6}}}); });
  try {
    impl.check_config({4, 2, 0.5f, false}, ok_shapes);
  } catch (const std::exception& e) {
    failures.push_back(fmt::format("seed configuration (d_model 4, 2 heads, dropout 0.5) refused: {}", e.what()));
  }
  return {double(failures.size()), failures.empty(),
          failures.empty() ? fmt::format("refused with a message naming the numbers: {}; seed configuration accepted", fmt::join(seen, ", "))
                           : fmt::format("{}", fmt::join(failures, "; "))};
}

namespace {

// L = Σ G ⊙ O, the loss whose gradient the backward computes for dO = G.
double loss(const Implementation& impl, const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
            const Tensor4<double>& g, const AttentionOptions<double>& o) {
  const auto r = impl.f64.forward(q, k, v, o);
  double s = 0;
  for (std::size_t i = 0; i < g.size(); ++i) s += g.flat(i) * r.output.flat(i);
  return s;
}

struct GradCase {
  std::string name;
  Tensor4<double> q, k, v, g;
  AttentionOptions<double> options;
};

std::vector<GradCase> grad_cases() {
  std::vector<GradCase> cases;
  {
    numpy::Generator rng(20);
    cases.push_back({"2 heads, n=5, d=4", draw4(rng, {1, 2, 5, 4}), draw4(rng, {1, 2, 5, 4}), draw4(rng, {1, 2, 5, 4}),
                     draw4(rng, {1, 2, 5, 4}), {}});
  }
  {
    numpy::Generator rng(21);
    GradCase c{"causal, n=6, d=3, d_v=5", draw4(rng, {1, 1, 6, 3}), draw4(rng, {1, 1, 6, 3}), draw4(rng, {1, 1, 6, 5}),
               draw4(rng, {1, 1, 6, 5}), {}};
    c.options.causal = true;
    cases.push_back(c);
  }
  {
    numpy::Generator rng(22);
    GradCase c{"batch 2, boolean mask, Sq=4 Sk=7", draw4(rng, {2, 1, 4, 3}), draw4(rng, {2, 1, 7, 3}), draw4(rng, {2, 1, 7, 2}),
               draw4(rng, {2, 1, 4, 2}), {}};
    xt::xarray<bool> allowed = rng.random({4, 7}) < 0.5;
    xt::view(allowed, xt::all(), 0) = true;
    c.options.allowed = allowed;
    cases.push_back(c);
  }
  return cases;
}

}  // namespace

Measurement backward_finite_differences(const Implementation& impl, double tolerance) {
  // Central differences with step h = 1e-5 of L = Σ G ⊙ O, against dQ, dK, dV.
  const double step = 1e-5;
  double worst = 0;
  std::string where = "";
  std::size_t entries = 0;
  for (GradCase c : grad_cases()) {
    const auto grads = impl.f64.backward(c.q, c.k, c.v, c.g, c.options);
    const std::array<std::pair<const char*, std::pair<Tensor4<double>*, const Tensor4<double>*>>, 3> inputs = {
        {{"dQ", {&c.q, &grads.dq}}, {"dK", {&c.k, &grads.dk}}, {"dV", {&c.v, &grads.dv}}}};
    for (const auto& [name, pair] : inputs) {
      Tensor4<double>& x = *pair.first;
      const Tensor4<double>& analytic = *pair.second;
      if (analytic.shape() != x.shape()) return {kInf, false, fmt::format("{}: {} has the wrong shape", c.name, name)};
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double keep = x.flat(i);
        x.flat(i) = keep + step;
        const double up = loss(impl, c.q, c.k, c.v, c.g, c.options);
        x.flat(i) = keep - step;
        const double down = loss(impl, c.q, c.k, c.v, c.g, c.options);
        x.flat(i) = keep;
        double err = std::fabs((up - down) / (2 * step) - analytic.flat(i));
        if (std::isnan(err)) err = kInf;
        if (err > worst) { worst = err; where = fmt::format("{}, {}[{}]", c.name, name, i); }
        ++entries;
      }
    }
  }
  return {worst, worst <= tolerance,
          fmt::format("max |backward − central difference (h = 1e-5)| over {} entries: {:.2e} ({})", entries, worst, where)};
}

Measurement backward_matches_torch(const Implementation& impl, double tolerance) {
  numpy::Generator rng(13);
  const Tensor4<double> q = draw4(rng, {1, 2, 5, 4}), k = draw4(rng, {1, 2, 5, 4}), v = draw4(rng, {1, 2, 5, 4}),
                        g = draw4(rng, {1, 2, 5, 4});
  AttentionOptions<double> o;
  o.causal = true;
  const auto grads = impl.f64.backward(q, k, v, g, o);
  const double dq = max_diff(grads.dq, npy::load_double(golden("grad_causal.dq.npy")));
  const double dk = max_diff(grads.dk, npy::load_double(golden("grad_causal.dk.npy")));
  const double dv = max_diff(grads.dv, npy::load_double(golden("grad_causal.dv.npy")));
  const double worst = std::max({dq, dk, dv});
  return {worst, worst <= tolerance,
          fmt::format("causal, 2 heads, n=5, d=4 vs torch autograd: dQ {:.2e}, dK {:.2e}, dV {:.2e}", dq, dk, dv)};
}

namespace {
// The seed's loss, in float32 as the seed computes it: total += g_x · out_x, x = 0 … 11.
float fixture_loss(const Implementation& impl, const Fixture& f) {
  const auto r = heads_forward<float>(impl.f32, f.q, f.k, f.v, HeadsConfig{4, 2, 0.0f, false});
  const auto g = fixture_loss_gradient();
  float total = 0;
  for (std::size_t x = 0; x < 12; ++x) total = total + g.flat(x) * r.output.flat(x);
  return total;
}
}  // namespace

Measurement fixture_gradient_float32(const Implementation& impl, double tolerance) {
  // Seed 002: dQ, dK, dV of the fixture against (L(x + 1e-3) − L(x − 1e-3)) / 2e-3, in float32.
  const Fixture f = seed_fixture();
  const auto grads = impl.heads_gradients_f32(impl.f32, f.q, f.k, f.v, fixture_loss_gradient(), HeadsConfig{4, 2, 0.0f, false});
  double worst = 0, total = 0;
  std::string where;
  std::vector<std::string> seed_entries;
  const std::array<std::pair<const char*, const xt::xtensor<float, 2>*>, 3> all = {{{"q", &grads.dq}, {"k", &grads.dk}, {"v", &grads.dv}}};
  for (std::size_t which = 0; which < 3; ++which) {
    for (std::size_t x = 0; x < 12; ++x) {
      Fixture up = f, down = f;
      xt::xtensor<float, 2>& u = which == 0 ? up.q : which == 1 ? up.k : up.v;
      xt::xtensor<float, 2>& dn = which == 0 ? down.q : which == 1 ? down.k : down.v;
      u.flat(x) = u.flat(x) + 0.001f;
      dn.flat(x) = dn.flat(x) - 0.001f;
      const float slope = (fixture_loss(impl, up) - fixture_loss(impl, down)) / 0.002f;
      const double analytic = all[which].second->flat(x);
      total += std::fabs(analytic);
      double err = std::fabs(analytic - double(slope));
      if (std::isnan(err)) err = kInf;
      if (err > worst) { worst = err; where = fmt::format("d{}[{}]: {:.6f} vs {:.6f}", all[which].first, x, analytic, slope); }
      if ((which == 0 && (x == 0 || x == 7)) || (which == 1 && x == 5) || (which == 2 && x == 10))
        seed_entries.push_back(fmt::format("d{}[{}] {:.5f}/{:.5f}", all[which].first, x, analytic, slope));
    }
  }
  return {worst, worst <= tolerance && total > 0,
          fmt::format("max |gradient − central difference (step 1e-3, float32)| over the 36 entries: {:.2e} ({}); the seed's "
                      "entries (backward/difference): {}; Σ|gradient| = {:.3f}",
                      worst, where, fmt::join(seed_entries, ", "), total)};
}

Measurement dropout_inference(const Implementation& impl, double tolerance) {
  const Fixture f = seed_fixture();
  const auto g = fixture_loss_gradient();
  const auto base = impl.heads_gradients_f32(impl.f32, f.q, f.k, f.v, g, HeadsConfig{4, 2, 0.0f, false});
  double worst = 0;
  for (float p : {0.1f, 0.5f, 0.9f}) {
    const auto with = impl.heads_gradients_f32(impl.f32, f.q, f.k, f.v, g, HeadsConfig{4, 2, p, false});
    worst = std::max({worst, max_diff(with.dq, base.dq), max_diff(with.dk, base.dk), max_diff(with.dv, base.dv)});
  }
  return {worst, worst <= tolerance,
          fmt::format("largest difference between the gradients with dropout 0.1, 0.5, 0.9 configured and with 0: {:.2e} "
                      "(dv[3] = {}, dq[11] = {} at dropout 0)", worst, base.dv.flat(3), base.dq.flat(11))};
}

Measurement fixture_causal(const Implementation& impl, double tolerance) {
  const Fixture f = seed_fixture();
  const auto r = heads_forward<float>(impl.f32, f.q, f.k, f.v, HeadsConfig{4, 2, 0.0f, true});
  double worst = 0;
  std::vector<std::string> bad;
  auto expect = [&](double got, double want, const std::string& what) {
    double d = std::fabs(got - want);
    if (std::isnan(d)) d = kInf;
    if (d > 0) bad.push_back(fmt::format("{} = {} (expected {})", what, got, want));
    worst = std::max(worst, d);
  };
  expect(r.weights(0, 0, 0), 1.0, "head 0 weight (0, 0)");
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = i + 1; j < 3; ++j) expect(r.weights(h, i, j), 0.0, fmt::format("head {} weight ({}, {})", h, i, j));
  expect(r.output(0, 0), double(0.1f), "output[0]");
  expect(r.output(0, 2), double(f.v(0, 2)), "output[2] (head 1, row 0)");
  return {worst, worst <= tolerance,
          bad.empty() ? fmt::format("head 0 row 0 = [{}, {}, {}], every future weight 0, output[0] = {} == 0.1f", r.weights(0, 0, 0),
                                    r.weights(0, 0, 1), r.weights(0, 0, 2), r.output(0, 0))
                      : fmt::format("{}", fmt::join(bad, "; "))};
}

Measurement score_cells(const Implementation& impl, double tolerance) {
  // The score (weight) matrix of one head: n² cells, 4n² bytes in float32.
  numpy::Generator rng(30);
  double worst = 0;
  std::vector<std::string> parts;
  for (std::size_t n : {512, 1024, 2048, 4096}) {
    const xt::xtensor<float, 2> q = xt::cast<float>(rng.standard_normal(n, 64)), k = xt::cast<float>(rng.standard_normal(n, 64)),
                                v = xt::cast<float>(rng.standard_normal(n, 64));
    const auto r = impl.f32_attention_2d(q, k, v);
    const double cells = double(r.weights.size());
    worst = std::max(worst, std::fabs(cells - double(n) * double(n)));
    parts.push_back(fmt::format("n={}: {} cells, {:.1f} MiB", n, r.weights.size(), cells * sizeof(float) / double(1 << 20)));
  }
  return {worst, worst <= tolerance, fmt::format("largest |cells − n²|: {}; {}", worst, fmt::join(parts, ", "))};
}

}  // namespace vl::lessons::attention
