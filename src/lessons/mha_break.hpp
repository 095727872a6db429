#pragma once
// A negative control that breaks multi-head attention in float64 and float32 alike, as
// AttentionBreak (attention/attention_break.hpp) does attention: the bug is written once, as
// Self::broken<T>, and both of the operation's overrides route to it; every other operation is
// forwarded to the base backend.
//
//   class BiasesDropped : public MhaBreak<BiasesDropped> {
//    public:
//     using MhaBreak::MhaBreak;
//     template <class T>
//     MhaResult<T, 3> broken(const Tensor3Of<T>& query, const Tensor3Of<T>& key, const Tensor3Of<T>& value,
//                            const MhaParameters<T>& p, std::size_t heads, const MhaOptions<T>& o) const;
//   };
#include "backends/backend.hpp"

namespace vl::lessons {

template <class Self>
class MhaBreak : public backends::Decorator {
 public:
  using Decorator::Decorator;
  MhaResult<double, 3> multi_head_attention(const ops::Tensor3Of<double>& query, const ops::Tensor3Of<double>& key,
                                            const ops::Tensor3Of<double>& value, const MhaParameters<double>& p, std::size_t heads,
                                            const MhaOptions<double>& o) const override {
    return static_cast<const Self&>(*this).template broken<double>(query, key, value, p, heads, o);
  }
  MhaResult<float, 3> multi_head_attention(const ops::Tensor3Of<float>& query, const ops::Tensor3Of<float>& key,
                                           const ops::Tensor3Of<float>& value, const MhaParameters<float>& p, std::size_t heads,
                                           const MhaOptions<float>& o) const override {
    return static_cast<const Self&>(*this).template broken<float>(query, key, value, p, heads, o);
  }
};

}  // namespace vl::lessons

/// In a control's .cpp: `Class::broken<T>` instantiated for float64 and float32.
#define VL_MHA_BREAK_PRECISIONS(Class)                                                                                           \
  template MhaResult<double, 3> Class::broken<double>(const ops::Tensor3Of<double>&, const ops::Tensor3Of<double>&,             \
                                                      const ops::Tensor3Of<double>&, const MhaParameters<double>&, std::size_t, \
                                                      const MhaOptions<double>&) const;                                          \
  template MhaResult<float, 3> Class::broken<float>(const ops::Tensor3Of<float>&, const ops::Tensor3Of<float>&,                 \
                                                    const ops::Tensor3Of<float>&, const MhaParameters<float>&, std::size_t,     \
                                                    const MhaOptions<float>&) const;
