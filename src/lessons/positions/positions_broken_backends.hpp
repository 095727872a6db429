#pragma once
// Lesson positions: the broken backends its claims must reject (specs/positions.md, "Negative
// controls"). Each is one plausible bug, a decorator over a working backend that overrides the
// operation it breaks — the table (`positional_encoding`) or the layer (`multi_head_attention`)
// — and forwards everything else. The bug is written once, as a template over the precision, and
// both of the operation's overrides (float64, float32) call it.
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "backends/backend.hpp"
#include "lessons/mha_break.hpp"

/// The two overrides of positional_encoding, each calling the class's `table<T>`.
#define VL_TABLE_BREAK                                                                                                   \
 public:                                                                                                                 \
  using Decorator::Decorator;                                                                                            \
  backends::Matrix positional_encoding(const std::vector<double>& positions, std::size_t d) const override {             \
    return table<double>(positions, d);                                                                                  \
  }                                                                                                                      \
  ops::MatrixOf<float> positional_encoding(const std::vector<float>& positions, std::size_t d) const override {         \
    return table<float>(positions, d);                                                                                   \
  }                                                                                                                      \
                                                                                                                         \
 private:                                                                                                                \
  template <class T>                                                                                                     \
  ops::MatrixOf<T> table(const std::vector<T>& positions, std::size_t d) const;

namespace vl::lessons::positions {

using backends::Matrix;  // xt::xtensor<double, 2>

/// sin and cos swapped within each pair: PE(pos, 2i) = cos, PE(pos, 2i+1) = sin.
class SinCosSwapped : public backends::Decorator {
  VL_TABLE_BREAK
};

/// The exponent i/d in place of 2i/d: ω_i = 1 / 10000^(i/d), the wrong frequencies.
class ExponentIOverD : public backends::Decorator {
  VL_TABLE_BREAK
};

/// cos replaced by sin: both columns of a pair hold the sin (a copy-paste slip).
class CosReplacedBySin : public backends::Decorator {
  VL_TABLE_BREAK
};

/// The table computed in float32 (our float kernel) and widened: angles known to 2⁻²⁴, not 2⁻⁵³.
/// A bug in float64 only: in float32 it is the correct computation (specs/positions.md says
/// which claim it controls, rotation-error-growth, which is float64 only).
class Float32Table : public backends::Decorator {
 public:
  using Decorator::Decorator;
  Matrix positional_encoding(const std::vector<double>& positions, std::size_t d) const override;
};

/// Every position given PE(0): a broadcasting slip, no position information at all.
class Pe0Everywhere : public backends::Decorator {
  VL_TABLE_BREAK
};

/// The positions added after the attention instead of before: the table handed out is zeros
/// (the tokens enter the layer without positions), and the layer adds the real table's rows
/// 0 … Sq − 1 to its output, so the weights never see them. The bug moves the encoding from one
/// operation to the other, so it overrides both.
class PositionsAfterAttention : public MhaBreak<PositionsAfterAttention> {
 public:
  using MhaBreak::MhaBreak;
  Matrix positional_encoding(const std::vector<double>& positions, std::size_t d) const override;
  ops::MatrixOf<float> positional_encoding(const std::vector<float>& positions, std::size_t d) const override;
  template <class T>
  MhaResult<T, 3> broken(const ops::Tensor3Of<T>& query, const ops::Tensor3Of<T>& key, const ops::Tensor3Of<T>& value,
                         const MhaParameters<T>& p, std::size_t heads, const MhaOptions<T>& o) const;
};

/// The layer's causal mask forced, whatever the caller asked: on, the encoder given the
/// decoder's causal mask (position i only sees 0 … i); off, the decoder's mask dropped (an encoder).
class CausalMaskForced : public MhaBreak<CausalMaskForced> {
 public:
  CausalMaskForced(std::shared_ptr<const backends::Backend> base, std::string name, bool causal)
      : MhaBreak(std::move(base), std::move(name)), causal_(causal) {}
  template <class T>
  MhaResult<T, 3> broken(const ops::Tensor3Of<T>& query, const ops::Tensor3Of<T>& key, const ops::Tensor3Of<T>& value,
                         const MhaParameters<T>& p, std::size_t heads, const MhaOptions<T>& o) const;

 private:
  bool causal_;
};

}  // namespace vl::lessons::positions

#undef VL_TABLE_BREAK
