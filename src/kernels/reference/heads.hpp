#pragma once
// Heads as column blocks (Vaswani et al. 2017, §3.2.2; ONNX Attention's 3-D inputs; torch's
// nn.MultiheadAttention): a packed (B, S, H·D) tensor holds head h in columns h·D … (h+1)·D.
//
//   split_heads:  (B, S, H·D) → (B, H, S, D)
//   merge_heads:  (B, H, S, D) → (B, S, H·D)      (merge_heads(split_heads(x, H)) = x)
#include <cstddef>
#include <stdexcept>

#include <fmt/format.h>
#include <xtensor/xtensor.hpp>

namespace vl {

/// Throws std::invalid_argument when H = 0 or H does not divide the last dimension.
template <class T>
xt::xtensor<T, 4> split_heads(const xt::xtensor<T, 3>& x, std::size_t heads) {
  const std::size_t B = x.shape(0), S = x.shape(1), width = x.shape(2);
  if (heads == 0 || width % heads != 0)
    throw std::invalid_argument(fmt::format("split_heads: {} columns do not split into {} heads", width, heads));
  const std::size_t D = width / heads;
  xt::xtensor<T, 4> out = xt::xtensor<T, 4>::from_shape({B, heads, S, D});
  const T* in = x.data();
  T* o = out.data();
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t c = 0; c < D; ++c) o[((b * heads + h) * S + s) * D + c] = in[(b * S + s) * width + h * D + c];
  return out;
}

template <class T>
xt::xtensor<T, 3> merge_heads(const xt::xtensor<T, 4>& x) {
  const std::size_t B = x.shape(0), H = x.shape(1), S = x.shape(2), D = x.shape(3);
  xt::xtensor<T, 3> out = xt::xtensor<T, 3>::from_shape({B, S, H * D});
  const T* in = x.data();
  T* o = out.data();
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t s = 0; s < S; ++s)
        for (std::size_t c = 0; c < D; ++c) o[(b * S + s) * H * D + h * D + c] = in[((b * H + h) * S + s) * D + c];
  return out;
}

/// One sequence, (S, H·D) ↔ (1, H, S, D).
template <class T>
xt::xtensor<T, 4> split_heads(const xt::xtensor<T, 2>& x, std::size_t heads) {
  return split_heads<T>(xt::xtensor<T, 3>(xt::reshape_view(x, std::array<std::size_t, 3>{1, x.shape(0), x.shape(1)})), heads);
}
template <class T>
xt::xtensor<T, 2> merge_heads_2d(const xt::xtensor<T, 4>& x) {
  const xt::xtensor<T, 3> m = merge_heads<T>(x);
  return xt::reshape_view(m, std::array<std::size_t, 2>{m.shape(0) * m.shape(1), m.shape(2)});
}

// Instantiated once, for float and double, in heads.cpp: a file that calls them compiles none of
// their bodies.
extern template xt::xtensor<float, 4> split_heads<float>(const xt::xtensor<float, 3>&, std::size_t);
extern template xt::xtensor<float, 3> merge_heads<float>(const xt::xtensor<float, 4>&);
extern template xt::xtensor<float, 4> split_heads<float>(const xt::xtensor<float, 2>&, std::size_t);
extern template xt::xtensor<float, 2> merge_heads_2d<float>(const xt::xtensor<float, 4>&);
extern template xt::xtensor<double, 4> split_heads<double>(const xt::xtensor<double, 3>&, std::size_t);
extern template xt::xtensor<double, 3> merge_heads<double>(const xt::xtensor<double, 4>&);
extern template xt::xtensor<double, 4> split_heads<double>(const xt::xtensor<double, 2>&, std::size_t);
extern template xt::xtensor<double, 2> merge_heads_2d<double>(const xt::xtensor<double, 4>&);

}  // namespace vl
