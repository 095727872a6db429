#pragma once
// Lesson positions: the broken backends its claims must reject (specs/positions.md, "Negative
// controls"). Each is one plausible bug, a decorator over a working backend that overrides the
// operation it breaks — the table (`positional_encoding`) or the layer (`multi_head_attention`)
// — and forwards everything else.
#include <cstddef>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "backends/backend.hpp"

namespace vl::lessons::positions {

using backends::Matrix;  // xt::xtensor<double, 2>

/// sin and cos swapped within each pair: PE(pos, 2i) = cos, PE(pos, 2i+1) = sin.
class SinCosSwapped : public backends::Decorator {
 public:
  using Decorator::Decorator;
  Matrix positional_encoding(const std::vector<double>& positions, std::size_t d) const override;
};

/// The exponent i/d in place of 2i/d: ω_i = 1 / 10000^(i/d), the wrong frequencies.
class ExponentIOverD : public backends::Decorator {
 public:
  using Decorator::Decorator;
  Matrix positional_encoding(const std::vector<double>& positions, std::size_t d) const override;
};

/// cos replaced by sin: both columns of a pair hold the sin (a copy-paste slip).
class CosReplacedBySin : public backends::Decorator {
 public:
  using Decorator::Decorator;
  Matrix positional_encoding(const std::vector<double>& positions, std::size_t d) const override;
};

/// The table computed in float32 (our float kernel) and widened: angles known to 2⁻²⁴, not 2⁻⁵³.
class Float32Table : public backends::Decorator {
 public:
  using Decorator::Decorator;
  Matrix positional_encoding(const std::vector<double>& positions, std::size_t d) const override;
};

/// Every position given PE(0): a broadcasting slip, no position information at all.
class Pe0Everywhere : public backends::Decorator {
 public:
  using Decorator::Decorator;
  Matrix positional_encoding(const std::vector<double>& positions, std::size_t d) const override;
};

/// The positions added after the attention instead of before: the table handed out is zeros
/// (the tokens enter the layer without positions), and the layer adds the real table's rows
/// 0 … Sq − 1 to its output, so the weights never see them. The bug moves the encoding from one
/// operation to the other, so it overrides both.
class PositionsAfterAttention : public backends::Decorator {
 public:
  using Decorator::Decorator;
  Matrix positional_encoding(const std::vector<double>& positions, std::size_t d) const override;
  MhaResult<double, 3> multi_head_attention(const xt::xtensor<double, 3>& query, const xt::xtensor<double, 3>& key,
                                            const xt::xtensor<double, 3>& value, const MhaParameters<double>& p, std::size_t heads,
                                            const MhaOptions<double>& o) const override;
};

/// The encoder given the decoder's causal mask: position i only sees 0 … i.
class EncoderWithCausalMask : public backends::Decorator {
 public:
  using Decorator::Decorator;
  MhaResult<double, 3> multi_head_attention(const xt::xtensor<double, 3>& query, const xt::xtensor<double, 3>& key,
                                            const xt::xtensor<double, 3>& value, const MhaParameters<double>& p, std::size_t heads,
                                            const MhaOptions<double>& o) const override;
};

}  // namespace vl::lessons::positions
