#pragma once
// A negative control that breaks attention in float64 and float32 alike. The bug is written
// once, as Self::broken<T>, and both of the operation's overrides route to it, as the linear
// family's FamilyBreak does (linear_family_broken_backends.hpp); every other operation is
// forwarded to the base backend, as any Decorator's is.
//
//   class FiniteFill : public AttentionBreak<FiniteFill> {
//    public:
//     using AttentionBreak::AttentionBreak;
//     template <class T>
//     AttentionResult<T, 4> broken(const Tensor4<T>& q, const Tensor4<T>& k, const Tensor4<T>& v,
//                                  const AttentionOptions<T>& o) const;   // defined inline, or in the .cpp
//   };
//
// A broken<T> defined in a .cpp is instantiated there for both precisions by
// VL_ATTENTION_BREAK_PRECISIONS(Class). A control whose two precisions differ (float16 storage
// emulated in double only) is a plain Decorator instead.
#include "backends/backend.hpp"

namespace vl::lessons {

template <class Self>
class AttentionBreak : public backends::Decorator {
 public:
  using Decorator::Decorator;
  AttentionResult<double, 4> attention(const backends::Tensor4<double>& q, const backends::Tensor4<double>& k,
                                       const backends::Tensor4<double>& v, const AttentionOptions<double>& o) const override {
    return static_cast<const Self&>(*this).template broken<double>(q, k, v, o);
  }
  AttentionResult<float, 4> attention(const backends::Tensor4<float>& q, const backends::Tensor4<float>& k,
                                      const backends::Tensor4<float>& v, const AttentionOptions<float>& o) const override {
    return static_cast<const Self&>(*this).template broken<float>(q, k, v, o);
  }
};

}  // namespace vl::lessons

/// In a control's .cpp: `Class::broken<T>` instantiated for float64 and float32.
#define VL_ATTENTION_BREAK_PRECISIONS(Class)                                                                                \
  template AttentionResult<double, 4> Class::broken<double>(                                                               \
      const backends::Tensor4<double>&, const backends::Tensor4<double>&, const backends::Tensor4<double>&,                 \
      const AttentionOptions<double>&) const;                                                                              \
  template AttentionResult<float, 4> Class::broken<float>(const backends::Tensor4<float>&, const backends::Tensor4<float>&, \
                                                          const backends::Tensor4<float>&, const AttentionOptions<float>&) const;
