// Audit your own attention kernel in-process: implement vl::backends::Backend over it and run
// the suite's audit on it (docs/candidates.md, "In-process, for C++").
//
// The kernel here is a deliberately plain loop nest, standing for "your kernel":
//   O[b,h,i,:] = Σ_j softmax_j(scale · q_i·k_j + mask_ij) v_j,  kv head h / (Hq / Hkv),
// with the causal mask (both alignments), bool or additive masks broadcast to (B, Hq, Sq, Sk),
// and a query that sees no key getting a zero row, in float64 and float32, with the weights. It
// lacks everything else (softcap, windows, the other operations): the backend refuses those with
// Unsupported / UnsupportedOption, and the claims that need them are reported not applicable.
#include <cmath>
#include <iostream>
#include <limits>

#include <xtensor/xbroadcast.hpp>

#include "backends/backend.hpp"
#include "engine/audit.hpp"
#include "engine/report.hpp"

namespace {

using vl::backends::Need;
using vl::backends::Op;
using vl::backends::Option;
using vl::backends::Tensor4;

template <class T>
vl::AttentionResult<T, 4> my_attention(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, T scale,
                                       const xt::xarray<bool>& allowed, const xt::xarray<T>& add) {
  const std::size_t B = q.shape(0), H = q.shape(1), Sq = q.shape(2), D = q.shape(3), Sk = k.shape(2), Dv = v.shape(3);
  const std::size_t group = H / k.shape(1);
  vl::AttentionResult<T, 4> r{xt::zeros<T>({B, H, Sq, Dv}), xt::zeros<T>({B, H, Sq, Sk}), {}};
  std::vector<T> s(Sk);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < Sq; ++i) {
        T m = -std::numeric_limits<T>::infinity();
        bool nan = false;
        for (std::size_t j = 0; j < Sk; ++j) {
          T dot = 0;
          for (std::size_t x = 0; x < D; ++x) dot += q(b, h, i, x) * k(b, h / group, j, x);
          s[j] = allowed(b, h, i, j) ? scale * dot + add(b, h, i, j) : -std::numeric_limits<T>::infinity();
          m = std::max(m, s[j]);  // std::max skips a NaN score ...
          nan = nan || std::isnan(s[j]);
        }
        if (std::isinf(m) && m < 0 && !nan) continue;  // no visible key: a zero row (... which must still reach the row: NaN)
        T z = 0;
        for (std::size_t j = 0; j < Sk; ++j) z += (s[j] = std::exp(s[j] - m));
        for (std::size_t j = 0; j < Sk; ++j) {
          r.weights(b, h, i, j) = s[j] / z;
          for (std::size_t x = 0; x < Dv; ++x) r.output(b, h, i, x) += s[j] / z * v(b, h / group, j, x);
        }
      }
  return r;
}

class MyBackend : public vl::backends::Backend {
 public:
  std::string name() const override { return "my-kernel"; }
  std::string summary() const override { return "examples/own_backend: a loop-nest attention"; }
  bool supports(Need need) const override { return need == Need(Op::attention) || need == Need(Op::attention, Option::weights); }
  vl::AttentionResult<double, 4> attention(const Tensor4<double>& q, const Tensor4<double>& k, const Tensor4<double>& v,
                                           const vl::AttentionOptions<double>& o) const override {
    return run(q, k, v, o);
  }
  vl::AttentionResult<float, 4> attention(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                          const vl::AttentionOptions<float>& o) const override {
    return run(q, k, v, o);
  }

 private:
  template <class T>
  vl::AttentionResult<T, 4> run(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const vl::AttentionOptions<T>& o) const {
    if (o.return_scores) lacks({Op::attention, Option::score_stages});
    if (o.round) lacks({Op::attention, Option::storage_rounding});
    if (o.softcap != 0 || o.kv_lengths || o.left_window >= 0 || o.right_window >= 0 || o.first_query)
      throw vl::backends::UnsupportedOption(Op::attention, "my-kernel has no softcap, KV lengths, windows or query offset");
    const std::array<std::size_t, 4> shape{q.shape(0), q.shape(1), q.shape(2), k.shape(2)};
    xt::xarray<bool> allowed = xt::ones<bool>(shape);
    if (o.allowed) allowed = allowed && xt::broadcast(*o.allowed, shape);
    if (o.causal) {
      const std::ptrdiff_t offset = o.alignment == vl::CausalAlignment::bottom_right ? std::ptrdiff_t(shape[3]) - std::ptrdiff_t(shape[2]) : 0;
      for (std::size_t b = 0; b < shape[0]; ++b)
        for (std::size_t h = 0; h < shape[1]; ++h)
          for (std::size_t i = 0; i < shape[2]; ++i)
            for (std::size_t j = 0; j < shape[3]; ++j)
              if (std::ptrdiff_t(j) > std::ptrdiff_t(i) + offset) allowed(b, h, i, j) = false;
    }
    xt::xarray<T> add = xt::zeros<T>(shape);
    if (o.bias) add = add + xt::broadcast(*o.bias, shape);
    auto r = my_attention<T>(q, k, v, o.scale.value_or(T(1) / std::sqrt(T(q.shape(3)))), allowed, add);
    if (!o.return_weights) r.weights = {};
    return r;
  }
};

}  // namespace

int main(int argc, char** argv) {
  vl::AuditOptions options;
  options.root = argc > 1 ? argv[1] : VL_DATA_DIR;  // specs/ and reference_outputs/, installed with the package
  options.backend = std::make_shared<MyBackend>();
  options.select = {"masking", "attention.convex-combination", "attention.fixture-causal"};
  const vl::AuditReport report = vl::run_audit(vl::all_lessons(), options);
  vl::print_report(std::cout, report, false);
  return report.ok() ? 0 : 1;
}
