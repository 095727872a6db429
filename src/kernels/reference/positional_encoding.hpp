#pragma once
// Sinusoidal positional encoding (Vaswani et al. 2017, §3.5), its shift-as-rotation property, and
// permutations of a sequence.
//
//   PE(pos, 2i)   = sin(pos / 10000^(2i/d))        ω_i = 1 / 10000^(2i/d),  i = 0 … ⌈d/2⌉ − 1
//   PE(pos, 2i+1) = cos(pos / 10000^(2i/d))        PE: (n, d)
//
// Odd d: the last column d − 1 = 2i is the sin of pair i = (d − 1)/2, whose cos is dropped (the
// table is the one for d + 1 with its last column cut; ω keeps the exponent 2i/d of the real d).
// The angle is computed as pos / 10000^(2i/d), a division, as the lesson's NumPy does.
//
// For every shift k each (sin, cos) pair rotates by the angle ω_i·k, whatever pos is:
//   [PE(pos+k, 2i), PE(pos+k, 2i+1)]ᵀ = R_k(ω_i) [PE(pos, 2i), PE(pos, 2i+1)]ᵀ,
//   R_k(ω) = [[cos ωk, sin ωk], [−sin ωk, cos ωk]]
// Wavelengths 2π/ω_i = 2π·10000^(2i/d): a geometric progression of ratio 10000^(2/d) from 2π
// towards 10000·2π.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

namespace vl {

/// ω_i = 1 / 10000^(2i/d) for i = 0 … ⌈d/2⌉ − 1.
template <class T>
xt::xtensor<T, 1> pe_frequencies(std::size_t d, T base = T(10000)) {
  xt::xtensor<T, 1> w = xt::zeros<T>({(d + 1) / 2});
  for (std::size_t i = 0; i < w.size(); ++i) w(i) = T(1) / std::pow(base, T(2 * i) / T(d));
  return w;
}

/// Rows of the table at arbitrary positions (which may be large or fractional): (positions, d).
template <class T>
xt::xtensor<T, 2> positional_encoding_at(const std::vector<T>& positions, std::size_t d, T base = T(10000)) {
  if (d == 0) throw std::invalid_argument("positional_encoding: d must be positive");
  xt::xtensor<T, 2> pe = xt::zeros<T>({positions.size(), d});
  for (std::size_t i = 0; 2 * i < d; ++i) {
    const T div = std::pow(base, T(2 * i) / T(d));
    for (std::size_t r = 0; r < positions.size(); ++r) {
      const T angle = positions[r] / div;
      pe(r, 2 * i) = std::sin(angle);
      if (2 * i + 1 < d) pe(r, 2 * i + 1) = std::cos(angle);
    }
  }
  return pe;
}

/// The table PE (n, d) for positions 0 … n − 1 (see the file comment; odd d documented there).
template <class T>
xt::xtensor<T, 2> positional_encoding(std::size_t n, std::size_t d, T base = T(10000)) {
  std::vector<T> positions(n);
  for (std::size_t pos = 0; pos < n; ++pos) positions[pos] = T(pos);
  return positional_encoding_at<T>(positions, d, base);
}

/// R_k(ω) = [[cos ωk, sin ωk], [−sin ωk, cos ωk]]: maps the pair (sin ωp, cos ωp) to
/// (sin ω(p+k), cos ω(p+k)).
template <class T>
xt::xtensor<T, 2> pe_rotation(T omega, T k) {
  const T c = std::cos(omega * k), s = std::sin(omega * k);
  return {{c, s}, {-s, c}};
}

/// Wavelengths 2π / ω_i of the pairs.
template <class T>
xt::xtensor<T, 1> pe_wavelengths(std::size_t d, T base = T(10000)) {
  return T(2) * std::numbers::pi_v<T> / pe_frequencies<T>(d, base);
}

/// x[perm]: row r of the result is row perm[r] of x (NumPy/torch fancy indexing on axis 0).
/// Throws std::invalid_argument if perm is not a permutation of 0 … rows − 1.
template <class T>
xt::xtensor<T, 2> permute_rows(const xt::xtensor<T, 2>& x, const std::vector<std::int64_t>& perm) {
  const std::size_t n = x.shape(0);
  std::vector<bool> seen(n, false);
  if (perm.size() != n) throw std::invalid_argument("permute_rows: permutation of " + std::to_string(perm.size()) + " entries for " + std::to_string(n) + " rows");
  xt::xtensor<T, 2> out = xt::xtensor<T, 2>::from_shape(x.shape());
  for (std::size_t r = 0; r < n; ++r) {
    const auto src = perm[r];
    if (src < 0 || std::size_t(src) >= n || seen[std::size_t(src)]) throw std::invalid_argument("permute_rows: not a permutation of 0 … n − 1");
    seen[std::size_t(src)] = true;
    xt::view(out, r, xt::all()) = xt::view(x, std::size_t(src), xt::all());
  }
  return out;
}

/// The inverse permutation: inverse[perm[r]] = r.
inline std::vector<std::int64_t> inverse_permutation(const std::vector<std::int64_t>& perm) {
  std::vector<std::int64_t> inv(perm.size());
  for (std::size_t r = 0; r < perm.size(); ++r) inv.at(std::size_t(perm[r])) = std::int64_t(r);
  return inv;
}

// Instantiated once, for float and double, in positional_encoding.cpp: a file that calls them compiles none of
// their bodies.
extern template xt::xtensor<float, 1> pe_frequencies<float>(std::size_t, float);
extern template xt::xtensor<float, 2> positional_encoding_at<float>(const std::vector<float>&, std::size_t, float);
extern template xt::xtensor<float, 2> positional_encoding<float>(std::size_t, std::size_t, float);
extern template xt::xtensor<float, 2> pe_rotation<float>(float, float);
extern template xt::xtensor<float, 1> pe_wavelengths<float>(std::size_t, float);
extern template xt::xtensor<float, 2> permute_rows<float>(const xt::xtensor<float, 2>&, const std::vector<std::int64_t>&);
extern template xt::xtensor<double, 1> pe_frequencies<double>(std::size_t, double);
extern template xt::xtensor<double, 2> positional_encoding_at<double>(const std::vector<double>&, std::size_t, double);
extern template xt::xtensor<double, 2> positional_encoding<double>(std::size_t, std::size_t, double);
extern template xt::xtensor<double, 2> pe_rotation<double>(double, double);
extern template xt::xtensor<double, 1> pe_wavelengths<double>(std::size_t, double);
extern template xt::xtensor<double, 2> permute_rows<double>(const xt::xtensor<double, 2>&, const std::vector<std::int64_t>&);

}  // namespace vl
