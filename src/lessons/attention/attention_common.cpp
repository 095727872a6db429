// The attention lesson's shared pieces; see attention_common.hpp.
#include "lessons/attention/attention_common.hpp"

#include "backends/registry.hpp"
#include "numeric/npy.hpp"

namespace vl::lessons::attention {

Tensor4<double> draw4(numpy::Generator& rng, std::array<std::size_t, 4> shape) {
  return rng.standard_normal(std::vector<std::size_t>(shape.begin(), shape.end()));
}

xt::xarray<double> load_golden(const std::filesystem::path& goldens, const std::string& name) {
  return npy::load_double(goldens / "attention" / name);
}

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

namespace {
template <class T>
AttentionOptions<T> unmasked(AttentionOptions<T> o) {
  o.causal = false;
  o.allowed.reset();
  o.bias.reset();
  return o;
}
}  // namespace

MaskIgnored::MaskIgnored() : AttentionBreak(backends::plain(), "mask ignored") {}
template <class T>
AttentionResult<T, 4> MaskIgnored::broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v, const AttentionOptions<T>& o) const {
  return base().attention(q, k, v, unmasked(o));
}
VL_ATTENTION_BREAK_PRECISIONS(MaskIgnored)

}  // namespace vl::lessons::attention
